package audit

import (
	"os"
	"syscall"
)

// syncRecords makes a commit group's appended records durable before the head moves
// past them: fsync(2), which on Linux also flushes the drive's write cache.
func syncRecords(f *os.File) error { return f.Sync() }

// syncHead makes the head's in-place rewrite durable before the group's callers
// return: fdatasync(2) — the head is rewritten in place at a fixed size, so no metadata
// but the data is needed to read it back.
func syncHead(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
