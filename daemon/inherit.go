package daemon

import (
	"net"

	"github.com/hookd/hookd/daemon/activation"
)

// Adopt serves on a listening socket a service manager created (Options.Listener) instead
// of creating one, after activation.TrustUnix's checks — every promise Listen makes about
// the socket it creates. Each connection's peer uid is checked as on a socket hookd
// created; the socket file is never removed (it is the manager's).
func (s *server) Adopt(ln *net.UnixListener, path string) error {
	p, err := activation.TrustUnix(ln, path)
	if err != nil {
		return err
	}
	s.ln, s.path = ln, p
	s.conns = map[net.Conn]struct{}{}
	return nil
}
