package rules

import (
	"strings"
	"testing"
)

// fuzzCalls are evaluated against every rule FuzzParse manages to compile.
var fuzzCalls = []Call{
	{Tool: "Bash", Input: map[string]any{"command": "git push origin main && rm -rf /tmp/x"}, Cwd: "/proj", Home: "/home/u"},
	{Tool: "Bash", Input: map[string]any{"command": "echo 'unterminated"}, Cwd: "/proj"},
	{Tool: "Bash", Input: map[string]any{"command": "echo x > .env", "run_in_background": true}, Cwd: "/proj"},
	{Tool: "Read", Input: map[string]any{"file_path": "/proj/src/../.env"}, Cwd: "/proj", Home: "/home/u"},
	{Tool: "Edit", Input: map[string]any{"file_path": "src/a.go"}, Cwd: "/proj"},
	{Tool: "Glob", Input: map[string]any{"pattern": "*"}, Cwd: "/"},
	{Tool: "WebFetch", Input: map[string]any{"url": "https://a.b.example.com:8080/x"}},
	{Tool: "WebFetch", Input: map[string]any{"url": "http://[::1"}},
	{Tool: "Agent", Input: map[string]any{"subagent_type": "x:y", "model": 3.5}},
	{Tool: "Skill", Input: map[string]any{"skill": "commit", "args": "-m x"}},
	{Tool: "PowerShell", Input: map[string]any{"command": "Get-Date; Remove-Item x"}},
	{Tool: "mcp__github__create_issue", Input: nil},
	{Tool: "", Input: map[string]any{"command": 5, "file_path": []any{1}}},
}

func FuzzParse(f *testing.F) {
	for _, tt := range parseErrorTests {
		f.Add(tt.rule)
	}
	for _, c := range loadConformance(f) {
		for _, l := range [][]string{c.Rules.Allow, c.Rules.Ask, c.Rules.Deny} {
			for _, r := range l {
				f.Add(r)
			}
		}
	}
	for _, s := range []string{"Bash(echo \")\")", "Read(~/../x)", "Read(//)", "Read(/)", "Read(~)", "Read(..)",
		"WebFetch(domain:*)", "mcp__a__b__c", "Edit(dir/)", "Read(**)", "Bash(\\*)", "Bash(x\\)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		set := []*Rule{}
		for _, l := range []List{Allow, Ask, Deny} {
			r, err := Parse(text, l, projectOrigin)
			if err != nil {
				if r != nil {
					t.Fatalf("Parse(%q) returned a rule and an error", text)
				}
				if !strings.HasPrefix(err.Error(), "rules: ") {
					t.Fatalf("Parse(%q) error %q lacks the rules: prefix", text, err)
				}
				continue
			}
			if r.Text != strings.TrimSpace(text) {
				t.Fatalf("Parse(%q).Text = %q", text, r.Text)
			}
			set = append(set, r)
		}
		s := NewSet(set)
		f, ferr := ParseIf(text, projectOrigin)
		for _, c := range fuzzCalls {
			m := s.Evaluate(c)
			if (m.Decision == None) != (m.Rule == nil) {
				t.Fatalf("Evaluate: decision %q with rule %v", m.Decision, m.Rule)
			}
			Resolve(DecisionAllow, s, c)
			if ferr == nil {
				f.Matches(c)
			}
		}
	})
}
