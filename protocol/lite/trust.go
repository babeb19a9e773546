//go:build unix

package lite

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

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
		return unreachable(path, err)
	}
	var dst syscall.Stat_t
	if err := syscall.Stat(dir, &dst); err != nil {
		return unreachable(path, err)
	}
	if err := trustedDir(dir, &dst, uid); err != nil {
		return untrusted(path, err.Error(), err)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(dir, filepath.Base(path)), &st); err != nil {
		return unreachable(path, err)
	}
	switch {
	case st.Mode&syscall.S_IFMT != syscall.S_IFSOCK:
		return untrusted(path, "not a socket ("+fileKind(uint32(st.Mode))+")", nil)
	case int(st.Uid) != uid && st.Uid != 0:
		return untrusted(path, "owned by uid "+utoa(st.Uid)+", not by uid "+strconv.Itoa(uid)+" or root", nil)
	}
	return nil
}

// untrusted is fmt.Errorf("%w %s: %s", ErrUntrustedSocket, path, why), also wrapping
// cause when there is one.
func untrusted(path, why string, cause error) error {
	errs := []error{ErrUntrustedSocket}
	if cause != nil {
		errs = append(errs, cause)
	}
	return wrap(ErrUntrustedSocket.Error()+" "+path+": "+why, errs...)
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
		return wrap(dir + " is not a directory")
	case int(st.Uid) != uid && st.Uid != 0:
		return wrap("directory " + dir + " is owned by uid " + utoa(st.Uid) + ", not by uid " + strconv.Itoa(uid) + " or root")
	case st.Mode&0o022 != 0:
		return wrap("directory " + dir + " is writable by group or others (mode " + octal4(uint32(st.Mode)&0o7777) + ")")
	}
	return nil
}

func utoa(u uint32) string { return strconv.FormatUint(uint64(u), 10) }

// octal4 is fmt's %04o.
func octal4(m uint32) string {
	s := strconv.FormatUint(uint64(m), 8)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
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

// CheckPeer is the check after connecting, before sending: the process that listens on
// the connected socket fd must run as the caller's uid or root (SO_PEERCRED on Linux,
// LOCAL_PEERCRED on macOS).
func CheckPeer(path string, fd int) error {
	uid, ok, err := peerUID(fd)
	if err != nil {
		return wrap(ErrUntrustedSocket.Error()+" "+path+": reading the listener's credentials: "+err.Error(), ErrUntrustedSocket, err)
	}
	if ok && uid != os.Geteuid() && uid != 0 {
		return untrusted(path, "the listener runs as uid "+strconv.Itoa(uid)+", not as uid "+strconv.Itoa(os.Geteuid())+" or root", nil)
	}
	return nil
}
