//go:build unix

package protocol

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrUntrustedSocket wraps every refusal of CheckSocket and of the peer check after
// connecting. It also wraps ErrUnreachable: a client treats a socket it may not trust
// exactly like no daemon at all — it takes its fail-safe path (hookc: the in-process
// fallback, else a fail-closed answer) and sends nothing to whoever listens there.
var ErrUntrustedSocket = fmt.Errorf("%w: untrusted socket", ErrUnreachable)

// CheckSocket is the client side of the socket trust model (tailscale's safesocket
// does the same): before anything is sent, the socket at path must be a socket owned by
// the caller's effective uid or root, in a directory owned by that uid or root that
// neither group nor others can write. Such a directory is one nobody else can have
// created the socket in, nor swap it in later; so the listener is the caller itself or
// root. A shared directory (/tmp, even with the sticky bit) is refused: anyone could
// have bound the name first. The socket's own mode is not the client's concern (it
// only governs who may connect, which the daemon checks by peer credentials).
//
// The directory is resolved through symlinks (a symlinked $XDG_RUNTIME_DIR is fine);
// the socket itself must not be a symlink. A missing socket is ErrUnreachable (no
// daemon), not untrusted.
func CheckSocket(path string) error {
	uid := os.Geteuid()
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("%w at %s: %w", ErrUnreachable, path, err)
	}
	var dst syscall.Stat_t
	if err := syscall.Stat(dir, &dst); err != nil {
		return fmt.Errorf("%w at %s: %w", ErrUnreachable, path, err)
	}
	if err := trustedDir(dir, &dst, uid); err != nil {
		return fmt.Errorf("%w %s: %w", ErrUntrustedSocket, path, err)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(dir, filepath.Base(path)), &st); err != nil {
		return fmt.Errorf("%w at %s: %w", ErrUnreachable, path, err)
	}
	switch {
	case st.Mode&syscall.S_IFMT != syscall.S_IFSOCK:
		return fmt.Errorf("%w %s: not a socket (%s)", ErrUntrustedSocket, path, fileKind(st.Mode))
	case int(st.Uid) != uid && st.Uid != 0:
		return fmt.Errorf("%w %s: owned by uid %d, not by uid %d or root", ErrUntrustedSocket, path, st.Uid, uid)
	}
	return nil
}

// CheckSocketDir is the daemon side: hookd serves only from a directory it owns (or,
// as root, one root owns) that neither group nor others can write. It does not change
// the directory's mode: a directory with loose permissions is refused, not repaired,
// since it may not be hookd's to repair.
func CheckSocketDir(dir string) error {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return err
	}
	return trustedDir(dir, &st, os.Geteuid())
}

func trustedDir(dir string, st *syscall.Stat_t, uid int) error {
	switch {
	case st.Mode&syscall.S_IFMT != syscall.S_IFDIR:
		return fmt.Errorf("%s is not a directory", dir)
	case int(st.Uid) != uid && st.Uid != 0:
		return fmt.Errorf("directory %s is owned by uid %d, not by uid %d or root", dir, st.Uid, uid)
	case st.Mode&0o022 != 0:
		return fmt.Errorf("directory %s is writable by group or others (mode %04o)", dir, st.Mode&0o7777)
	}
	return nil
}

func fileKind(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return "a regular file"
	case syscall.S_IFDIR:
		return "a directory"
	case syscall.S_IFLNK:
		return "a symlink"
	case syscall.S_IFIFO:
		return "a FIFO"
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return "a device"
	}
	return "not a socket"
}

// checkPeer is the check after connecting, before sending: the process that listens
// must run as the caller's uid or root (SO_PEERCRED where the system has it).
func checkPeer(path string, fd int) error {
	uid, ok, err := peerUID(fd)
	if err != nil {
		return fmt.Errorf("%w %s: reading the listener's credentials: %w", ErrUntrustedSocket, path, err)
	}
	if ok && uid != os.Geteuid() && uid != 0 {
		return fmt.Errorf("%w %s: the listener runs as uid %d, not as uid %d or root", ErrUntrustedSocket, path, uid, os.Geteuid())
	}
	return nil
}
