package settings

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/rules"
)

// tree is a set of settings files on disk, by kind.
type tree struct {
	src  Sources
	root string
}

func newTree(t testing.TB) *tree {
	root := t.TempDir()
	return &tree{root: root, src: Sources{
		ManagedDir: filepath.Join(root, "etc"),
		Home:       filepath.Join(root, "home"),
		ProjectDir: filepath.Join(root, "proj"),
	}}
}

// set writes the file of kind (managed, user, project, local, or "flag:<name>",
// "managed.d:<name>", "hookd:<origin>:<name>").
func (tr *tree) set(t testing.TB, kind, text string) string {
	t.Helper()
	var path string
	switch {
	case kind == "managed":
		path = filepath.Join(tr.src.ManagedDir, "managed-settings.json")
	case strings.HasPrefix(kind, "managed.d:"):
		path = filepath.Join(tr.src.ManagedDropInDir(), strings.TrimPrefix(kind, "managed.d:"))
	case kind == "user":
		path = filepath.Join(tr.src.Home, ".claude", "settings.json")
	case kind == "project":
		path = filepath.Join(tr.src.ProjectDir, ".claude", "settings.json")
	case kind == "local":
		path = filepath.Join(tr.src.ProjectDir, ".claude", "settings.local.json")
	case strings.HasPrefix(kind, "flag:"):
		path = filepath.Join(tr.root, strings.TrimPrefix(kind, "flag:"))
		tr.src.Extra = append(tr.src.Extra, FileRef{Path: path, Kind: KindFlag})
	case strings.HasPrefix(kind, "hookd:"):
		origin, name, _ := strings.Cut(strings.TrimPrefix(kind, "hookd:"), ":")
		path = filepath.Join(tr.root, "state", name)
		tr.src.Extra = append(tr.src.Extra, FileRef{Path: path, Kind: KindHookd, Origin: Kind(origin)})
	default:
		t.Fatalf("unknown kind %q", kind)
	}
	return write(t, path, text)
}

// compile loads every file of the tree and compiles a snapshot; invalid files fail the test.
func (tr *tree) compile(t testing.TB) *Snapshot {
	t.Helper()
	var files []*File
	for _, ref := range tr.src.Files() {
		f, err := LoadFile(ref, tr.src.Home)
		if err != nil {
			if os.IsNotExist(err) {
				files = append(files, nil)
				continue
			}
			t.Fatalf("load %s: %v", ref.Path, err)
		}
		files = append(files, f)
	}
	return Compile(files)
}

// hooksJSON builds {"hooks": {event: [{"matcher": m, "hooks": [command handlers]}]}}.
func hooksJSON(event, matcher string, commands ...string) string {
	var hs []string
	for _, c := range commands {
		hs = append(hs, fmt.Sprintf(`{"type": "command", "command": %q}`, c))
	}
	m := ""
	if matcher != "" {
		m = fmt.Sprintf(`"matcher": %q, `, matcher)
	}
	return fmt.Sprintf(`{"hooks": {%q: [{%s"hooks": [%s]}]}}`, event, m, strings.Join(hs, ", "))
}

func ev(t testing.TB, name string) *events.Event {
	t.Helper()
	e, ok := events.Lookup(name)
	if !ok {
		t.Fatalf("no event %s", name)
	}
	return e
}

func commands(hs []*Handler) []string {
	out := []string{}
	for _, h := range hs {
		switch h.Type {
		case events.Command:
			out = append(out, h.Command)
		case events.HTTP:
			out = append(out, h.URL)
		default:
			out = append(out, string(h.Type))
		}
	}
	return out
}

func bashCall(cmd string) *rules.Call {
	return &rules.Call{Tool: "Bash", Input: map[string]any{"command": cmd}, Cwd: "/home/dev/proj", Home: "/home/dev"}
}

