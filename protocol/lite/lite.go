// Package lite is the part of hookd's wire contract (package protocol) that a forwarder
// started once per hook event needs, and nothing more: the socket path and its trust
// check, the request encoder, a strict decoder for the answer's terminal frame, the
// default timeouts and the hook-style rendering of an answer.
//
// It exists for start-up cost. hookc is exec'd for every forwarded event, on the critical
// path, and a Go process pays at start for every package it links (package initialisers,
// the pages they touch, the binary's size). Package protocol links encoding/json, reflect,
// net, context and fmt; lite links none of them — only errors, os, path/filepath,
// strconv, syscall, time, unicode/utf8 and unicode/utf16 — so hookc, which imports only
// lite, starts within a few page faults of a hello-world Go program. protocol delegates
// the shared pieces (socket trust, timeouts, AppendString) to lite, so there is one
// implementation of each.
//
// The decoder (DecodeAnswer, EventName) accepts exactly what encoding/json accepts, and
// yields the same values for the fields it reads (a fuzz test checks it against
// encoding/json); the encoder (AppendEventRequest) produces what json.Marshal of
// protocol.Request would decode to.
package lite

import (
	"errors"
	"os"
	"strconv"
	"time"
)

// Version is the protocol version (protocol.Version).
const Version = 1

// EnvSocket is the environment variable that overrides the default socket path.
const EnvSocket = "HOOKD_SOCKET"

// DefaultMaxRequestBytes is the default limit on one event payload (protocol.DefaultMaxRequestBytes).
const DefaultMaxRequestBytes = 16 << 20

// MaxFrameBytes bounds one answer line a client reads: frames can be large (a result
// echoes updated input), so only against a misbehaving peer.
const MaxFrameBytes = 256 << 20

// Error codes a forwarder tells apart (protocol.Code*).
const (
	CodeUnsupportedVersion = "unsupported_version"
	CodeInternal           = "internal"
)

// wrapErr is fmt.Errorf's "%w … %w" without fmt: a message and the errors it wraps.
type wrapErr struct {
	msg  string
	errs []error
}

func (e *wrapErr) Error() string   { return e.msg }
func (e *wrapErr) Unwrap() []error { return e.errs }

// wrap returns an error reading msg that wraps errs (errors.Is/As see each).
func wrap(msg string, errs ...error) error { return &wrapErr{msg: msg, errs: errs} }

// ErrUnreachable wraps every failure to connect to the daemon, so callers can tell "no
// daemon" (fall back, fail safe) from "the daemon answered with an error".
var ErrUnreachable = errors.New("hookd unreachable")

// ErrUntrustedSocket wraps every refusal of CheckSocket and of the peer check after
// connecting. It also wraps ErrUnreachable: a client treats a socket it may not trust
// exactly like no daemon at all — it takes its fail-safe path (hookc: the in-process
// fallback, else a fail-closed answer) and sends nothing to whoever listens there.
var ErrUntrustedSocket = wrap(ErrUnreachable.Error()+": untrusted socket", ErrUnreachable)

// unreachable is fmt.Errorf("%w at %s: %w", ErrUnreachable, path, err).
func unreachable(path string, err error) error {
	return wrap(ErrUnreachable.Error()+" at "+path+": "+err.Error(), ErrUnreachable, err)
}

// DefaultSocketPath is the per-user socket: $HOOKD_SOCKET, else PathsHere's answer
// (Linux: $XDG_RUNTIME_DIR/hookd/hookd.sock, else ~/.hookd/run/hookd.sock; macOS:
// ~/Library/Caches/hookd/hookd.sock; with HOME unset <tmp>/hookd-<uid>/hookd.sock). The
// directory is created 0700 by the daemon. None of these is trusted by name: clients run
// CheckSocket and the daemon CheckSocketDir on whatever path is used, so a per-uid
// directory under /tmp that another user created first is refused by both, never shared.
func DefaultSocketPath() string { return SocketPath(os.Getenv) }

// SocketPath is DefaultSocketPath with the environment read through getenv (hookc
// passes a lookup in os.Environ(), which it sends anyway: os.Getenv's first call builds
// a map of the whole environment).
func SocketPath(getenv func(string) string) string { return PathsHere(getenv).Socket }

// Getenv returns a function that looks keys up in env (KEY=VALUE entries, the last of
// repeated keys winning, like os.Getenv).
func Getenv(env []string) func(string) string {
	return func(key string) string {
		for i := len(env) - 1; i >= 0; i-- {
			kv := env[i]
			if len(kv) > len(key) && kv[len(key)] == '=' && kv[:len(key)] == key {
				return kv[len(key)+1:]
			}
		}
		return ""
	}
}

// DefaultHookTimeout is how long Claude Code lets a command hook of event run when its
// handler sets no "timeout" (spec §3.2): 600 s, except UserPromptSubmit (30 s),
// MessageDisplay (10 s) and SessionEnd (a 1.5 s budget shared by its hooks). It is here,
// not only in package events, because hookc (which imports nothing else of hookd) derives
// its own default timeout from it; a test in package events keeps the two equal.
func DefaultHookTimeout(event string) time.Duration {
	switch event {
	case "UserPromptSubmit":
		return 30 * time.Second
	case "MessageDisplay":
		return 10 * time.Second
	case "SessionEnd":
		return 1500 * time.Millisecond
	}
	return 600 * time.Second
}

// ForwarderTimeout is how long a forwarder (hookc) whose hook timeout is d waits for
// hookd before it gives up and answers fail-closed: d less a tenth, and less at most
// 10 s — 590 s for Claude Code's default 600 s. When the harness's own timeout fires
// first, Claude Code lets the tool run; when hookc's does, the answer is a block.
func ForwarderTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d - min(d/10, 10*time.Second)
}

// FormatSeconds writes d as a hookc --timeout value: decimal seconds ("590s", "1.35s").
func FormatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// PeekEventName finds the top-level "hook_event_name" of a payload without decoding it
// (hookc's start-up time is the product; EventName decodes the whole payload); "" when
// it cannot tell. It looks for the first occurrence of the key, which in every harness's
// payload is the top-level one; a wrong guess only changes hookc's default timeout.
func PeekEventName(payload []byte) string {
	const key = `"hook_event_name"`
	i := index(payload, key)
	if i < 0 {
		return ""
	}
	rest := trimWS(payload[i+len(key):])
	if len(rest) == 0 || rest[0] != ':' {
		return ""
	}
	rest = trimWS(rest[1:])
	if len(rest) == 0 || rest[0] != '"' {
		return ""
	}
	rest = rest[1:]
	for j, c := range rest {
		switch c {
		case '\\':
			return ""
		case '"':
			return string(rest[:j])
		}
	}
	return ""
}

func trimWS(b []byte) []byte {
	for len(b) > 0 && isWS(b[0]) {
		b = b[1:]
	}
	return b
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// index is bytes.Index for a short needle (lite does not link bytes for one call).
func index(b []byte, needle string) int {
	n := len(needle)
	for i := 0; i+n <= len(b); i++ {
		if b[i] == needle[0] && string(b[i:i+n]) == needle {
			return i
		}
	}
	return -1
}
