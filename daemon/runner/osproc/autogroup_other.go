//go:build !linux

package osproc

// SessionNiceWorks is false: only Linux schedules sessions as groups (sched_autogroup).
// macOS has no unprivileged way to lower a process's priority and raise it back later.
func SessionNiceWorks() bool { return false }

func setSessionNice(pid, nice int) error { return ErrUnsupported }

// SessionNice is not supported.
func SessionNice(pid int) (int, error) { return 0, ErrUnsupported }

// SessionNiceRateLimited is true: nothing to set.
func SessionNiceRateLimited() bool { return true }

// Idle is not supported.
func Idle(pid int) (asleep bool, ticks uint64, err error) { return false, 0, ErrUnsupported }
