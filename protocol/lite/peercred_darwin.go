package lite

import (
	"errors"
	"syscall"
)

// macOS's <sys/un.h>: getsockopt(fd, SOL_LOCAL, LOCAL_PEERCRED) answers a struct
// xucred {u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]}
// whose cr_version is XUCRED_VERSION.
const (
	solLocal      = 0 // SOL_LOCAL
	localPeercred = 1 // LOCAL_PEERCRED
	xucredVersion = 0 // XUCRED_VERSION
)

// peerUID returns the uid of the process at the other end of a connected Unix socket
// (LOCAL_PEERCRED, what getpeereid(3) reads).
//
// The standard library has no getsockopt that returns a struct xucred, and
// golang.org/x/sys/unix's GetsockoptXucred would link fmt and reflect into hookc, whose
// start-up is the product. So the option is read into the 32 bytes of an ICMPv6Filter
// ([8]uint32): the kernel copies min(its size, the caller's) — "possibly truncated to
// fit in the user's buffer", as xnu's sooptcopyout documents — and cr_version and
// cr_uid are the first two 32-bit words. A test on macOS compares this with
// unix.GetsockoptXucred (hosted CI; docs/platforms.md).
func peerUID(fd int) (int, bool, error) {
	f, err := syscall.GetsockoptICMPv6Filter(fd, solLocal, localPeercred)
	if err != nil {
		return 0, false, err
	}
	if f.Filt[0] != xucredVersion {
		return 0, false, errors.New("LOCAL_PEERCRED: unknown xucred version " + utoa(f.Filt[0]))
	}
	return int(f.Filt[1]), true, nil
}
