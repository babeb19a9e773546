package test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 13, defect 1: a FIFO among the settings files wedged hookd — every later reload
// (a managed deny rule added afterwards was never enforced), `hookd reload`, SIGHUP and
// SIGTERM hung, and events for the project each held a thread forever. Now a FIFO, a
// device or a socket is an invalid file with a clear error, its last good version (if
// any) is kept, and nothing else waits for it.
func TestFaultSettingsFIFO(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", preToolUse(allowHook("")))
	e.Start()
	decision := func(cmd string) string {
		r := e.Hookc(bashPayload(e, cmd))
		h, _ := r.JSON(t)["hookSpecificOutput"].(map[string]any)
		if h == nil {
			return ""
		}
		s, _ := h["permissionDecision"].(string)
		return s
	}
	if d := decision("rm -rf /tmp/x"); d != "allow" {
		t.Fatalf("before: %q", d)
	}
	// FIFOs where settings files go: a managed drop-in and the project's local file, and
	// a local file that is a symlink to a character device.
	dropins := filepath.Join(e.Managed, "managed-settings.d")
	os.MkdirAll(dropins, 0o755)
	for _, p := range []string{filepath.Join(dropins, "x.json"), e.SettingsPath("local")} {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// `hookd reload` returns (the old daemon hung here) and names the FIFO.
	rl := hookdWithin(t, e, 20*time.Second, "reload")
	if !strings.Contains(rl, "FIFO") {
		t.Errorf("reload summary does not name the FIFO:\n%s", rl)
	}
	// A managed deny rule added after the FIFOs is enforced.
	e.WriteSettings("managed", `{"permissions":{"deny":["Bash(rm -rf *)"]}}`)
	Eventually(t, 20*time.Second, "the managed deny rule to be enforced", func() bool { return decision("rm -rf /tmp/x") == "deny" })
	// SIGHUP is answered too: a further managed change is picked up after it.
	_ = e.daemon.Process.Signal(syscall.SIGHUP)
	e.WriteSettings("managed", `{"permissions":{"deny":["Bash(rm -rf *)","Bash(curl *)"]}}`)
	Eventually(t, 20*time.Second, "the second managed rule", func() bool { return decision("curl x") == "deny" })
	// Events for the project neither hang nor pile up threads.
	for i := 0; i < 50; i++ {
		if d := decision("ls"); d != "allow" {
			t.Fatalf("event %d: %q", i, d)
		}
	}
	st := hookdWithin(t, e, 20*time.Second, "status")
	if !strings.Contains(st, "FIFO") {
		t.Errorf("status does not name the FIFO:\n%s", st)
	}
	threads := threadsOf(t, e.daemon.Process.Pid)
	if threads > 100 {
		t.Errorf("daemon holds %d threads after 50 events with a FIFO in the project", threads)
	}
	// A symlink to /dev/zero: an invalid file, not 8 MiB of zeros.
	os.Remove(e.SettingsPath("local"))
	if err := os.Symlink("/dev/zero", e.SettingsPath("local")); err != nil {
		t.Fatal(err)
	}
	rl = hookdWithin(t, e, 20*time.Second, "reload")
	if !strings.Contains(rl, "character device") {
		t.Errorf("reload summary does not name the device:\n%s", rl)
	}
	// SIGTERM exits (the old daemon never did).
	start := time.Now()
	_ = e.daemon.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.exited:
		t.Logf("exited %v after SIGTERM; %d threads before", time.Since(start).Round(time.Millisecond), threads)
	case <-time.After(20 * time.Second):
		t.Fatal("daemon did not exit within 20 s of SIGTERM")
	}
}

// hookdWithin runs a hookd subcommand, failing if it does not return within d.
func hookdWithin(t *testing.T, e *Env, d time.Duration, args ...string) string {
	t.Helper()
	cmd := exec.Command(bins.hookd, append(e.DaemonArgs(), args...)...)
	cmd.Env = append(e.BaseEnv(), "CLAUDE_PROJECT_DIR="+e.Project)
	cmd.Dir = e.Project
	out, err := runWithTimeout(cmd, d)
	if errors.Is(err, errStillRunning) {
		t.Fatalf("hookd %v did not return within %v", args, d)
	}
	return out
}

// threadsOf counts a process's threads (/proc).
func threadsOf(t *testing.T, pid int) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return 0
	}
	ents, err := os.ReadDir(filepath.Join("/proc", itoa(pid), "task"))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func itoa(n int) string { return strconv.Itoa(n) }
