//go:build unix

package lite

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listen serves each connection to a fresh trusted socket (a 0700 directory of this
// uid) with serve, on its own goroutine; the listener and connections are closed at
// the test's end.
func listen(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lite") // short: a socket path has a 104/108-byte limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go serve(c)
		}
	}()
	return sock
}

// inTime runs f and fails the test if it has not returned after a minute: what a
// blocking read without a working deadline would do (hang) is reported, not waited for.
func inTime(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s still waiting after a minute: the deadline did not bound it", what)
	}
}

// The connection waits in the runtime poller: its descriptor is non-blocking (so a
// read that found nothing would fail at once with EAGAIN, were nothing waiting for it),
// yet a read from a daemon that never answers waits — until the deadline, and no
// longer — and reports "read: i/o timeout" wrapping ErrTimeout, with Expired true.
func TestConnDeadlineBoundsASilentDaemon(t *testing.T) {
	sock := listen(t, func(net.Conn) {}) // accepts, reads nothing, never answers
	c, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := raw.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil {
		t.Fatal(err, ferr)
	}
	if flags&unix.O_NONBLOCK == 0 {
		t.Fatalf("the socket is blocking (flags %#x): reads would hold the thread, not park in the poller", flags)
	}
	if c.Expired() {
		t.Fatal("Expired before any deadline was set")
	}
	deadline := time.Now().Add(200 * time.Millisecond)
	c.SetDeadline(deadline)
	if err := c.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	var line []byte
	inTime(t, "ReadLine", func() { line, err = c.ReadLine(MaxFrameBytes) })
	if now := time.Now(); now.Before(deadline) {
		t.Fatalf("ReadLine returned %q, %v %v before the deadline", line, err, deadline.Sub(now))
	}
	if !errors.Is(err, ErrTimeout) || err.Error() != "read: i/o timeout" || line != nil {
		t.Fatalf("ReadLine = %q, %v; want read: i/o timeout wrapping ErrTimeout", line, err)
	}
	if !c.Expired() {
		t.Fatal("Expired is false after the deadline")
	}
	// A deadline already past fails at once, without reading.
	c.SetDeadline(time.Now().Add(-time.Second))
	if _, err := c.ReadLine(MaxFrameBytes); !errors.Is(err, ErrTimeout) {
		t.Fatalf("ReadLine past the deadline: %v", err)
	}
}

// A daemon that reads nothing: once the socket buffers are full, the write waits for
// room until the deadline and reports "write: i/o timeout".
func TestConnDeadlineBoundsAWriteNobodyReads(t *testing.T) {
	sock := listen(t, func(net.Conn) {})
	c, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	big := make([]byte, 64<<20) // more than any Unix socket buffers
	inTime(t, "Write", func() { err = c.Write(big) })
	if !errors.Is(err, ErrTimeout) || err.Error() != "write: i/o timeout" {
		t.Fatalf("Write = %v; want write: i/o timeout wrapping ErrTimeout", err)
	}
}

// Lines come back whole however the daemon's writes split them; a partial line at the
// end of the stream is returned as it is, then ErrClosed; a line over max is
// ErrLineTooLong; a daemon that resets the connection is the system call's error.
func TestConnReadLine(t *testing.T) {
	for _, c := range []struct {
		name   string
		writes []string
		max    int
		want   []string // lines, then the error's text
	}{
		{"partial line then EOF", []string{"one\r\ntw", "o\npart", "ial"}, 100,
			[]string{"one", "two", "partial", ErrClosed.Error()}},
		{"EOF after a whole line", []string{"one\n"}, 100, []string{"one", ErrClosed.Error()}},
		{"nothing then EOF", nil, 100, []string{ErrClosed.Error()}},
		{"line too long", []string{"12345", "6\n"}, 5, []string{ErrLineTooLong.Error()}},
		{"long line across reads", []string{string(make([]byte, 100<<10)) + "\nx"}, 200 << 10,
			[]string{string(make([]byte, 100<<10)), "x", ErrClosed.Error()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sock := listen(t, func(nc net.Conn) {
				defer nc.Close()
				for _, w := range c.writes {
					if _, err := nc.Write([]byte(w)); err != nil {
						return
					}
					time.Sleep(10 * time.Millisecond) // let the client read what is there
				}
			})
			conn, err := Dial(sock)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(time.Minute))
			var got []string
			for {
				line, err := conn.ReadLine(c.max)
				if err != nil {
					got = append(got, err.Error())
					break
				}
				got = append(got, string(line))
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %d results %.80q, want %.80q", len(got), got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("result %d = %.80q, want %.80q", i, got[i], c.want[i])
				}
			}
		})
	}
	t.Run("reset", func(t *testing.T) {
		sock := listen(t, func(nc net.Conn) {
			var b [1]byte
			_, _ = nc.Read(b[:])
			nc.Close() // unread data left: the peer sees a reset
		})
		conn, err := Dial(sock)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(time.Minute))
		if err := conn.Write([]byte("ab\n")); err != nil {
			t.Fatal(err)
		}
		_, err = conn.ReadLine(100)
		// Linux resets a Unix stream whose peer closed with data unread; the error is the
		// bare errno, as the blocking read gave it (hookc: "reading frame: connection
		// reset by peer"), not os's "read <path>: …".
		if runtime.GOOS == "linux" && err != syscall.ECONNRESET || err != syscall.ECONNRESET && err != ErrClosed {
			t.Fatalf("ReadLine after a reset = %v (%T); want the bare ECONNRESET", err, err)
		}
	})
}
