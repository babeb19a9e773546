package test

import (
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

// SessionEnd hooks share a short budget (spec §3.2): 1.5 s unless a SessionEnd hook's own
// timeout (up to 60 s) or CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS raises or sets it.
func TestSessionEndBudget(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"sleep 10"}]}]}}`)
	e.Start()
	start := time.Now()
	res, _ := e.Event(e.Payload("SessionEnd", map[string]any{"reason": "other"}))
	took := time.Since(start)
	if took > 5*time.Second || took < 1*time.Second {
		t.Fatalf("SessionEnd with a 10 s hook took %v, want the 1.5 s budget", took)
	}
	if o := res.Hooks[0].Outcome; o != protocol.OutcomeCancelled && o != protocol.OutcomeTimeout {
		t.Fatalf("outcome %q", o)
	}
	e.extraEnv = []string{"CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS=300"}
	r := e.Hookc(e.Payload("SessionEnd", map[string]any{"reason": "other"}))
	if r.Took > 1200*time.Millisecond {
		t.Fatalf("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS=300 not honoured: took %v", r.Took)
	}
}
