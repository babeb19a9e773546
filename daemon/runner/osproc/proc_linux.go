package osproc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitExited blocks until pid, a child of the caller, has exited, without reaping it
// (waitid WNOWAIT).
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// StartTime is when pid started, in clock ticks since boot (field 22 of /proc/PID/stat):
// with BootID, an identity a recycled pid cannot take over unless it is reused within the
// same tick. A zombie has one too.
func StartTime(pid int) (uint64, error) {
	start, _, err := stat(pid)
	return start, err
}

// Running reports whether pid is the process that started at start and has not exited
// (a zombie has exited).
func Running(pid int, start uint64) bool {
	st, state, err := stat(pid)
	return err == nil && st == start && state != "Z"
}

// Parent returns pid's parent and its command name (comm, at most 15 bytes) from
// /proc/PID/stat.
func Parent(pid int) (ppid int, comm string, err error) {
	comm, f, err := readStat(pid, 2)
	if err != nil {
		return 0, "", err
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, comm, err
}

// stat reads a process's start time and state from /proc/PID/stat.
func stat(pid int) (start uint64, state string, err error) {
	_, f, err := readStat(pid, 20)
	if err != nil {
		return 0, "", err
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	return start, f[0], err
}

// readStat reads /proc/PID/stat: comm, and the fields after it (f[0] is field 3, the
// state), at least min of them.
func readStat(pid, min int) (comm string, f []string, err error) {
	return readStatFile("/proc/"+strconv.Itoa(pid)+"/stat", min)
}

// readStatFile reads a stat file of /proc (a process's or, under task/, a thread's) as
// readStat does. comm may contain spaces and parentheses, so it ends at the last ')'. An
// error reading the file is the *fs.PathError os.ReadFile returns.
func readStatFile(path string, min int) (comm string, f []string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	s := string(b)
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return "", nil, fmt.Errorf("malformed %s", path)
	}
	if f = strings.Fields(s[j+1:]); len(f) < min {
		return "", nil, fmt.Errorf("malformed %s", path)
	}
	return s[i+1 : j], f, nil
}

// BootID identifies this boot of the machine (/proc/sys/kernel/random/boot_id).
var BootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// Handle is a pidfd: a reference to one process that the kernel keeps valid after the
// process exits and is reaped, and never lets refer to another. The zero value is no
// handle (use NoHandle).
type Handle struct{ fd int }

// NoHandle is the empty Handle.
var NoHandle = Handle{fd: -1}

// OpenHandle opens a pidfd for pid. The caller must know that pid is the process it means
// at this moment (its unreaped child, or a process whose start time it then checks).
func OpenHandle(pid int) (Handle, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return NoHandle, err
	}
	syscall.CloseOnExec(fd)
	return Handle{fd: fd}, nil
}

// HandleFromFD adopts fd, a pidfd received from another process (SCM_RIGHTS).
func HandleFromFD(fd int) Handle {
	syscall.CloseOnExec(fd)
	return Handle{fd: fd}
}

// Valid reports whether h holds a pidfd.
func (h Handle) Valid() bool { return h.fd >= 0 }

// Close releases the pidfd.
func (h Handle) Close() {
	if h.fd >= 0 {
		_ = syscall.Close(h.fd)
	}
}

// Alive reports whether the process has not been reaped (signal 0 through a pidfd
// succeeds for a zombie too): while it holds, its pid is its own.
func (h Handle) Alive() bool {
	return h.fd >= 0 && unix.PidfdSendSignal(h.fd, 0, nil, 0) == nil
}

// WaitExit blocks until the process exits (its pidfd becomes readable; a zombie has
// exited) or wake, a descriptor, becomes readable or hung up, and reports whether the
// process exited.
func (h Handle) WaitExit(wake int) bool {
	fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return err == nil && fds[0].Revents != 0
	}
}

// Kill sends SIGKILL to the process itself (not its group).
func (h Handle) Kill() error {
	if h.fd < 0 {
		return ErrUnsupported
	}
	return unix.PidfdSendSignal(h.fd, unix.SIGKILL, nil, 0)
}

// KillGroup sends SIGKILL to the process group the handle's process led, as the kernel's
// object for it: its members, even once the leader is reaped, and never a later group that
// took the same number. ErrUnsupported on kernels before 6.9 (and without a handle);
// ESRCH when the group has no member left.
func (h Handle) KillGroup() error {
	if h.fd < 0 || !GroupSignals() {
		return ErrUnsupported
	}
	return unix.PidfdSendSignal(h.fd, unix.SIGKILL, nil, unix.PIDFD_SIGNAL_PROCESS_GROUP)
}

var noGroupSignals atomic.Bool // tests: behave as a kernel before 6.9

// GroupSignals reports whether the kernel signals a process group through a pidfd
// (PIDFD_SIGNAL_PROCESS_GROUP, Linux 6.9).
func GroupSignals() bool { return !noGroupSignals.Load() && groupSignals() }

var groupSignals = sync.OnceValue(func() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	// Signal 0 to the group our pid names (ESRCH unless we lead one): EINVAL from a
	// kernel that does not know the flag.
	return !errors.Is(unix.PidfdSendSignal(fd, 0, nil, unix.PIDFD_SIGNAL_PROCESS_GROUP), syscall.EINVAL)
})

// SimulateOldKernel makes GroupSignals report false until the returned function is
// called: tests run the paths a kernel before 6.9 takes.
func SimulateOldKernel() (restore func()) {
	noGroupSignals.Store(true)
	return func() { noGroupSignals.Store(false) }
}

// Socketpair returns a close-on-exec AF_UNIX stream socket pair.
func Socketpair() ([2]int, error) {
	return syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}

// Ctime is a file's status-change time in nanoseconds (st_ctim).
func Ctime(st *syscall.Stat_t) int64 { return st.Ctim.Sec*1e9 + st.Ctim.Nsec }

// ForkWarmInterpreters says whether hookd forks Python hooks from a warm interpreter (the
// zygote) by default: on Linux, yes (docs/zygote.md).
const ForkWarmInterpreters = true
