package lite

import (
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// peerUID reads LOCAL_PEERCRED through a 32-byte buffer (see peercred_darwin.go); the
// oracle is golang.org/x/sys/unix's full struct xucred. Runs on macOS (hosted CI).
func TestPeerUIDMatchesGetsockoptXucred(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	want, err := unix.GetsockoptXucred(fds[0], unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		t.Fatal(err)
	}
	uid, ok, err := peerUID(fds[0])
	if err != nil || !ok || uid != int(want.Uid) {
		t.Fatalf("peerUID = %d, %v, %v; GetsockoptXucred says uid %d (version %d)", uid, ok, err, want.Uid, want.Version)
	}
}
