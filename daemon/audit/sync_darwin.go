package audit

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// On macOS fsync(2) moves data to the drive but not through the drive's write cache
// (fsync(2) man page: the drive "may not physically write the data … for quite some
// time and it may be written in an out-of-order sequence"); only fcntl(F_FULLFSYNC)
// asks the drive to flush. A commit group therefore pays one full flush, not two:
//
//   - the records go to the drive with F_BARRIERFSYNC: an fsync plus an I/O barrier, so
//     the drive writes them before anything written after (the head) — never a head
//     on disk that covers records which are not;
//   - the head goes with F_FULLFSYNC (os.File.Sync on darwin), which flushes the drive's
//     cache: records and head are on stable storage before any caller returns, so
//     "recorded before answered" holds across a power loss, as on Linux.
//
// What it costs is in docs/platforms.md (an estimate: it cannot be measured here).

// syncRecords: F_BARRIERFSYNC, or where a file system does not support it (SMB, some
// external volumes: ENOTSUP/EINVAL), os.File.Sync — F_FULLFSYNC, itself falling back
// to fsync.
func syncRecords(f *os.File) error {
	for {
		_, err := unix.FcntlInt(f.Fd(), unix.F_BARRIERFSYNC, 0)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ENOTTY):
			return f.Sync()
		}
		return err
	}
}

// syncHead: F_FULLFSYNC (Go's os.File.Sync on darwin).
func syncHead(f *os.File) error { return f.Sync() }
