package test

import (
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

// SessionEnd hooks share a short budget (spec §3.2): 1.5 s unless a SessionEnd hook's own
// timeout (up to 60 s) or CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS raises or sets it. The
// arithmetic is pinned by daemon's TestSessionEndBudget; here the budget must end real
// processes. No assertion depends on the machine's speed: the hooks sleep far longer than
// any budget they are given, so only the budget can end them, and a timer never fires early
// (the lower bounds).
func TestSessionEndBudget(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"sleep 10"}]}]}}`)
	e.Start()
	ended := func(budget time.Duration) {
		t.Helper()
		start := time.Now()
		res, _ := e.Event(e.Payload("SessionEnd", map[string]any{"reason": "other"}))
		if took := time.Since(start); took < budget {
			t.Fatalf("SessionEnd answered after %v, before its %v budget was spent", took, budget)
		}
		if len(res.Hooks) != 1 {
			t.Fatalf("hooks %+v", res.Hooks)
		}
		if o := res.Hooks[0].Outcome; o != protocol.OutcomeCancelled && o != protocol.OutcomeTimeout {
			t.Fatalf("outcome %q: the 10 s hook was not ended by the %v budget", o, budget)
		}
	}
	// The default budget ends a 10 s hook.
	ended(1500 * time.Millisecond)

	// The variable sets the budget even below a hook's own timeout: this hook asks for 60 s
	// (which raises the budget to 60 s) and sleeps 10 s, so only the variable can end it.
	e.WriteSettings("project", `{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"sleep 10","timeout":60}]}]}}`)
	if r := e.Hookd("", "reload"); r.Code != 0 {
		t.Fatalf("reload: %d %s", r.Code, r.Stderr)
	}
	e.extraEnv = []string{"CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS=300"}
	ended(300 * time.Millisecond)
}
