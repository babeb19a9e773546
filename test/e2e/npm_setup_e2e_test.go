//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/test/claudeapi"
	"github.com/hookd/hookd/test/testutil"
)

// releaseDir is a release directory for the npm packages: $HOOKD_RELEASE_DIST (make
// release-check passes goreleaser's), or one built here — the archive goreleaser makes
// for this machine's platform (hookd, hookc, LICENSE, README.md; release ldflags).
func releaseDir(t *testing.T, root string) string {
	if d := os.Getenv("HOOKD_RELEASE_DIST"); d != "" {
		return d
	}
	dist := filepath.Join(root, "dist")
	stage := filepath.Join(dist, "stage")
	if err := os.MkdirAll(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	repo := repoRoot()
	lite := "github.com/hookd/hookd/protocol/lite"
	ld := "-s -w -buildid= -X " + lite + ".version=0.0.0-e2e -X " + lite + ".commit=e2e -X github.com/hookd/hookd/daemon.Version=0.0.0-e2e"
	for _, b := range []string{"hookd", "hookc"} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ld, "-o", filepath.Join(stage, b), "./cmd/"+b)
		cmd.Dir, cmd.Env = repo, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", b, err, out)
		}
	}
	for _, f := range []string{"LICENSE", "README.md"} {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(stage, f), b, 0o644)
	}
	archive := filepath.Join(dist, fmt.Sprintf("hookd_0.0.0-e2e_%s_%s.tar.gz", runtime.GOOS, runtime.GOARCH))
	if out, err := exec.Command("tar", "-czf", archive, "-C", stage, "hookd", "hookc", "LICENSE", "README.md").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	return dist
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// TestNPMSetupClaudeCode (issue 25, "Done when"): in a scratch HOME with no Go on PATH,
// the npm tarballs install offline into a scratch prefix; `hookd setup claude-code` runs
// (no service manager runs here: it starts hookd in the background); a real Claude Code
// session's hooks go through that daemon (its guard denies `rm -rf`, an allowed command
// runs); `hookd doctor` exits 0; with the daemon stopped it exits 1 naming it; `hookd setup
// --undo` leaves ~/.claude byte-identical to before.
func TestNPMSetupClaudeCode(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is needed (the e2e suite installs Claude Code with it)")
	}
	root, err := os.MkdirTemp("", "hknpm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	dist := releaseDir(t, root)
	tarballs := filepath.Join(root, "npm")
	if out, err := exec.Command(filepath.Join(repoRoot(), "packaging", "npm", "build.sh"), dist, tarballs).CombinedOutput(); err != nil {
		t.Fatalf("packaging/npm/build.sh: %v\n%s", err, out)
	}
	ents, _ := os.ReadDir(tarballs)
	var tgz []string
	for _, e := range ents {
		tgz = append(tgz, filepath.Join(tarballs, e.Name()))
	}
	prefix, home := filepath.Join(root, "prefix"), filepath.Join(root, "home")
	proj := filepath.Join(home, "proj")
	nodeDir := filepath.Dir(must(exec.LookPath("node")))
	path := filepath.Join(prefix, "bin") + ":" + nodeDir + ":/usr/bin:/bin"
	env := []string{"HOME=" + home, "PATH=" + path, "npm_config_cache=" + filepath.Join(root, "npm-cache"),
		"HOOKD_SOCKET=" + filepath.Join(root, "run", "hookd.sock"), "HOOKD_MANAGED_DIR=" + filepath.Join(root, "managed"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state")}
	for _, p := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(p, "go")); err == nil {
			t.Fatalf("go is on the scratch PATH (%s): the test must run without it", p)
		}
	}
	var timings []string
	runIn := func(dir string, name string, args ...string) (int, string) {
		t.Helper()
		start := time.Now()
		defer func() {
			timings = append(timings, filepath.Base(name)+" "+strings.Join(args[:min(2, len(args))], " ")+" "+time.Since(start).Round(time.Millisecond).String())
		}()
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return 0, string(out)
	}
	for _, d := range []string{filepath.Join(home, ".claude"), filepath.Join(proj, ".claude")} {
		_ = os.MkdirAll(d, 0o755)
	}
	// Offline: npm may use nothing but the tarballs.
	if code, out := runIn(root, "npm", append([]string{"install", "-g", "--offline", "--no-audit", "--no-fund", "--prefix", prefix}, tgz...)...); code != 0 {
		t.Fatalf("npm install -g --offline: exit %d\n%s", code, out)
	}
	hookd := filepath.Join(prefix, "bin", "hookd")
	if code, out := runIn(root, hookd, "--version"); code != 0 || !strings.HasPrefix(out, "hookd ") {
		t.Fatalf("hookd --version through the npm shim: %d %s", code, out)
	}

	// The user's hooks: a guard Claude Code ran itself until now.
	guard := filepath.Join(root, "guard.sh")
	_ = os.WriteFile(guard, []byte("#!/bin/sh\nif grep -q 'rm -rf'; then echo 'no rm -rf here' >&2; exit 2; fi\nexit 0\n"), 0o755)
	settingsJSON := fmt.Sprintf(`{"permissions":{"allow":["Bash(echo *)","Bash(rm *)"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":%q}]}]}}`, guard)
	_ = os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settingsJSON+"\n"), 0o644)
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{proj: map[string]any{"hasTrustDialogAccepted": true}}})
	_ = os.WriteFile(filepath.Join(home, ".claude.json"), trust, 0o644)
	before := testutil.TreeSnapshot(t, filepath.Join(home, ".claude"))

	code, out := runIn(proj, hookd, "setup", "claude-code")
	if code != 0 || !strings.Contains(out, "hookd doctor: healthy") {
		t.Fatalf("hookd setup claude-code: exit %d\n%s", code, out)
	}
	var rec struct{ PID int }
	b, _ := os.ReadFile(filepath.Join(home, ".local", "state", "hookd", "setup.json"))
	if json.Unmarshal(b, &rec) != nil || rec.PID == 0 {
		t.Fatalf("setup.json: %s", b)
	}
	t.Cleanup(func() { _ = syscall.Kill(rec.PID, syscall.SIGKILL) })
	settingsNow, _ := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if !strings.Contains(string(settingsNow), filepath.Join(prefix, "lib", "node_modules", "@hookd")) {
		t.Fatalf("the forwarder is not the platform package's hookc (never the node shim):\n%s", settingsNow)
	}

	// A real Claude Code session.
	srv := claudeapi.Start(t, []claudeapi.Turn{
		{ToolName: "Bash", ToolInput: map[string]any{"command": "rm -rf " + filepath.Join(root, "victim"), "description": "d"}},
		{ToolName: "Bash", ToolInput: map[string]any{"command": "echo through-hookd", "description": "d"}},
		{Text: "done"},
	})
	victim := filepath.Join(root, "victim")
	_ = os.MkdirAll(victim, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin.claude, "-p", "go", "--output-format", "stream-json", "--verbose")
	cmd.Dir = proj
	cmd.Env = append(env, "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	_ = cmd.Run()
	timings = append(timings, "claude session "+time.Since(start).Round(time.Millisecond).String())
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("rm -rf ran: the guard did not block it through hookd\n%s\n%s", stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "no rm -rf here") || !strings.Contains(stdout.String(), "through-hookd") {
		t.Fatalf("the session did not see the guard's reason and the allowed command's output:\n%s\n%s", stdout.String(), stderr.String())
	}
	code, out = runIn(proj, hookd, "status", "--json")
	var st struct {
		PID      int               `json:"pid"`
		Version  string            `json:"version"`
		PerEvent map[string]uint64 `json:"per_event"`
		Clients  []struct {
			Client, Version string
			Requests        uint64
			Skew            bool
		} `json:"clients"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.PID != rec.PID || st.PerEvent["PreToolUse"] < 2 {
		t.Fatalf("the daemon setup started did not answer the session's PreToolUse events: exit %d %v\n%s", code, err, out)
	}
	// The session's events came through the npm package's hookc, of the daemon's version.
	if len(st.Clients) != 1 || st.Clients[0].Client != "hookc" || st.Clients[0].Version != st.Version || st.Clients[0].Skew || st.Clients[0].Requests < 2 {
		t.Fatalf("status lists the clients %+v (daemon %s); want the one hookc of the daemon's version", st.Clients, st.Version)
	}

	if code, out := runIn(proj, hookd, "doctor"); code != 0 {
		t.Fatalf("hookd doctor after setup: exit %d\n%s", code, out)
	}
	if err := syscall.Kill(rec.PID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		code, out = runIn(proj, hookd, "doctor")
		if code != 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if (code != 1 && code != 2) || !strings.Contains(out, "daemon") || !strings.Contains(out, "hookd is not running") {
		t.Fatalf("hookd doctor with the daemon stopped: exit %d\n%s", code, out)
	}
	// Claude Code wrote its own files into ~/.claude during the session (projects/,
	// sessions/, …): --undo must give back hookd's two files exactly as they were before
	// setup and touch nothing else.
	preUndo := testutil.TreeSnapshot(t, filepath.Join(home, ".claude"))
	if code, out := runIn(proj, hookd, "setup", "--undo"); code != 0 {
		t.Fatalf("hookd setup --undo: exit %d\n%s", code, out)
	}
	after := testutil.TreeSnapshot(t, filepath.Join(home, ".claude"))
	for k, v := range before {
		if after[k] != v {
			t.Errorf("~/.claude/%s is not what it was before setup: %q -> %q", k, v, after[k])
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok && preUndo[k] != v {
			t.Errorf("~/.claude/%s: neither as before setup nor as Claude Code left it: %q", k, v)
		}
	}
	if _, ok := after["hookd.json"]; ok {
		t.Error("~/.claude/hookd.json left behind")
	}
	t.Logf("timings: %s", strings.Join(timings, ", "))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
