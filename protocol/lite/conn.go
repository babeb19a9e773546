//go:build unix

package lite

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"
)

// Conn is a connection to the daemon's Unix socket, made with plain system calls and
// without the net package: the socket is connected blocking, then made non-blocking and
// wrapped in an *os.File, so that reads and writes wait in the runtime's poller (the one
// os uses for pipes) — no goroutine, and the waiting goroutine parks instead of sitting
// in a blocking read. That matters for hookc, which waits for the hooks most of its
// life: a goroutine in a blocking system call keeps its P, and the runtime's sysmon
// thread wakes every 20 µs or more (~58 times) until it retakes it after 10 ms; parked,
// the P goes idle at once and sysmon sleeps (docs/performance.md, "hookc"). A deadline
// (SetDeadline) bounds the whole exchange: every read and write waits at most until it.
type Conn struct {
	f        *os.File
	deadline time.Time
	buf      []byte // read ahead: buf[off:] is not yet returned
	off      int
	eof      bool
}

// Dial connects to the daemon's socket. The socket must pass CheckSocket before, and
// its listener CheckPeer after, connecting; otherwise nothing is sent and the error
// wraps ErrUntrustedSocket. Every failure wraps ErrUnreachable.
//
// connect(2) runs on the blocking socket, as it did before the poller: a Unix socket
// connects at once unless the listener's backlog is full, and then a blocking connect
// waits for room where a non-blocking one fails with EAGAIN (Linux), which is not
// EINPROGRESS and cannot be waited for with the poller.
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
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, unreachable(path, err)
	}
	// A non-blocking descriptor given to os.NewFile is registered with the poller; if
	// that failed (it does not for a socket), SetDeadline says so, and reads would
	// fail at once with EAGAIN instead of waiting.
	f := os.NewFile(uintptr(fd), path)
	if err := f.SetDeadline(time.Time{}); err != nil {
		f.Close()
		return nil, unreachable(path, errors.New("runtime poller: "+err.Error()))
	}
	return &Conn{f: f}, nil
}

// SetBuffer gives the connection b's memory to read into (before the first read).
func (c *Conn) SetBuffer(b []byte) { c.buf, c.off = b[:0], 0 }

// Close closes the connection.
func (c *Conn) Close() error { return c.f.Close() }

// SetDeadline sets the deadline of every following read and write (zero: none).
func (c *Conn) SetDeadline(t time.Time) {
	c.deadline = t
	_ = c.f.SetDeadline(t) // fails only on a closed Conn, whose reads then fail
}

// Expired reports whether the deadline has passed (what a context with the same
// deadline would report as "context deadline exceeded").
func (c *Conn) Expired() bool { return !c.deadline.IsZero() && !time.Now().Before(c.deadline) }

// ErrTimeout is the error of a read or write that ran into the deadline.
var ErrTimeout = errors.New("i/o timeout")

// ioError is the error of a read or write as the blocking calls gave it: the system
// call's error without os's "read <path>: " (hookc's messages name neither), a deadline
// as "<op>: i/o timeout" wrapping ErrTimeout.
func ioError(op string, err error) error {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return wrap(op+": "+ErrTimeout.Error(), ErrTimeout)
	}
	return err
}

// Write writes all of p; its error reads "write: …" like protocol's Client.
func (c *Conn) Write(p []byte) error {
	if _, err := c.f.Write(p); err != nil {
		return ioError("write", err)
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
		n, err := c.f.Read(c.buf[len(c.buf):cap(c.buf)])
		switch {
		case err == io.EOF:
			c.eof = true
		case err != nil:
			return nil, ioError("read", err)
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
