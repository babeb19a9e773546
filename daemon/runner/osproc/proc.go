// Package osproc is what hookd knows about processes it did not necessarily start, and the
// one place where that differs by operating system (proc_linux.go, proc_darwin.go).
//
// Its rule, for every signal hookd sends to a process group: the group is named by
// something a recycled pid cannot forge, never by its number alone (docs/reliability.md,
// "What hookd kills"). Either
//
//   - the caller is the group leader's parent and has not reaped it (Child): while a
//     process is unreaped, alive or a zombie, its pid — and so the number of the group it
//     leads — belongs to nobody else;
//   - or the caller holds a handle the kernel keeps to that very process (Handle: a pidfd,
//     Linux ≥ 5.3). With PIDFD_SIGNAL_PROCESS_GROUP (Linux ≥ 6.9) the kernel signals the
//     group the pidfd's process led, as the kernel's own object rather than its number:
//     even after the leader was reaped, a new group that took the same number is not hit;
//   - or, after a crash, the process at that pid has the start time that was recorded
//     while it was provably the hook, in the same boot (StartTime, BootID).
//
// This package imports only the standard library and golang.org/x/sys.
package osproc

import (
	"errors"
	"sync"
	"syscall"
)

// ErrUnsupported means the operating system lacks the facility (pidfds on macOS).
var ErrUnsupported = errors.New("not supported on this system")

// Child is a process the caller started and alone reaps. Its group (the process must lead
// one: Setsid or Setpgid at start) is signalled only while the process is unreaped, which
// Reap guarantees by taking the same lock around the moment it gives up that right.
type Child struct {
	pid    int
	mu     sync.Mutex
	reaped bool
}

// NewChild returns the guard for pid, which the caller started and has not reaped.
func NewChild(pid int) *Child { return &Child{pid: pid} }

// Pid is the child's pid.
func (c *Child) Pid() int { return c.pid }

// KillGroup sends SIGKILL to the child's process group if the child is not reaped yet
// (else nothing: that number may belong to someone else by now). It reports whether it
// signalled.
func (c *Child) KillGroup() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return false
	}
	err := syscall.Kill(-c.pid, syscall.SIGKILL)
	return err == nil
}

// SetSessionNice sets the nice value of the child's session group (SessionNiceWorks) if
// the child is not reaped yet: the child must lead its own session (Setsid), or the whole
// session it is in is affected. Under the same lock as KillGroup and Reap, so a recycled
// pid's session is never touched.
func (c *Child) SetSessionNice(nice int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return errReaped
	}
	return setSessionNice(c.pid, nice)
}

var errReaped = errors.New("process already reaped")

// Reap waits until the child has exited (without reaping it), kills its group if
// killGroup — what the hook left running, while the group's number is still the hook's —
// and then, with no kill possible any more, calls wait, which reaps (exec.Cmd.Wait).
func (c *Child) Reap(killGroup bool, wait func() error) error {
	werr := waitExited(c.pid)
	c.mu.Lock()
	if killGroup && werr == nil {
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
	}
	c.reaped = true
	c.mu.Unlock()
	return wait()
}

// socketpairForkLock is a close-on-exec AF_UNIX stream socket pair for systems without
// SOCK_CLOEXEC (macOS): the flag is set under syscall.ForkLock, so no process forked
// meanwhile by this one (os/exec takes the lock for writing) inherits the descriptors.
// Plain Go: its test runs on Linux too.
func socketpairForkLock() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return fds, nil
}
