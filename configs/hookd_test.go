package configs

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hookd/hookd/rules"
)

// A hookd-owned file beside a Claude Code file: its hooks carry the Claude Code file's
// label and precedence, "/x" patterns in `if` resolve as in the original file, and once
// the file records an installation, what is left in the Claude Code file (the forwarder,
// handlers hookd cannot run, hooks added later) is Claude Code's to run, not hookd's.
func TestHookdFilesBesideTheirOrigin(t *testing.T) {
	tr := newTree(t)
	proj := tr.src.ProjectDir
	tr.set(t, "user", hooksJSON("PreToolUse", "Bash", "user-native"))
	tr.set(t, "project", `{
		"permissions": {"deny": ["Bash(rm *)"]},
		"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
			{"type": "command", "command": "/opt/hookd/bin/hookc", "timeout": 630},
			{"type": "prompt", "prompt": "judge $ARGUMENTS"},
			{"type": "command", "command": "added-after-install"}]}]}}`)
	write(t, filepath.Join(proj, ".claude", "hookd.json"), `{
		"hookd": {"version": 1, "installed_from": "x", "forwarder": "/opt/hookd/bin/hookc", "original_hooks": {}},
		"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
			{"type": "command", "command": "moved-project"},
			{"type": "command", "command": "moved-if", "if": "Edit(/src/**)"}]}]}}`)
	write(t, filepath.Join(proj, ".claude", "hookd.local.json"), hooksJSON("PreToolUse", "Bash", "moved-local"))
	s := tr.compile(t)
	for _, w := range s.Warnings {
		if !strings.Contains(w.Message, "prompt handlers") {
			t.Errorf("warning: %v", w)
		}
	}

	run, notRun := s.Match(Query{Event: ev(t, "PreToolUse"), MatchValue: "Bash"})
	if got, want := commands(run), []string{"user-native", "moved-project", "moved-if", "moved-local"}; !reflect.DeepEqual(got, want) {
		t.Errorf("run = %v, want %v", got, want)
	}
	if len(notRun) != 0 {
		t.Errorf("notRun = %v: the prompt handler left in the Claude Code file is Claude Code's", commands(notRun))
	}
	for _, h := range s.HandlersFor("PreToolUse") {
		switch h.Command {
		case "moved-project", "moved-if":
			if h.Source != KindProject || !strings.HasSuffix(h.File, "hookd.json") || !strings.HasPrefix(h.ID, "project:") {
				t.Errorf("%s: source %q file %q id %q", h.Command, h.Source, h.File, h.ID)
			}
		case "moved-local":
			if h.Source != KindLocal {
				t.Errorf("moved-local: source %q", h.Source)
			}
		case "/opt/hookd/bin/hookc", "added-after-install":
			if r := s.Reason(h); !strings.Contains(r, "run by Claude Code") && !strings.Contains(r, "forwards events") {
				t.Errorf("%s: reason %q", h.Command, r)
			}
		}
		if h.Command == "moved-if" {
			// "/src/**" is relative to the project root, as in .claude/settings.json.
			call := rules.Call{Tool: "Edit", Input: map[string]any{"file_path": filepath.Join(proj, "src", "a.go")}, Cwd: proj, Home: tr.src.Home}
			if !h.If.Matches(call) {
				t.Errorf("if Edit(/src/**) does not match <project>/src/a.go")
			}
		}
	}
	// Permission rules stay in the Claude Code file and still count.
	if s.Rules.Len() != 1 {
		t.Errorf("rules = %d, want the project file's deny rule", s.Rules.Len())
	}
}

// Without an installation record the Claude Code file's hooks are hookd's to run (the
// manual setup), but a hookc handler never is.
func TestForwarderNeverRuns(t *testing.T) {
	tr := newTree(t)
	tr.set(t, "project", `{"hooks": {"Stop": [{"hooks": [
		{"type": "command", "command": "HOOKD_SOCKET=/tmp/s '/usr/local/bin/hookc' --debug"},
		{"type": "command", "command": "hookc", "args": []},
		{"type": "command", "command": "real-stop-hook"}]}]}}`)
	s := tr.compile(t)
	run, _ := s.Match(Query{Event: ev(t, "Stop")})
	if got, want := commands(run), []string{"real-stop-hook"}; !reflect.DeepEqual(got, want) {
		t.Errorf("run = %v, want %v", got, want)
	}
}

