package zygote

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hookd/hookd/daemon/runner/osproc"
)

// framePair is two frameConns over a close-on-exec stream socket pair, as between hookd
// and a zygote (osproc.Socketpair: the same call on Linux and macOS).
func framePair(t *testing.T) (*frameConn, *frameConn) {
	t.Helper()
	fds, err := osproc.Socketpair()
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) *frameConn {
		f := os.NewFile(uintptr(fd), "s")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return newFrameConn(c.(*net.UnixConn))
	}
	return conn(fds[0]), conn(fds[1])
}

func sameFile(t *testing.T, a, b int) bool {
	t.Helper()
	var sa, sb syscall.Stat_t
	if syscall.Fstat(a, &sa) != nil || syscall.Fstat(b, &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// Frames of every size (empty to several socket buffers), with 0 to 4 descriptors each,
// written back to back by one writer while the reader reads: every body arrives whole and
// in order with exactly its own descriptors, whatever the kernel's read boundaries.
func TestFramesRoundTrip(t *testing.T) {
	w, r := framePair(t)
	files := make([]*os.File, 4)
	for i := range files {
		f, err := os.CreateTemp(t.TempDir(), "fd")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = f
	}
	sizes := []int{0, 1, 7, 8, 100, 4096, 65535, 65536, 65537, 300 << 10, 3, 2 << 20, 5}
	type sent struct {
		body []byte
		fds  []int
	}
	var want []sent
	for i, n := range sizes {
		body := bytes.Repeat([]byte{byte('a' + i)}, n)
		var fds []int
		for j := range i % 5 {
			fds = append(fds, int(files[(i+j)%4].Fd()))
		}
		want = append(want, sent{body, fds})
	}
	errc := make(chan error, 1)
	go func() {
		for _, s := range want {
			if err := w.write(s.body, s.fds, time.Now().Add(time.Minute)); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for i, s := range want {
		body, fds, err := r.read()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(body, s.body) {
			t.Fatalf("frame %d: body of %d bytes, want %d", i, len(body), len(s.body))
		}
		if len(fds) != len(s.fds) {
			t.Fatalf("frame %d: %d descriptors, want %d", i, len(fds), len(s.fds))
		}
		for j := range fds {
			if !sameFile(t, fds[j], s.fds[j]) {
				t.Fatalf("frame %d: descriptor %d is not the file sent", i, j)
			}
			if fl, _ := fcntlGetfd(fds[j]); fl&syscall.FD_CLOEXEC == 0 {
				t.Fatalf("frame %d: descriptor %d arrived without close-on-exec", i, j)
			}
			syscall.Close(fds[j])
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	w.c.Close()
	if _, _, err := r.read(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the writer closed: %v, want EOF", err)
	}
}

func fcntlGetfd(fd int) (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0) }

// A frame whose header is garbage (too long, too many descriptors, descriptors that
// never came) is an error, never a hang or a huge allocation.
func TestFramesRejectGarbage(t *testing.T) {
	for name, hdr := range map[string][2]uint32{
		"huge body":           {maxFrameBody + 1, 0},
		"too many fds":        {4, maxFrameFDs + 1},
		"fds that never came": {0, 2},
	} {
		t.Run(name, func(t *testing.T) {
			w, r := framePair(t)
			b := binary.LittleEndian.AppendUint32(nil, hdr[0])
			b = binary.LittleEndian.AppendUint32(b, hdr[1])
			if _, err := w.c.Write(b); err != nil {
				t.Fatal(err)
			}
			if _, _, err := r.read(); !errors.Is(err, errBadFrame) {
				t.Fatalf("%v, want a malformed-frame error", err)
			}
		})
	}
}

// A write to a peer that reads nothing gives up at its deadline (a stuck zygote cannot
// block hookd).
func TestFrameWriteHonoursTheDeadline(t *testing.T) {
	w, _ := framePair(t)
	start := time.Now()
	var err error
	for i := 0; err == nil && i < 1000; i++ {
		err = w.write(make([]byte, 1<<20), nil, time.Now().Add(200*time.Millisecond))
	}
	if err == nil {
		t.Fatal("1 GiB written to a peer that reads nothing")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the write took %v to give up", d)
	}
}
