package osproc

import (
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// spinThread makes this test binary the child of TestIdleSeesEveryThread: its main
// thread waits while another thread spins.
var spinThread = os.Getenv("OSPROC_TEST_CHILD") == "spin-thread"

func init() {
	if spinThread {
		runtime.LockOSThread() // main runs on the process's main thread (runtime docs)
	}
}

func TestMain(m *testing.M) {
	if spinThread {
		var spins atomic.Uint64
		go func() {
			for {
				spins.Add(1) // keeps its thread running
			}
		}()
		select {} // the main thread waits, as a hook's main thread waits for a worker
	}
	os.Exit(m.Run())
}

func startTree(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	_, pid := startSession(t, cmd)
	return pid
}

// neverAsleep fails if Idle reports pid's tree asleep at two checks in a row, of n checks
// IdlePoll apart. One check alone can catch a spinning thread parked for an instant (the Go
// runtime parks it while it stops the world: seen once under make test's load), and
// RestoreWhenIdle, like this, never acts on one; a tree judged by one process or one
// thread is "asleep" at every check.
func neverAsleep(t *testing.T, pid, n int) {
	t.Helper()
	before := false
	for i := 0; i < n; i++ {
		asleep, _, err := Idle(pid)
		if err != nil {
			t.Fatal(err)
		}
		if asleep && before {
			t.Fatalf("checks %d and %d: tree of %d reported asleep while part of it runs", i-1, i, pid)
		}
		before = asleep
		time.Sleep(IdlePoll)
	}
}

// eventuallyAsleep waits until Idle reports pid's tree asleep twice with the same CPU time.
func eventuallyAsleep(t *testing.T, pid int) {
	t.Helper()
	var last uint64
	before := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(IdlePoll) {
		asleep, ticks, err := Idle(pid)
		if err != nil {
			t.Fatal(err)
		}
		if asleep && before && ticks == last {
			return
		}
		before, last = asleep, ticks
	}
	t.Fatalf("tree of %d never reported asleep", pid)
}

// /bin/sh -c waits for its command as a child (dash does not exec it): the shell asleep
// in wait4 is not a spare that has started up while its command still runs.
func TestIdleSeesTheShellsChild(t *testing.T) {
	pid := startTree(t, exec.Command("/bin/sh", "-c", "/bin/sh -c 'while :; do :; done'; true"))
	neverAsleep(t, pid, 10)

	pid = startTree(t, exec.Command("/bin/sh", "-c", "sleep 30; true"))
	eventuallyAsleep(t, pid)
}

// A process whose main thread waits while another thread runs is not asleep.
func TestIdleSeesEveryThread(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OSPROC_TEST_CHILD=spin-thread")
	pid := startTree(t, cmd)
	neverAsleep(t, pid, 10)
}
