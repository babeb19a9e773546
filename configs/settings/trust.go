package settings

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hookd/hookd/configs/settings/internal/trust"
	"github.com/hookd/hookd/protocol/lite"
	"github.com/hookd/hookd/rules"
)

// ErrUntrusted is wrapped by CheckManaged's error: a managed settings file that someone
// other than the administrator could have written.
var ErrUntrusted = trust.ErrUntrusted

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
	return trust.Check(path, dir, dir != filepath.Clean(DefaultManagedDir))
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
		return trust.Check(ref.Path, filepath.Dir(ref.Path), !slices.Contains(defaultMDMProfiles, ref.Path))
	}
	return CheckManaged(ref.Path, s.managedDir())
}

// defaultMDMProfiles are the OS's own MDM profile paths.
var defaultMDMProfiles = lite.PathsHere(os.Getenv).MDMProfiles

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
