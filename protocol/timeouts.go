package protocol

import (
	"time"

	"github.com/hookd/hookd/protocol/lite"
)

// DefaultHookTimeout is how long Claude Code lets a command hook of event run when its
// handler sets no "timeout" (spec §3.2): 600 s, except UserPromptSubmit (30 s),
// MessageDisplay (10 s) and SessionEnd (a 1.5 s budget shared by its hooks). It is here,
// not only in package events, because hookc (which imports nothing else of hookd) derives
// its own default timeout from it; a test in package events keeps the two equal.
func DefaultHookTimeout(event string) time.Duration { return lite.DefaultHookTimeout(event) }

// ForwarderTimeout is how long a forwarder (hookc) whose hook timeout is d waits for
// hookd before it gives up and answers fail-closed: d less a tenth, and less at most
// 10 s — 590 s for Claude Code's default 600 s. When the harness's own timeout fires
// first, Claude Code lets the tool run; when hookc's does, the answer is a block.
func ForwarderTimeout(d time.Duration) time.Duration { return lite.ForwarderTimeout(d) }

// FormatSeconds writes d as a hookc --timeout value: decimal seconds ("590s", "1.35s").
func FormatSeconds(d time.Duration) string { return lite.FormatSeconds(d) }

// PeekEventName finds the top-level "hook_event_name" of a payload without decoding it
// (hookc's start-up time is the product; EventName decodes the whole payload); "" when
// it cannot tell. It looks for the
// first occurrence of the key, which in every harness's payload is the top-level one;
// a wrong guess only changes hookc's default timeout.
func PeekEventName(payload []byte) string { return lite.PeekEventName(payload) }
