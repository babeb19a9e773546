package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// `hookd install claude-code` end to end through the binaries: the moved hook runs in
// hookd under its original label, the forwarder and the prompt hook left in Claude Code's
// file are not run by hookd, --dry-run writes nothing, and uninstall restores the file.
func TestInstallClaudeCode(t *testing.T) {
	e := NewEnv(t)
	guard := e.Script("guard.sh", "#!/bin/sh\ncat >/dev/null\necho ran >> "+filepath.Join(e.Root, "guard.log")+"\necho 'no rm' >&2\nexit 2\n")
	original := `{
  "permissions": {"deny": ["Bash(curl *)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [
      {"type": "command", "command": "` + guard + `"},
      {"type": "prompt", "prompt": "ok? $ARGUMENTS"}
    ]}]
  }
}
`
	e.WriteSettings("project", original)
	install := []string{"install", "claude-code", "--scope", "project", "--project", e.Project, "--hookc", bins.hookc}

	dry := e.Hookd("", append(install, "--dry-run")...)
	if dry.Code != 0 || !strings.Contains(dry.Stdout, "+++ "+filepath.Join(e.Project, ".claude", "hookd.json")) || !strings.Contains(dry.Stdout, "would: moved 1 command/http hook") {
		t.Fatalf("dry run: exit %d\n%s%s", dry.Code, dry.Stdout, dry.Stderr)
	}
	if got, _ := os.ReadFile(e.SettingsPath("project")); string(got) != original {
		t.Fatal("--dry-run changed settings.json")
	}

	r := e.Hookd("", install...)
	if r.Code != 0 {
		t.Fatalf("install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	settings, _ := os.ReadFile(e.SettingsPath("project"))
	if strings.Contains(string(settings), guard) || !strings.Contains(string(settings), bins.hookc) || strings.Contains(string(settings), `"hookd"`) {
		t.Fatalf("settings.json after install:\n%s", settings)
	}
	if again := e.Hookd("", install...); again.Code != 0 || !strings.Contains(again.Stdout, "already installed") {
		t.Fatalf("second install: exit %d\n%s%s", again.Code, again.Stdout, again.Stderr)
	}

	e.Start()
	// What Claude Code would send to the forwarder: hookd runs the moved guard (once).
	res, _ := e.Event(bashPayload(e, "rm -rf x"))
	if res.Block == nil && (res.Permission == nil || res.Permission.Decision != "deny") {
		t.Fatalf("not blocked: %+v", res)
	}
	var sources []string
	for _, h := range res.Hooks {
		sources = append(sources, h.Hook.Source+" "+filepath.Base(h.Hook.File)+" "+h.Hook.Command)
	}
	if len(res.Hooks) != 1 || res.Hooks[0].Hook.Source != "project" || res.Hooks[0].Hook.Command != guard {
		t.Fatalf("hooks run: %v", sources)
	}
	if log, _ := os.ReadFile(filepath.Join(e.Root, "guard.log")); strings.Count(string(log), "ran") != 1 {
		t.Fatalf("guard ran %q", log)
	}
	// The status names the moved file with its original label.
	var status struct {
		Sources []struct{ Path, Source, State string }
	}
	b, _ := json.Marshal(e.Status())
	_ = json.Unmarshal(b, &status)
	found := false
	for _, s := range status.Sources {
		found = found || s.Path == filepath.Join(e.Project, ".claude", "hookd.json") && s.Source == "project" && s.State == "loaded"
	}
	if !found {
		t.Errorf("status sources: %+v", status.Sources)
	}

	if u := e.Hookd("", "uninstall", "claude-code", "--scope", "project", "--project", e.Project); u.Code != 0 {
		t.Fatalf("uninstall: exit %d\n%s%s", u.Code, u.Stdout, u.Stderr)
	}
	if got, _ := os.ReadFile(e.SettingsPath("project")); string(got) != original {
		t.Fatalf("after uninstall:\n%s\nwant:\n%s", got, original)
	}
	if _, err := os.Stat(filepath.Join(e.Project, ".claude", "hookd.json")); !os.IsNotExist(err) {
		t.Fatalf("hookd.json left behind (%v)", err)
	}
	// No footprint: .claude/ holds what it held before; the backups of install and
	// uninstall are in the state directory, named after the file they copy.
	if ents, _ := os.ReadDir(filepath.Join(e.Project, ".claude")); len(ents) != 1 || ents[0].Name() != "settings.json" {
		t.Errorf(".claude/ after install+uninstall: %v", ents)
	}
	backups, _ := filepath.Glob(filepath.Join(e.State, "install-backups", "*settings.json.hookd-backup-*"))
	if len(backups) != 2 {
		t.Errorf("backups in the state directory: %v; want the install's and the uninstall's", backups)
	}
	for _, b := range backups {
		if data, _ := os.ReadFile(b); string(data) == original {
			return
		}
	}
	t.Errorf("no backup holds the original settings.json: %v", backups)
}

// TestForwardersFollowHookdFile: the installer forwards only hooked events; a hook added
// to hookd's file while the daemon runs gets its forwarder in Claude Code's file (and a
// removed one loses it) without anyone editing that file, which keeps its other content.
func TestForwardersFollowHookdFile(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}`)
	if r := e.Hookd("", "install", "claude-code", "--scope", "project", "--project", e.Project, "--hookc", bins.hookc); r.Code != 0 {
		t.Fatalf("install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	read := func(p string) map[string]any {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return m
	}
	hooked := func() []string {
		var out []string
		for ev := range read(e.SettingsPath("project"))["hooks"].(map[string]any) {
			out = append(out, ev)
		}
		sort.Strings(out)
		return out
	}
	if got := hooked(); strings.Join(got, ",") != "PreToolUse" {
		t.Fatalf("forwarders after install: %v, want only PreToolUse", got)
	}
	e.Start()
	e.Event(bashPayload(e, "ls")) // the session's first event: hookd now knows (and watches) the project
	hpath := filepath.Join(e.Project, ".claude", "hookd.json")
	m := read(hpath)
	m["hooks"].(map[string]any)["Stop"] = []any{map[string]any{"hooks": []any{cmdHook("true")}}}
	b, _ := json.MarshalIndent(m, "", "  ")
	WriteAtomic(t, hpath, string(b))
	Eventually(t, 20*time.Second, "a Stop forwarder in settings.json", func() bool { return strings.Join(hooked(), ",") == "PreToolUse,Stop" })
	if s := read(e.SettingsPath("project")); s["model"] != "opus" || len(s) != 2 {
		t.Fatalf("other keys changed: %v", s)
	}
	delete(m["hooks"].(map[string]any), "PreToolUse")
	b, _ = json.MarshalIndent(m, "", "  ")
	WriteAtomic(t, hpath, string(b))
	Eventually(t, 20*time.Second, "the PreToolUse forwarder gone", func() bool { return strings.Join(hooked(), ",") == "Stop" })
}

// Issue 29: install state that survives a user. hookd.json deleted by hand: status says
// so (and fails), uninstall restores Claude Code's file byte for byte from the named
// backup; installing the user scope inside a project names the project's hooks.
func TestInstallStateSurvivesLosingHookdFile(t *testing.T) {
	e := NewEnv(t)
	guard := e.Script("guard.sh", "#!/bin/sh\ncat >/dev/null\necho 'no rm' >&2\nexit 2\n")
	original := "{\n  \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"" + guard + "\"}]}]},\n  \"model\": \"opus\"\n}\n"
	e.WriteSettings("project", original)

	// The user scope, from inside the project: the project's hooks are named.
	r := e.Hookd("", "install", "claude-code", "--hookc", bins.hookc)
	if r.Code != 0 || !strings.Contains(r.Stdout, "note: "+e.SettingsPath("project")+" has 1 command/http hook (PreToolUse) that Claude Code still runs itself") ||
		!strings.Contains(r.Stdout, "--scope project") || !strings.Contains(r.Stdout, "--scope all") {
		t.Fatalf("install --scope user in a project: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// --scope all installs the project too (and the user scope again: nothing to do).
	if r := e.Hookd("", "install", "claude-code", "--scope", "all", "--hookc", bins.hookc); r.Code != 0 ||
		!strings.Contains(r.Stdout, "project scope:\nmoved 1 command/http hook (PreToolUse)") || strings.Contains(r.Stdout, "note:") {
		t.Fatalf("install --scope all: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	hookdFile := filepath.Join(e.Project, ".claude", "hookd.json")
	if err := os.Remove(hookdFile); err != nil {
		t.Fatal(err)
	}
	e.Start()
	st := e.Hookd("", "status")
	if st.Code != 1 || !strings.Contains(st.Stdout, "WARNING "+e.SettingsPath("project")+": forwarders present, moved hooks missing") ||
		!strings.Contains(st.Stdout, "hookd uninstall claude-code --scope project") {
		t.Fatalf("status with hookd.json gone: exit %d\n%s%s", st.Code, st.Stdout, st.Stderr)
	}
	if ck := e.Hookd("", "status", "--check"); ck.Code != 1 || strings.Count(strings.TrimSpace(ck.Stdout), "\n") != 0 || !strings.Contains(ck.Stdout, "moved hooks missing") {
		t.Fatalf("status --check: exit %d\n%s%s", ck.Code, ck.Stdout, ck.Stderr)
	}
	// docs/claude-code.md shows this warning: the same words, with the example's paths.
	doc, _ := os.ReadFile("../docs/claude-code.md")
	for _, part := range []string{"installation:\n  WARNING ", ": forwarders present, moved hooks missing: Claude Code forwards PreToolUse to hookd, but ",
		" is gone, so hookd runs none of the hooks the install moved (every moved guard is off). `hookd uninstall claude-code --scope project` restores them from the backup "} {
		if !strings.Contains(st.Stdout, part) || !strings.Contains(string(doc), part) {
			t.Errorf("status and docs/claude-code.md do not both show %q", part)
		}
	}
	u := e.Hookd("", "uninstall", "claude-code", "--scope", "project")
	if u.Code != 0 || !strings.Contains(u.Stdout, "restored "+e.SettingsPath("project")+" byte for byte from "+filepath.Join(e.State, "install-backups")) {
		t.Fatalf("uninstall without hookd.json: exit %d\n%s%s", u.Code, u.Stdout, u.Stderr)
	}
	if got, _ := os.ReadFile(e.SettingsPath("project")); string(got) != original {
		t.Fatalf("settings.json after uninstall:\n%s\nwant (byte for byte):\n%s", got, original)
	}
	if st := e.Hookd("", "status"); st.Code != 0 || strings.Contains(st.Stdout, "WARNING") {
		t.Errorf("status after uninstall: exit %d\n%s%s", st.Code, st.Stdout, st.Stderr)
	}
	if ck := e.Hookd("", "status", "--check"); ck.Code != 0 || strings.TrimSpace(ck.Stdout) != "ok" {
		t.Errorf("status --check after uninstall: exit %d\n%s%s", ck.Code, ck.Stdout, ck.Stderr)
	}
}

// A settings file with a JSON syntax error: install names line and column.
func TestInstallSyntaxErrorLineCol(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", "{\n  \"hooks\": {\n    \"Stop\": [\n  }\n}\n")
	r := e.Hookd("", "install", "claude-code", "--scope", "project", "--hookc", bins.hookc)
	if r.Code != 1 || !strings.Contains(r.Stderr, e.SettingsPath("project")+":4:3: not a valid settings file") {
		t.Fatalf("install on a syntax error: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
