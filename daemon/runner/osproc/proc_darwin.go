package osproc

import (
	"bytes"
	"errors"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitExited blocks until pid, a child of the caller, has exited, without reaping it:
// macOS has waitid but x/sys does not wrap it, so a kqueue EVFILT_PROC/NOTE_EXIT filter
// waits instead. A child that already exited (a zombie) is refused with ESRCH by the
// filter: it has exited, which is the answer.
func waitExited(pid int) error {
	kq, err := unix.Kqueue()
	if err != nil {
		return err
	}
	defer unix.Close(kq)
	ev := []unix.Kevent_t{{Ident: uint64(pid), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}}
	out := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, ev, out, nil)
		if errors.Is(err, syscall.EINTR) {
			ev = nil // registered (or refused) already
			continue
		}
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		if err != nil {
			return err
		}
		if n > 0 && out[0].Flags&unix.EV_ERROR != 0 {
			if syscall.Errno(out[0].Data) == syscall.ESRCH {
				return nil
			}
			return syscall.Errno(out[0].Data)
		}
		if n > 0 && out[0].Fflags&unix.NOTE_EXIT != 0 {
			return nil
		}
		ev = nil
	}
}

// StartTime is when pid started, in microseconds since the epoch (sysctl kern.proc.pid,
// p_starttime).
func StartTime(pid int) (uint64, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	if kp.Proc.P_pid != int32(pid) {
		return 0, syscall.ESRCH // the sysctl answers an empty record for no such process
	}
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1e6 + uint64(t.Usec), nil
}

// Parent returns pid's parent and its command name (p_comm) from sysctl kern.proc.pid.
func Parent(pid int) (ppid int, comm string, err error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, "", err
	}
	if kp.Proc.P_pid != int32(pid) {
		return 0, "", syscall.ESRCH
	}
	c := kp.Proc.P_comm[:]
	if i := bytes.IndexByte(c, 0); i >= 0 {
		c = c[:i]
	}
	return int(kp.Eproc.Ppid), string(c), nil
}

// Running reports whether pid is the process that started at start and has not exited
// (a zombie, p_stat SZOMB, has exited).
func Running(pid int, start uint64) bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) || kp.Proc.P_stat == 5 /* SZOMB */ {
		return false
	}
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1e6+uint64(t.Usec) == start
}

// BootID identifies this boot of the machine (sysctl kern.bootsessionuuid).
var BootID = sync.OnceValue(func() string {
	s, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil {
		return ""
	}
	return s
})

// Handle would be a pidfd; macOS has none, so it is always empty and every method
// reports ErrUnsupported. Callers fall back to their parent's guarantee (Child) or to a
// start-time check.
type Handle struct{ fd int }

// NoHandle is the empty Handle.
var NoHandle = Handle{fd: -1}

// OpenHandle is not supported on macOS.
func OpenHandle(pid int) (Handle, error) { return NoHandle, ErrUnsupported }

// HandleFromFD closes fd: macOS has no pidfds to receive.
func HandleFromFD(fd int) Handle {
	_ = syscall.Close(fd)
	return NoHandle
}

// Valid is false: no handle.
func (h Handle) Valid() bool { return false }

// Close does nothing.
func (h Handle) Close() {}

// Alive is false: nothing is known through an empty handle.
func (h Handle) Alive() bool { return false }

// WaitExit would wait for the process through its handle; macOS has none, so it reports
// false at once (callers poll Running).
func (h Handle) WaitExit(wake int) bool { return false }

// Kill is not supported.
func (h Handle) Kill() error { return ErrUnsupported }

// KillGroup is not supported.
func (h Handle) KillGroup() error { return ErrUnsupported }

// GroupSignals is false on macOS.
func GroupSignals() bool { return false }

// SimulateOldKernel does nothing on macOS (there is no pidfd path to turn off).
func SimulateOldKernel() (restore func()) { return func() {} }

// Socketpair returns a close-on-exec AF_UNIX stream socket pair. macOS has no
// SOCK_CLOEXEC: socketpairForkLock sets the flag under syscall.ForkLock.
func Socketpair() ([2]int, error) { return socketpairForkLock() }

// ForkWarmInterpreters says whether hookd forks Python hooks from a warm interpreter (the
// zygote) by default: on macOS, no. Apple's system libraries start threads behind the
// caller's back (libdispatch, CoreFoundation, SystemConfiguration — which CPython's
// urllib loads through _scproxy), the Objective-C runtime aborts a forked child that
// initialises a class when its parent was multithreaded, and CPython itself calls fork
// without exec unsafe there (multiprocessing spawns by default on macOS since 3.8,
// bpo-33725). Python hooks are served from the prewarm pool instead: an interpreter
// started fresh, only earlier (docs/zygote.md, "macOS").
const ForkWarmInterpreters = false

// Ctime is a file's status-change time in nanoseconds (st_ctimespec).
func Ctime(st *syscall.Stat_t) int64 { return st.Ctimespec.Sec*1e9 + st.Ctimespec.Nsec }
