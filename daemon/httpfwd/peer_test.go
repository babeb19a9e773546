package httpfwd

import (
	"net"
	"os"
	"runtime"
	"testing"
)

// TestPeerUIDOwnConnection: the kernel names this process's uid as the owner of a loopback
// connection it opened, over IPv4 and IPv6, and knows nothing of a connection that is gone.
func TestPeerUIDOwnConnection(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("peer uids of TCP connections are read on Linux only")
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v (no IPv6 loopback here?)", addr, err)
			continue
		}
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		uid, ok := peerUID(s.LocalAddr(), s.RemoteAddr())
		if !ok || uid != os.Getuid() {
			t.Fatalf("%s: peerUID = %d, %v; want %d", addr, uid, ok, os.Getuid())
		}
		c.Close()
		s.Close()
		ln.Close()
		if uid, ok := peerUID(s.LocalAddr(), &net.TCPAddr{IP: s.RemoteAddr().(*net.TCPAddr).IP, Port: 1}); ok {
			t.Fatalf("%s: a connection that does not exist has owner %d", addr, uid)
		}
	}
}
