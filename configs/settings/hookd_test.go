package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/rules"
)

// A hookd-owned file beside a Claude Code file: its hooks carry the Claude Code file's
// label and precedence, "/x" patterns in `if` resolve as in the original file, and once
// the file records an installation, what is left in the Claude Code file (the forwarder,
// handlers hookd cannot run, hooks added later) is Claude Code's to run, not hookd's.
func TestHookdFilesBesideTheirOrigin(t *testing.T) {
	tr := newTree(t)
	proj := tr.src.ProjectDir
	// The forwarder must exist, or the linter says so (rightly).
	hookc := filepath.Join(t.TempDir(), "hookc")
	write(t, hookc, "#!/bin/sh\n")
	if err := os.Chmod(hookc, 0o755); err != nil {
		t.Fatal(err)
	}
	tr.set(t, "user", hooksJSON("PreToolUse", "Bash", "user-native"))
	tr.set(t, "project", `{
		"permissions": {"deny": ["Bash(rm *)"]},
		"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
			{"type": "command", "command": "`+hookc+`", "timeout": 630},
			{"type": "prompt", "prompt": "judge $ARGUMENTS"},
			{"type": "command", "command": "added-after-install"}]}]}}`)
	write(t, filepath.Join(proj, ".claude", "hookd.json"), `{
		"hookd": {"version": 1, "installed_from": "x", "forwarder": "`+hookc+`", "original_hooks": {}},
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
		case "`+hookc+`", "added-after-install":
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
// the command and http hooks of every other file — its own flag does not stop them. The
// flag set by any other managed file keeps its meaning; a forwarder without the flag does
// not make a routing drop-in. In every case Claude Code runs the admin's managed hook
// itself, so for an event Claude Code sent (FromClaudeCode) hookd reports it as not run —
// with the drop-in and without it (a user-scope install's forwarder) alike — and for any
// other caller (Codex, Gemini CLI, a raw client) hookd, the only runner, runs it.
func TestManagedRoutingDropIn(t *testing.T) {
	const dropIn = `{"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/usr/bin/hookc", "timeout": 600}]}]}}`
	tests := []struct {
		name        string
		dropIn      string
		adminFlag   bool
		wantRun     []string // for an event Claude Code sent
		wantRouted  bool
		wantNotRun  []string
		managedOnly bool
		// for an event from anyone else: the managed hook runs in hookd
		otherRun, otherNotRun []string
	}{
		// settings.json's hooks added after a user-scope install are hookd's again: Claude
		// Code no longer runs them.
		{"routing drop-in", dropIn, false, []string{"user-after-install", "moved-user", "project", "local"}, true, []string{"managed", "prompt"}, false,
			[]string{"managed", "user-after-install", "moved-user", "project", "local"}, []string{"prompt"}},
		// Claude Code runs only managed hooks, and runs them itself: nothing is left to hookd.
		{"admin sets the flag too", dropIn, true, []string{}, true, []string{"managed"}, true,
			[]string{"managed"}, []string{}},
		// Not a routing drop-in: Claude Code runs the hooks of its own files — the managed
		// one, the project and local files no install moved, what is left beside
		// hookd.json — so for its events hookd runs only the moved hooks. For anyone else
		// it runs all but what is left beside hookd.json.
		{"forwarder without the flag", strings.Replace(dropIn, `"allowManagedHooksOnly": true, `, "", 1), false,
			[]string{"moved-user"}, false, []string{"managed", "project", "prompt", "local"}, false,
			[]string{"managed", "moved-user", "project", "local"}, []string{"prompt"}},
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
			for _, tool := range []*rules.Call{bashCall("ls"), nil} { // with and without the precomputed answer
				for _, fromCC := range []bool{true, false} {
					wantRun, wantNotRun := tt.wantRun, tt.wantNotRun
					if !fromCC {
						wantRun, wantNotRun = tt.otherRun, tt.otherNotRun
					}
					run, notRun := s.Match(Query{Event: ev(t, "PreToolUse"), MatchValue: "Bash", Tool: tool, FromClaudeCode: fromCC})
					if got := commands(run); !reflect.DeepEqual(got, wantRun) {
						t.Errorf("FromClaudeCode=%v: run = %v, want %v", fromCC, got, wantRun)
					}
					if gn := commands(notRun); !reflect.DeepEqual(gn, append([]string{}, wantNotRun...)) {
						t.Errorf("FromClaudeCode=%v: notRun = %v, want %v", fromCC, gn, wantNotRun)
					}
					for _, h := range notRun {
						if r := s.ReasonFor(h, fromCC); (h.Command == "managed") != strings.HasPrefix(r, "run by Claude Code: managed hook") {
							t.Errorf("FromClaudeCode=%v: %s not run for %q", fromCC, h.ID, r)
						}
						if r := s.ReasonFor(h, fromCC); fromCC && !tt.wantRouted && h.Command != "managed" && r != ReasonClaudeCodeRunsFile {
							t.Errorf("%s not run for %q", h.ID, r)
						}
					}
				}
			}
			if (s.RoutedBy == dropPath) != tt.wantRouted || s.ManagedOnly != tt.managedOnly {
				t.Errorf("RoutedBy = %q, ManagedOnly = %v", s.RoutedBy, s.ManagedOnly)
			}
			for _, h := range s.HandlersFor("PreToolUse") {
				if h.Command == "managed" && (!s.ClaudeCodeRuns(h) || s.Reason(h) != "") {
					t.Errorf("managed hook: ClaudeCodeRuns %v, reason %q", s.ClaudeCodeRuns(h), s.Reason(h))
				}
				if h.Type == "prompt" && tt.wantRouted && !tt.managedOnly && !strings.Contains(s.Reason(h), "allowManagedHooksOnly") {
					t.Errorf("prompt hook reason %q", s.Reason(h))
				}
			}
		})
	}
}

// A managed hook without any routing drop-in (after a plain user-scope install): Claude
// Code runs it itself beside the user file's forwarder, so for the events Claude Code
// sends hookd must not run it too; for other callers it does. Checked on an event whose
// answer is precomputed (no matcher, no `if`), under disableAllHooks in a user file
// (managed hooks keep running in Claude Code) and in managed settings (nothing runs, and
// it is not "run by Claude Code").
func TestManagedHookLeftToClaudeCode(t *testing.T) {
	for _, tt := range []struct {
		name, userExtra, managedExtra string
		ccRuns                        bool
	}{
		{"plain", "", "", true},
		{"disableAllHooks in user settings", `"disableAllHooks": true, `, "", true},
		{"disableAllHooks in managed settings", "", `"disableAllHooks": true, `, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			tr.set(t, "managed", strings.Replace(hooksJSON("UserPromptSubmit", "", "managed", "/usr/bin/hookc"), "{", "{"+tt.managedExtra, 1))
			tr.set(t, "user", strings.Replace(hooksJSON("UserPromptSubmit", "", "/usr/bin/hookc"), "{", "{"+tt.userExtra, 1))
			write(t, filepath.Join(tr.src.Home, ".claude", "hookd.json"), `{"hookd": {"version": 1, "forwarder": "/usr/bin/hookc"},
				"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "moved-user"}]}]}}`)
			s := tr.compile(t)
			if s.RoutedBy != "" || s.NotForwarded != nil || s.RunNowhere != nil {
				t.Fatalf("no routing drop-in: RoutedBy %q NotForwarded %v RunNowhere %v", s.RoutedBy, s.NotForwarded, s.RunNowhere)
			}
			wantUser := []string{"moved-user"}
			if tt.userExtra != "" || tt.managedExtra != "" {
				wantUser = []string{}
			}
			for _, fromCC := range []bool{true, false} {
				run, notRun := s.Match(Query{Event: ev(t, "UserPromptSubmit"), FromClaudeCode: fromCC})
				var wantRun, wantNot []string
				switch {
				case !tt.ccRuns:
					wantRun, wantNot = wantUser, []string{}
				case fromCC:
					wantRun, wantNot = wantUser, []string{"managed"}
				default:
					wantRun, wantNot = append([]string{"managed"}, wantUser...), []string{}
				}
				if got := commands(run); !reflect.DeepEqual(got, wantRun) {
					t.Errorf("FromClaudeCode=%v: run %v, want %v", fromCC, got, wantRun)
				}
				if got := commands(notRun); !reflect.DeepEqual(got, wantNot) {
					t.Errorf("FromClaudeCode=%v: notRun %v, want %v", fromCC, got, wantNot)
				}
				for _, h := range notRun {
					if r := s.ReasonFor(h, fromCC); r != ReasonClaudeCodeRuns {
						t.Errorf("%s: reason %q", h.ID, r)
					}
				}
			}
			for _, h := range s.HandlersFor("UserPromptSubmit") {
				if h.Command == "managed" && s.ClaudeCodeRuns(h) != tt.ccRuns {
					t.Errorf("ClaudeCodeRuns(managed) = %v, want %v", s.ClaudeCodeRuns(h), tt.ccRuns)
				}
				if h.Command != "managed" && s.ClaudeCodeRuns(h) {
					t.Errorf("ClaudeCodeRuns(%s) = true", h.ID)
				}
			}
		})
	}
}