func TestMergeAdditiveInConfigurationOrder(t *testing.T) {
	tr := newTree(t)
	// Written in reverse to show the order comes from the hierarchy, not from disk.
	tr.set(t, "flag:extra.json", hooksJSON("PreToolUse", "Bash", "flag"))
	tr.set(t, "local", hooksJSON("PreToolUse", "Bash", "local"))
	tr.set(t, "project", hooksJSON("PreToolUse", "Bash", "project"))
	tr.set(t, "user", hooksJSON("PreToolUse", "Bash", "user"))
	tr.set(t, "managed.d:20.json", hooksJSON("PreToolUse", "Bash", "managed.d/20"))
	tr.set(t, "managed.d:10.json", hooksJSON("PreToolUse", "Bash", "managed.d/10"))
	tr.set(t, "managed", hooksJSON("PreToolUse", "Bash", "managed"))
	s := tr.compile(t)

	run, notRun := s.Match(Query{Event: ev(t, "PreToolUse"), MatchValue: "Bash", Tool: bashCall("ls")})
	want := []string{"managed", "managed.d/10", "managed.d/20", "user", "project", "local", "flag"}
	if got := commands(run); !reflect.DeepEqual(got, want) || len(notRun) != 0 {
		t.Errorf("run = %v (notRun %v), want %v", got, commands(notRun), want)
	}
	if len(s.Files) != 7 {
		t.Errorf("%d files", len(s.Files))
	}
	sources := []Kind{}
	for _, h := range run {
		sources = append(sources, h.Source)
	}
	if !reflect.DeepEqual(sources, []Kind{"managed", "managed", "managed", "user", "project", "local", "flag"}) {
		t.Errorf("sources = %v", sources)
	}
	if got := s.HandlersFor("PreToolUse"); len(got) != 7 {
		t.Errorf("HandlersFor = %d", len(got))
	}
	if run, _ := s.Match(Query{Event: ev(t, "PreToolUse"), MatchValue: "Read"}); len(run) != 0 {
		t.Errorf("Read matched %v", commands(run))
	}
}

func TestDedup(t *testing.T) {
	tr := newTree(t)
	tr.set(t, "user", `{"hooks": {"PreToolUse": [
		{"matcher": "Bash", "hooks": [{"type": "command", "command": "same"}, {"type": "command", "command": "u-only"}]},
		{"matcher": "*", "hooks": [{"type": "command", "command": "same", "timeout": 5}]},
		{"matcher": "Bash", "hooks": [{"type": "command", "command": "same", "args": ["x"]}]}
	]}}`)
	tr.set(t, "project", `{"hooks": {"PreToolUse": [
		{"matcher": "Read", "hooks": [{"type": "command", "command": "read-first"}]},
		{"matcher": "Bash|Read", "hooks": [{"type": "command", "command": "same"}, {"type": "command", "command": "read-first"},
			{"type": "http", "url": "http://h"}, {"type": "http", "url": "http://h"}, {"type": "prompt", "prompt": "p"}]}
	]}}`)
	tr.set(t, "local", `{"hooks": {"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "p"}]}]}}`)
	s := tr.compile(t)

	run, notRun := s.Match(Query{Event: ev(t, "PreToolUse"), MatchValue: "Bash", Tool: bashCall("ls")})
	if got, want := commands(run), []string{"same", "u-only", "same", "read-first", "http://h"}; !reflect.DeepEqual(got, want) {
		t.Errorf("run = %v, want %v", got, want)
	}
	if run[0].ID != "user:"+filepath.Join(tr.src.Home, ".claude", "settings.json")+"#PreToolUse[0].hooks[0]" {
		t.Errorf("first copy not kept: %s", run[0].ID)
	}
	if run[2].Args == nil {
		t.Errorf("exec form with args is a different handler: %+v", run[2])
	}
	if len(notRun) != 1 || notRun[0].Source != KindProject {
		t.Errorf("notRun = %v", notRun)
	}
	// A copy that does not match must not use up the key: for Read, the project's
	// "read-first" in group 0 runs and the later one is the duplicate.
	run, _ = s.Match(Query{Event: ev(t, "PreToolUse"), MatchValue: "Read"})
	if got, want := commands(run), []string{"same", "read-first", "http://h"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Read: run = %v, want %v", got, want)
	}
	if run[0].Group != 1 || run[0].Source != KindUser {
		t.Errorf("Read: %s", run[0].ID)
	}
}

