//go:build unix

package protocol

import "github.com/hookd/hookd/protocol/lite"

// ErrUntrustedSocket wraps every refusal of CheckSocket and of the peer check after
// connecting. It also wraps ErrUnreachable: a client treats a socket it may not trust
// exactly like no daemon at all — it takes its fail-safe path (hookc: the in-process
// fallback, else a fail-closed answer) and sends nothing to whoever listens there.
var ErrUntrustedSocket = lite.ErrUntrustedSocket

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
// daemon), not untrusted. (The implementation is lite.CheckSocket, which hookc uses.)
func CheckSocket(path string) error { return lite.CheckSocket(path) }

// CheckSocketDir is the daemon side: hookd serves only from a directory it owns (or,
// as root, one root owns) that neither group nor others can write. It does not change
// the directory's mode: a directory with loose permissions is refused, not repaired,
// since it may not be hookd's to repair.
func CheckSocketDir(dir string) error { return lite.CheckSocketDir(dir) }

// checkPeer is the check after connecting, before sending: the process that listens
// must run as the caller's uid or root (SO_PEERCRED where the system has it).
func checkPeer(path string, fd int) error { return lite.CheckPeer(path, fd) }