// Under the routing drop-in, hooks of the events it has no forwarder for run nowhere:
// Claude Code does not run them (allowManagedHooksOnly) and does not send the event. The
// snapshot names the events (NotForwarded) and each such hook (RunNowhere); managed hooks
// of those events are not among them (Claude Code runs them), nor is anything without the
// flag.
func TestRoutingNotForwarded(t *testing.T) {
	var fwd []string
	for _, name := range events.Names() {
		if name != "FileChanged" && name != "WorktreeCreate" && name != "WorktreeRemove" {
			fwd = append(fwd, fmt.Sprintf(`%q: [{"hooks": [{"type": "command", "command": "/usr/bin/hookc"}]}]`, name))
		}
	}
	dropIn := `{"allowManagedHooksOnly": true, "hooks": {` + strings.Join(fwd, ", ") + `}}`
	for _, flag := range []bool{true, false} {
		tr := newTree(t)
		d := dropIn
		if !flag {
			d = strings.Replace(d, `"allowManagedHooksOnly": true, `, "", 1)
		}
		drop := tr.set(t, "managed.d:50-hookd.json", d)
		tr.set(t, "managed", hooksJSON("WorktreeCreate", "", "managed-worktree"))
		user := tr.set(t, "user", `{"hooks": {"FileChanged": [{"matcher": ".envrc", "hooks": [{"type": "command", "command": "direnv"}]}],
			"PreToolUse": [{"hooks": [{"type": "command", "command": "guard"}]}]}}`)
		proj := tr.set(t, "project", hooksJSON("WorktreeRemove", "", "cleanup"))
		s := tr.compile(t)
		if !flag {
			if s.RoutedBy != "" || s.NotForwarded != nil || s.RunNowhere != nil {
				t.Errorf("without the flag: RoutedBy %q NotForwarded %v RunNowhere %v", s.RoutedBy, s.NotForwarded, s.RunNowhere)
			}
			continue
		}
		if s.RoutedBy != drop {
			t.Fatalf("RoutedBy %q", s.RoutedBy)
		}
		if want := []string{"FileChanged", "WorktreeCreate", "WorktreeRemove"}; !reflect.DeepEqual(s.NotForwarded, want) {
			t.Errorf("NotForwarded %v, want %v", s.NotForwarded, want)
		}
		var got []string
		for _, w := range s.RunNowhere {
			got = append(got, w.File+" "+w.Field)
			if !strings.Contains(w.Message, "runs nowhere") || !strings.Contains(w.Message, drop) || w.IsError() {
				t.Errorf("finding %q", w)
			}
		}
		if want := []string{user + " hooks.FileChanged", proj + " hooks.WorktreeRemove"}; !reflect.DeepEqual(got, want) {
			t.Errorf("RunNowhere %v, want %v", got, want)
		}
	}
}
