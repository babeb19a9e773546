package osproc

import (
	"crypto/sha256"
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

// FileFP identifies one version of a file. ctime cannot be set by a user, so an edit that
// restores the mtime is still seen; the hash catches file systems with coarse times.
type FileFP struct {
	missing      bool
	regular      bool
	dev, ino     uint64
	size         int64
	mtime, ctime int64
	sum          [32]byte
}

// Fingerprint is StatFP with, for a regular file of at most maxHash bytes, its sha256.
func Fingerprint(path string, maxHash int64) FileFP {
	fp := StatFP(path)
	if !fp.missing && fp.regular && fp.size <= maxHash {
		if b, err := os.ReadFile(path); err == nil {
			fp.sum = sha256.Sum256(b)
		}
	}
	return fp
}

// StatFP is path's identity and times, following symbolic links; a file that cannot be
// stat'ed is "missing".
func StatFP(path string) FileFP {
	fi, err := os.Stat(path)
	if err != nil {
		return FileFP{missing: true}
	}
	fp := FileFP{size: fi.Size(), mtime: fi.ModTime().UnixNano(), regular: fi.Mode().IsRegular()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		fp.dev, fp.ino = uint64(st.Dev), uint64(st.Ino)
		fp.ctime = Ctime(st)
	}
	return fp
}

// String is the stat part of fp (no hash), for keys.
func (fp FileFP) String() string {
	return fmt.Sprintf("%v:%d:%d:%d:%d", fp.missing, fp.ino, fp.size, fp.mtime, fp.ctime)
}

// SameStat reports whether fp and o are the same but for the hash: o's file unchanged by
// stat alone.
func (fp FileFP) SameStat(o FileFP) bool {
	fp.sum = o.sum
	return fp == o
}
