package settings

import (
	"strings"
	"testing"

	"github.com/hookd/hookd/rules"
)

// TestBadRuleCostsOnlyItself (issue 27): a permission rule that does not parse is
// dropped with an error-level finding naming file, line and column; the file's other
// rules and its hooks still load, as in Claude Code.
func TestBadRuleCostsOnlyItself(t *testing.T) {
	data := []byte(`{"permissions": {"deny": ["Bash(rm *)", "Read(.env)", "WebFetch", "Bash(rm -rf /"],
  "ask": ["Bash(git push *"], "allow": ["Bash(ls *)"]},
 "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}]}}`)
	f, err := ParseFile(FileRef{Path: "/p/.claude/settings.json", Kind: KindProject}, data, "/home/u")
	if err != nil {
		t.Fatalf("the file was refused: %v", err)
	}
	var got []string
	for _, r := range f.Rules {
		got = append(got, string(r.List)+":"+r.Text)
	}
	if strings.Join(got, " ") != "deny:Bash(rm *) deny:Read(.env) deny:WebFetch allow:Bash(ls *)" {
		t.Errorf("rules %q", got)
	}
	if len(f.Handlers) != 1 {
		t.Errorf("%d handlers, want 1", len(f.Handlers))
	}
	want := map[string]string{
		"/p/.claude/settings.json:1:67: permissions.deny[3]": "denies nothing",
		"/p/.claude/settings.json:2:11: permissions.ask[0]":  "asks for nothing",
	}
	n := 0
	for _, w := range f.Warnings {
		if !w.IsError() {
			continue
		}
		n++
		s := w.String()
		found := false
		for at, means := range want {
			if strings.HasPrefix(s, at+": invalid rule ") && strings.Contains(s, "dropped: it "+means) {
				found = true
			}
		}
		if !found {
			t.Errorf("finding %q", s)
		}
	}
	if n != len(want) {
		t.Errorf("%d error-level findings, want %d: %v", n, len(want), f.Warnings)
	}
	// What remains still decides: the good deny rule denies.
	m := rules.NewSet(f.Rules).Evaluate(rules.Call{Tool: "Bash", Input: map[string]any{"command": "ls && rm -rf /"}, Cwd: "/p"})
	if m.Decision != rules.DecisionDeny {
		t.Errorf("ls && rm -rf /: %+v", m)
	}
}
