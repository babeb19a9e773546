package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitHome gives git (and EnsureGitIgnored) a scratch home and no system configuration.
func gitHome(t *testing.T) (home, xdg string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: the excludes-file tests need it as their oracle")
	}
	home, xdg = t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return home, xdg
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// After EnsureGitIgnored, git itself (the oracle) no longer offers a project's
// hookd.local.json — whatever the repository — and the file keeps what it held.
func TestEnsureGitIgnoredHidesTheLocalFile(t *testing.T) {
	_, xdg := gitHome(t)
	proj := t.TempDir()
	gitRun(t, proj, "init", "-q")
	if err := os.MkdirAll(filepath.Join(proj, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".claude", "hookd.local.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := gitRun(t, proj, "status", "--porcelain", "--untracked-files=all"); !strings.Contains(got, "hookd.local.json") {
		t.Fatalf("before: git status %q does not offer the file (the test shows nothing)", got)
	}
	// What Claude Code wrote there before stays, even without a final newline.
	ignore := filepath.Join(xdg, "git", "ignore")
	if err := os.MkdirAll(filepath.Dir(ignore), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ignore, []byte("**/.claude/settings.local.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	file, added, err := EnsureGitIgnored()
	if err != nil || !added || file != ignore {
		t.Fatalf("EnsureGitIgnored = %q, %v, %v; want %q, true, nil", file, added, err, ignore)
	}
	if got := gitRun(t, proj, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Fatalf("after: git status still offers %q", got)
	}
	if b, _ := os.ReadFile(ignore); string(b) != "**/.claude/settings.local.json\n"+GitIgnoreLine+"\n" {
		t.Fatalf("excludes file now %q", b)
	}
	// Again: nothing added.
	if _, added, err := EnsureGitIgnored(); err != nil || added {
		t.Fatalf("second call: added %v, %v; want false, nil", added, err)
	}
}

// core.excludesFile in the global configuration (with ~/) is the file git reads, so it
// is the one that gets the line.
func TestEnsureGitIgnoredFollowsCoreExcludesFile(t *testing.T) {
	home, xdg := gitHome(t)
	gitRun(t, home, "config", "--global", "core.excludesFile", "~/my-ignores")
	file, added, err := EnsureGitIgnored()
	if want := filepath.Join(home, "my-ignores"); err != nil || !added || file != want {
		t.Fatalf("EnsureGitIgnored = %q, %v, %v; want %q, true, nil", file, added, err, want)
	}
	if _, err := os.Stat(filepath.Join(xdg, "git", "ignore")); err == nil {
		t.Fatal("git's default excludes file was written although core.excludesFile names another")
	}
	proj := t.TempDir()
	gitRun(t, proj, "init", "-q")
	if out := gitRun(t, proj, "check-ignore", "-v", ".claude/hookd.local.json"); !strings.Contains(out, "my-ignores") {
		t.Fatalf("git check-ignore: %q", out)
	}
}

func TestInGitWorkTree(t *testing.T) {
	gitHome(t)
	repo := t.TempDir()
	gitRun(t, repo, "init", "-q")
	deep := filepath.Join(repo, "a", "b", ".claude")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if !InGitWorkTree(deep) || InGitWorkTree(t.TempDir()) {
		t.Fatalf("InGitWorkTree: %v in a repository, %v outside", InGitWorkTree(deep), InGitWorkTree(t.TempDir()))
	}
}
