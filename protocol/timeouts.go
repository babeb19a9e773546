package protocol

import (
	"bytes"
	"strconv"
	"time"
)

// DefaultHookTimeout is how long Claude Code lets a command hook of event run when its
// handler sets no "timeout" (spec §3.2): 600 s, except UserPromptSubmit (30 s),
// MessageDisplay (10 s) and SessionEnd (a 1.5 s budget shared by its hooks). It is here,
// not only in package events, because hookc (which imports nothing else of hookd) derives
// its own default timeout from it; a test in package events keeps the two equal.
func DefaultHookTimeout(event string) time.Duration {
	switch event {
	case "UserPromptSubmit":
		return 30 * time.Second
	case "MessageDisplay":
		return 10 * time.Second
	case "SessionEnd":
		return 1500 * time.Millisecond
	}
	return 600 * time.Second
}

// ForwarderTimeout is how long a forwarder (hookc) whose hook timeout is d waits for
// hookd before it gives up and answers fail-closed: d less a tenth, and less at most
// 10 s — 590 s for Claude Code's default 600 s. When the harness's own timeout fires
// first, Claude Code lets the tool run; when hookc's does, the answer is a block.
func ForwarderTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d - min(d/10, 10*time.Second)
}

// FormatSeconds writes d as a hookc --timeout value: decimal seconds ("590s", "1.35s").
func FormatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// PeekEventName finds the top-level "hook_event_name" of a payload without decoding it
// (hookc's start-up time is the product; EventName decodes the whole payload); "" when
// it cannot tell. It looks for the
// first occurrence of the key, which in every harness's payload is the top-level one;
// a wrong guess only changes hookc's default timeout.
func PeekEventName(payload []byte) string {
	key := []byte(`"hook_event_name"`)
	i := bytes.Index(payload, key)
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(payload[i+len(key):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return ""
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) == 0 || rest[0] != '"' {
		return ""
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 || bytes.IndexByte(rest[1:end+1], '\\') >= 0 {
		return ""
	}
	return string(rest[1 : end+1])
}
