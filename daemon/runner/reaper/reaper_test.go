package reaper

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/runner/osproc"
	"github.com/hookd/hookd/test/testutil"
)

// groupAlive reports whether any process of group pgid is alive (not a zombie).
func groupAlive(pgid int) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			return true
		}
	}
	return false
}

func startGroup(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	return cmd
}

const twoSleeps = "sleep 300 & sleep 300 & wait"

// plus is the daemon's "+PID START" line for a running process.
func plus(t *testing.T, pid int) string {
	t.Helper()
	st, err := osproc.StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("+%d %d\n", pid, st)
}

func TestReaperKillsTrackedGroupsAtEOF(t *testing.T) {
	tracked, untracked := startGroup(t, twoSleeps), startGroup(t, twoSleeps)
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() { done <- Run(pr, "", t.Logf) }()
	io.WriteString(pw, plus(t, tracked.Process.Pid)+plus(t, untracked.Process.Pid)+"-"+strconv.Itoa(untracked.Process.Pid)+"\n")
	pw.Close() // the daemon is gone
	if n := <-done; n != 1 {
		t.Fatalf("killed %d groups, want 1", n)
	}
	testutil.WaitFor(t, 10*time.Second, "the tracked group to die", func() bool { return !groupAlive(tracked.Process.Pid) })
	if !groupAlive(untracked.Process.Pid) {
		t.Fatal("an untracked (finished) group was killed")
	}
}

// A line whose start time is not the leader's names another process than the hook the
// daemon started (its pid was reused): it is not tracked, and nothing is killed.
func TestReaperNeverKillsARecycledGroupID(t *testing.T) {
	g := startGroup(t, twoSleeps)
	start, err := osproc.StartTime(g.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	n := Run(strings.NewReader(fmt.Sprintf("+%d %d\n", g.Process.Pid, start-1)), "", t.Logf)
	if n != 0 || !groupAlive(g.Process.Pid) {
		t.Fatalf("killed %d groups; alive %v", n, groupAlive(g.Process.Pid))
	}
}

// A hook whose own process died while the daemon ran (its group killed at the exit only
// if the daemon saw it): on Linux ≥ 6.9 the reaper still finds the rest of the group
// through the pidfd it opened while the leader lived; without that (older kernels, macOS)
// the leader is the only proof and nothing is killed.
func TestReaperGroupWhoseLeaderDied(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprintf("old_kernel=%v", old), func(t *testing.T) {
			if old {
				defer osproc.SimulateOldKernel()()
			} else if !osproc.GroupSignals() {
				t.Skip("this kernel has no PIDFD_SIGNAL_PROCESS_GROUP (Linux < 6.9): the old_kernel case covers it")
			}
			// The leader prints its background sleep's pid and waits for a line.
			g := exec.Command("/bin/sh", "-c", "sleep 300 & echo $!; read x")
			g.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			in, _ := g.StdinPipe()
			out, _ := g.StdoutPipe()
			if err := g.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Kill(-g.Process.Pid, syscall.SIGKILL) })
			var sleeper int
			fmt.Fscan(out, &sleeper)
			dir := t.TempDir()
			pr, pw := io.Pipe()
			done := make(chan int)
			go func() { done <- Run(pr, filepath.Join(dir, recordPrefix), t.Logf) }()
			io.WriteString(pw, plus(t, g.Process.Pid))
			testutil.WaitFor(t, 10*time.Second, "the reaper to track the group", func() bool {
				b, _ := os.ReadFile(recordName(t, dir, os.Getpid()))
				return strings.Contains(string(b), "+")
			})
			in.Close() // the leader exits; its sleep stays in the group
			g.Wait()
			pw.Close()
			n := <-done
			if old {
				if n != 0 || !groupAlive(g.Process.Pid) {
					t.Fatalf("old kernel: killed %d groups without a live leader to prove them", n)
				}
				syscall.Kill(sleeper, syscall.SIGKILL)
				return
			}
			if n != 1 {
				t.Fatalf("killed %d groups, want 1", n)
			}
			testutil.WaitFor(t, 10*time.Second, "the leaderless group to die", func() bool { return !groupAlive(g.Process.Pid) })
		})
	}
}

func isZombie(pid int) bool {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || s[i+2] == 'Z'
}

