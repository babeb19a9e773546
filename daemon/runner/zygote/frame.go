package zygote

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// The transport between hookd and a zygote (and, in server.py, between the zygote and its
// spares): frames over an AF_UNIX SOCK_STREAM socket — an 8-byte header (the body's length
// and how many descriptors travel with it, little-endian uint32 each), then the JSON body.
// The descriptors go as SCM_RIGHTS with the frame's first bytes; the reader queues every
// descriptor it receives and gives each frame as many as its header names, in order. A
// stream socket with SCM_RIGHTS exists on every Unix (macOS has no SOCK_SEQPACKET, and its
// datagrams are limited to 2 KiB), so the same transport serves Linux and macOS and is
// tested here on Linux.

const (
	maxFrameFDs  = 4        // the most descriptors one frame carries
	maxFrameBody = 64 << 20 // a frame longer than this is garbage
)

var errBadFrame = errors.New("malformed frame")

// frameConn reads and writes frames on c. One goroutine reads; writes are serialised.
type frameConn struct {
	c   *net.UnixConn
	wmu sync.Mutex

	buf, rb, oob []byte
	fds          []int
}

func newFrameConn(c *net.UnixConn) *frameConn {
	return &frameConn{c: c, rb: make([]byte, 64<<10), oob: make([]byte, syscall.CmsgSpace(maxFrameFDs*4))}
}

// read returns the next frame's body and descriptors (the caller owns them). At the end of
// the stream it returns io.EOF; any error leaves the connection unusable.
func (f *frameConn) read() ([]byte, []int, error) {
	for {
		if len(f.buf) >= 8 {
			n := binary.LittleEndian.Uint32(f.buf[0:4])
			nfd := binary.LittleEndian.Uint32(f.buf[4:8])
			if n > maxFrameBody || nfd > maxFrameFDs {
				return nil, nil, fmt.Errorf("%w: %d bytes, %d descriptors", errBadFrame, n, nfd)
			}
			if end := 8 + int(n); len(f.buf) >= end {
				if int(nfd) > len(f.fds) {
					return nil, nil, fmt.Errorf("%w: %d descriptors announced, %d received", errBadFrame, nfd, len(f.fds))
				}
				body := append([]byte(nil), f.buf[8:end]...)
				f.buf = append(f.buf[:0], f.buf[end:]...)
				fds := append([]int(nil), f.fds[:nfd]...)
				f.fds = append(f.fds[:0], f.fds[nfd:]...)
				return body, fds, nil
			}
		}
		n, oobn, flags, _, err := f.c.ReadMsgUnix(f.rb, f.oob)
		n, oobn = max(n, 0), max(oobn, 0) // an error may come with -1
		if oobn > 0 {
			// Descriptors are close-on-exec as they arrive (the net package asks for it).
			if msgs, perr := syscall.ParseSocketControlMessage(f.oob[:oobn]); perr == nil {
				for _, m := range msgs {
					if fds, rerr := syscall.ParseUnixRights(&m); rerr == nil {
						f.fds = append(f.fds, fds...)
					}
				}
			}
		}
		if flags&syscall.MSG_CTRUNC != 0 {
			return nil, nil, fmt.Errorf("%w: descriptors truncated", errBadFrame)
		}
		f.buf = append(f.buf, f.rb[:n]...)
		if err != nil {
			return nil, nil, err
		}
		if n == 0 && oobn == 0 {
			return nil, nil, io.EOF
		}
	}
}

// write sends one frame with fds (duplicated into the receiver), giving up at deadline
// (zero: none). A frame cut by the deadline leaves the stream unusable: the caller stops
// the zygote.
func (f *frameConn) write(body []byte, fds []int, deadline time.Time) error {
	msg := make([]byte, 8+len(body))
	binary.LittleEndian.PutUint32(msg[0:4], uint32(len(body)))
	binary.LittleEndian.PutUint32(msg[4:8], uint32(len(fds)))
	copy(msg[8:], body)
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	if err := f.c.SetWriteDeadline(deadline); err != nil {
		return err
	}
	// On a stream socket one sendmsg may take only part of a long frame; the descriptors
	// go with the first part, the rest follows.
	n, _, err := f.c.WriteMsgUnix(msg, oob, nil)
	if err == nil && n < len(msg) {
		_, err = f.c.Write(msg[n:])
	}
	return err
}

// closeQueued closes descriptors received but never claimed by a frame.
func (f *frameConn) closeQueued() {
	for _, fd := range f.fds {
		_ = syscall.Close(fd)
	}
	f.fds = nil
}
