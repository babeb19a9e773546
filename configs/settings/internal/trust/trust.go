// Package trust checks that a managed settings file could have been written only by the
// administrator: the file and every directory above it owned by root (or hookd's own
// uid, when allowed) and not writable by group or others, lexically and with symlinks
// resolved. A leaf below configs/settings (CheckManaged there is the contract).
package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrUntrusted is wrapped by Check's error.
var ErrUntrusted = errors.New("untrusted managed file")

// Check is configs/settings.CheckManaged: boundary is the managed directory, ownUID whether
// hookd's own uid (when not root) may own the chain.
func Check(path, boundary string, ownUID bool) error {
	uid := os.Geteuid()
	c := chainCheck{owners: "root", boundaries: []string{boundary}}
	if r, err := filepath.EvalSymlinks(boundary); err == nil && r != boundary {
		c.boundaries = append(c.boundaries, r)
	}
	c.trusted = func(owner uint32) bool { return owner == 0 }
	if uid != 0 && ownUID {
		c.owners = "root or uid " + strconv.Itoa(uid)
		c.trusted = func(owner uint32) bool { return owner == 0 || int(owner) == uid }
	}
	return c.check(path)
}

// chainCheck checks a path and its ancestors (see Check).
type chainCheck struct {
	trusted func(owner uint32) bool
	owners  string // who trusted owners are, for the error
	// boundaries are the managed directory, as given and resolved: it and what is below
	// it get no sticky-bit exemption (a managed dir others can write is refused outright).
	boundaries []string
}

// check checks path lexically and with symlinks resolved.
func (c chainCheck) check(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	paths := []string{abs}
	// The existing part, with symlinks resolved: a symlinked directory (macOS's /etc →
	// /private/etc) is trusted only if where it leads is.
	existing, rest := abs, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	if resolved, err := filepath.EvalSymlinks(existing); err == nil {
		if r := filepath.Join(resolved, rest); r != abs {
			paths = append(paths, r)
		}
	}
	for _, p := range paths {
		if err := c.components(p); err != nil {
			return err
		}
	}
	return nil
}

// components walks p from the root down, lstat'ing each existing component.
func (c chainCheck) components(p string) error {
	var chain []string
	for d := p; ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		d := chain[i]
		var st syscall.Stat_t
		if err := syscall.Lstat(d, &st); err != nil {
			if errors.Is(err, syscall.ENOENT) {
				return nil // the rest does not exist yet
			}
			return untrusted(d, "cannot be checked: "+err.Error())
		}
		mode := uint32(st.Mode)
		if !c.trusted(st.Uid) {
			return untrusted(d, "is owned by uid "+strconv.FormatUint(uint64(st.Uid), 10)+", not by "+c.owners)
		}
		if mode&syscall.S_IFMT == syscall.S_IFLNK || mode&0o022 == 0 {
			continue // a link itself: its directory is checked here, its target resolved
		}
		// Writable by group or others. Above the managed dir a sticky directory (/tmp)
		// is fine: only the owner of the next component — checked next — can rename or
		// remove it.
		if !c.inside(d) && mode&syscall.S_IFMT == syscall.S_IFDIR && mode&syscall.S_ISVTX != 0 && i > 0 {
			continue
		}
		what := "group"
		switch mode & 0o022 {
		case 0o002:
			what = "others"
		case 0o022:
			what = "group and others"
		}
		return untrusted(d, "is writable by "+what+" (mode "+strconv.FormatUint(uint64(mode&0o7777), 8)+")")
	}
	return nil
}

func (c chainCheck) inside(d string) bool {
	for _, b := range c.boundaries {
		if d == b || strings.HasPrefix(d, b+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func untrusted(path, why string) error {
	return &trustError{msg: ErrUntrusted.Error() + ": " + path + " " + why}
}

type trustError struct{ msg string }

func (e *trustError) Error() string { return e.msg }
func (e *trustError) Unwrap() error { return ErrUntrusted }
