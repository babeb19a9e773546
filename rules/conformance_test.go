package rules

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// conformanceCase is one entry of testdata/conformance.json. The file is a
// hand-written specification of Claude Code's permission-rule behaviour
// (spec §8) plus hookd's documented choices; it is deliberately not
// regenerated from the implementation.
type conformanceCase struct {
	Name  string `json:"name"`
	Note  string `json:"note,omitempty"`
	Rules struct {
		Allow []string `json:"allow"`
		Ask   []string `json:"ask"`
		Deny  []string `json:"deny"`
	} `json:"rules"`
	// Sources optionally names the settings source of each list, e.g.
	// {"deny": "user", "allow": "project"}; rules are pooled regardless.
	Sources map[string]string `json:"sources,omitempty"`
	Base    string            `json:"base,omitempty"` // Origin.Base; default /proj
	Call    struct {
		Tool  string         `json:"tool"`
		Input map[string]any `json:"input"`
		Cwd   string         `json:"cwd,omitempty"`  // default /proj
		Home  string         `json:"home,omitempty"` // default /home/u
	} `json:"call"`
	Hook string `json:"hook"`
	Want struct {
		Decision     string `json:"decision"`
		MatchedRule  string `json:"matched_rule"`
		Source       string `json:"source"`
		OverriddenBy string `json:"overridden_by"`
		FailClosed   bool   `json:"fail_closed,omitempty"`
	} `json:"want"`
}

func loadConformance(t testing.TB) []conformanceCase {
	t.Helper()
	data, err := os.ReadFile("testdata/conformance.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cases []conformanceCase
	if err := dec.Decode(&cases); err != nil {
		t.Fatalf("testdata/conformance.json: %v", err)
	}
	return cases
}

// buildCase compiles a case's rules and call.
func buildCase(t testing.TB, c conformanceCase) (*Set, Call) {
	t.Helper()
	base := c.Base
	if base == "" {
		base = "/proj"
	}
	var rs []*Rule
	for _, l := range []struct {
		list  List
		rules []string
	}{{Deny, c.Rules.Deny}, {Ask, c.Rules.Ask}, {Allow, c.Rules.Allow}} {
		src := c.Sources[string(l.list)]
		if src == "" {
			src = "project"
		}
		origin := Origin{File: "/proj/.claude/settings.json", Source: src, Base: base}
		for i, text := range l.rules {
			r, err := Parse(text, l.list, origin)
			if err != nil {
				t.Fatalf("%s[%d]: %v", l.list, i, err)
			}
			rs = append(rs, r)
		}
	}
	call := Call{Tool: c.Call.Tool, Input: c.Call.Input, Cwd: c.Call.Cwd, Home: c.Call.Home}
	if call.Cwd == "" {
		call.Cwd = "/proj"
	}
	if call.Home == "" {
		call.Home = "/home/u"
	}
	return NewSet(rs), call
}

func TestConformance(t *testing.T) {
	cases := loadConformance(t)
	if len(cases) < 150 {
		t.Errorf("conformance suite has %d cases, want at least 150", len(cases))
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Errorf("duplicate case name %q", c.Name)
		}
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			set, call := buildCase(t, c)
			res := Resolve(Decision(c.Hook), set, call)
			got := struct{ decision, matched, source, overridden string }{
				string(res.Final), res.Rules.Rule.String(), res.Source, res.OverriddenBy.String(),
			}
			want := struct{ decision, matched, source, overridden string }{
				c.Want.Decision, c.Want.MatchedRule, c.Want.Source, c.Want.OverriddenBy,
			}
			if got != want {
				t.Errorf("got  decision=%q matched_rule=%q source=%q overridden_by=%q\nwant decision=%q matched_rule=%q source=%q overridden_by=%q",
					got.decision, got.matched, got.source, got.overridden,
					want.decision, want.matched, want.source, want.overridden)
			}
			if res.Rules.FailClosed != c.Want.FailClosed {
				t.Errorf("fail_closed = %v, want %v", res.Rules.FailClosed, c.Want.FailClosed)
			}
			if res.HookDecision != Decision(c.Hook) {
				t.Errorf("HookDecision = %q, want %q", res.HookDecision, c.Hook)
			}
		})
	}
}
