package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
}
