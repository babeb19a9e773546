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
