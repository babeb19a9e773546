//go:build unix

package lite

import (
	"errors"
	"syscall"
	"time"
)

// Conn is a blocking connection to the daemon's Unix socket, made with plain system
// calls: no net package, no runtime network poller, no goroutine or timer. A deadline
// (SetDeadline) bounds the whole exchange: each read and write gets what is left of it
// as SO_RCVTIMEO/SO_SNDTIMEO.
type Conn struct {
	fd       int
	deadline time.Time
	buf      []byte // read ahead: buf[off:] is not yet returned
	off      int
	eof      bool
}

// Dial connects to the daemon's socket. The socket must pass CheckSocket before, and
// its listener CheckPeer after, connecting; otherwise nothing is sent and the error
// wraps ErrUntrustedSocket. Every failure wraps ErrUnreachable.
func Dial(path string) (*Conn, error) {
	if err := CheckSocket(path); err != nil {
		return nil, err
	}
	fd, err := UnixSocket()
	if err != nil {
		return nil, unreachable(path, err)
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, wrap(ErrUnreachable.Error()+" at "+path+": connect: "+err.Error(), ErrUnreachable, err)
	}
	if err := CheckPeer(path, fd); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &Conn{fd: fd}, nil
}

// SetBuffer gives the connection b's memory to read into (before the first read).
func (c *Conn) SetBuffer(b []byte) { c.buf, c.off = b[:0], 0 }

// Close closes the connection.
func (c *Conn) Close() error { return syscall.Close(c.fd) }

// SetDeadline sets the deadline of every following read and write (zero: none).
func (c *Conn) SetDeadline(t time.Time) { c.deadline = t }

// Expired reports whether the deadline has passed (what a context with the same
// deadline would report as "context deadline exceeded").
func (c *Conn) Expired() bool { return !c.deadline.IsZero() && !time.Now().Before(c.deadline) }

// ErrTimeout is the error of a read or write that ran into the deadline.
var ErrTimeout = errors.New("i/o timeout")

// arm gives the next blocking call what is left of the deadline.
func (c *Conn) arm(opt int) error {
	if c.deadline.IsZero() {
		return nil
	}
	d := time.Until(c.deadline)
	if d <= 0 {
		return ErrTimeout
	}
	if d < time.Microsecond {
		d = time.Microsecond // a zero timeval would mean no timeout at all
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv)
}

// Write writes all of p; its error reads "write: …" like protocol's Client.
func (c *Conn) Write(p []byte) error {
	for len(p) > 0 {
		if err := c.arm(syscall.SO_SNDTIMEO); err != nil {
			return wrap("write: "+err.Error(), err)
		}
		n, err := syscall.Write(c.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return wrap("write: "+ErrTimeout.Error(), ErrTimeout)
		case err != nil:
			return err
		}
		p = p[n:]
	}
	return nil
}

// ErrLineTooLong is protocol.ErrLineTooLong's text.
var ErrLineTooLong = errors.New("protocol: line too long")

// ErrClosed is a connection the daemon closed before a whole answer: "daemon closed the
// connection: unexpected EOF".
var ErrClosed = errors.New("daemon closed the connection: unexpected EOF")

// ReadLine returns the next line without its "\n" (and "\r"), of at most max bytes. At
// the end of the stream after a partial line it returns the partial line; after that,
// ErrClosed. The line is valid until the next call.
func (c *Conn) ReadLine(max int) ([]byte, error) {
	scanned := c.off
	for {
		if i := indexByte(c.buf[scanned:], '\n'); i >= 0 {
			end := scanned + i
			line := c.buf[c.off:end]
			c.off = end + 1
			return trimCR(line, max)
		}
		scanned = len(c.buf)
		if c.eof {
			if c.off == len(c.buf) {
				return nil, ErrClosed
			}
			line := c.buf[c.off:]
			c.off = len(c.buf)
			return trimCR(line, max)
		}
		if len(c.buf)-c.off > max+2 {
			return nil, ErrLineTooLong
		}
		if c.off > 0 && c.off == len(c.buf) {
			c.buf, c.off, scanned = c.buf[:0], 0, 0
		}
		if cap(c.buf)-len(c.buf) < 4<<10 {
			nb := make([]byte, len(c.buf)-c.off, 2*cap(c.buf)+16<<10)
			copy(nb, c.buf[c.off:])
			scanned -= c.off
			c.buf, c.off = nb, 0
		}
		if err := c.arm(syscall.SO_RCVTIMEO); err != nil {
			return nil, wrap("read: "+err.Error(), err)
		}
		n, err := syscall.Read(c.fd, c.buf[len(c.buf):cap(c.buf)])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return nil, wrap("read: "+ErrTimeout.Error(), ErrTimeout)
		case err != nil:
			return nil, err
		case n == 0:
			c.eof = true
		}
		c.buf = c.buf[:len(c.buf)+n]
	}
}

func trimCR(line []byte, max int) ([]byte, error) {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if max > 0 && len(line) > max {
		return nil, ErrLineTooLong
	}
	return line, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
