package testutil

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

var nsLastPid sync.Mutex

// CanReusePids reports whether StartWithPid can work here: writing the kernel's last
// allocated pid (/proc/sys/kernel/ns_last_pid) needs CAP_SYS_ADMIN in the pid namespace,
// i.e. root in CI. The reason is returned when it cannot.
func CanReusePids() (bool, string) {
	f, err := os.OpenFile("/proc/sys/kernel/ns_last_pid", os.O_WRONLY, 0)
	if err != nil {
		return false, "forcing a pid to be reused needs root (writing /proc/sys/kernel/ns_last_pid: " + err.Error() + ")"
	}
	f.Close()
	return true, ""
}

// StartWithPid starts the command mk returns as a pid-reusing neighbour would: with the
// pid pid, which must be free (its process reaped, and no process group or session left
// with that number). It sets the kernel's last allocated pid to pid-1 and starts the
// command; another process on the machine may take the pid first, so it retries. The
// test fails if the pid cannot be had (it is still in use), and is skipped, saying why,
// where pids cannot be forced (not root). The command is killed at the end of the test.
func StartWithPid(t testing.TB, pid int, mk func() *exec.Cmd) *exec.Cmd {
	t.Helper()
	if ok, why := CanReusePids(); !ok {
		t.Skip(why)
	}
	nsLastPid.Lock()
	defer nsLastPid.Unlock()
	for try := 0; try < 200; try++ {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			t.Fatalf("writing ns_last_pid: %v", err)
		}
		cmd := mk()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if cmd.Process.Pid == pid {
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			})
			return cmd
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if err := syscall.Kill(pid, 0); err == nil || !errors.Is(err, syscall.ESRCH) {
			// Something else holds the pid now (or never let go of it): no retry helps.
			if try > 20 {
				t.Fatalf("pid %d is in use; cannot start a neighbour with it", pid)
			}
		}
	}
	t.Fatalf("could not start a process with pid %d (another process took it first 200 times)", pid)
	return nil
}

// Neighbour is a pid-reusing neighbour: a shell that leads its own session and process
// group (numbered with the pid it was given) and echoes every line it reads.
type Neighbour struct {
	Cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// StartNeighbour starts a Neighbour with the pid pid (StartWithPid).
func StartNeighbour(t testing.TB, pid int) *Neighbour {
	t.Helper()
	var n Neighbour
	n.Cmd = StartWithPid(t, pid, func() *exec.Cmd {
		c := exec.Command("sh", "-c", `while read -r x; do echo "$x"; done`)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // leads a group numbered pid
		in, err := c.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		n.in, n.out = in, bufio.NewReader(out)
		return c
	})
	return &n
}

// Survived reports whether the neighbour was never killed up to now: it answers a line
// written now. Checking that its pid still runs is not enough — a SIGKILL sent a moment
// ago may still be pending — but a process with a pending SIGKILL never returns from its
// read to answer. So whatever hookd did before this call, its effect is seen here, with
// no sleep and no timing.
func (n *Neighbour) Survived(t testing.TB) bool {
	t.Helper()
	if _, err := io.WriteString(n.in, "ping\n"); err != nil {
		return false // EPIPE: it is gone
	}
	line, err := n.out.ReadString('\n') // EOF if it dies
	return err == nil && line == "ping\n"
}
