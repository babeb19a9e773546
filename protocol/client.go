package protocol

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"
)

// EnvSocket is the environment variable that overrides the default socket path.
const EnvSocket = "HOOKD_SOCKET"

// ErrUnreachable wraps every failure to connect to the daemon, so callers can tell "no
// daemon" (fall back, fail safe) from "the daemon answered with an error".
var ErrUnreachable = errors.New("hookd unreachable")

// DefaultSocketPath is the per-user socket: $HOOKD_SOCKET, else
// $XDG_RUNTIME_DIR/hookd/hookd.sock, else ~/.hookd/run/hookd.sock. The directory is
// created 0700 by the daemon.
func DefaultSocketPath() string {
	if p := os.Getenv(EnvSocket); p != "" {
		return p
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "hookd", "hookd.sock")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = os.TempDir()
	}
	return filepath.Join(home, ".hookd", "run", "hookd.sock")
}

// Client is one connection to the daemon. It is not safe for concurrent use: requests on
// one connection are answered one after another. Open one Client per goroutine.
type Client struct {
	conn net.Conn
	r    *LineReader
	w    *bufio.Writer
}

// Dial connects to the daemon's socket. Failures wrap ErrUnreachable.
func Dial(ctx context.Context, path string) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, path, err)
	}
	// Frames can be large (a result echoes updated input); no line limit on the client side
	// beyond memory, but keep it bounded against a misbehaving peer.
	return &Client{conn: conn, r: NewLineReader(conn, 256<<20), w: bufio.NewWriter(conn)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Send writes one request. Version defaults to Version.
func (c *Client) Send(req *Request) error {
	if req.V == 0 {
		req.V = Version
	}
	b, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encoding request: %w", err)
	}
	b = append(b, '\n')
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("sending request: %w", err)
	}
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("sending request: %w", err)
	}
	return nil
}

// Next reads the next frame of the current answer.
func (c *Client) Next() (*Frame, error) {
	line, err := c.r.ReadLine()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("reading frame: daemon closed the connection: %w", io.ErrUnexpectedEOF)
		}
		return nil, fmt.Errorf("reading frame: %w", err)
	}
	var f Frame
	if err := json.Unmarshal(line, &f); err != nil {
		return nil, fmt.Errorf("decoding frame: %w", err)
	}
	return &f, nil
}

// Do sends req and reads its answer, calling onFrame (if non-nil) for every frame,
// including the terminal one. It returns the terminal frame; an "error" frame is returned
// as its *Error. The context's deadline bounds the whole exchange.
func (c *Client) Do(ctx context.Context, req *Request, onFrame func(*Frame)) (*Frame, error) {
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
		if f, ferr := c.Next(); ferr == nil && f.Type == FrameError && f.Error != nil {
			return f, f.Error
		}
		return nil, ctxErr(ctx, err)
	}
	for {
		f, err := c.Next()
		if err != nil {
			return nil, ctxErr(ctx, err)
		}
		if onFrame != nil {
			onFrame(f)
		}
		if f.Type == FrameError {
			if f.Error == nil {
				return f, &Error{Code: CodeInternal, Message: "error frame without error body"}
			}
			return f, f.Error
		}
		if f.Type == FrameResult {
			return f, nil
		}
	}
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return err
}
