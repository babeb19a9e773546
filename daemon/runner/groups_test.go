package runner

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
	go func() { done <- RunReaper(pr, "", t.Logf) }()
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

// The record a reaper keeps lets the next daemon kill what a reaper killed together with
// its daemon left running.
func TestReapRecordedAfterTheReaperDied(t *testing.T) {
	dir := t.TempDir()
	live, gone := startGroup(t), startGroup(t)
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() { done <- RunReaper(pr, filepath.Join(dir, recordPrefix), t.Logf) }()
	io.WriteString(pw, "+"+strconv.Itoa(live.Process.Pid)+"\n+"+strconv.Itoa(gone.Process.Pid)+"\n-"+strconv.Itoa(gone.Process.Pid)+"\n")
	record := filepath.Join(dir, recordPrefix+strconv.Itoa(os.Getpid()))
	testutil.WaitFor(t, 10*time.Second, "the record to list the group", func() bool {
		b, _ := os.ReadFile(record)
		return strings.Count(string(b), "\n") == 3
	})
	// The record of a reaper that still runs is left alone (another daemon's). A process
	// whose command line carries the reaper's argument stands in for one.
	b, _ := os.ReadFile(record)
	fake := exec.Command("/bin/sh", "-c", "sleep 300", ReaperArg)
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Process.Kill(); fake.Wait() })
	alive := filepath.Join(dir, recordPrefix+strconv.Itoa(fake.Process.Pid))
	if err := os.WriteFile(alive, b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(record) // the real one belongs to RunReaper above; it is checked at the end
	if n := ReapRecorded(dir, t.Logf); n != 0 || !groupAlive(live.Process.Pid) {
		t.Fatalf("reaped %d groups of a live reaper", n)
	}
	// The same record under a pid that is no reaper: the daemon that starts next reaps it.
	orphan := filepath.Join(dir, recordPrefix+"1")
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
