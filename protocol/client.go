package protocol

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/hookd/hookd/protocol/lite"
)

// EnvSocket is the environment variable that overrides the default socket path.
const EnvSocket = lite.EnvSocket

// ErrUnreachable wraps every failure to connect to the daemon, so callers can tell "no
// daemon" (fall back, fail safe) from "the daemon answered with an error".
var ErrUnreachable = lite.ErrUnreachable

// DefaultSocketPath is the per-user socket: $HOOKD_SOCKET, else lite.PathsHere's
// answer for this OS (Linux: $XDG_RUNTIME_DIR/hookd/hookd.sock, else
// ~/.hookd/run/hookd.sock; macOS: ~/Library/Caches/hookd/hookd.sock; with HOME unset
// <tmp>/hookd-<uid>/hookd.sock). The directory is created 0700 by the daemon. None of
// these is trusted by name: clients run CheckSocket and the daemon CheckSocketDir on
// whatever path is used, so a per-uid directory under /tmp that another user created
// first is refused by both, never shared.
func DefaultSocketPath() string { return lite.DefaultSocketPath() }

// Client is one connection to the daemon. It is not safe for concurrent use: requests on
// one connection are answered one after another. Open one Client per goroutine.
type Client struct {
	conn conn
	r    *LineReader
	w    *bufio.Writer
}

// Dial connects to the daemon's socket. Failures wrap ErrUnreachable. Like DialSync,
// it refuses (ErrUntrustedSocket) a socket that fails CheckSocket or whose listener
// runs as another uid than the caller's or root.
func Dial(ctx context.Context, path string) (*Client, error) {
	if err := CheckSocket(path); err != nil {
		return nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, path, err)
	}
	if uc, ok := conn.(*net.UnixConn); ok {
		var perr error
		if rc, err := uc.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { perr = checkPeer(path, int(fd)) })
		}
		if perr != nil {
			conn.Close()
			return nil, perr
		}
	}
	return newClient(conn), nil
}

func newClient(c conn) *Client {
	// Frames can be large (a result echoes updated input): bounded only against a
	// misbehaving peer.
	return &Client{conn: c, r: NewLineReader(c, 256<<20), w: bufio.NewWriter(c)}
}

var ioEOF = io.EOF

// conn is what a Client needs of its connection: net.Conn, or the blocking fdConn.
type conn interface {
	io.ReadWriteCloser
	SetDeadline(time.Time) error
	SetReadDeadline(time.Time) error
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Send writes one request. Version defaults to Version.
func (c *Client) Send(req *Request) error {
	if req.V == 0 {
		req.V = Version
	}
	b := AppendRequest(nil, req)
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("sending request: %w", err)
	}
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("sending request: %w", err)
	}
	return nil
}

// Do sends req and reads its answer, calling onFrame (if non-nil) for every frame,
// including the terminal one. It returns the terminal frame; an "error" frame is returned
// as its *Error. The context's deadline bounds the whole exchange.
func (c *Client) Do(ctx context.Context, req *Request, onFrame func(*Frame)) (*Frame, error) {
	var onLine func([]byte, FrameType)
	if onFrame != nil {
		onLine = func(line []byte, t FrameType) {
			if t.Terminal() {
				return // decoded once below
			}
			var f Frame
			if json.Unmarshal(line, &f) == nil {
				onFrame(&f)
			}
		}
	}
	line, err := c.DoRaw(ctx, req, onLine)
	if err != nil && line == nil {
		return nil, err
	}
	var f Frame
	if derr := json.Unmarshal(line, &f); derr != nil {
		return nil, fmt.Errorf("decoding frame: %w", derr)
	}
	if onFrame != nil {
		onFrame(&f)
	}
	if f.Type == FrameError {
		if f.Error == nil {
			return &f, &Error{Code: CodeInternal, Message: "error frame without error body"}
		}
		return &f, f.Error
	}
	return &f, nil
}

// DoRaw sends req and reads its answer line by line, calling onLine (if non-nil) with
// each frame's bytes and type, the terminal frame included, and returns the terminal
// frame's line. For an "error" frame it returns the line and the *Error. Clients that
// only need a few fields of the result (hookc) decode the line themselves and avoid
// building decoders for the whole Frame type in a fresh process.
func (c *Client) DoRaw(ctx context.Context, req *Request, onLine func(line []byte, t FrameType)) ([]byte, error) {
	if dl, ok := ctx.Deadline(); ok {
		_ = c.conn.SetDeadline(dl)
		defer c.conn.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := c.Send(req); err != nil {
		// The daemon may have answered and closed before reading (a refused peer): its
		// error frame says why, which beats "broken pipe".
		_ = c.conn.SetReadDeadline(time.Now().Add(time.Second))
		if line, ferr := c.r.ReadLine(); ferr == nil {
			if t, perr := peekFrame(line); t == FrameError {
				return line, perr
			}
		}
		return nil, ctxErr(ctx, err)
	}
	for {
		line, err := c.r.ReadLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("daemon closed the connection: %w", io.ErrUnexpectedEOF)
			}
			return nil, ctxErr(ctx, fmt.Errorf("reading frame: %w", err))
		}
		t, perr := peekFrame(line)
		if onLine != nil {
			onLine(line, t)
		}
		if t.Terminal() {
			return line, perr
		}
	}
}

// peekFrame decodes only a frame's type (and, for an error frame, the error).
func peekFrame(line []byte) (FrameType, error) {
	var head struct {
		Type  FrameType `json:"type"`
		Error *Error    `json:"error"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return "", fmt.Errorf("decoding frame: %w", err)
	}
	if head.Type == FrameError {
		if head.Error == nil {
			return head.Type, &Error{Code: CodeInternal, Message: "error frame without error body"}
		}
		return head.Type, head.Error
	}
	return head.Type, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return err
}