func TestDisableAllHooksPrecedence(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // kind → disableAllHooks JSON value
		want  []string          // commands that run
		dis   bool
		mgd   bool
	}{
		{"none", nil, []string{"managed", "user", "project", "local"}, false, false},
		{"user true", map[string]string{"user": "true"}, []string{"managed"}, true, false},
		{"user true, project false", map[string]string{"user": "true", "project": "false"}, []string{"managed", "user", "project", "local"}, false, false},
		{"project true, local false", map[string]string{"project": "true", "local": "false"}, []string{"managed", "user", "project", "local"}, false, false},
		{"project false, local true", map[string]string{"project": "false", "local": "true"}, []string{"managed"}, true, false},
		{"flag true beats local false", map[string]string{"local": "false", "flag:f.json": "true"}, []string{"managed"}, true, false},
		{"managed true: nothing runs", map[string]string{"managed": "true"}, nil, true, true},
		{"managed true beats project false", map[string]string{"managed": "true", "project": "false"}, nil, true, true},
		{"managed false beats user true", map[string]string{"managed": "false", "user": "true"}, []string{"managed", "user", "project", "local"}, false, false},
		{"drop-in overrides base", map[string]string{"managed": "false", "managed.d:x.json": "true"}, nil, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			for _, k := range []string{"managed", "user", "project", "local"} {
				text := hooksJSON("Stop", "", k)
				if v, ok := tt.files[k]; ok {
					text = strings.Replace(text, "{", `{"disableAllHooks": `+v+", ", 1)
				}
				tr.set(t, k, text)
			}
			for k, v := range tt.files {
				if strings.Contains(k, ":") {
					tr.set(t, k, `{"disableAllHooks": `+v+`}`)
				}
			}
			s := tr.compile(t)
			run, notRun := s.Match(Query{Event: ev(t, "Stop")})
			if got := commands(run); !reflect.DeepEqual(got, append([]string{}, tt.want...)) {
				t.Errorf("run = %v, want %v", got, tt.want)
			}
			if len(notRun) != 0 {
				t.Errorf("disabled hooks are not reported as notRun: %v", commands(notRun))
			}
			if s.DisableAllHooks != tt.dis || s.DisableManagedToo != tt.mgd {
				t.Errorf("DisableAllHooks=%v DisableManagedToo=%v, want %v %v", s.DisableAllHooks, s.DisableManagedToo, tt.dis, tt.mgd)
			}
			for _, h := range s.HandlersFor("Stop") {
				ran := false
				for _, r := range run {
					ran = ran || r == h
				}
				if ran != (s.Reason(h) == "") {
					t.Errorf("%s: ran=%v but Reason=%q", h.Command, ran, s.Reason(h))
				}
			}
		})
	}
}

func TestAllowManagedHooksOnly(t *testing.T) {
	tests := []struct {
		name    string
		managed string
		user    string
		want    []string
		only    bool
	}{
		{"managed true", `"allowManagedHooksOnly": true`, ``, []string{"managed", "moved-managed"}, true},
		{"managed invalid value reads as true", `"allowManagedHooksOnly": "no"`, ``, []string{"managed", "moved-managed"}, true},
		{"managed false", `"allowManagedHooksOnly": false`, ``, []string{"managed", "user", "project", "moved-managed", "moved-project"}, false},
		{"user cannot set it", ``, `"allowManagedHooksOnly": true`, []string{"managed", "user", "project", "moved-managed", "moved-project"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			with := func(extra, text string) string {
				if extra == "" {
					return text
				}
				return strings.Replace(text, "{", "{"+extra+", ", 1)
			}
			tr.set(t, "managed", with(tt.managed, hooksJSON("PreToolUse", "", "managed")))
			tr.set(t, "user", with(tt.user, hooksJSON("PreToolUse", "", "user")))
			tr.set(t, "project", hooksJSON("PreToolUse", "", "project"))
			// hookd-owned files keep the standing of the file their hooks came from.
			tr.set(t, "hookd:managed:m.json", hooksJSON("PreToolUse", "", "moved-managed"))
			tr.set(t, "hookd:project:p.json", hooksJSON("PreToolUse", "", "moved-project"))
			s := tr.compile(t)
			run, _ := s.Match(Query{Event: ev(t, "PreToolUse"), MatchValue: "Bash", Tool: bashCall("ls")})
			if got := commands(run); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("run = %v, want %v", got, tt.want)
			}
			if s.ManagedOnly != tt.only {
				t.Errorf("ManagedOnly = %v", s.ManagedOnly)
			}
		})
	}
}

