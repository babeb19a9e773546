package rules

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// issueForm is one entry of testdata/forms.json: a command that runs
// program, written the ways issue 10 found rules being talked around (and
// the ways Claude Code 2.1.330 lets through). test/rules_test.go drives the
// same list through hookc.
type issueForm struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Program string `json:"program"`
}

func loadForms(t testing.TB) []issueForm {
	t.Helper()
	data, err := os.ReadFile("testdata/forms.json")
	if err != nil {
		t.Fatal(err)
	}
	var forms []issueForm
	if err := json.Unmarshal(data, &forms); err != nil {
		t.Fatalf("testdata/forms.json: %v", err)
	}
	return forms
}

// TestIssueFormsDenied: a deny rule on the program denies every form even
// when a hook allows it, and an ask rule turns each into ask.
func TestIssueFormsDenied(t *testing.T) {
	forms := loadForms(t)
	if len(forms) < 60 {
		t.Fatalf("only %d forms", len(forms))
	}
	for _, f := range forms {
		t.Run(f.Name, func(t *testing.T) {
			call := Call{Tool: "Bash", Input: map[string]any{"command": f.Command}, Cwd: "/proj", Home: "/home/u"}
			for _, l := range []List{Deny, Ask} {
				r, err := Parse("Bash("+f.Program+":*)", l, projectOrigin)
				if err != nil {
					t.Fatal(err)
				}
				res := Resolve(DecisionAllow, NewSet([]*Rule{r}), call)
				want := map[List]Decision{Deny: DecisionDeny, Ask: DecisionAsk}[l]
				if res.Final != want || res.OverriddenBy != r {
					t.Fatalf("%s rule %s on %q: final %q overridden by %v, want %q", l, r.Text, f.Command, res.Final, res.OverriddenBy, want)
				}
				m := res.Rules
				if m.Command == "" {
					t.Errorf("match names no command: %+v", m)
				}
				if m.FailClosed != (m.Unresolved != "") {
					t.Errorf("FailClosed=%v but Unresolved=%q", m.FailClosed, m.Unresolved)
				}
				t.Logf("%s: command %q fail_closed=%v unresolved=%q", l, m.Command, m.FailClosed, m.Unresolved)
			}
		})
	}
}

// TestMatchTextBounded: what a match reports about a huge command is clipped.
func TestMatchTextBounded(t *testing.T) {
	r, _ := Parse("Bash(rm:*)", Deny, projectOrigin)
	for _, cmd := range []string{
		strings.Repeat("echo x; ", 1<<18), "bash -c \"$X " + strings.Repeat("y", 100000) + "\"",
		strings.Repeat("echo x; ", 10<<20/8),                                    // 10 MB wide
		strings.Repeat("$(", 10<<20/3) + "rm x" + strings.Repeat(")", 10<<20/3), // 10 MB nested
	} {
		m := NewSet([]*Rule{r}).Evaluate(Call{Tool: "Bash", Input: map[string]any{"command": cmd}})
		if m.Decision != DecisionDeny || len(m.Command) > 1100 || len(m.Unresolved) > 1100 {
			t.Errorf("%d-byte command: decision %q, command %d bytes, unresolved %d bytes", len(cmd), m.Decision, len(m.Command), len(m.Unresolved))
		}
	}
}
