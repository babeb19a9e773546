package daemon

import (
	"testing"
	"time"

	"github.com/hookd/hookd/configs/settings"
)

// TestSessionEndBudget pins the arithmetic of SessionEnd's shared budget (spec §3.2) without
// a clock: 1.5 s, raised by the largest SessionEnd hook timeout up to 60 s, and set outright
// by CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS from the caller. The black-box test
// (test/sessionend_test.go) checks that the budget is enforced on real processes.
func TestSessionEndBudget(t *testing.T) {
	snap := func(timeouts ...string) *settings.Snapshot {
		hooks := ""
		for i, to := range timeouts {
			if i > 0 {
				hooks += ","
			}
			hooks += `{"type":"command","command":"true"` + to + `}`
		}
		f, err := settings.ParseFile(settings.FileRef{Path: "/p/.claude/settings.json", Kind: settings.KindProject},
			[]byte(`{"hooks":{"SessionEnd":[{"hooks":[`+hooks+`]}],"Stop":[{"hooks":[{"type":"command","command":"x","timeout":300}]}]}}`), "/home/u")
		if err != nil {
			t.Fatal(err)
		}
		return settings.Compile([]*settings.File{f})
	}
	for _, c := range []struct {
		name string
		snap *settings.Snapshot
		env  []string
		want time.Duration
	}{
		{"default", snap(""), nil, 1500 * time.Millisecond},
		{"a shorter hook timeout does not lower it", snap(`,"timeout":1`), nil, 1500 * time.Millisecond},
		{"raised by the largest hook timeout", snap(`,"timeout":5`, `,"timeout":20`), nil, 20 * time.Second},
		{"capped at 60 s", snap(`,"timeout":600`), nil, 60 * time.Second},
		{"other events' timeouts do not count", snap(""), nil, 1500 * time.Millisecond},
		{"env sets it", snap(`,"timeout":20`), []string{"CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS=300"}, 300 * time.Millisecond},
		{"invalid env ignored", snap(""), []string{"CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS=soon"}, 1500 * time.Millisecond},
		{"zero env ignored", snap(""), []string{"CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS=0"}, 1500 * time.Millisecond},
	} {
		if got := sessionEndBudget(c.snap, c.env); got != c.want {
			t.Errorf("%s: budget %v, want %v", c.name, got, c.want)
		}
	}
}
