// Package atomicfile replaces a file's contents so that a reader sees either the old bytes
// or the new ones, never a mix, and a crash leaves one of the two.
//
// It is the one atomic-write helper of hookd: the installer rewrites Claude Code's settings
// files with it (Claude Code's watcher and hookd's must never read half a file) and the
// decision log its head, checkpoint and shipper cursor (daemon/audit). It imports only the
// standard library, so that daemon/audit, which links no other hookd package, may use it
// (the Makefile's lint target checks both promises).
//
// What it does not know about: what the bytes are, and who else writes the file. Two
// writers racing on one path each leave a whole file (the last rename wins); serialising
// them is the caller's business.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data.
//
// The bytes go to a new temporary file in path's directory, created exclusively under a
// random name (O_EXCL: a symlink or file planted there is never followed or truncated),
// given perm exactly (chmod, not filtered by the umask), then renamed over path. Rename
// replaces path itself: a symlink at path becomes a regular file and its target is left
// untouched; the directory must exist.
//
// With sync, Write fsyncs the temporary file before the rename and the directory after
// it, so once it returns the new contents survive a power loss. Without sync the
// replacement is still atomic for readers, only not durable (the decision log's
// fsync=never, the shipper's cursor, which is re-derived after a crash).
//
// On error path is unchanged (or, if only the directory fsync failed, already replaced)
// and no temporary file is left behind.
func Write(path string, data []byte, perm fs.FileMode, sync bool) (err error) {
	return WriteIf(path, data, perm, sync, nil)
}

// WriteIf is Write with a last check: ok, when not nil, runs after the new bytes are
// written (and synced) to the temporary file and immediately before the rename; if it
// returns an error, path is left as it is, the temporary file is removed and the error
// returned. Callers use it as a compare-and-swap on path's contents (re-read, compare
// with what they planned from): the window in which another writer's change can still
// be lost shrinks to the time between ok's read and the rename.
func WriteIf(path string, data []byte, perm fs.FileMode, sync bool, ok func() error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close() // a second Close after a failed one is harmless
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if sync {
		if err = tmp.Sync(); err != nil {
			return err
		}
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if ok != nil {
		if err = ok(); err != nil {
			return err
		}
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	// The rename is durable only once the directory entry is: fsync the directory.
	// (Removing tmp.Name() on this error is harmless: it no longer exists.)
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, making renames and removals in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
