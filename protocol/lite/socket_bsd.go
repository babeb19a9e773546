//go:build unix && !linux

package lite

import "syscall"

// UnixSocket returns a new close-on-exec AF_UNIX stream socket. macOS's socket(2) has
// no SOCK_CLOEXEC, so the flag is set right after, with syscall.ForkLock held for
// reading: os/exec forks with it held for writing, so no child can be forked between
// the two calls and inherit the descriptor (the net package does the same on darwin).
func UnixSocket() (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, err
	}
	syscall.CloseOnExec(fd)
	return fd, nil
}