func TestIfFilter(t *testing.T) {
	tr := newTree(t)
	tr.set(t, "project", `{"hooks": {
		"PreToolUse": [{"matcher": "Bash", "hooks": [
			{"type": "command", "command": "git-guard", "if": "Bash(git *)"},
			{"type": "command", "command": "always"}]}],
		"Stop": [{"hooks": [{"type": "command", "command": "stop-if", "if": "Bash(git *)"}, {"type": "command", "command": "stop"}]}],
		"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "ups-if", "if": "Bash"}]}]
	}}`)
	s := tr.compile(t)
	pre := ev(t, "PreToolUse")
	tests := []struct {
		name string
		q    Query
		want []string
	}{
		{"if matches", Query{Event: pre, MatchValue: "Bash", Tool: bashCall("git status")}, []string{"git-guard", "always"}},
		{"if does not match", Query{Event: pre, MatchValue: "Bash", Tool: bashCall("npm test")}, []string{"always"}},
		{"no tool call: the guard still runs", Query{Event: pre, MatchValue: "Bash"}, []string{"git-guard", "always"}},
		{"if on Stop never runs", Query{Event: ev(t, "Stop"), Tool: bashCall("git status")}, []string{"stop"}},
		{"if on UserPromptSubmit never runs", Query{Event: ev(t, "UserPromptSubmit")}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, notRun := s.Match(tt.q)
			if got := commands(run); !reflect.DeepEqual(got, tt.want) || len(notRun) != 0 {
				t.Errorf("run = %v notRun = %v, want %v", got, commands(notRun), tt.want)
			}
		})
	}
	for _, h := range s.HandlersFor("Stop") {
		if h.Command == "stop-if" && !strings.Contains(s.Reason(h), "only on tool events") {
			t.Errorf("Reason = %q", s.Reason(h))
		}
	}
}

