package daemon

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/hookd/hookd/protocol"
)

// Adopt serves on a listening socket a service manager created (Options.Listener) instead
// of creating one. It keeps every promise Listen makes about the socket it creates: it
// must be a socket file at path (the path clients use), in a directory owned by the
// daemon's uid (or root) that group and others cannot write (protocol.CheckSocketDir),
// the socket file itself owned by the daemon's uid (or root) and, if the unit gave it a
// wider mode, narrowed to 0600. Each connection's peer uid is checked as on a socket
// hookd created. The socket file is the manager's: hookd never removes it, so the next
// start (a crash, the next event after a stop) finds it again.
func (s *Server) Adopt(ln *net.UnixListener, path string) error {
	got := ln.Addr().String()
	if path == "" {
		path = got
	}
	if !filepath.IsAbs(got) {
		return fmt.Errorf("refusing the inherited socket %q: not a socket file (an abstract socket has no owner or mode to check)", got)
	}
	if filepath.Clean(got) != filepath.Clean(path) {
		return fmt.Errorf("the service manager passed the socket %s, but hookd serves on %s (--socket, $HOOKD_SOCKET): make them agree, e.g. `hookd service install` again", got, path)
	}
	if err := protocol.CheckSocketDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("refusing the inherited socket %s: %w (hookd serves only from a directory it owns that group and others cannot write: fix the unit's DirectoryMode/SockPathMode or the directory)", path, err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("refusing the inherited socket %s: %w", path, err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("refusing the inherited socket %s: the path is not a socket (mode %s)", path, fi.Mode())
	}
	if err := protocol.CheckSocket(path); err != nil {
		return fmt.Errorf("refusing the inherited socket: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return fmt.Errorf("narrowing the inherited socket %s to 0600: %w", path, err)
		}
	}
	ln.SetUnlinkOnClose(false)
	s.ln, s.path = ln, path
	s.conns = map[net.Conn]struct{}{}
	return nil
}
