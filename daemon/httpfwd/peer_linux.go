package httpfwd

import (
	"encoding/binary"
	"net"
	"syscall"
)

// peerUID asks the kernel which uid owns the other end of a loopback TCP connection: the
// socket whose source is remote and whose destination is local, looked up by its exact
// four-tuple with sock_diag (NETLINK_SOCK_DIAG, as ss(8) does; unprivileged). The uid is
// the one the peer's socket was created with: a process of another user cannot forge it.
// ok is false when the kernel cannot say (no sock_diag, the peer already gone).
func peerUID(local, remote net.Addr) (uid int, ok bool) {
	l, lok := local.(*net.TCPAddr)
	r, rok := remote.(*net.TCPAddr)
	if !lok || !rok {
		return -1, false
	}
	family, ip4 := syscall.AF_INET6, r.IP.To4() != nil && l.IP.To4() != nil
	if ip4 {
		family = syscall.AF_INET
	}
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, sockDiagProto)
	if err != nil {
		return -1, false
	}
	defer syscall.Close(fd)
	tv := syscall.Timeval{Sec: 1}
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	// struct nlmsghdr (16 bytes) + struct inet_diag_req_v2 (56 bytes).
	req := make([]byte, 16+56)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], sockDiagByFamily)
	ne.PutUint16(req[6:], syscall.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // seq
	b := req[16:]
	b[0], b[1] = byte(family), syscall.IPPROTO_TCP
	ne.PutUint32(b[4:], 0xffffffff) // every TCP state
	id := b[8:]                     // struct inet_diag_sockid: the peer's socket
	binary.BigEndian.PutUint16(id[0:], uint16(r.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(l.Port))
	if ip4 {
		copy(id[4:], r.IP.To4())
		copy(id[20:], l.IP.To4())
	} else {
		copy(id[4:], r.IP.To16())
		copy(id[20:], l.IP.To16())
	}
	ne.PutUint32(id[40:], 0xffffffff) // INET_DIAG_NOCOOKIE
	ne.PutUint32(id[44:], 0xffffffff)
	if err := syscall.Sendto(fd, req, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return -1, false
	}
	buf := make([]byte, 4096)
	n, _, err := syscall.Recvfrom(fd, buf, 0)
	if err != nil || n < 16+72 {
		return -1, false // too short for an inet_diag_msg: an NLMSG_ERROR (no such socket)
	}
	if ne.Uint16(buf[4:]) != sockDiagByFamily {
		return -1, false
	}
	// struct inet_diag_msg: family, state, timer, retrans (4), id (48), expires, rqueue,
	// wqueue (12), uid, inode.
	msg := buf[16:n]
	if int(msg[0]) != family || binary.BigEndian.Uint16(msg[4:]) != uint16(r.Port) || binary.BigEndian.Uint16(msg[6:]) != uint16(l.Port) {
		return -1, false
	}
	return int(ne.Uint32(msg[64:])), true
}

const (
	sockDiagProto    = 4    // NETLINK_SOCK_DIAG
	sockDiagByFamily = 0x14 // SOCK_DIAG_BY_FAMILY
)