func TestNotRunnableTypes(t *testing.T) {
	tr := newTree(t)
	tr.set(t, "user", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
		{"type": "prompt", "prompt": "is this safe? $ARGUMENTS"},
		{"type": "command", "command": "c"},
		{"type": "agent", "prompt": "check"},
		{"type": "mcp_tool", "server": "sec", "tool": "scan"},
		{"type": "http", "url": "http://127.0.0.1:9/x"}
	]}]}}`)
	s := tr.compile(t)
	run, notRun := s.Match(Query{Event: ev(t, "PreToolUse"), MatchValue: "Bash", Tool: bashCall("ls")})
	if got := commands(run); !reflect.DeepEqual(got, []string{"c", "http://127.0.0.1:9/x"}) {
		t.Errorf("run = %v", got)
	}
	if got := commands(notRun); !reflect.DeepEqual(got, []string{"prompt", "agent", "mcp_tool"}) {
		t.Errorf("notRun = %v", got)
	}
	for _, h := range notRun {
		if h.Runnable || !strings.Contains(s.Reason(h), "not run") {
			t.Errorf("%s: Runnable=%v Reason=%q", h.Type, h.Runnable, s.Reason(h))
		}
	}
	for _, h := range run {
		if !h.Runnable || s.Reason(h) != "" {
			t.Errorf("%s: Runnable=%v Reason=%q", h.Type, h.Runnable, s.Reason(h))
		}
	}
}

func TestHTTPAllowlist(t *testing.T) {
	handlers := `{"hooks": {"Stop": [{"hooks": [
		{"type": "http", "url": "https://hooks.example.com/stop"},
		{"type": "http", "url": "http://127.0.0.1:8080/x"},
		{"type": "http", "url": "https://evil.example.net/"},
		{"type": "command", "command": "c"}]}]}}`
	tests := []struct {
		name    string
		files   map[string]string
		run     []string
		notRun  []string
		set     bool
		allowed []string
	}{
		{"not set: all run", nil,
			[]string{"https://hooks.example.com/stop", "http://127.0.0.1:8080/x", "https://evil.example.net/", "c"}, []string{}, false, nil},
		{"merged across files", map[string]string{"user": `["https://hooks.example.com/*"]`, "managed": `["http://127.0.0.1:*"]`},
			[]string{"https://hooks.example.com/stop", "http://127.0.0.1:8080/x", "c"}, []string{"https://evil.example.net/"}, true,
			[]string{"http://127.0.0.1:*", "https://hooks.example.com/*"}},
		{"exact", map[string]string{"project": `["https://evil.example.net/"]`},
			[]string{"https://evil.example.net/", "c"}, []string{"https://hooks.example.com/stop", "http://127.0.0.1:8080/x"}, true, nil},
		{"empty array blocks all", map[string]string{"local": `[]`},
			[]string{"c"}, []string{"https://hooks.example.com/stop", "http://127.0.0.1:8080/x", "https://evil.example.net/"}, true, []string{}},
		{"star allows all", map[string]string{"local": `["*"]`},
			[]string{"https://hooks.example.com/stop", "http://127.0.0.1:8080/x", "https://evil.example.net/", "c"}, []string{}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			tr.set(t, "project", handlers)
			for k, v := range tt.files {
				if k == "project" {
					tr.set(t, k, strings.Replace(handlers, "{", `{"allowedHttpHookUrls": `+v+", ", 1))
				} else {
					tr.set(t, k, `{"allowedHttpHookUrls": `+v+`}`)
				}
			}
			s := tr.compile(t)
			run, notRun := s.Match(Query{Event: ev(t, "Stop")})
			if got := commands(run); !reflect.DeepEqual(got, tt.run) {
				t.Errorf("run = %v, want %v", got, tt.run)
			}
			if got := commands(notRun); !reflect.DeepEqual(got, tt.notRun) {
				t.Errorf("notRun = %v, want %v", got, tt.notRun)
			}
			for _, h := range notRun {
				if !strings.Contains(s.Reason(h), "allowedHttpHookUrls") {
					t.Errorf("Reason = %q", s.Reason(h))
				}
			}
			if s.AllowedHTTPURLsSet != tt.set {
				t.Errorf("AllowedHTTPURLsSet = %v", s.AllowedHTTPURLsSet)
			}
			if tt.allowed != nil && !reflect.DeepEqual(s.AllowedHTTPURLs, tt.allowed) {
				t.Errorf("AllowedHTTPURLs = %#v, want %#v", s.AllowedHTTPURLs, tt.allowed)
			}
		})
	}
}

func TestURLGlob(t *testing.T) {
	tests := []struct {
		pattern, url string
		want         bool
	}{
		{"*", "anything", true},
		{"https://a.com/x", "https://a.com/x", true},
		{"https://a.com/x", "https://a.com/xy", false},
		{"https://a.com/*", "https://a.com/x/y?z", true},
		{"https://a.com/*", "https://a.com.evil/x", false},
		{"https://*.a.com/*", "https://b.a.com/p", true},
		{"https://*.a.com/*", "https://a.com/p", false},
		{"http://localhost:*/hook", "http://localhost:99/hook", true},
		{"http://localhost:*/hook", "http://localhost:99/hook/x", false},
		{"a*b*a", "aba", true},
		{"a*a", "a", false},
	}
	for _, tt := range tests {
		if got := compileURLGlob(tt.pattern).match(tt.url); got != tt.want {
			t.Errorf("%q ~ %q = %v, want %v", tt.pattern, tt.url, got, tt.want)
		}
	}
}

func TestHTTPEnvVars(t *testing.T) {
	tr := newTree(t)
	tr.set(t, "user", `{"httpHookAllowedEnvVars": ["TOKEN"], "hooks": {"Stop": [{"hooks": [
		{"type": "http", "url": "http://x", "headers": {"A": "$TOKEN $SECRET"}, "allowedEnvVars": ["TOKEN", "SECRET"]}]}]}}`)
	tr.set(t, "project", `{"httpHookAllowedEnvVars": ["OTHER"]}`)
	s := tr.compile(t)
	h := s.HandlersFor("Stop")[0]
	if got := s.EnvVarsFor(h); !reflect.DeepEqual(got, []string{"TOKEN"}) {
		t.Errorf("EnvVarsFor = %v", got)
	}
	if !reflect.DeepEqual(s.HTTPAllowedEnvVars, []string{"TOKEN", "OTHER"}) || !s.HTTPAllowedEnvVarsSet {
		t.Errorf("HTTPAllowedEnvVars = %v", s.HTTPAllowedEnvVars)
	}
	if got := Empty().EnvVarsFor(h); !reflect.DeepEqual(got, []string{"TOKEN", "SECRET"}) {
		t.Errorf("unset: EnvVarsFor = %v", got)
	}
}

func TestRulesPooled(t *testing.T) {
	tests := []struct {
		name    string
		managed string
		want    int
	}{
		{"pooled", `{"permissions": {"deny": ["Bash(rm *)"]}}`, 4},
		{"managed rules only", `{"allowManagedPermissionRulesOnly": true, "permissions": {"deny": ["Bash(rm *)"]}}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			tr.set(t, "managed", tt.managed)
			tr.set(t, "user", `{"permissions": {"allow": ["Bash(ls)"]}}`)
			tr.set(t, "project", `{"permissions": {"ask": ["Bash(git push *)"], "allow": ["Read"]}}`)
			s := tr.compile(t)
			if got := s.Rules.Len(); got != tt.want {
				t.Errorf("%d rules, want %d", got, tt.want)
			}
		})
	}
}

func TestEnvPrecedence(t *testing.T) {
	tr := newTree(t)
	tr.set(t, "managed", `{"env": {"M": "managed"}}`)
	tr.set(t, "user", `{"env": {"A": "user", "B": "user", "M": "user"}}`)
	tr.set(t, "project", `{"env": {"A": "project", "B": "project"}}`)
	tr.set(t, "local", `{"env": {"A": "local"}}`)
	s := tr.compile(t)
	want := map[string]string{"A": "local", "B": "project", "M": "managed"}
	if !reflect.DeepEqual(s.Env, want) {
		t.Errorf("Env = %v, want %v", s.Env, want)
	}
}

