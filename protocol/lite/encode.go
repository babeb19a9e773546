package lite

import (
	"strconv"
	"unicode/utf8"
)

// EventRequest is what a forwarder sends: protocol.Request with op "event" and the payload
// as exact text (event_text), without the fields a forwarder never sets.
type EventRequest struct {
	EventText  string
	Env        []string
	ProjectDir string
	Harness    string
	Client     string
	ResultOnly bool
}

// AppendEventRequest appends r, encoded as one JSON line (with the trailing newline), to
// dst: the line protocol.AppendRequest writes for the equivalent protocol.Request (a test
// checks they are byte for byte equal).
func AppendEventRequest(dst []byte, r *EventRequest) []byte {
	// One allocation for the whole line: at least 64 KiB, so that it is a large object
	// (fresh from the OS, paged in as written), and an eighth more than the strings for
	// their escapes.
	n := len(r.EventText) + len(r.EventText)/8 + len(r.ProjectDir) + 256
	for _, kv := range r.Env {
		n += len(kv) + len(kv)/8 + 3
	}
	dst = grow(dst, max(n, 64<<10))
	dst = append(dst, `{"v":`...)
	dst = strconv.AppendInt(dst, Version, 10)
	if r.EventText != "" {
		dst = append(dst, `,"event_text":`...)
		dst = AppendString(dst, r.EventText)
	}
	if len(r.Env) > 0 {
		dst = append(dst, `,"env":[`...)
		for i, kv := range r.Env {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, kv)
		}
		dst = append(dst, ']')
	}
	if r.ProjectDir != "" {
		dst = append(dst, `,"project_dir":`...)
		dst = AppendString(dst, r.ProjectDir)
	}
	if r.Harness != "" {
		dst = append(dst, `,"harness":`...)
		dst = AppendString(dst, r.Harness)
	}
	if r.ResultOnly || r.Client != "" {
		dst = append(dst, `,"options":{`...)
		if r.ResultOnly {
			dst = append(dst, `"result_only":true`...)
			if r.Client != "" {
				dst = append(dst, ',')
			}
		}
		if r.Client != "" {
			dst = append(dst, `"client":`...)
			dst = AppendString(dst, r.Client)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}', '\n')
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), len(b)+n)
	copy(nb, b)
	return nb
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as with
// encoding/json; '<', '>' and '&' are not escaped (no HTML context here).
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, false) }

// appendString is encoding/json's string encoder: with html, byte for byte what
// json.Marshal writes for s; without, the same less the HTML escapes and with \u0008 and
// \u000c for \b and \f (what protocol has always sent; both decode alike).
func appendString(dst []byte, s string, html bool) []byte {
	if len(s) > 1<<12 {
		// Room for s and an eighth more in escapes, in one allocation: left to append,
		// a multi-MiB payload grows the buffer by 1.25× at a time, copying it some ten
		// times (a 6 MiB Write's event_text; issue 13).
		dst = grow(dst, len(s)+len(s)/8+2)
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || (c != '<' && c != '>' && c != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				if html {
					dst = append(dst, '\\', 'b')
					break
				}
				dst = append(dst, `\u0008`...)
			case '\f':
				if html {
					dst = append(dst, '\\', 'f')
					break
				}
				dst = append(dst, `\u000c`...)
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript readers; escape as
		// encoding/json does.
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