func TestHookdKeyInClaudeFileWarns(t *testing.T) {
	f, err := ParseFile(FileRef{Path: "/p/.claude/settings.json", Kind: KindProject}, []byte(`{"hookd": {"version": 1}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0].Message, "ignores this entire file") || f.Settings.Hookd != nil {
		t.Errorf("warnings %v meta %v", f.Warnings, f.Settings.Hookd)
	}
	f, err = ParseFile(FileRef{Path: "/p/.claude/hookd.json", Kind: KindHookd, Origin: KindProject},
		[]byte(`{"hookd": {"version": 1, "installed_from": "/p/.claude/settings.json", "forwarder": "hookc", "extra": [1]}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	want := &HookdMeta{Version: 1, InstalledFrom: "/p/.claude/settings.json", Forwarder: "hookc"}
	if len(f.Warnings) != 0 || !reflect.DeepEqual(f.Settings.Hookd, want) {
		t.Errorf("warnings %v meta %+v", f.Warnings, f.Settings.Hookd)
	}
}

func TestHookdPaths(t *testing.T) {
	for _, tt := range []struct {
		settings string
		kind     Kind
		want     string
	}{
		{"/h/.claude/settings.json", KindUser, "/h/.claude/hookd.json"},
		{"/p/.claude/settings.json", KindProject, "/p/.claude/hookd.json"},
		{"/p/.claude/settings.local.json", KindLocal, "/p/.claude/hookd.local.json"},
	} {
		got := HookdPathFor(tt.settings, tt.kind)
		if got != tt.want {
			t.Errorf("HookdPathFor(%s) = %s, want %s", tt.settings, got, tt.want)
		}
		if back := ClaudePathFor(FileRef{Path: got, Kind: KindHookd, Origin: tt.kind}); back != tt.settings {
			t.Errorf("ClaudePathFor(%s) = %s", got, back)
		}
	}
}

func TestIsForwarder(t *testing.T) {
	for cmd, want := range map[string]bool{
		"hookc":                         true,
		"/usr/local/bin/hookc":          true,
		"'/opt/my tools/hookc' --debug": true,
		"HOOKD_SOCKET=/x hookc":         true,
		`"/a b/hookc";`:                 true,
		"hookc-old":                     false,
		"echo hookc":                    false,
		"/usr/bin/python3 hookc.py":     false,
		"":                              false,
		"A=1 B=2 /bin/hookc --stream":   true,
		"./1=2":                         false,
	} {
		if got := IsForwarder(cmd, nil); got != want {
			t.Errorf("IsForwarder(%q) = %v, want %v", cmd, got, want)
		}
	}
	if !IsForwarder("/bin/hookc", []string{"--debug"}) || IsForwarder("hookc --x", []string{}) {
		t.Error("exec form: the command itself is the program")
	}
}

// A managed drop-in that forwards to hookc and sets allowManagedHooksOnly (`hookd install
// claude-code --scope managed`) routes: Claude Code runs only managed hooks, so hookd runs
// the command and http hooks of every other file — its own flag does not stop them — and
// leaves the other managed hooks to Claude Code. The flag set by any other managed file
// keeps its meaning; a forwarder without the flag does not make a routing drop-in.
func TestManagedRoutingDropIn(t *testing.T) {
	const dropIn = `{"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/usr/bin/hookc", "timeout": 600}]}]}}`
	tests := []struct {
		name        string
		dropIn      string
		adminFlag   bool
		wantRun     []string
		wantRouted  bool
		wantNotRun  []string
		managedOnly bool
	}{
		// settings.json's hooks added after a user-scope install are hookd's again: Claude
		// Code no longer runs them.
		{"routing drop-in", dropIn, false, []string{"user-after-install", "moved-user", "project", "local"}, true, []string{"prompt"}, false},
		// Claude Code runs only managed hooks, and runs them itself: nothing is left to hookd.
		{"admin sets the flag too", dropIn, true, []string{}, true, nil, true},
		// Not a routing drop-in: the usual rules (what is left beside hookd.json is Claude
		// Code's; hookd runs the rest).
		{"forwarder without the flag", strings.Replace(dropIn, `"allowManagedHooksOnly": true, `, "", 1), false,
			[]string{"managed", "moved-user", "project", "local"}, false, []string{"prompt"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			admin := hooksJSON("PreToolUse", "", "managed")
			if tt.adminFlag {
				admin = strings.Replace(admin, "{", `{"allowManagedHooksOnly": true, `, 1)
			}
			tr.set(t, "managed", admin)
			dropPath := tr.set(t, "managed.d:50-hookd.json", tt.dropIn)
			// A user-scope install from before: its forwarder stays in settings.json (Claude
			// Code does not run it under the flag), its hooks in hookd.json.
			tr.set(t, "user", `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
				{"type": "command", "command": "/usr/bin/hookc"},
				{"type": "command", "command": "user-after-install"}]}]}}`)
			write(t, filepath.Join(tr.src.Home, ".claude", "hookd.json"), `{"hookd": {"version": 1, "forwarder": "/usr/bin/hookc"},
				"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "moved-user"}]}]}}`)
			tr.set(t, "project", `{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "project"}, {"type": "prompt", "prompt": "judge"}]}]}}`)
			tr.set(t, "local", hooksJSON("PreToolUse", "Bash", "local"))
			s := tr.compile(t)
			run, notRun := s.Match(Query{Event: ev(t, "PreToolUse"), MatchValue: "Bash", Tool: bashCall("ls")})
			if got := commands(run); !reflect.DeepEqual(got, tt.wantRun) {
				t.Errorf("run = %v, want %v", got, tt.wantRun)
			}
			if gn := commands(notRun); !reflect.DeepEqual(gn, append([]string{}, tt.wantNotRun...)) {
				t.Errorf("notRun = %v, want %v", gn, tt.wantNotRun)
			}
			if (s.RoutedBy == dropPath) != tt.wantRouted || s.ManagedOnly != tt.managedOnly {
				t.Errorf("RoutedBy = %q, ManagedOnly = %v", s.RoutedBy, s.ManagedOnly)
			}
			for _, h := range s.HandlersFor("PreToolUse") {
				if h.Command == "managed" && tt.wantRouted && !tt.managedOnly && !strings.Contains(s.Reason(h), "run by Claude Code") {
					t.Errorf("managed hook reason %q", s.Reason(h))
				}
				if h.Type == "prompt" && tt.wantRouted && !tt.managedOnly && !strings.Contains(s.Reason(h), "allowManagedHooksOnly") {
					t.Errorf("prompt hook reason %q", s.Reason(h))
				}
			}
		})
	}
}