func TestMatchBasenameAndNoMatcherField(t *testing.T) {
	tr := newTree(t)
	tr.set(t, "project", `{"hooks": {
		"FileChanged": [{"matcher": ".envrc|package.json", "hooks": [{"type": "command", "command": "regex"}]},
		                {"matcher": "Makefile", "hooks": [{"type": "command", "command": "make"}]}],
		"Stop": [{"matcher": "nothing-matches-this", "hooks": [{"type": "command", "command": "stop"}]}]
	}}`)
	s := tr.compile(t)
	fc := ev(t, "FileChanged")
	for _, tt := range []struct {
		value string
		want  []string
	}{
		{"/home/dev/proj/Makefile", []string{"make"}},
		{"/home/dev/proj/.envrc", []string{"regex"}},
		{`C:\proj\Makefile`, []string{"make"}},
		{"/home/dev/proj/sub/Makefile.bak", []string{}},
	} {
		run, _ := s.Match(Query{Event: fc, MatchValue: tt.value})
		if got := commands(run); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("FileChanged %q: %v, want %v", tt.value, got, tt.want)
		}
	}
	run, _ := s.Match(Query{Event: ev(t, "Stop"), MatchValue: "whatever"})
	if got := commands(run); !reflect.DeepEqual(got, []string{"stop"}) {
		t.Errorf("Stop: %v (matcher must be ignored)", got)
	}
}

