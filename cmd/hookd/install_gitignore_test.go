package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/configs/install"
)

// `hookd install claude-code --scope local` in a repository leaves `git status` as Claude
// Code leaves it: hookd.local.json, the local hooks' new home, is ignored everywhere as
// settings.local.json is (Claude Code puts that one in git's global excludes file).
// Found by the corpus bench: block-no-verify's `git status --short` printed `?? .claude/`
// through hookd and nothing natively.
func TestInstallLocalKeepsGitStatusClean(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: this test needs it as its oracle")
	}
	home, xdg := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"HOOKD_MANAGED_DIR", "HOOKD_USER_DIR", "HOOKD_CONFIG"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("HOOKD_STATE_DIR", t.TempDir())
	proj := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = proj
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	local := filepath.Join(proj, ".claude", "settings.local.json")
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"true"}]}]}}`
	if err := os.WriteFile(local, []byte(hooks), 0o644); err != nil {
		t.Fatal(err)
	}
	// What Claude Code does for its own file when it starts in the project.
	ignore := filepath.Join(xdg, "git", "ignore")
	if err := os.MkdirAll(filepath.Dir(ignore), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ignore, []byte("**/.claude/settings.local.json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := git("status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Fatalf("before the install git status shows %q", got)
	}
	app := App()
	var out, errb bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errb
	if err := app.Run([]string{"hookd", "install", "claude-code", "--scope", "local", "--project", proj, "--hookc", "/usr/local/bin/hookc"}); err != nil {
		t.Fatalf("install: %v\n%s%s", err, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude", "hookd.local.json")); err != nil {
		t.Fatalf("install wrote no hookd.local.json: %v\n%s", err, out.String())
	}
	if got := git("status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Fatalf("after the install git status shows %q\n%s%s", got, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), install.GitIgnoreLine) {
		t.Errorf("install did not say it added %q:\n%s", install.GitIgnoreLine, out.String())
	}
}
