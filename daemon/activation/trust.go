package activation

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/hookd/hookd/protocol/lite"
)

// TrustUnix checks an inherited Unix listener as hookd checks a socket it creates
// (daemon.Server.Listen), for daemon.Server.Adopt: it must be a socket file at path (the
// path clients use; "" takes the listener's), in a directory owned by the daemon's uid (or
// root) that group and others cannot write (lite.CheckSocketDir), the socket file itself
// owned by the daemon's uid (or root) and, if the unit gave it a wider mode, narrowed to
// 0600. The socket file is the manager's: the listener is set never to remove it, so the
// next start (a crash, the next event after a stop) finds it again. It returns the path.
func TrustUnix(ln *net.UnixListener, path string) (string, error) {
	got := ln.Addr().String()
	if path == "" {
		path = got
	}
	if !filepath.IsAbs(got) {
		return "", fmt.Errorf("refusing the inherited socket %q: not a socket file (an abstract socket has no owner or mode to check)", got)
	}
	if filepath.Clean(got) != filepath.Clean(path) {
		return "", fmt.Errorf("the service manager passed the socket %s, but hookd serves on %s (--socket, $HOOKD_SOCKET): make them agree, e.g. `hookd service install` again", got, path)
	}
	if err := lite.CheckSocketDir(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("refusing the inherited socket %s: %w (hookd serves only from a directory it owns that group and others cannot write: fix the unit's DirectoryMode/SockPathMode or the directory)", path, err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("refusing the inherited socket %s: %w", path, err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return "", fmt.Errorf("refusing the inherited socket %s: the path is not a socket (mode %s)", path, fi.Mode())
	}
	if err := lite.CheckSocket(path); err != nil {
		return "", fmt.Errorf("refusing the inherited socket: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("narrowing the inherited socket %s to 0600: %w", path, err)
		}
	}
	ln.SetUnlinkOnClose(false)
	return path, nil
}
