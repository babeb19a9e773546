package osproc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// sleeper starts a child that leads its own session, as hooks do.
func sleeper(t *testing.T) (*Child, int) {
	t.Helper()
	if !SessionNiceWorks() {
		t.Skip("this kernel does not schedule sessions as groups (sched_autogroup off or absent)")
	}
	return startSession(t, exec.Command("sleep", "30"))
}

// startSession starts cmd leading its own session, as hooks do; the test's end kills and
// reaps its group.
func startSession(t *testing.T, cmd *exec.Cmd) (*Child, int) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := NewChild(cmd.Process.Pid)
	t.Cleanup(func() {
		c.KillGroup()
		_ = c.Reap(false, cmd.Wait)
	})
	return c, cmd.Process.Pid
}

func nice(t *testing.T, pid int) int {
	t.Helper()
	n, err := SessionNice(pid)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The kernel lets an unprivileged process change a session's priority once per 100 ms,
// machine-wide; SessionPriority keeps to it whatever this test's privileges.
func TestSessionPriorityRateLimit(t *testing.T) {
	c, pid := sleeper(t)
	g := NewSessionPriority()
	g.SetLimited()
	l := g.Lower(c)
	if l == nil || nice(t, pid) != LowestNice {
		t.Fatalf("Lower: %v, session nice %d", l, nice(t, pid))
	}
	if err := l.Restore(); err != ErrLater {
		t.Fatalf("second change at once: %v, want ErrLater", err)
	}
	if w := g.Wait(); w <= 0 || w > NiceInterval {
		t.Fatalf("wait %v, want in (0, %v]", w, NiceInterval)
	}
	if err := l.RestoreLater(nil, nil); err != nil {
		t.Fatal(err)
	}
	if l.Niced() || nice(t, pid) != 0 {
		t.Fatalf("after RestoreLater: niced %v, session nice %d", l.Niced(), nice(t, pid))
	}
	// Lower refuses while the limit runs: the child keeps its normal priority.
	c2, pid2 := sleeper(t)
	if l2 := g.Lower(c2); l2 != nil || nice(t, pid2) != 0 {
		t.Fatalf("Lower within the limit: %v, session nice %d", l2, nice(t, pid2))
	}
}

// A child asleep with no CPU used between two checks is given its priority back.
func TestRestoreWhenIdle(t *testing.T) {
	c, pid := sleeper(t)
	l := NewSessionPriority().Lower(c)
	if l == nil {
		t.Fatal("Lower refused")
	}
	done := make(chan error, 1)
	go func() { done <- l.RestoreWhenIdle(time.Minute, nil, nil) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if l.Niced() || nice(t, pid) != 0 {
		t.Fatalf("niced %v, session nice %d", l.Niced(), nice(t, pid))
	}
}

// A reaped child's session is never touched: its pid may be someone else's.
func TestSessionNiceAfterReap(t *testing.T) {
	if !SessionNiceWorks() {
		t.Skip("this kernel does not schedule sessions as groups (sched_autogroup off or absent)")
	}
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := NewChild(cmd.Process.Pid)
	if err := c.Reap(false, cmd.Wait); err != nil {
		t.Fatal(err)
	}
	if err := c.SetSessionNice(LowestNice); err == nil {
		t.Fatal("SetSessionNice on a reaped child succeeded")
	}
}

func TestInRootCPUGroup(t *testing.T) {
	ctl := map[string]string{"/user.slice/a.scope": "memory pids", "/system.slice/b.service": "cpu memory pids"}
	read := func(path string) ([]byte, error) {
		if c, ok := ctl[path]; ok {
			return []byte(c + "\n"), nil
		}
		return nil, os.ErrNotExist
	}
	for _, c := range []struct {
		cgroup string
		want   bool
	}{
		{"9:name=systemd:/\n8:pids:/\n4:cpu,cpuacct:/\n", true}, // v1, root (this CI machine)
		{"4:cpu,cpuacct:/docker/abc\n0::/docker/abc\n", false},  // v1 container: the v1 cpu line decides
		{"0::/\n", true},                        // v2, root
		{"0::/user.slice/a.scope\n", true},      // v2, no cpu controller there
		{"0::/system.slice/b.service\n", false}, // v2, cpu controller enabled
		{"0::/gone.scope\n", false},             // unreadable: as before
		{"", false},                             // nothing known
		{"12:cpuset:/\n11:cpuacct:/x\n0::/user.slice/a.scope\n", true}, // cpuset/cpuacct are not cpu
	} {
		if got := inRootCPUGroup([]byte(c.cgroup), read); got != c.want {
			t.Errorf("%q: %v, want %v", c.cgroup, got, c.want)
		}
	}
}
