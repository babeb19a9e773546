package protocol

import (
	"strconv"

	"github.com/hookd/hookd/protocol/lite"
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

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as with
// encoding/json; '<', '>' and '&' are not escaped (no HTML context here).
func AppendString(dst []byte, s string) []byte { return lite.AppendString(dst, s) }
