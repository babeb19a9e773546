package runner

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/runner/osproc"
	"github.com/hookd/hookd/test/testutil"
)

func TestRunKillsTheGroupWhenTheHookExits(t *testing.T) {
	for _, keep := range []bool{false, true} {
		// The hook prints its background sleep's pid and exits; the sleep holds stdout.
		res := ExecRunner{}.Run(context.Background(), ProcSpec{Command: "sleep 300 & echo $!", Timeout: time.Minute, KeepGroup: keep})
		pid, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("keep=%v: %+v", keep, res)
		}
		alive := func() bool { return syscall.Kill(pid, 0) == nil && !isZombie(pid) }
		if keep {
			if !alive() {
				t.Fatal("KeepGroup: the background sleep was killed")
			}
			syscall.Kill(pid, syscall.SIGKILL)
			continue
		}
		testutil.WaitFor(t, 10*time.Second, "the background sleep to be killed", func() bool { return !alive() })
	}
}

func isZombie(pid int) bool {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || s[i+2] == 'Z'
}

// A hook's own process is killed by its group only while unreaped: a Child whose process
// was reaped signals nothing, even when its pid now leads someone else's group.
func TestChildNeverSignalsAfterTheReap(t *testing.T) {
	c := exec.Command("true")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	g := osproc.NewChild(c.Process.Pid)
	if err := g.Reap(true, c.Wait); err != nil {
		t.Fatal(err)
	}
	neighbour := testutil.StartNeighbour(t, c.Process.Pid)
	if g.KillGroup() {
		t.Fatal("KillGroup signalled after the reap")
	}
	if !neighbour.Survived(t) {
		t.Fatal("the neighbour was killed")
	}
}
