package settings

import "github.com/hookd/hookd/configs/internal/readfile"

// MaxFileBytes bounds a settings (or hookd configuration) file: a settings file is a
// few kilobytes; anything near this is not one.
const MaxFileBytes = readfile.MaxBytes

// ErrNotRegular is wrapped by ReadFile's error for anything but a regular file.
var ErrNotRegular = readfile.ErrNotRegular

// ReadFile reads a settings file without ever blocking on it: opened O_NONBLOCK (a FIFO
// with no writer cannot hold it), a regular file only, at most MaxFileBytes, and the
// open and read within a bound (a hung network or FUSE file system costs one file its
// update, not every reload behind it). A missing file's error satisfies
// errors.Is(err, fs.ErrNotExist). See configs/internal/readfile.
func ReadFile(path string) ([]byte, error) { return readfile.Read(path) }
