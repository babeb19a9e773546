package rules

import (
	"strings"
	"testing"
)

var projectOrigin = Origin{File: "/proj/.claude/settings.json", Source: "project", Base: "/proj"}

var parseErrorTests = []struct {
	rule string
	list List
	err  string // substring of the error
}{
	{"", Deny, "empty rule"},
	{"   ", Allow, "empty rule"},
	{"Bash()", Allow, "empty specifier"},
	{"Bash(  )", Deny, "empty specifier"},
	{"Read(", Deny, "missing closing parenthesis"},
	{"Read(.env", Deny, "missing closing parenthesis"},
	{"Bash(ls))", Deny, "unbalanced parentheses"},
	{"Bash((ls)", Deny, "unbalanced parentheses"},
	{"Bash(ls)x", Deny, "unexpected text after the closing parenthesis"},
	{"Bash)", Deny, "unbalanced parentheses"},
	{"(ls)", Deny, "missing tool name"},
	{"Bash (ls)", Deny, "space in tool name"},
	{"Ba.sh", Deny, "invalid character '.'"},
	{"Bash/ls", Deny, "invalid character '/'"},
	{"Bash(:*)", Allow, "empty command before legacy :* suffix"},
	{"*", Allow, "bare * allow rule"},
	{"*(x)", Deny, "* takes no specifier"},
	{"Ba*", Allow, "tool-name globs in allow rules"},
	{"Ba*(ls)", Deny, "tool-name glob takes no specifier"},
	{"mcp__*", Allow, "tool-name globs in allow rules must follow a literal mcp__<server>__"},
	{"mcp__gh*__x", Allow, "tool-name globs in allow rules"},
	{"mcp__", Deny, "missing MCP server name"},
	{"mcp__github__", Deny, "missing MCP tool name"},
	{"mcp__github__create_issue(title:x)", Deny, "MCP rules take no specifier"},
	{"Bash(run_in_background:true)", Allow, "only allowed in deny and ask lists"},
	{"Agent(model:opus)", Allow, "only allowed in deny and ask lists"},
	{"Bash(command:rm *)", Deny, "use Bash(<command>) instead"},
	{"Bash(command:rm *)", Ask, "Claude Code ignores such param rules"},
	{"Agent(subagent_type:Explore)", Deny, "use Agent(<subagent_type>) instead"},
	{"WebFetch(url:https://x)", Deny, "use WebFetch(domain:<host>) instead"},
	{"Read(file_path:/etc/passwd)", Deny, "use Read(<path>) instead"},
	{"Agent(model:)", Deny, "empty value in param rule"},
	{"Write(src/**)", Allow, "written Edit(path)"},
	{"MultiEdit(*.go)", Deny, "written Edit(path)"},
	{"NotebookEdit(*.ipynb)", Deny, "written Edit(path)"},
	{"Glob(src/**)", Allow, "written Read(path)"},
	{"Grep(src/**)", Deny, "written Read(path)"},
	{"WebFetch(example.com)", Allow, "WebFetch(domain:example.com)"},
	{"WebFetch(domain:)", Allow, "empty domain"},
	{"WebFetch(domain:https://example.com)", Allow, "invalid character ':'"},
	{"WebFetch(domain:example.com/path)", Allow, "invalid character '/'"},
	{"WebFetch(domain:example..com)", Allow, "empty label"},
	{"WebFetch(domain:**.example.com)", Deny, "'**' is not allowed"},
	{"Read(~bob/.ssh/**)", Deny, "~user paths are not supported"},
	{"Read(src/[a-)", Deny, "invalid glob pattern"},
	{"Bash(ls)", "maybe", "unknown list"},
	{"Bash(ls)", ifList, "unknown list"},
}

