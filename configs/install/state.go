package install

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events/jsonobj"
)

// Install state: what survives a user.
//
// The record of an installation is two things, each in one place:
//
//   - hookd's file beside the Claude Code file (hookd.json) holds the moved hooks, once,
//     under "hooks" (hookd runs them from there), and under "hookd" the install record:
//     scope, the Claude Code file, the forwarder, and the name and SHA-256 of the backup;
//   - the backup, in hookd's state directory (<state-dir>/install-backups), is the Claude
//     Code file exactly as the first install found it.
//
// Uninstall puts the original back from those two. When hookd.json is gone (deleted by
// hand, lost with a dotfiles reset) the forwarders in Claude Code's file forward every
// event to a hookd that runs none of the moved hooks — every moved guard is off. Check
// reports that state ("forwarders present, moved hooks missing") to status, validate and
// doctor, and PlanUninstall recovers from it with the backups alone: the newest backup
// without forwarders is the file as the install found it (see recoverFromBackups).
//
// Backups are pruned to the newest Options.KeepBackups per file; the one an install
// record names is never pruned.

// DefaultKeepBackups is how many backups per settings file Apply keeps when
// Options.KeepBackups is 0.
const DefaultKeepBackups = 10

// writeTarget is the file a write of path must replace: path itself, or, when path is a
// symbolic link (a dotfiles manager's ~/.claude/settings.json), the file the link
// points to, followed through every link. Writing the target keeps the link a link: the
// user's edits of the dotfiles copy keep reaching Claude Code. A relative link is
// resolved against its directory's real path, as the kernel does.
func writeTarget(path string) (string, error) {
	p := path
	for range 40 {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dir, err := filepath.EvalSymlinks(filepath.Dir(p))
			if err != nil {
				return "", err
			}
			dest = filepath.Join(dir, dest)
		}
		p = dest
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// linkNote is the summary line for a settings file that is a symbolic link, "" for a
// plain one.
func linkNote(path string) string {
	target, err := writeTarget(path)
	if err != nil || target == path {
		return ""
	}
	return fmt.Sprintf("%s is a symbolic link: writing through it to %s (the link stays a link)", path, target)
}

// checkTarget refuses a write through a link whose target's directory does not exist:
// creating it, or replacing the link with a file, would each surprise the user.
func checkTarget(path, target string) error {
	if target == path {
		return nil
	}
	if fi, err := os.Stat(filepath.Dir(target)); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is a symbolic link to %s, whose directory does not exist; hookd will not replace the link with a file: fix the link (or create %s) and run this again", path, target, filepath.Dir(target))
	}
	return nil
}

// backupPrefix is the part of every backup name of path in dir before its time stamp.
func backupPrefix(dir, path string) string {
	base := path
	if dir != "" {
		base = filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(filepath.Clean(path), string(filepath.Separator)), string(filepath.Separator), "%"))
	}
	return base + ".hookd-backup-"
}

// backupsOf lists the backups of path in dir (beside path when dir is ""), oldest first.
// Names sort by time: the stamp is UTC "20060102T150405Z", and a second backup in the
// same second gets "-2", "-3", … after it. (A "-10" sorts before "-2": ties beyond nine
// in one second are not ordered.)
func backupsOf(dir, path string) []string {
	prefix := backupPrefix(dir, path)
	ents, err := os.ReadDir(filepath.Dir(prefix))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		full := filepath.Join(filepath.Dir(prefix), e.Name())
		if strings.HasPrefix(full, prefix) && e.Type().IsRegular() {
			out = append(out, full)
		}
	}
	sort.Strings(out)
	return out
}

