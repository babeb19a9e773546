package osproc

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// OpenRegular opens path for reading only if it is a regular file, without ever waiting:
// the open is O_NONBLOCK (opening a FIFO would otherwise wait for a writer), and a FIFO,
// device, socket or directory is closed again and refused, naming what it is. The file
// is returned in blocking mode.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("is %s, not a regular file", FileKind(fi.Mode()))}
	}
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadRegular reads at most max bytes of path through OpenRegular.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// FileKind names what a file that is not a regular file is.
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}