// TestGoldenPayloads runs Match on every payload Claude Code 2.1.330 sent, building the
// query the way the daemon does: hook_event_name, the matcher field's value, and for tool
// events tool_name/tool_input.
func TestGoldenPayloads(t *testing.T) {
	// Captured from real Claude Code 2.1.330; test/testdata/README.md has the provenance.
	dir := filepath.Join("..", "..", "test", "testdata", "payloads", "claude-code-2.1.330")
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(paths) == 0 {
		t.Fatalf("no payloads in %s", dir)
	}
	tr := newTree(t)
	tr.set(t, "project", `{"hooks": {
		"PreToolUse": [
			{"matcher": "Bash", "hooks": [{"type": "command", "command": "pre-bash"}]},
			{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "pre-edit"}]},
			{"matcher": "^(Read|Glob)$", "hooks": [{"type": "command", "command": "pre-read"}]},
			{"matcher": "*", "hooks": [{"type": "command", "command": "pre-all"}]},
			{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "pre-mcp"}]},
			{"matcher": "Bash", "hooks": [{"type": "command", "command": "pre-bash-rm", "if": "Bash(rm *)"}]},
			{"matcher": "Read", "hooks": [{"type": "command", "command": "pre-read-txt", "if": "Read(*.txt)"},
			                              {"type": "command", "command": "pre-read-go", "if": "Read(*.go)"}]}
		],
		"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "pr-bash"}]},
		                      {"matcher": "Edit", "hooks": [{"type": "command", "command": "pr-edit"}]}],
		"PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "post-edit"}]},
		                {"matcher": "Bash", "hooks": [{"type": "command", "command": "post-bash"}]}],
		"PostToolUseFailure": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "ptuf-bash"}]},
		                       {"matcher": "EnterWorktree", "hooks": [{"type": "command", "command": "ptuf-wt"}]}],
		"PostToolBatch": [{"hooks": [{"type": "command", "command": "ptb"}]}],
		"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "ss-startup"}]},
		                 {"matcher": "resume|clear", "hooks": [{"type": "command", "command": "ss-resume"}]}],
		"SessionEnd": [{"matcher": "other", "hooks": [{"type": "command", "command": "end-other"}]},
		               {"matcher": "clear", "hooks": [{"type": "command", "command": "end-clear"}]}],
		"ConfigChange": [{"matcher": "project_settings", "hooks": [{"type": "command", "command": "cfg-project"}]},
		                 {"matcher": "user_settings|policy_settings", "hooks": [{"type": "command", "command": "cfg-user"}]}],
		"InstructionsLoaded": [{"matcher": "session_start", "hooks": [{"type": "command", "command": "il"}]},
		                       {"matcher": "include", "hooks": [{"type": "command", "command": "il-include"}]}],
		"UserPromptSubmit": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "ups"}]}],
		"MessageDisplay": [{"hooks": [{"type": "command", "command": "md"}]}],
		"WorktreeCreate": [{"hooks": [{"type": "command", "command": "wtc"}]}],
		"Stop": [{"hooks": [{"type": "command", "command": "stop"}, {"type": "prompt", "prompt": "done?"}]}],
		"PreModelSwitch": [{"matcher": "claude-sonnet-4-5[1m]", "hooks": [{"type": "command", "command": "pms-sonnet"}]},
		                   {"matcher": "claude-opus.*", "hooks": [{"type": "command", "command": "pms-opus"}]}],
		"PostModelSwitch": [{"matcher": "claude-sonnet.*", "hooks": [{"type": "command", "command": "postms"}]}]
	}}`)
	s := tr.compile(t)

	want := map[string][]string{
		"ConfigChange":                     {"cfg-project"},
		"InstructionsLoaded":               {"il"},
		"MessageDisplay":                   {"md"},
		"PermissionRequest-Bash":           {"pr-bash"},
		"PostToolBatch":                    {"ptb"},
		"PostModelSwitch":                  {"postms"},
		"PostToolUse-Bash":                 {"post-bash"},
		"PostToolUse-Edit":                 {"post-edit"},
		"PostToolUse-Read":                 {},
		"PostToolUse-Write":                {"post-edit"},
		"PostToolUseFailure-Bash":          {"ptuf-bash"},
		"PostToolUseFailure-EnterWorktree": {"ptuf-wt"},
		"PreModelSwitch":                   {"pms-sonnet"},
		"PreToolUse-Bash":                  {"pre-bash", "pre-all"},
		"PreToolUse-Edit":                  {"pre-edit", "pre-all"},
		"PreToolUse-EnterWorktree":         {"pre-all"},
		"PreToolUse-Read":                  {"pre-read", "pre-all", "pre-read-txt"},
		"PreToolUse-Write":                 {"pre-edit", "pre-all"},
		// Matching alone: the Bash hooks that also run on a Monitor command are the
		// daemon's doing (daemon/monitor.go, test/monitor_test.go).
		"PreToolUse-Monitor": {"pre-all"},
		"SessionEnd":         {"end-other"},
		"SessionStart":       {"ss-startup"},
		"Stop":               {"stop"},
		"UserPromptSubmit":   {"ups"},
		"WorktreeCreate":     {"wtc"},
	}
	var seen []string
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		seen = append(seen, name)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var payload map[string]any
			if err := json.Unmarshal(data, &payload); err != nil {
				t.Fatal(err)
			}
			e, ok := events.Lookup(payload["hook_event_name"].(string))
			if !ok {
				t.Fatalf("unknown event %v", payload["hook_event_name"])
			}
			q := Query{Event: e}
			if e.MatcherField != "" {
				q.MatchValue, _ = payload[e.MatcherField].(string)
			}
			if e.ToolEvent {
				input, _ := payload["tool_input"].(map[string]any)
				cwd, _ := payload["cwd"].(string)
				q.Tool = &rules.Call{Tool: payload["tool_name"].(string), Input: input, Cwd: cwd, Home: "/home/dev"}
			}
			run, notRun := s.Match(q)
			exp, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for payload %s: add one", name)
			}
			if got := commands(run); !reflect.DeepEqual(got, exp) {
				t.Errorf("run = %v, want %v", got, exp)
			}
			wantNotRun := []string{}
			if e.Name == "Stop" {
				wantNotRun = []string{"prompt"}
			}
			if got := commands(notRun); !reflect.DeepEqual(got, wantNotRun) {
				t.Errorf("notRun = %v, want %v", got, wantNotRun)
			}
		})
	}
	sort.Strings(seen)
	if len(seen) != len(want) {
		t.Errorf("payloads %v, expectations for %d", seen, len(want))
	}
}

func TestRevision(t *testing.T) {
	tr := newTree(t)
	if r := tr.compile(t).Revision; r != "" {
		t.Errorf("no files: Revision = %q", r)
	}
	if Empty().Revision != "" || Empty().Rules == nil {
		t.Errorf("Empty() = %+v", Empty())
	}
	tr.set(t, "user", hooksJSON("Stop", "", "a"))
	r1 := tr.compile(t).Revision
	r1again := tr.compile(t).Revision
	tr.set(t, "user", hooksJSON("Stop", "", "a")) // rewrite, same bytes
	r1rewritten := tr.compile(t).Revision
	tr.set(t, "user", hooksJSON("Stop", "", "b"))
	r2 := tr.compile(t).Revision
	tr.set(t, "project", `{}`)
	r3 := tr.compile(t).Revision
	if r1 == "" || r1 != r1again || r1 != r1rewritten {
		t.Errorf("same content, different revision: %q %q %q", r1, r1again, r1rewritten)
	}
	if r2 == r1 || r3 == r2 {
		t.Errorf("content changed, revision did not: %q %q %q", r1, r2, r3)
	}
	// Same bytes at another path is another configuration.
	a, _ := ParseFile(FileRef{Path: "/a", Kind: KindUser}, []byte("{}"), "")
	b, _ := ParseFile(FileRef{Path: "/b", Kind: KindUser}, []byte("{}"), "")
	if Compile([]*File{a}).Revision == Compile([]*File{b}).Revision {
		t.Errorf("path not part of revision")
	}
	if Compile([]*File{a, nil}).Revision != Compile([]*File{a}).Revision {
		t.Errorf("nil entries change the revision")
	}
}

