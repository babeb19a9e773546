package matcher

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern string
		narrow  bool
		value   string
		want    bool
	}{
		{"", false, "Bash", true},
		{"*", false, "Bash", true},
		{"  ", false, "anything", true},
		{"Bash", false, "Bash", true},
		{"Bash", false, "bash", false}, // case-sensitive
		{"Bash", false, "BashOutput", false},
		{"Edit|Write", false, "Write", true},
		{"Edit|Write", false, "NotebookEdit", false},
		{"Edit, Write", false, "Write", true}, // comma + whitespace (2.1.191)
		{"Edit ,Write", false, "Edit", true},
		{"code-reviewer", false, "code-reviewer", true}, // hyphen exact (2.1.195)
		{"code-reviewer", false, "my-code-reviewer", false},
		{"mcp__memory", false, "mcp__memory__create", false}, // exact: matches no tool
		{"mcp__memory__.*", false, "mcp__memory__create", true},
		{"Edit.*", false, "NotebookEdit", true}, // unanchored regex
		{"^Edit$", false, "NotebookEdit", false},
		{"^Edit$", false, "Edit", true},
		{"^(Edit|Write)$", false, "Write", true},
		{"Notebook.*", false, "NotebookEdit", true},
		{"^my-plugin:reviewer$", false, "my-plugin:reviewer", true},
		{"|", false, "Bash", false},
		{"startup|resume", false, "resume", true},
		{"startup|resume", false, "clear", false},
		// FileChanged / StopFailure: narrow set.
		{".envrc|package.json", true, ".envrc", true}, // has '.', so regex
		{"envrc|Makefile", true, "Makefile", true},
		{"rate_limit|overloaded", true, "overloaded", true},
		{"rate_limit, overloaded", true, "overloaded", false}, // comma is regex here
		{"*", true, "*", true},
		{"*", true, "Makefile", false},
		{"", true, "Makefile", true},
		{"server-error", true, "server-error", true}, // hyphen → regex (narrow), still matches itself
		{"server-error", true, "xserver-errorx", true},
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern, tt.narrow)
		if err != nil {
			t.Fatalf("Compile(%q, %v): %v", tt.pattern, tt.narrow, err)
		}
		if got := m.Match(tt.value); got != tt.want {
			t.Errorf("Compile(%q, narrow=%v).Match(%q) = %v, want %v", tt.pattern, tt.narrow, tt.value, got, tt.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, p := range []string{"(", "Edit(", "[a-", "(?<=x", `a{2,1}`} {
		_, err := Compile(p, false)
		if err == nil {
			t.Errorf("Compile(%q) succeeded, want error", p)
			continue
		}
		if !strings.Contains(err.Error(), "invalid matcher regex") || !strings.Contains(err.Error(), "JavaScript") {
			t.Errorf("Compile(%q) error %q does not say what failed", p, err)
		}
	}
}

// TestMatchAgreesWithJavaScript uses Node's RegExp — what Claude Code evaluates matchers
// with — as the oracle for every regex form, RE2-compiled and JavaScript-only alike.
func TestMatchAgreesWithJavaScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is required in CI (the JavaScript RegExp oracle)")
		}
		t.Skip("SKIP (loud): node not on PATH; the JavaScript RegExp oracle cannot run")
	}
	patterns := []string{"Edit.*", "^Edit$", "^(Edit|Write)$", "mcp__.*__create", "Bash|Monitor$",
		"^(?!Monitor).*$", "^(?!Bash$).*", "(?=.*Edit)^Notebook", "(?<!Notebook)Edit$", "(?<=mcp__)memory",
		`^(\w)\w*\1$`, `(Edit)|\1x`, "^(?:(?!Read).)*$", "Write(?=$)", "^.*(?<!Output)$"}
	values := []string{"Bash", "Monitor", "Edit", "NotebookEdit", "Write", "Read", "BashOutput",
		"mcp__memory__create", "aXa", "", "WebFetch", "ReadMcpResource"}
	in, _ := json.Marshal(map[string]any{"p": patterns, "v": values})
	cmd := exec.Command(node, "-e", `let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const x=JSON.parse(s);`+
		`console.log(JSON.stringify(x.p.map(p=>x.v.map(v=>new RegExp(p).test(v)))))})`)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want [][]bool
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("node output %q: %v", out, err)
	}
	for i, p := range patterns {
		m, err := Compile(p, false)
		if err != nil {
			t.Errorf("Compile(%q): %v (JavaScript accepts it)", p, err)
			continue
		}
		if !m.IsRegex() {
			t.Fatalf("%q compiled as an exact list", p)
		}
		for j, v := range values {
			if got := m.Match(v); got != want[i][j] {
				t.Errorf("matcher %q on %q: hookd %v, JavaScript %v", p, v, got, want[i][j])
			}
		}
	}
}

func TestNilAndAll(t *testing.T) {
	var m *Matcher
	if !m.Match("x") || !m.MatchesAll() || !All.Match("x") {
		t.Fatal("nil / All matcher must match everything")
	}
	r, _ := Compile("a.b", false)
	if !r.IsRegex() || r.MatchesAll() || r.String() != "a.b" {
		t.Fatal("regex matcher reports wrong shape")
	}
	l, _ := Compile("A|B", false)
	if got := l.Names(); len(got) != 2 || got[0] != "A" || got[1] != "B" {
		t.Fatalf("Names() = %v", got)
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{"", "*", "Bash", "Edit|Write", "Edit, Write", "Edit.*", "^Edit$", "(", "mcp__x__.*", "a-b", "(?=x)"} {
		f.Add(s, false, "Bash")
		f.Add(s, true, "NotebookEdit")
	}
	f.Fuzz(func(t *testing.T, pattern string, narrow bool, value string) {
		m, err := Compile(pattern, narrow)
		if err != nil {
			if m != nil {
				t.Fatal("non-nil matcher with error")
			}
			return
		}
		got := m.Match(value)
		if m.MatchesAll() && !got {
			t.Fatalf("match-all matcher %q rejected %q", pattern, value)
		}
		// Exact lists must agree with a direct membership test.
		if names := m.Names(); names != nil && !m.IsRegex() {
			want := false
			for _, n := range names {
				want = want || n == value
			}
			if got != want {
				t.Fatalf("list %q Match(%q) = %v, want %v", pattern, value, got, want)
			}
		}
	})
}
