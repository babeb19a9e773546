package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/test/testutil"
)

func sameSnapshot(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s: %s was %q, now %q", what, k, v, b[k])
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: %s appeared", what, k)
		}
	}
}

// TestSetupAndUndo (issue 25): where no service manager runs (this machine), `hookd setup
// claude-code` routes the user's hooks through hookd, starts hookd in the background and
// ends with doctor's verdict (healthy: exit 0); it is idempotent; --dry-run changes nothing;
// --undo stops the daemon and leaves ~/.claude byte-identical to before.
func TestSetupAndUndo(t *testing.T) {
	e := NewEnv(t)
	e.extraEnv = append(e.extraEnv, "PATH=/usr/bin:/bin")
	e.WriteSettings("user", `{"permissions":{"deny":["Bash(rm -rf *)"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"grep -q forbidden && exit 2; exit 0"}]}]}}`)
	before := testutil.TreeSnapshot(t, e.UserDir)

	dry := e.Hookd("", "setup", "claude-code", "--dry-run")
	if dry.Code != 0 || !strings.Contains(dry.Stdout, e.SettingsPath("user")) || !strings.Contains(dry.Stdout, filepath.Join(e.UserDir, "hookd.json")) ||
		!strings.Contains(dry.Stdout, "would start: hookd serve in the background") {
		t.Fatalf("setup --dry-run: exit %d\n%s%s", dry.Code, dry.Stdout, dry.Stderr)
	}
	sameSnapshot(t, "after --dry-run", before, testutil.TreeSnapshot(t, e.UserDir))
	if _, err := os.Stat(filepath.Join(e.State, "setup.json")); err == nil {
		t.Fatal("--dry-run wrote setup.json")
	}

	r := e.Hookd("", "setup", "claude-code")
	t.Cleanup(func() { e.Hookd("", "setup", "--undo") })
	if r.Code != 0 || !strings.Contains(r.Stdout, "started hookd serve in the background") || !strings.Contains(r.Stdout, "hookd doctor: healthy") {
		t.Fatalf("setup: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The hooks now go through the daemon setup started (no fallback).
	if g := e.Hookc(bashPayload(e, "echo forbidden"), "--fallback=false"); hso(t, g)["permissionDecision"] != "deny" {
		t.Fatalf("guard through hookd: exit %d %q %q", g.Code, g.Stdout, g.Stderr)
	}
	installed := testutil.TreeSnapshot(t, e.UserDir)
	r2 := e.Hookd("", "setup", "claude-code")
	if r2.Code != 0 || !strings.Contains(r2.Stdout, "already installed") || !strings.Contains(r2.Stdout, "already answers") {
		t.Fatalf("second setup: exit %d\n%s%s", r2.Code, r2.Stdout, r2.Stderr)
	}
	sameSnapshot(t, "after a second setup", installed, testutil.TreeSnapshot(t, e.UserDir))

	u := e.Hookd("", "setup", "--undo")
	if u.Code != 0 || !strings.Contains(u.Stdout, "stopped the background hookd") {
		t.Fatalf("setup --undo: exit %d\n%s%s", u.Code, u.Stdout, u.Stderr)
	}
	sameSnapshot(t, "after --undo", before, testutil.TreeSnapshot(t, e.UserDir))
	if d := e.Hookd("", "doctor"); d.Code == 0 || !strings.Contains(d.Stdout, "hookd is not running") {
		t.Fatalf("doctor after undo: exit %d\n%s", d.Code, d.Stdout)
	}
}
