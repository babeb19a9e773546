package settings

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/hookd/hookd/protocol/lite"
	"github.com/hookd/hookd/rules"
)

// ErrUntrusted is wrapped by CheckManaged's error: a managed settings file that someone
// other than the administrator could have written.
var ErrUntrusted = errors.New("untrusted managed file")

// CheckManaged is the trust check of a managed settings source (managed-settings.json,
// a drop-in, an MDM profile) before hookd reads it: the file and every directory above
// it — as written and with symlinks resolved — must be owned by root, and neither group
// nor others may write them. Managed files speak with the administrator's authority
// (their hooks run as the daemon's user, their rules bind every other file), so a file
// another account could have written or swapped in is refused, as the socket
// (protocol.CheckSocket) and project discovery (ProjectDirForOwner) already refuse
// theirs. Two exceptions, both about who could have written:
//
//   - when the daemon does not run as root and its managed dir is not Claude Code's
//     (DefaultManagedDir: the user pointed --managed-dir elsewhere), files and
//     directories the daemon's own uid owns are trusted too;
//   - a directory others may write (/tmp) is acceptable above a child that is trusted
//     when it has the sticky bit: nobody but the child's owner can then rename or
//     remove the child.
//
// A path that does not exist yet is checked up to its nearest existing ancestor
// (`hookd install --scope managed` asks before it creates the directory). The error
// wraps ErrUntrusted and says which path, whose it is, or its mode.
func CheckManaged(path, managedDir string) error {
	dir := filepath.Clean(managedDir)
	return checkManaged(path, dir, dir != filepath.Clean(DefaultManagedDir))
}

// CheckTrust is CheckManaged for a file of s: a managed file of the file channel in
// s's managed dir, or an MDM profile — whose own directory is its boundary, and for which
// hookd's uid is trusted (when it is not root) only if the profile is not one of the
// OS's own (lite.Paths.MDMProfiles), that is, the user named it. Other kinds: nil.
func (s Sources) CheckTrust(ref FileRef) error {
	switch {
	case ref.Kind != KindManaged:
		return nil
	case ref.Channel == ChannelMDM:
		return checkManaged(ref.Path, filepath.Dir(ref.Path), !slices.Contains(defaultMDMProfiles, ref.Path))
	}
	return CheckManaged(ref.Path, s.managedDir())
}

// defaultMDMProfiles are the OS's own MDM profile paths.
var defaultMDMProfiles = lite.PathsHere(os.Getenv).MDMProfiles

// checkManaged: see CheckManaged; boundary is the managed directory, ownUID whether
// hookd's own uid (when not root) may own the chain.
func checkManaged(path, boundary string, ownUID bool) error {
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

// chainCheck checks a path and its ancestors (see CheckManaged).
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

// IsUntrusted reports whether err is a CheckManaged refusal.
func IsUntrusted(err error) bool { return errors.Is(err, ErrUntrusted) }

// untrust strips a managed file that failed CheckManaged of every power but to restrict:
// its deny and ask rules stay (they can only refuse more), its allow rules and every
// other key (env, allowManaged*Only, disableAllHooks, the http allowlists) are dropped,
// and each of its handlers is kept only as a marker (Handler.Refused): hookd never runs
// it, and an event it matches that can block fails closed instead. An error-level
// finding says why.
func untrust(f *File, why string) {
	f.Untrusted = why
	f.Hash += ":untrusted" // the same bytes, another revision: a chmod alone swaps snapshots
	var rs = f.Rules[:0:0]
	for _, r := range f.Rules {
		if r.List != rules.Allow {
			rs = append(rs, r)
		}
	}
	f.Rules = rs
	if f.Settings != nil {
		f.Settings = &Settings{Keys: f.Settings.Keys, Hooks: f.Settings.Hooks, Permissions: f.Settings.Permissions}
	}
	for _, h := range f.Handlers {
		h.Refused = why
	}
	f.Warnings = append([]Warning{{File: f.Ref.Path, Level: LevelError, Message: strings.TrimPrefix(why, f.Ref.Path+": ") +
		"; hookd runs none of its hooks (an event one of them matches fails closed where it can block), applies its deny and ask rules only, and ignores its other keys"}}, f.Warnings...)
}
