//go:build !linux && !darwin

package audit

import "os"

// syncRecords and syncHead: fsync(2) where neither Linux's nor macOS's refinements
// apply (hookd supports Linux and macOS; docs/platforms.md).
func syncRecords(f *os.File) error { return f.Sync() }

func syncHead(f *os.File) error { return f.Sync() }
