package osproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Both ways of making a close-on-exec socket pair — SOCK_CLOEXEC (Linux) and
// socketpairForkLock (macOS, plain Go: run here too) — give descriptors a child does not
// inherit.
func TestSocketpairsAreCloseOnExec(t *testing.T) {
	for name, mk := range map[string]func() ([2]int, error){"Socketpair": Socketpair, "ForkLock": socketpairForkLock} {
		fds, err := mk()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, fd := range fds {
			fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
			if err != nil || fl&unix.FD_CLOEXEC == 0 {
				t.Fatalf("%s: fd %d flags %#x (%v): not close-on-exec", name, fd, fl, err)
			}
		}
		// A child started meanwhile sees neither.
		out, err := exec.Command("/bin/sh", "-c", "ls /proc/self/fd 2>/dev/null || ls /dev/fd").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range fds {
			for _, f := range strings.Fields(string(out)) {
				if f == itoa(fd) && fd > 2 {
					t.Fatalf("%s: a child inherited fd %d", name, fd)
				}
			}
			syscall.Close(fd)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// OpenRegular refuses, without waiting, what is not a regular file, naming what it is.
func TestOpenRegularNeverWaits(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(dir, "reg")
	os.WriteFile(reg, []byte("x"), 0o600)
	for path, want := range map[string]string{fifo: "a FIFO (named pipe)", dir: "a directory", "/dev/null": "a character device"} {
		f, err := OpenRegular(path)
		if err == nil {
			f.Close()
			t.Fatalf("%s opened", path)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want %q", path, err, want)
		}
	}
	b, err := ReadRegular(reg, 10)
	if err != nil || string(b) != "x" {
		t.Fatalf("regular file: %q %v", b, err)
	}
}

// StartTime and Running identify a process; a zombie is not running.
func TestStartTimeAndRunning(t *testing.T) {
	c := exec.Command("sleep", "300")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := StartTime(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if !Running(c.Process.Pid, st) || Running(c.Process.Pid, st+1) {
		t.Fatal("Running does not match the start time")
	}
	ch := NewChild(c.Process.Pid)
	if !ch.KillGroup() && syscall.Kill(c.Process.Pid, syscall.SIGKILL) != nil {
		t.Fatal("cannot kill")
	}
	if err := waitExited(c.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if Running(c.Process.Pid, st) {
		t.Fatal("a zombie counts as running")
	}
	c.Wait()
	if BootID() == "" {
		t.Fatal("no boot id")
	}
}
