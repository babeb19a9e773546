package protocol

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendRequest appends req, encoded as one JSON line (with the trailing newline), to dst.
//
// It produces what json.Marshal would (a test checks they decode alike) without
// reflection: a client process pays encoding/json's first-use cost — building its
// per-type encoders, about 0.1 ms — on every start, and hookc starts once per event.
func AppendRequest(dst []byte, req *Request) []byte {
	v := req.V
	if v == 0 {
		v = Version
	}
	dst = append(dst, `{"v":`...)
	dst = strconv.AppendInt(dst, int64(v), 10)
	if req.Op != "" {
		dst = append(dst, `,"op":`...)
		dst = AppendString(dst, req.Op)
	}
	if req.ID != "" {
		dst = append(dst, `,"id":`...)
		dst = AppendString(dst, req.ID)
	}
	if len(req.Event) > 0 {
		dst = append(dst, `,"event":`...)
		dst = appendCompact(dst, req.Event)
	}
	if req.EventText != "" {
		dst = append(dst, `,"event_text":`...)
		dst = AppendString(dst, req.EventText)
	}
	if len(req.Env) > 0 {
		dst = append(dst, `,"env":[`...)
		for i, kv := range req.Env {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, kv)
		}
		dst = append(dst, ']')
	}
	if req.ProjectDir != "" {
		dst = append(dst, `,"project_dir":`...)
		dst = AppendString(dst, req.ProjectDir)
	}
	if req.Harness != "" {
		dst = append(dst, `,"harness":`...)
		dst = AppendString(dst, req.Harness)
	}
	if req.HarnessVersion != "" {
		dst = append(dst, `,"harness_version":`...)
		dst = AppendString(dst, req.HarnessVersion)
	}
	if req.Options != (Options{}) {
		dst = append(dst, `,"options":{`...)
		sep := false
		if req.Options.ResultOnly {
			dst = append(dst, `"result_only":true`...)
			sep = true
		}
		if req.Options.Client != "" {
			if sep {
				dst = append(dst, ',')
			}
			dst = append(dst, `"client":`...)
			dst = AppendString(dst, req.Options.Client)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}', '\n')
}

// appendCompact appends a JSON value with insignificant whitespace removed, so that a
// multi-line value cannot break NDJSON framing. Invalid JSON is appended as is (the
// daemon rejects it with a clear error).
func appendCompact(dst, src []byte) []byte {
	inString, escaped := false, false
	for _, c := range src {
		if inString {
			dst = append(dst, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inString = true
		}
		dst = append(dst, c)
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as with
// encoding/json; '<', '>' and '&' are not escaped (no HTML context here).
func AppendString(dst []byte, s string) []byte {
	if len(s) > 1<<12 {
		// Room for s and an eighth more in escapes, in one allocation: left to append,
		// a multi-MiB payload grows the buffer by 1.25× at a time, copying it some ten
		// times (a 6 MiB Write's event_text; issue 13).
		dst = slices.Grow(dst, len(s)+len(s)/8+2)
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
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
