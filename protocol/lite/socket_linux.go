package lite

import "syscall"

// UnixSocket returns a new close-on-exec AF_UNIX stream socket. On Linux the flag is
// set atomically by socket(2) itself (SOCK_CLOEXEC).
func UnixSocket() (int, error) {
	return syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}