func TestParseErrors(t *testing.T) {
	for _, tt := range parseErrorTests {
		r, err := Parse(tt.rule, tt.list, projectOrigin)
		if err == nil {
			t.Errorf("Parse(%q, %s) = %+v, want error containing %q", tt.rule, tt.list, r, tt.err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tt.err) {
			t.Errorf("Parse(%q, %s) error = %q, want it to contain %q", tt.rule, tt.list, msg, tt.err)
		}
		if !strings.HasPrefix(msg, "rules: ") {
			t.Errorf("Parse(%q) error %q lacks the rules: prefix", tt.rule, msg)
		}
		if !strings.Contains(msg, strings.TrimSpace(tt.rule)) {
			t.Errorf("Parse(%q) error %q does not name the rule", tt.rule, msg)
		}
	}
}

func TestParseBaseRequiredForSlashPaths(t *testing.T) {
	_, err := Parse("Read(/secrets/**)", Deny, Origin{File: "x"})
	if err == nil || !strings.Contains(err.Error(), "no base directory") {
		t.Fatalf("err = %v, want a missing-base error", err)
	}
	_, err = Parse("Read(/secrets/**)", Deny, Origin{Base: "relative/dir"})
	if err == nil || !strings.Contains(err.Error(), "must be absolute") {
		t.Fatalf("err = %v, want an absolute-base error", err)
	}
	if _, err := Parse("Read(//secrets/**)", Deny, Origin{}); err != nil {
		t.Fatalf("//abs rules need no base: %v", err)
	}
}

// TestParseAccepts lists rules that must compile, with the list they are in.
func TestParseAccepts(t *testing.T) {
	tests := []struct {
		rule string
		list List
		spec specKind
	}{
		{"Bash", Allow, specNone},
		{"  Bash  ", Allow, specNone},
		{"Bash(*)", Allow, specNone},
		{"Bash( * )", Allow, specNone},
		{"Read(*)", Allow, specNone},
		{"*", Deny, specNone},
		{"*", Ask, specNone},
		{"mcp__github", Allow, specNone},
		{"mcp__github__*", Allow, specNone},
		{"mcp__github__get_*", Allow, specNone},
		{"mcp__*", Deny, specNone},
		{"mcp__brave-search__search", Allow, specNone},
		{"Bash(npm run build)", Allow, specBash},
		{"Bash(npm:*)", Allow, specBash},
		{"Bash(timeout:*)", Allow, specBash},
		{`Bash(echo ")")`, Allow, specBash},
		{`Bash(echo \))`, Allow, specBash},
		{"Bash(git commit -m \"fix(x): y\")", Allow, specBash},
		{"Bash(echo a:b)", Allow, specBash},
		{"Bash(run_in_background:true)", Deny, specParam},
		{"Bash(run_in_background:true)", Ask, specParam},
		{"PowerShell(Remove-Item *)", Deny, specPowerShell},
		{"Read(.env)", Allow, specPath},
		{"Read(//etc/**)", Deny, specPath},
		{"Read(~/.ssh/**)", Deny, specPath},
		{"Read(/src/**)", Deny, specPath},
		{"Read(./x)", Deny, specPath},
		{"Read(../x/**)", Deny, specPath},
		{"Read(foo(1).txt)", Deny, specPath},
		{"Edit(src/**)", Allow, specPath},
		{"Edit(**/*.{ts,tsx})", Allow, specPath},
		{"WebFetch(domain:example.com)", Allow, specDomain},
		{"WebFetch(domain:*.example.com)", Allow, specDomain},
		{"WebFetch(prompt:*secret*)", Deny, specParam},
		{"Agent(Explore)", Deny, specAgent},
		{"Task(Explore)", Deny, specAgent},
		{"Agent(my-plugin:reviewer)", Allow, specAgent},
		{"Agent(model:opus)", Deny, specParam},
		{"Skill(commit *)", Allow, specSkill},
		{"Skill(acme:deploy)", Allow, specSkill},
		{"WebSearch(*weather*)", Allow, specGeneric},
		{"Cd(../*)", Allow, specGeneric},
		{"Write", Allow, specNone},
		{"Write(content:*BEGIN RSA*)", Deny, specParam},
	}
	for _, tt := range tests {
		r, err := Parse(tt.rule, tt.list, projectOrigin)
		if err != nil {
			t.Errorf("Parse(%q, %s): %v", tt.rule, tt.list, err)
			continue
		}
		if r.spec != tt.spec {
			t.Errorf("Parse(%q).spec = %d, want %d", tt.rule, r.spec, tt.spec)
		}
		if r.Text != strings.TrimSpace(tt.rule) || r.List != tt.list || r.Origin != projectOrigin {
			t.Errorf("Parse(%q) kept Text=%q List=%q Origin=%+v", tt.rule, r.Text, r.List, r.Origin)
		}
	}
}

func TestSetLenAndNil(t *testing.T) {
	var rs []*Rule
	for _, x := range []struct {
		t string
		l List
	}{{"Bash", Allow}, {"Read(.env)", Deny}, {"Bash(git *)", Ask}, {"WebFetch", Allow}} {
		r, err := Parse(x.t, x.l, projectOrigin)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	rs = append(rs, nil)
	s := NewSet(rs)
	if s.Len() != 4 {
		t.Errorf("Len = %d, want 4", s.Len())
	}
	if got := s.Rules(Allow); len(got) != 2 || got[0].Text != "Bash" || got[1].Text != "WebFetch" {
		t.Errorf("allow order not kept: %v", got)
	}
	var nilSet *Set
	if nilSet.Len() != 0 || nilSet.Evaluate(Call{Tool: "Bash"}).Decision != None {
		t.Error("nil set must be empty")
	}
	if r := Resolve(DecisionAllow, nil, Call{Tool: "Bash"}); r.Final != DecisionAllow || r.Source != "hook" {
		t.Errorf("Resolve with nil set = %+v", r)
	}
	if r := Resolve("bogus", s, Call{Tool: "Bash", Input: map[string]any{"command": "ls"}}); r.Final != DecisionAllow || r.Source != "rule" {
		t.Errorf("unknown hook decision should act as none: %+v", r)
	}
}

func TestParamStringForms(t *testing.T) {
	tests := []struct {
		v    any
		want string
		ok   bool
	}{
		{"x", "x", true},
		{true, "true", true},
		{false, "false", true},
		{float64(600000), "600000", true},
		{1.5, "1.5", true},
		{int(3), "3", true},
		{nil, "", false},
		{map[string]any{}, "", false},
		{[]any{"a"}, "", false},
	}
	for _, tt := range tests {
		got, ok := paramString(tt.v)
		if got != tt.want || ok != tt.ok {
			t.Errorf("paramString(%#v) = %q, %v; want %q, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}