// recordName is the record file of a reaper with this pid.
func recordName(t *testing.T, dir string, pid int) string {
	st, err := osproc.StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, fmt.Sprintf("%s%d.%d", recordPrefix, pid, st))
}

// The record a reaper keeps lets the next daemon kill what a reaper killed together with
// its daemon left running.
func TestReapRecordedAfterTheReaperDied(t *testing.T) {
	dir := t.TempDir()
	live, gone := startGroup(t, twoSleeps), startGroup(t, twoSleeps)
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() { done <- Run(pr, filepath.Join(dir, recordPrefix), t.Logf) }()
	io.WriteString(pw, plus(t, live.Process.Pid)+plus(t, gone.Process.Pid)+"-"+strconv.Itoa(gone.Process.Pid)+"\n")
	record := recordName(t, dir, os.Getpid())
	testutil.WaitFor(t, 10*time.Second, "the record to list the group", func() bool {
		b, _ := os.ReadFile(record)
		return strings.Count(string(b), "\n") == 4
	})
	b, _ := os.ReadFile(record)
	if !strings.HasPrefix(string(b), "boot "+osproc.BootID()+"\n") {
		t.Fatalf("record does not start with this boot's identity: %q", b)
	}
	// The record of a reaper that still runs is left alone (another daemon's): a live
	// process with the pid and start time in the name stands in for one.
	fake := exec.Command("sleep", "300")
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Process.Kill(); fake.Wait() })
	alive := recordName(t, dir, fake.Process.Pid)
	if err := os.WriteFile(alive, b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(record) // the real one belongs to Run above; it is checked at the end
	if n := ReapRecorded(dir, t.Logf); n != 0 || !groupAlive(live.Process.Pid) {
		t.Fatalf("reaped %d groups of a live reaper", n)
	}
	// Another boot's record: nothing of it can still run; removed, nothing killed.
	other := filepath.Join(dir, recordPrefix+"1.1")
	if err := os.WriteFile(other, []byte(strings.Replace(string(b), osproc.BootID(), "another-boot", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if n := ReapRecorded(dir, t.Logf); n != 0 || !groupAlive(live.Process.Pid) {
		t.Fatalf("reaped %d groups of another boot", n)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Fatal("another boot's record was not removed")
	}
	// The same record under a reaper that is gone: its start time differs, or it is a
	// zombie nobody reaped (orphans of a SIGKILLed daemon may stay one). The daemon that
	// starts next reaps it.
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zombie.Wait() })
	testutil.WaitFor(t, 10*time.Second, "the fake reaper to become a zombie", func() bool { return isZombie(zombie.Process.Pid) })
	orphan := recordName(t, dir, zombie.Process.Pid)
	if err := os.Rename(alive, orphan); err != nil {
		t.Fatal(err)
	}
	if n := ReapRecorded(dir, t.Logf); n != 1 {
		t.Fatalf("reaped %d groups, want 1", n)
	}
	testutil.WaitFor(t, 10*time.Second, "the recorded group to die", func() bool { return !groupAlive(live.Process.Pid) })
	if !groupAlive(gone.Process.Pid) {
		t.Fatal("a group recorded as finished was killed")
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatal("the reaped record was not removed")
	}
	pw.Close()
	<-done
}

// The replay after a double crash with a pid-reusing neighbour: the recorded hook's
// process ended and was reaped, and an unrelated process now has its pid and leads a
// group with that number. It started later than the recorded leader — which the old
// check ("members that started no earlier than the leader") took as proof — and is not
// the leader: it survives.
func TestReapRecordedSparesAPidReusingNeighbour(t *testing.T) {
	dir := t.TempDir()
	hook := exec.Command("sleep", "0.2")
	hook.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	pid := hook.Process.Pid
	rec := "boot " + osproc.BootID() + "\n" + plus(t, pid)
	hook.Wait() // the hook ends, and is reaped, while no daemon runs
	if err := os.WriteFile(filepath.Join(dir, recordPrefix+"1.1"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	neighbour := testutil.StartNeighbour(t, pid) // leads group `pid`
	if n := ReapRecorded(dir, t.Logf); n != 0 {
		t.Fatalf("killed %d groups", n)
	}
	if !neighbour.Survived(t) {
		t.Fatal("the neighbour that reused the hook's pid was killed")
	}
}
