// Package readfile reads hookd's configuration and settings files without ever blocking
// on them (Read). Standard library only; configs/settings re-exports it as ReadFile.
package readfile

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"
)

// MaxBytes bounds a settings (or hookd configuration) file: a settings file is a
// few kilobytes; anything near this is not one.
const MaxBytes = 8 << 20

// Timeout bounds opening and reading one file (Read). A local file takes
// microseconds; the bound is for a hung network or FUSE file system, which must cost
// one file its update, not wedge every reload behind it.
var Timeout = 2 * time.Second

// Read reads a settings file without ever blocking on it:
//
//   - it is opened O_NONBLOCK (opening a FIFO with no writer returns at once; a
//     blocking open would wait for a writer forever) and O_NOCTTY;
//   - it must be a regular file (symlinks to one are fine): a FIFO, device, socket or
//     directory is an invalid file with an error saying which — nothing is read from it;
//   - it may hold at most MaxBytes;
//   - the open and the read together have Timeout; past it the error says so and
//     the read is abandoned (its goroutine returns, and closes the file, whenever the
//     file system answers).
//
// A missing file's error satisfies errors.Is(err, fs.ErrNotExist).
func Read(path string) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		d, err := readRegular(path)
		ch <- result{d, err}
	}()
	t := time.NewTimer(Timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.data, r.err
	case <-t.C:
		return nil, fmt.Errorf("reading %s took longer than %v (a hung file system?); treated as unreadable", path, Timeout)
	}
}

// ErrNotRegular is wrapped by Read's error for anything but a regular file.
var ErrNotRegular = errors.New("not a regular file")

func readRegular(path string) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	var st syscall.Stat_t
	if errors.Is(err, syscall.ENXIO) && syscall.Stat(path, &st) == nil {
		return nil, notRegular(uint32(st.Mode)) // a socket cannot be opened: say what it is
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, notRegular(uint32(st.Mode))
	}
	if st.Size > MaxBytes {
		return nil, fmt.Errorf("is %d bytes, larger than %d; not a settings file", st.Size, MaxBytes)
	}
	buf := make([]byte, 0, st.Size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, syscall.EINTR) || errors.Is(err, syscall.EAGAIN) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if len(buf) > MaxBytes {
			return nil, fmt.Errorf("grew past %d bytes while being read; not a settings file", MaxBytes)
		}
	}
}

func notRegular(mode uint32) error {
	what := "not a regular file"
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		what = "a directory"
	case syscall.S_IFIFO:
		what = "a FIFO (named pipe)"
	case syscall.S_IFCHR:
		what = "a character device"
	case syscall.S_IFBLK:
		what = "a block device"
	case syscall.S_IFSOCK:
		what = "a socket"
	}
	return fmt.Errorf("is %s, not a settings file: %w", what, ErrNotRegular)
}
