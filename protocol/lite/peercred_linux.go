package lite

import "syscall"

// peerUID returns the uid of the process at the other end of a connected Unix socket.
func peerUID(fd int) (int, bool, error) {
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return 0, false, err
	}
	return int(cred.Uid), true, nil
}