// pruneBackups removes all but the newest keep backups of path in dir, never one named
// in protect.
func pruneBackups(dir, path string, keep int, protect ...string) error {
	all := backupsOf(dir, path)
	var errs []error
	for i := 0; i < len(all)-keep; i++ {
		if containsPath(protect, all[i]) {
			continue
		}
		if err := os.Remove(all[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func containsPath(list []string, p string) bool {
	for _, x := range list {
		if filepath.Clean(x) == filepath.Clean(p) {
			return true
		}
	}
	return false
}

// hasForwarders reports whether a hooks object holds any hookd forwarder.
func hasForwarders(h hooksValue) bool {
	_, _, n := split(h)
	return n > 0
}

// recovery is what the backups say an installation moved, when its hookd file is gone.
type recovery struct {
	// original is the newest backup without forwarders: the Claude Code file as the
	// (first) install found it; later are the backups after it (each made by a later
	// install that moved hooks added since).
	original string
	later    []string
	// moved are the hooks the installs moved: the command and http hooks of the original,
	// then those of each later backup.
	moved hooksValue
	// exact: the Claude Code file is still as the one install left it (no later install,
	// no edit since): the original's bytes are the uninstall.
	exact bool
}

// recoverFromBackups reads the backups of o.Settings. sf is the Claude Code file now.
// It returns nil when no backup without forwarders exists.
func recoverFromBackups(o Options, sf *settingsFile) (*recovery, error) {
	all := backupsOf(o.BackupDir, o.Settings)
	r := &recovery{moved: jsonobj.Object{}}
	at := -1
	var orig *settingsFile
	for i := len(all) - 1; i >= 0; i-- {
		b, err := readSettings(all[i])
		if err != nil {
			continue // a backup that does not parse recovers nothing
		}
		if !hasForwarders(b.hooks) {
			at, orig = i, b
			break
		}
	}
	if at < 0 {
		return nil, nil
	}
	r.original, r.later = all[at], all[at+1:]
	_, r.moved, _ = split(orig.hooks)
	for _, l := range r.later {
		b, err := readSettings(l)
		if err != nil {
			return nil, fmt.Errorf("backup %s: %w", l, err)
		}
		_, m, _ := split(b.hooks)
		r.moved = merge(r.moved, m)
	}
	// Exact when the file is what installing the original leaves: the same keys, the
	// original's kept hooks, and forwarders for the moved ones.
	if len(r.later) == 0 && sf.data != nil {
		kept, _, _ := split(orig.hooks)
		now := withoutForwarders(sf.hooks)
		r.exact = equalJSON(now.JSON(), kept.JSON()) && sameOtherKeys(orig.top, sf.top)
	}
	return r, nil
}

// sameOtherKeys reports whether two settings objects agree on every key but "hooks".
func sameOtherKeys(a, b jsonobj.Object) bool {
	strip := func(o jsonobj.Object) jsonobj.Object {
		var out jsonobj.Object
		for _, m := range o {
			if m.Key != "hooks" {
				out = append(out, m)
			}
		}
		return out
	}
	return equalJSON(strip(a).JSON(), strip(b).JSON())
}

// planUninstallFromBackups is PlanUninstall for a Claude Code file that has forwarders
// but no hookd file beside it.
func planUninstallFromBackups(o Options, hpath string, sf *settingsFile) (*Plan, error) {
	r, err := recoverFromBackups(o, sf)
	if err != nil {
		return nil, err
	}
	where := o.BackupDir
	if where == "" {
		where = filepath.Dir(o.Settings)
	}
	if r == nil {
		return nil, fmt.Errorf("%s has hookd's forwarders but %s is gone, and %s holds no backup of %s without forwarders: the hooks the install moved cannot be restored. Remove the forwarders from %s by hand and add your hooks back", o.Settings, hpath, where, filepath.Base(o.Settings), o.Settings)
	}
	p := &Plan{Settings: o.Settings, Hookd: hpath, SettingsBefore: sf.data, Backups: map[string]string{}}
	p.Summary = append(p.Summary, fmt.Sprintf("%s is gone: recovering the hooks the install moved from the backup %s", hpath, r.original))
	if r.exact {
		p.SettingsAfter, err = os.ReadFile(r.original)
		if err != nil {
			return nil, err
		}
		p.Summary = append(p.Summary, fmt.Sprintf("restored %s byte for byte from %s", o.Settings, r.original))
	} else {
		back := merge(withoutForwarders(sf.hooks), r.moved)
		if p.SettingsAfter, err = restoreHooks(sf, back.JSON()); err != nil {
			return nil, err
		}
		from := r.original
		if len(r.later) > 0 {
			from += fmt.Sprintf(" and %d later backup(s)", len(r.later))
		}
		p.Summary = append(p.Summary, fmt.Sprintf("removed the forwarders from %s and put back %s from %s (the file changed since the install: its other edits stay)",
			o.Settings, plural(count(r.moved), "moved hook", "moved hooks"), from))
	}
	if !bytes.Equal(sf.data, p.SettingsAfter) {
		p.Backups[o.Settings] = backupName(o.BackupDir, o.Settings, o.now())
		p.Summary = append(p.Summary, fmt.Sprintf("backup of %s: %s", filepath.Base(o.Settings), p.Backups[o.Settings]))
	}
	p.protect = []string{r.original}
	return p, nil
}

// Finding is one problem Check found with an installation.
type Finding struct {
	// Settings is the Claude Code file; Message says what is wrong and how to fix it.
	Settings, Message string
}

func (f Finding) String() string { return f.Settings + ": " + f.Message }

// Check looks at the installation state of one Claude Code settings file of scope
// (user, project or local) and reports what would silently turn guards off:
//
//   - forwarders present, moved hooks missing: Claude Code's file forwards events to
//     hookd, but hookd's file with the moved hooks is gone (or is not an installation):
//     hookd answers every forwarded event without the hooks that were moved;
//   - a hookd file whose install record names another Claude Code file.
//
// backupDir is where install keeps its backups (to name the one uninstall would use).
// A file that does not exist, or has neither forwarders nor a hookd file, has nothing
// to report.
func Check(path string, scope settings.Kind, backupDir string) []Finding {
	hpath := settings.HookdPathFor(path, scope)
	sf, err := readSettings(path)
	if err != nil || sf.data == nil {
		return nil // validate and the loader report an unreadable file
	}
	hf, herr := readHookd(hpath)
	fwd := hasForwarders(sf.hooks)
	var out []Finding
	switch {
	case fwd && herr == nil && hf.meta == nil:
		events := eventsOf(forwardedEvents(sf.hooks))
		msg := fmt.Sprintf("forwarders present, moved hooks missing: Claude Code forwards %s to hookd, but %s is gone, so hookd runs none of the hooks the install moved (every moved guard is off).", joinOrNone(events), hpath)
		if hf.data != nil {
			msg = fmt.Sprintf("forwarders present, moved hooks missing: %s holds no install record, so hookd cannot tell which hooks were moved.", hpath)
		}
		o := Options{Settings: path, BackupDir: backupDir}
		if r, _ := recoverFromBackups(o, sf); r != nil {
			msg += fmt.Sprintf(" `hookd uninstall claude-code --scope %s` restores them from the backup %s", scope, r.original)
		} else {
			msg += " No backup without forwarders was found to restore them from: add the hooks back by hand"
		}
		out = append(out, Finding{Settings: path, Message: msg})
	case hf != nil && hf.meta != nil && filepath.Clean(hf.meta.InstalledFrom) != filepath.Clean(path):
		out = append(out, Finding{Settings: path, Message: fmt.Sprintf("%s says it was installed from %s, not this file; run `hookd install claude-code --scope %s` again", hpath, hf.meta.InstalledFrom, scope)})
	}
	return out
}

// forwardedEvents is the part of h that forwards (the events with a forwarder).
func forwardedEvents(h hooksValue) hooksValue {
	out := jsonobj.Object{}
	eachHandler(h, func(ev string, _ *string, hi handlerInfo) {
		if hi.isForwarder() && !out.Has(ev) {
			out = append(out, jsonobj.Member{Key: ev, Value: []byte("[]")})
		}
	})
	return out
}

// MovableHooks counts the command and http hooks in a Claude Code settings file that
// `hookd install claude-code` would move (0 for a file that does not exist or does not
// parse), and names their events.
func MovableHooks(path string) (n int, events []string) {
	sf, err := readSettings(path)
	if err != nil || sf.data == nil {
		return 0, nil
	}
	_, moved, _ := split(sf.hooks)
	return count(moved), eventsOf(moved)
}
