package daemon

import "golang.org/x/sys/unix"

// peerCred reads the uid and pid of the process at the other end of a connected Unix
// socket: SO_PEERCRED.
func peerCred(fd int) (uid, pid int, err error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, 0, err
	}
	return int(cred.Uid), int(cred.Pid), nil
}

// hangupEvents is what watchHangup asks poll(2) for. POLLHUP and POLLERR are
// reported whatever is asked; POLLRDHUP (Linux only) is asked so that a socket
// whose peer shut down only its writing half is not reported as readable forever.
const hangupEvents = unix.POLLRDHUP
