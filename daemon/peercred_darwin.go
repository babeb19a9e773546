package daemon

import "golang.org/x/sys/unix"

// peerCred reads the uid and pid of the process at the other end of a connected Unix
// socket: LOCAL_PEERCRED (the struct xucred getpeereid(3) reads) and LOCAL_PEERPID.
// Both describe the process that connected, as of connect(2), like Linux's
// SO_PEERCRED.
func peerCred(fd int) (uid, pid int, err error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, 0, err
	}
	if pid, err = unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID); err != nil {
		return 0, 0, err
	}
	return int(cred.Uid), pid, nil
}

// hangupEvents is what watchHangup asks poll(2) for. macOS has no POLLRDHUP;
// POLLHUP and POLLERR, the only bits watchHangup reads, are reported without
// being asked.
const hangupEvents = 0