func TestEmptyAndNil(t *testing.T) {
	var s *Snapshot
	if run, not := s.Match(Query{Event: ev(t, "Stop")}); run != nil || not != nil {
		t.Errorf("nil snapshot matched")
	}
	e := Empty()
	if run, not := e.Match(Query{Event: ev(t, "Stop")}); run != nil || not != nil {
		t.Errorf("empty snapshot matched")
	}
	if run, not := e.Match(Query{}); run != nil || not != nil {
		t.Errorf("nil event matched")
	}
	if e.HandlersFor("Stop") != nil || len(e.Handlers()) != 0 || e.Rules.Len() != 0 {
		t.Errorf("Empty not empty")
	}
}

func TestSnapshotWarningsAndFiles(t *testing.T) {
	tr := newTree(t)
	tr.set(t, "user", `{"bogus": 1}`)
	tr.set(t, "project", `{"hooks": {"Nope": []}}`)
	s := tr.compile(t)
	if len(s.Files) != 2 || len(s.Warnings) != 2 || s.Warnings[0].Field != "bogus" || s.Warnings[1].Field != "hooks.Nope" {
		t.Errorf("Files=%d Warnings=%v", len(s.Files), s.Warnings)
	}
}

func TestMatchAllocations(t *testing.T) {
	tr := newTree(t)
	tr.set(t, "project", `{"hooks": {
		"Stop": [{"hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "a"}]}],
		"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]}, {"matcher": "Read", "hooks": [{"type": "command", "command": "b"}]}]
	}}`)
	s := tr.compile(t)
	stop, pre := ev(t, "Stop"), ev(t, "PreToolUse")
	if n := testing.AllocsPerRun(100, func() { s.Match(Query{Event: stop}) }); n != 0 {
		t.Errorf("static Match: %v allocs", n)
	}
	if n := testing.AllocsPerRun(100, func() { s.Match(Query{Event: pre, MatchValue: "Bash"}) }); n > 1 {
		t.Errorf("Match: %v allocs", n)
	}
	if n := testing.AllocsPerRun(100, func() { s.Match(Query{Event: pre, MatchValue: "Glob"}) }); n != 0 {
		t.Errorf("no match: %v allocs", n)
	}
}

func TestMatchConcurrent(t *testing.T) {
	tr := newTree(t)
	tr.set(t, "project", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
		{"type": "command", "command": "a", "if": "Bash(git *)"}, {"type": "command", "command": "b"}, {"type": "prompt", "prompt": "p"}]}]}}`)
	s := tr.compile(t)
	pre := ev(t, "PreToolUse")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				cmd := "npm test"
				if (i+j)%2 == 0 {
					cmd = "git status"
				}
				run, notRun := s.Match(Query{Event: pre, MatchValue: "Bash", Tool: bashCall(cmd)})
				if len(notRun) != 1 || (cmd == "git status") != (len(run) == 2) {
					t.Errorf("%s: run %v", cmd, commands(run))
					return
				}
				_ = s.HandlersFor("PreToolUse")
				_ = s.Reason(run[0])
			}
		}(i)
	}
	wg.Wait()
}

func BenchmarkMatch(b *testing.B) {
	tr := newTree(b)
	tr.set(b, "user", hooksJSON("PreToolUse", "Bash", "u1", "u2"))
	tr.set(b, "project", `{"hooks": {"PreToolUse": [
		{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt"}]},
		{"matcher": "^Bash$", "hooks": [{"type": "command", "command": "guard", "if": "Bash(rm *)"}]},
		{"matcher": "*", "hooks": [{"type": "command", "command": "log"}]}]}}`)
	s := tr.compile(b)
	q := Query{Event: ev(b, "PreToolUse"), MatchValue: "Bash", Tool: bashCall("rm -rf build")}
	b.ReportAllocs()
	for b.Loop() {
		s.Match(q)
	}
}
