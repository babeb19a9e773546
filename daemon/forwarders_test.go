package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
)

// TestResyncReplansOverConcurrentEdit: the daemon rewrites Claude Code's file when
// hookd's file changes; a user who saves Claude Code's file while that happens keeps their
// edit (Apply is a compare-and-swap on the file's contents) and still gets the forwarder
// (the daemon plans again from their version).
func TestResyncReplansOverConcurrentEdit(t *testing.T) {
	dir := t.TempDir()
	settingsFile := filepath.Join(dir, "proj", ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settingsFile), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := `{
  "model": "sonnet",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 guard.py"}]}]
  }
}
`
	if err := os.WriteFile(settingsFile, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := install.PlanInstall(install.Options{Scope: settings.KindProject, Settings: settingsFile, Forwarder: "/opt/hookd/bin/hookc", HookdVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	hookdPath := p.Hookd
	// A Stop hook is added to hookd's file: the forwarders must follow.
	h, _ := os.ReadFile(hookdPath)
	hs := strings.Replace(string(h), `"hooks": {`, `"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "stop-gate"}]}],`, 1)
	if err := os.WriteFile(hookdPath, []byte(hs), 0o644); err != nil {
		t.Fatal(err)
	}
	// The user saves Claude Code's file after the daemon planned, twice in a row.
	edits := 0
	beforeResyncApply = func(path string) {
		if edits >= 2 || path != settingsFile {
			return
		}
		edits++
		b, _ := os.ReadFile(path)
		b = []byte(strings.Replace(string(b), `"model"`, `"outputStyle`+string(rune('0'+edits))+`": "mine", "model"`, 1))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { beforeResyncApply = nil })
	e := newEngine(engineOptions{Sources: settings.Sources{Home: dir, ManagedDir: filepath.Join(dir, "m"), UserDir: filepath.Join(dir, "u")}})
	e.resyncForwarders(hookdPath)
	got, _ := os.ReadFile(settingsFile)
	if edits != 2 {
		t.Fatalf("the edit hook ran %d times, want 2", edits)
	}
	for _, want := range []string{`"outputStyle1": "mine"`, `"outputStyle2": "mine"`, `"Stop"`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("settings after the resync lack %s:\n%s", want, got)
		}
	}
}
