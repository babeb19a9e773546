//go:build unix

package protocol

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/hookd/hookd/protocol/lite"
)

// DialSync connects to the daemon's socket with plain blocking system calls instead of
// the net package. It is for short-lived clients such as hookc: a fresh process that uses
// net pays for starting the runtime's network poller (about 0.1 ms here), which is a
// good share of a forwarder's whole life. timeout bounds each read and write (0: none);
// the returned Client does not watch contexts — use Dial for that. Failures wrap
// ErrUnreachable.
//
// Before connecting, the socket must pass CheckSocket; after connecting, the listener
// must run as the caller's uid or root. Otherwise nothing is sent and the error wraps
// ErrUntrustedSocket (and ErrUnreachable).
func DialSync(path string, timeout time.Duration) (*Client, error) {
	if err := CheckSocket(path); err != nil {
		return nil, err
	}
	fd, err := lite.UnixSocket()
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, path, err)
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("%w at %s: connect: %w", ErrUnreachable, path, err)
	}
	if err := checkPeer(path, fd); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	c := &fdConn{fd: fd}
	if timeout > 0 {
		_ = c.SetDeadline(time.Now().Add(timeout))
	}
	return newClient(c), nil
}

// fdConn is a blocking Unix socket. Deadlines map to SO_RCVTIMEO/SO_SNDTIMEO, measured
// from when they are set.
type fdConn struct{ fd int }

func (c *fdConn) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(c.fd, p)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return 0, fmt.Errorf("read: %w", errTimeout)
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, ioEOF
		}
		return n, nil
	}
}

func (c *fdConn) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		n, err := syscall.Write(c.fd, p[written:])
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return written, fmt.Errorf("write: %w", errTimeout)
		case err != nil:
			return written, err
		}
		written += n
	}
	return written, nil
}

func (c *fdConn) Close() error { return syscall.Close(c.fd) }

func (c *fdConn) SetDeadline(t time.Time) error {
	if err := c.setTimeout(syscall.SO_SNDTIMEO, t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

func (c *fdConn) SetReadDeadline(t time.Time) error { return c.setTimeout(syscall.SO_RCVTIMEO, t) }

func (c *fdConn) setTimeout(opt int, t time.Time) error {
	var d time.Duration
	if !t.IsZero() {
		if d = time.Until(t); d <= 0 {
			d = time.Microsecond // already past: fail the next call at once
		}
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv)
}

var errTimeout = errors.New("i/o timeout")
