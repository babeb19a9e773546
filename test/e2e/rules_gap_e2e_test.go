//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/hookd/hookd/test/claudeapi"
)

// TestClaudeLetsThrough confirms, with the real Claude Code binary, a few of
// the forms docs/rules.md lists as "Claude Code 2.1.330 lets through": with
// a deny rule on the program and a PreToolUse hook that answers allow,
// native Claude Code accepts the call (and runs it), while the same settings
// through hookd deny it. The program is touch, so running it is harmless.
func TestClaudeLetsThrough(t *testing.T) {
	forms := []string{
		"coproc touch x",
		"time { touch x; }",
		"trap 'touch x' EXIT",
		"bash -s <<< 'touch x'",
		`eval "$(echo touch x)"`,
		"su -c 'touch x'",
	}
	for _, cmd := range forms {
		sc := &scenario{
			Name:   "gap: " + cmd,
			Hooks:  []hook{preHook("a", emit(decide("allow", "fine"), "", 0))},
			Deny:   []string{"Bash(touch:*)"},
			Script: []claudeapi.Turn{bash(cmd), say("finished")},
			Counts: map[string]int{"a": 1},
		}
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			native := runClaude(t, sc, "native")
			viaHookd := runClaude(t, sc, "hookd")
			if len(native.Calls) != 1 || len(viaHookd.Calls) != 1 {
				t.Fatalf("calls: native %+v, hookd %+v", native.Calls, viaHookd.Calls)
			}
			t.Logf("native: %s %q; hookd: %s %q", native.Calls[0].Decision, native.Calls[0].Result, viaHookd.Calls[0].Decision, viaHookd.Calls[0].Result)
			if d := native.Calls[0].Decision; !strings.HasPrefix(d, "accept") {
				t.Errorf("native Claude Code no longer lets %q through (decision %s): update docs/rules.md", cmd, d)
			}
			if d := viaHookd.Calls[0].Decision; !strings.HasPrefix(d, "reject") || !strings.Contains(viaHookd.Calls[0].Result, "Bash(touch:*)") {
				t.Errorf("through hookd %q was not denied by the rule: %s %q", cmd, d, viaHookd.Calls[0].Result)
			}
		})
	}
}
