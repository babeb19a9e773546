package runner

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/test/testutil"
)

// groupAlive reports whether any process of group pgid is alive (not a zombie).
func groupAlive(pgid int) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		_, pgrp, err := procStat(pid)
		if err != nil || pgrp != pgid {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 && s[i+2] != 'Z' {
			return true
		}
	}
	return false
}

func startGroup(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & sleep 300 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	return cmd
}

func TestReaperKillsTrackedGroupsAtEOF(t *testing.T) {
	tracked, untracked := startGroup(t), startGroup(t)
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() { done <- RunReaper(pr, t.Logf) }()
	io.WriteString(pw, "+"+strconv.Itoa(tracked.Process.Pid)+"\n+"+strconv.Itoa(untracked.Process.Pid)+"\n-"+strconv.Itoa(untracked.Process.Pid)+"\n")
	pw.Close() // the daemon is gone
	if n := <-done; n != 1 {
		t.Fatalf("killed %d groups, want 1", n)
	}
	testutil.WaitFor(t, 10*time.Second, "the tracked group to die", func() bool { return !groupAlive(tracked.Process.Pid) })
	if !groupAlive(untracked.Process.Pid) {
		t.Fatal("an untracked (finished) group was killed")
	}
}

// A group whose recorded leader started after every live member is not the group the
// daemon tracked (its pid was reused): it is left alone.
func TestReaperNeverKillsARecycledGroupID(t *testing.T) {
	g := startGroup(t)
	start, _, err := procStat(g.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if n := killGroups(map[int]uint64{g.Process.Pid: start + 1}, t.Logf); n != 0 || !groupAlive(g.Process.Pid) {
		t.Fatalf("killed %d groups; alive %v", n, groupAlive(g.Process.Pid))
	}
}

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
