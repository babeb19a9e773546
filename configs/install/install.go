// Package install moves Claude Code's command and http hooks into hookd and back.
//
// `hookd install claude-code --scope S` (S user, project or local) rewrites one Claude Code settings file (user
// ~/.claude/settings.json, project <project>/.claude/settings.json, or local
// <project>/.claude/settings.local.json):
//
//   - its command and http handlers move, verbatim and with their matcher groups, into a
//     hookd-owned file beside it (settings.HookdPathFor: hookd.json, or hookd.local.json for
//     the local file) that Claude Code does not read; hookd's loader reads it with the
//     original file's label, precedence and `if` base, and leaves whatever is still in the
//     Claude Code file to Claude Code;
//   - prompt, agent and mcp_tool handlers (which need Claude Code's model or MCP
//     connections), events hookd does not know, and every other key stay where they are,
//     in order; permission rules stay too — hookd reads them there;
//   - in their place goes one forwarding hook per event running hookc (see Forwarding for
//     which events and why, and forwarders for the timeouts).
//
// The installer never adds a key of its own to a Claude Code file (Claude Code 2.1.330
// ignores a settings file with an unknown top-level key, spec §12): its record — the
// original "hooks" value, the forwarder command, the backup's name — lives in the
// hookd-owned file under "hookd". Uninstall puts the original "hooks" value back
// (equal as JSON; byte for byte when the file was not touched since) when nothing changed
// since the install, and otherwise the hooks as they are now, Claude Code's first.
//
// Install is idempotent: run again, it moves hooks added to the Claude Code file since,
// refreshes the forwarders (a new hookc path, a timeout raised by a new hook), and
// otherwise changes nothing. Every write is atomic (temp file and rename; the file mode
// is kept), and the Claude Code file is backed up first — into Options.BackupDir (hookd's
// state directory), so that nothing new appears beside it; uninstall leaves the tree as
// the install found it (a settings file or directory the install created is removed).
//
// The managed scope (managed.go) is different: one drop-in holding forwarders for every
// event and allowManagedHooksOnly, and no other file touched.
//
// "spec §N" means §N of docs/spec/claude-code-hooks-spec.md (docs/spec/README.md).
package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/hookd/hookd/configs/atomicfile"
	"github.com/hookd/hookd/configs/internal/jsontree"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events/jsonobj"
)

// MetaVersion is the version of the "hookd" record in hookd-owned files. Version 1
// also kept the original "hooks" value (original_hooks), a second copy of the moved
// hooks; version 2 keeps the original once, in the backup it names and hashes. A
// version 1 record is still read (and its original_hooks used when the backup is gone).
const MetaVersion = 2

// Meta is the "hookd" record the installer keeps in the hookd-owned file.
type Meta struct {
	Version       int    `json:"version"`
	Scope         string `json:"scope"`
	InstalledFrom string `json:"installed_from"`
	Forwarder     string `json:"forwarder"`
	InstalledAt   string `json:"installed_at"`
	HookdVersion  string `json:"hookd_version,omitempty"`
	// SettingsExisted: the Claude Code file existed before the install (uninstall removes
	// a file it created, when nothing else was added to it since).
	SettingsExisted bool `json:"settings_existed"`
	// Backup is the copy of the Claude Code file made by the first install.
	Backup string `json:"backup,omitempty"`
	// DirCreated: the install created the directory of the Claude Code file (a project's
	// .claude/); uninstall removes it again when it is empty.
	DirCreated bool `json:"dir_created,omitempty"`
	// OriginalHadHooks: the Claude Code file had a "hooks" key before the first install
	// (uninstall removes the key again when it had none).
	OriginalHadHooks bool `json:"original_had_hooks"`
	// OriginalHooks is version 1's copy of the Claude Code file's "hooks" value before
	// the first install. Version 2 does not write it: Backup holds the original.
	OriginalHooks json.RawMessage `json:"original_hooks,omitempty"`
	// OriginalSHA256 and InstalledSHA256 are the Claude Code file's digest before and
	// after the first install: when the file is still exactly as installed and the backup
	// still as original, uninstall restores the backup's bytes; when only other keys
	// changed, it takes the original "hooks" text from the backup.
	OriginalSHA256  string `json:"original_sha256,omitempty"`
	InstalledSHA256 string `json:"installed_sha256,omitempty"`
	// Transport is TransportHTTP when the forwarders of HTTPEvents are http handlers
	// (--transport http); empty for hookc. The token is not recorded here: it lives in
	// hookd's state directory (HTTPEndpointFile) and in the Claude Code file's handlers.
	Transport string `json:"transport,omitempty"`
	// Form is FormExec when the forwarders are exec-form command hooks (Forwarder is then
	// hookc's path as is); empty for the shell form. The daemon's forwarder resync keeps it.
	Form string `json:"forwarder_form,omitempty"`
}

func digest(b []byte) string {
	if b == nil {
		return ""
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Options say what to install or uninstall.
type Options struct {
	// Scope is settings.KindUser, KindProject, KindLocal or KindManaged.
	Scope settings.Kind
	// Settings is the Claude Code settings file of that scope; for KindManaged, hookd's
	// drop-in in managed-settings.d (see PlanInstall).
	Settings string
	// BackupDir is where backups go (hookd's state directory), so that nothing new
	// appears beside a settings file — in a repository, in `git status`. "" means beside
	// the file.
	BackupDir string
	// Forwarder is the command of the forwarding hook (hookc, by absolute path): for the
	// shell form shell-quoted where needed, for the exec form the path as is.
	Forwarder string
	// Form is FormExec for exec-form forwarders (Claude Code ExecFormSince and later);
	// "" or FormShell for the shell form.
	Form string
	// HookdVersion is recorded in the hookd-owned file.
	HookdVersion string
	// KeepBackups is how many backups per file Apply keeps (the newest; never the one
	// an install record names). 0 means DefaultKeepBackups.
	KeepBackups int
	// Now stamps backups and the record; zero means time.Now.
	Now time.Time
	// HTTP, when set, installs the http transport (docs/http-forwarder.md): the events of
	// HTTPEvents post to this endpoint, the others keep hookc. Only the user and local
	// scopes: the handlers carry the token, and a project's settings.json is committed.
	// The Claude Code file is then made 0600.
	HTTP *HTTPEndpoint
	// StartsWarm, when set, says whether hookd prepares a hook of event ahead of the
	// session's first event (daemon.StartsWarm: a Node hook safe by construction, a Python
	// hook's zygote), given its command, args and the directory its relative paths resolve
	// from ("" when unknown). With the hookc transport, a file with such a hook and no
	// SessionStart hook gets an env-only SessionStart forwarder (warmStart).
	StartsWarm func(event, command string, args []string, dir string) bool
}

func (o Options) transport() string {
	if o.HTTP != nil {
		return TransportHTTP
	}
	return ""
}

// Plan is a computed change to the two files; Apply carries it out.
type Plan struct {
	Settings, Hookd string // paths
	// Before/After contents; nil means the file is (or will be) absent.
	SettingsBefore, SettingsAfter []byte
	HookdBefore, HookdAfter       []byte
	// Backups maps each file that will be backed up to its backup's path.
	Backups map[string]string
	// RemoveDirs are directories the install created, removed after the files when
	// they are empty.
	RemoveDirs []string
	// Summary says what the plan does, one line per fact.
	Summary []string
	// SettingsPrivate: write the Claude Code file with mode 0600 (it holds the http
	// forwarder's token).
	SettingsPrivate bool

	// After the backups are written, Apply prunes each file's backups in backupDir to
	// the newest keep (0: none pruned), never one in protect.
	backupDir string
	keep      int
	protect   []string
}

// pruning sets how Apply prunes backups: in dir, the newest keep (0: DefaultKeepBackups),
// never one in protect.
func (p *Plan) pruning(dir string, keep int, protect ...string) {
	p.backupDir, p.keep = dir, keep
	if p.keep <= 0 {
		p.keep = DefaultKeepBackups
	}
	for _, x := range protect {
		if x != "" {
			p.protect = append(p.protect, x)
		}
	}
}

// Changed reports whether applying the plan would change anything.
func (p *Plan) Changed() bool {
	return !sameFile(p.SettingsBefore, p.SettingsAfter) || !sameFile(p.HookdBefore, p.HookdAfter)
}

func sameFile(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// Diff renders the plan as unified diffs of both files.
func (p *Plan) Diff() string {
	var b strings.Builder
	for _, f := range []struct {
		path          string
		before, after []byte
	}{{p.Hookd, p.HookdBefore, p.HookdAfter}, {p.Settings, p.SettingsBefore, p.SettingsAfter}} {
		if sameFile(f.before, f.after) {
			continue
		}
		oldName, newName := f.path, f.path
		if f.before == nil {
			oldName = "/dev/null"
		}
		if f.after == nil {
			newName = "/dev/null"
		}
		b.Write(diff.Diff(oldName, f.before, newName, f.after))
	}
	return b.String()
}

// Apply writes the plan: backups first, then the files, in the order that never lets a
// hook run twice (install: hookd's file, then Claude Code's; uninstall: hookd's file
// removed, then Claude Code's restored).
//
// Each file is written only if it still holds what the plan read (compare-and-swap, see
// unchanged): otherwise Apply returns an error wrapping ErrChangedSinceRead, having
// written nothing when the change is seen before the first write (it is checked for both
// files up front).
func (p *Plan) Apply() error {
	if !p.Changed() {
		return nil
	}
	for _, f := range []struct {
		path          string
		before, after []byte
	}{{p.Hookd, p.HookdBefore, p.HookdAfter}, {p.Settings, p.SettingsBefore, p.SettingsAfter}} {
		if !sameFile(f.before, f.after) {
			if err := unchanged(f.path, f.before); err != nil {
				return err
			}
		}
	}
	for from, to := range p.Backups {
		data, err := readOptional(from)
		if err == nil && data == nil {
			err = fs.ErrNotExist
		}
		if err != nil {
			return fmt.Errorf("backing up %s: %w", from, err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return fmt.Errorf("backing up %s: %w", from, err)
		}
		f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode(from))
		if err == nil {
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("backing up %s: %w", from, err)
		}
	}
	if p.keep > 0 {
		for from := range p.Backups {
			// A failed prune leaves one backup too many: not worth failing the install.
			_ = pruneBackups(p.backupDir, from, p.keep, p.protect...)
		}
	}
	steps := []func() error{
		func() error { return writeOrRemove(p.Hookd, p.HookdBefore, p.HookdAfter, 0o644) },
		func() error {
			if p.SettingsPrivate && p.SettingsAfter != nil {
				// The token must not be readable by other users, also not for the moment
				// between the write and a chmod: the new file is created 0600.
				target, err := writeTarget(p.Settings)
				if err != nil {
					return err
				}
				if err := checkTarget(p.Settings, target); err != nil {
					return err
				}
				if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
					return err
				}
				return atomicfile.WriteIf(target, p.SettingsAfter, 0o600, true, func() error { return unchanged(p.Settings, p.SettingsBefore) })
			}
			return writeOrRemove(p.Settings, p.SettingsBefore, p.SettingsAfter, 0o644)
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	for _, d := range p.RemoveDirs {
		// Only an empty directory goes: whatever someone put there since stays.
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) && !isNotEmpty(err) {
			return err
		}
	}
	return nil
}

func isNotEmpty(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && (errors.Is(pe.Err, syscall.ENOTEMPTY) || errors.Is(pe.Err, syscall.EEXIST))
}

// ErrChangedSinceRead means a file the plan would write was changed by someone else after
// the plan read it: nothing of theirs was overwritten. Plan again from the new contents.
var ErrChangedSinceRead = errors.New("changed since the plan read it")

// unchanged reports (as ErrChangedSinceRead) whether path no longer holds before (nil:
// absent). Apply checks it for every file it writes before writing any, and again right
// before each rename: a compare-and-swap on the file's contents, so a user's concurrent
// edit of Claude Code's settings (or hookd's file) is never silently replaced by a plan
// made from the older contents. What remains is the window between that last read and the
// rename (microseconds), which no lock-free writer can close: Claude Code takes no lock.
func unchanged(path string, before []byte) error {
	now, err := readOptional(path)
	if err != nil {
		return err
	}
	if !sameFile(now, before) {
		return fmt.Errorf("%s: %w", path, ErrChangedSinceRead)
	}
	return nil
}

// writeOrRemove writes after to path (or removes it, after nil) unless path still holds
// before. A path that is a symbolic link is written through: its target is replaced or
// removed, the link stays (writeTarget).
func writeOrRemove(path string, before, after []byte, mode fs.FileMode) error {
	if sameFile(before, after) {
		return nil
	}
	target, err := writeTarget(path)
	if err != nil {
		return err
	}
	if after == nil {
		if err := unchanged(path, before); err != nil {
			return err
		}
		if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := checkTarget(path, target); err != nil {
		return err
	}
	if before != nil {
		mode = fileMode(path)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteIf(target, after, mode, true, func() error { return unchanged(path, before) })
}

func fileMode(path string) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o644
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// readOptional returns a file's bytes, or nil when it does not exist. It reads as the
// settings loader does (settings.ReadFile): never blocking on a FIFO or a hung file
// system, refusing anything but a regular file, and at most settings.MaxFileBytes.
func readOptional(path string) ([]byte, error) {
	data, err := settings.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// settingsFile is a parsed Claude Code settings file.
type settingsFile struct {
	data     []byte // nil when absent
	top      jsonobj.Object
	hooks    hooksValue
	hasHooks bool
}

func readSettings(path string) (*settingsFile, error) {
	data, err := readOptional(path)
	if err != nil {
		return nil, err
	}
	sf := &settingsFile{data: data, hooks: jsonobj.Object{}}
	if data == nil || len(bytes.TrimSpace(data)) == 0 {
		return sf, nil
	}
	sf.top, err = parseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid settings file (%v); fix it first", where(path, data), err)
	}
	if raw, ok := sf.top.Lookup("hooks"); ok {
		sf.hasHooks = true
		if sf.hooks, err = parseObject(raw); err != nil {
			return nil, fmt.Errorf("%s: \"hooks\" must be an object of event names; fix it first", path)
		}
	}
	return sf, nil
}

// where is "path:line:col" for the place data stops being valid JSON (as validate and
// the loader name it), or path when it is valid JSON (then it is not an object).
func where(path string, data []byte) string {
	if _, _, err := jsontree.Parse(data); err != nil {
		var se *jsontree.SyntaxError
		if errors.As(err, &se) {
			line, col := jsontree.LineCol(data, se.Off)
			return fmt.Sprintf("%s:%d:%d", path, line, col)
		}
	}
	return path
}

// hookdFile is a parsed hookd-owned file.
type hookdFile struct {
	data  []byte
	top   jsonobj.Object
	meta  *Meta
	hooks hooksValue
}

func readHookd(path string) (*hookdFile, error) {
	data, err := readOptional(path)
	if err != nil || data == nil {
		return &hookdFile{hooks: jsonobj.Object{}}, err
	}
	hf := &hookdFile{data: data, hooks: jsonobj.Object{}}
	if hf.top, err = parseObject(data); err != nil {
		return nil, fmt.Errorf("%s: not valid JSON (%v); fix or remove it first", where(path, data), err)
	}
	if raw, ok := hf.top.Lookup("hookd"); ok {
		hf.meta = &Meta{}
		if err := json.Unmarshal(raw, hf.meta); err != nil {
			return nil, fmt.Errorf("%s: the \"hookd\" record is damaged (%v)", path, err)
		}
	}
	if raw, ok := hf.top.Lookup("hooks"); ok {
		if hf.hooks, err = parseObject(raw); err != nil {
			return nil, fmt.Errorf("%s: \"hooks\" must be an object of event names", path)
		}
	}
	return hf, nil
}

func (o Options) now() time.Time {
	if o.Now.IsZero() {
		return time.Now()
	}
	return o.Now
}

func (o Options) check() error {
	switch o.Scope {
	case settings.KindUser, settings.KindProject, settings.KindLocal, settings.KindManaged:
	default:
		return fmt.Errorf("unknown scope %q (user, project, local or managed)", o.Scope)
	}
	if o.Settings == "" {
		return errors.New("no settings file")
	}
	return nil
}

// backupName is a backup path for path that does not exist yet (an uninstall in the
// same second as the install must not overwrite the install's backup): in dir, named
// after path's full name ("home%ana%proj%.claude%settings.json.hookd-backup-<time>"), or
// beside path when dir is "".
func backupName(dir, path string, now time.Time) string {
	base := backupPrefix(dir, path) + now.UTC().Format("20060102T150405Z")
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

// PlanInstall computes the install for o.
func PlanInstall(o Options) (*Plan, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(o.Forwarder) == "" {
		return nil, errors.New("no forwarder command")
	}
	if err := o.checkForm(); err != nil {
		return nil, err
	}
	if o.HTTP != nil && o.Scope != settings.KindUser && o.Scope != settings.KindLocal {
		return nil, fmt.Errorf("--transport http is for the user and local scopes only: its handlers carry hookd's token, and %s is shared (a project's settings.json is committed; a managed drop-in is the whole machine's)", o.Scope)
	}
	if o.Scope == settings.KindManaged {
		return planInstallManaged(o)
	}
	hpath := settings.HookdPathFor(o.Settings, o.Scope)
	sf, err := readSettings(o.Settings)
	if err != nil {
		return nil, err
	}
	hf, err := readHookd(hpath)
	if err != nil {
		return nil, err
	}
	if hf.data != nil && hf.meta == nil {
		return nil, fmt.Errorf("%s exists but was not written by hookd install; move its hooks into %s or remove it first", hpath, o.Settings)
	}
	if target, err := writeTarget(o.Settings); err != nil {
		return nil, err
	} else if err := checkTarget(o.Settings, target); err != nil {
		return nil, err
	}
	now := o.now()
	p := &Plan{Settings: o.Settings, Hookd: hpath, SettingsBefore: sf.data, HookdBefore: hf.data, Backups: map[string]string{}}

	kept, newlyMoved, _ := split(sf.hooks)
	var meta Meta
	var moved hooksValue
	if hf.meta == nil { // first install
		meta = Meta{
			Version: MetaVersion, Scope: string(o.Scope), InstalledFrom: o.Settings, Forwarder: o.Forwarder,
			InstalledAt: now.UTC().Format(time.RFC3339), HookdVersion: o.HookdVersion, SettingsExisted: sf.data != nil,
			DirCreated: !isDir(filepath.Dir(o.Settings)), OriginalHadHooks: sf.hasHooks,
		}
		meta.OriginalSHA256 = digest(sf.data)
		moved = newlyMoved
	} else {
		meta = *hf.meta
		meta.Forwarder = o.Forwarder
		moved = merge(hf.hooks, newlyMoved)
		if meta.OriginalHooks != nil && meta.Backup != "" && digestOf(meta.Backup) == meta.OriginalSHA256 {
			// A version 1 record rewritten: its copy of the original hooks goes, the
			// backup (verified) holds them.
			meta.OriginalHooks, meta.OriginalHadHooks, meta.Version = nil, true, MetaVersion
		}
	}
	meta.Transport, meta.Form = o.transport(), o.form()
	p.SettingsPrivate = o.HTTP != nil
	fwd := forwarders(moved, forwarderOf(o.Forwarder, o.Form), o.HTTP, o.warmStart(moved))
	newHooks := withForwarders(kept, fwd)

	// The Claude Code file: only "hooks" changes.
	var sAfter []byte
	if sf.data == nil || len(bytes.TrimSpace(sf.data)) == 0 {
		sAfter = append(indent(jsonobj.Object{}.SetRaw("hooks", newHooks.JSON()).JSON(), "", "  "), '\n')
	} else if sf.hasHooks && equalJSON(newHooks.JSON(), mustRaw(sf.top, "hooks")) {
		sAfter = sf.data // already as it should be
	} else if sAfter, err = spliceTopLevel(sf.data, "hooks", newHooks.JSON()); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Settings, err)
	}
	p.SettingsAfter = sAfter
	if sf.data != nil && !bytes.Equal(sf.data, sAfter) {
		p.Backups[o.Settings] = backupName(o.BackupDir, o.Settings, now)
		if meta.Backup == "" {
			meta.Backup = p.Backups[o.Settings]
		}
	}

	if hf.meta == nil {
		meta.InstalledSHA256 = digest(sAfter)
	}

	// hookd's file: rewritten only when its content changes.
	if hf.meta != nil && len(newlyMoved) == 0 && hf.meta.Forwarder == o.Forwarder && hf.meta.Transport == meta.Transport && hf.meta.Form == meta.Form {
		p.HookdAfter = hf.data
	} else {
		top := jsonobj.Object{}.Set("hookd", meta).SetRaw("hooks", moved.JSON())
		for _, m := range hf.top { // keys someone added by hand stay
			if m.Key != "hookd" && m.Key != "hooks" {
				top = append(top, m)
			}
		}
		p.HookdAfter = append(indent(top.JSON(), "", "  "), '\n')
	}

	// Summary.
	nKept := count(kept)
	switch {
	case !p.Changed():
		p.Summary = append(p.Summary, fmt.Sprintf("already installed: %s forwards every event to hookd (%s)", o.Settings, o.Forwarder))
	case hf.meta == nil:
		p.Summary = append(p.Summary, fmt.Sprintf("moved %s (%s) from %s to %s",
			plural(count(newlyMoved), "command/http hook", "command/http hooks"), joinOrNone(eventsOf(newlyMoved)), o.Settings, hpath))
	default:
		if n := count(newlyMoved); n > 0 {
			p.Summary = append(p.Summary, fmt.Sprintf("moved %s added since the last install (%s) from %s to %s",
				plural(n, "hook", "hooks"), joinOrNone(eventsOf(newlyMoved)), o.Settings, hpath))
		}
		if hf.meta.Forwarder != o.Forwarder {
			p.Summary = append(p.Summary, fmt.Sprintf("forwarder changed from %s to %s", hf.meta.Forwarder, o.Forwarder))
		}
		if hf.meta.Transport != meta.Transport {
			p.Summary = append(p.Summary, fmt.Sprintf("transport changed from %s to %s", orHookc(hf.meta.Transport), orHookc(meta.Transport)))
		}
		if hf.meta.Form != meta.Form {
			p.Summary = append(p.Summary, fmt.Sprintf("forwarders changed from the %s form to the %s form", orShell(hf.meta.Form), orShell(meta.Form)))
		}
	}
	if p.Changed() {
		if note := linkNote(o.Settings); note != "" {
			p.Summary = append(p.Summary, note)
		}
		if nKept > 0 {
			p.Summary = append(p.Summary, fmt.Sprintf("kept %s that hookd cannot run (prompt, agent, mcp_tool) in %s", plural(nKept, "hook", "hooks"), o.Settings))
		}
		if o.HTTP != nil {
			var viaHTTP []string
			for _, ev := range fwd {
				if HTTPEvents[ev.Key] {
					viaHTTP = append(viaHTTP, ev.Key)
				}
			}
			p.Summary = append(p.Summary, fmt.Sprintf("forwarding %d events: %s over http to %s, the others to %s (the session's environment reaches hookd with %s); %s is made 0600 (it holds hookd's token); restart hookd to serve http",
				len(fwd), joinOrNone(viaHTTP), o.HTTP.URL(), o.Forwarder, envCarrier(fwd), o.Settings))
		} else {
			p.Summary = append(p.Summary, fmt.Sprintf("forwarding %d events to %s", len(fwd), o.Forwarder))
		}
		if b, ok := p.Backups[o.Settings]; ok {
			p.Summary = append(p.Summary, "backup: "+b)
		}
	}
	p.pruning(o.BackupDir, o.KeepBackups, meta.Backup)
	return p, nil
}

func mustRaw(o jsonobj.Object, key string) json.RawMessage {
	v, _ := o.Lookup(key)
	return v
}

// PlanUninstall computes the uninstall for o (o.Forwarder is not needed).
func PlanUninstall(o Options) (*Plan, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Scope == settings.KindManaged {
		return planUninstallManaged(o)
	}
	hpath := settings.HookdPathFor(o.Settings, o.Scope)
	hf, err := readHookd(hpath)
	if err != nil {
		return nil, err
	}
	if hf.meta == nil {
		if hf.data != nil {
			return nil, fmt.Errorf("%s was not written by hookd install; nothing to uninstall", hpath)
		}
		sf, err := readSettings(o.Settings)
		if err != nil {
			return nil, err
		}
		if hasForwarders(sf.hooks) {
			p, err := planUninstallFromBackups(o, hpath, sf)
			if p != nil {
				p.pruning(o.BackupDir, o.KeepBackups, p.protect...)
				if note := linkNote(o.Settings); note != "" {
					p.Summary = append(p.Summary, note)
				}
			}
			return p, err
		}
		return nil, fmt.Errorf("not installed: no %s, and %s has no forwarders", hpath, o.Settings)
	}
	sf, err := readSettings(o.Settings)
	if err != nil {
		return nil, err
	}
	now := o.now()
	p := &Plan{Settings: o.Settings, Hookd: hpath, SettingsBefore: sf.data, HookdBefore: hf.data, Backups: map[string]string{}}

	current := withoutForwarders(sf.hooks)
	meta := hf.meta
	// The original hooks: from a version 1 record's copy, else from the backup (which
	// the record names and hashes), else unknown.
	hadHooks := meta.OriginalHadHooks || meta.OriginalHooks != nil
	backupOK := meta.Backup != "" && digestOf(meta.Backup) == meta.OriginalSHA256
	orig, origKnown := jsonobj.Object{}, true
	switch {
	case meta.OriginalHooks != nil:
		if orig, err = parseObject(meta.OriginalHooks); err != nil {
			return nil, fmt.Errorf("%s: original_hooks is damaged (%v); restore from the backup %s", hpath, err, meta.Backup)
		}
	case !hadHooks:
	case backupOK:
		b, err := readSettings(meta.Backup)
		if err != nil {
			return nil, fmt.Errorf("backup %s: %w", meta.Backup, err)
		}
		orig = b.hooks
	default:
		origKnown = false
	}
	origKept, origMoved, _ := split(orig)
	// The original comes back exactly when nothing changed since the install: what is
	// left in Claude Code's file is what the install left there, and hookd's file holds
	// what the install moved.
	_, stillMovable, _ := split(current)
	unchanged := origKnown && len(stillMovable) == 0 && equalJSON(keptOnly(current).JSON(), origKept.JSON()) && equalJSON(hf.hooks.JSON(), origMoved.JSON())

	var sAfter []byte
	switch {
	case unchanged && !meta.SettingsExisted && onlyHooks(sf.top):
		sAfter = nil // the install created the file; remove it again
		p.Summary = append(p.Summary, fmt.Sprintf("removed %s (the install created it)", o.Settings))
	case unchanged && backupOK && digest(sf.data) == meta.InstalledSHA256:
		sAfter, _ = os.ReadFile(meta.Backup)
		p.Summary = append(p.Summary, fmt.Sprintf("restored %s byte for byte from %s", o.Settings, meta.Backup))
	case unchanged && !hadHooks:
		if sf.data != nil {
			if sAfter, err = spliceTopLevel(sf.data, "hooks", nil); err != nil {
				return nil, err
			}
		}
		p.Summary = append(p.Summary, fmt.Sprintf("restored %s as it was (it had no hooks)", o.Settings))
	case unchanged:
		sAfter, err = restoreHooks(sf, orig.JSON())
		if err != nil {
			return nil, err
		}
		// The original text of "hooks", when the backup still holds it, keeps its layout.
		if backupOK && sf.hasHooks {
			if orig, err := os.ReadFile(meta.Backup); err == nil {
				if text, ok := rawTopLevel(orig, "hooks"); ok {
					if b, err := spliceVerbatim(sf.data, "hooks", text); err == nil {
						sAfter = b
					}
				}
			}
		}
		p.Summary = append(p.Summary, fmt.Sprintf("restored the original hooks of %s (%s)", o.Settings, plural(count(orig), "hook", "hooks")))
	default:
		back := merge(current, hf.hooks)
		sAfter, err = restoreHooks(sf, back.JSON())
		if err != nil {
			return nil, err
		}
		why := "hooks changed since the install"
		if !origKnown {
			why = fmt.Sprintf("the backup %s is gone or changed, so the original order is unknown", meta.Backup)
		}
		p.Summary = append(p.Summary, fmt.Sprintf("%s: put %s back into %s (Claude Code's first, then hookd's)",
			why, plural(count(hf.hooks), "hook from hookd", "hooks from hookd"), o.Settings))
		p.Backups[hpath] = backupName(o.BackupDir, hpath, now)
	}
	p.SettingsAfter = sAfter
	p.HookdAfter = nil
	if sf.data != nil && !sameFile(sf.data, sAfter) {
		p.Backups[o.Settings] = backupName(o.BackupDir, o.Settings, now)
	}
	p.Summary = append(p.Summary, "removed "+hpath)
	if meta.DirCreated {
		p.RemoveDirs = append(p.RemoveDirs, filepath.Dir(o.Settings))
		p.Summary = append(p.Summary, fmt.Sprintf("removed %s if empty (the install created it)", filepath.Dir(o.Settings)))
	}
	for from, to := range p.Backups {
		p.Summary = append(p.Summary, fmt.Sprintf("backup of %s: %s", filepath.Base(from), to))
	}
	if note := linkNote(o.Settings); note != "" {
		p.Summary = append(p.Summary, note)
	}
	p.pruning(o.BackupDir, o.KeepBackups, meta.Backup)
	return p, nil
}

func digestOf(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "-"
	}
	return digest(data)
}

// keptOnly drops nothing; it names the intent at the call site: current minus
// forwarders is what stays in Claude Code's file.
func keptOnly(h hooksValue) hooksValue { return h }

// onlyHooks reports whether a settings object has no key but "hooks".
func onlyHooks(top jsonobj.Object) bool {
	for _, m := range top {
		if m.Key != "hooks" {
			return false
		}
	}
	return true
}

// restoreHooks writes hooks back into the Claude Code file, keeping everything else.
func restoreHooks(sf *settingsFile, hooks json.RawMessage) ([]byte, error) {
	if sf.data == nil || len(bytes.TrimSpace(sf.data)) == 0 {
		return append(indent(jsonobj.Object{}.SetRaw("hooks", hooks).JSON(), "", "  "), '\n'), nil
	}
	return spliceTopLevel(sf.data, "hooks", hooks)
}

// PlanResync recomputes the forwarders of an installed scope from the hooks now in
// hookd's file, and changes nothing else: hooks in the Claude Code file other than the
// forwarders (prompt and agent handlers, hooks added there since the install) stay as they
// are, for Claude Code to run; no hook moves; hookd's file is not touched. The running
// daemon calls it when hookd's file changes, so a hook added there later gets its forwarder
// without anyone editing Claude Code's file, and an event whose last hook was removed stops
// costing a hookc start. Claude Code reloads hooks from its settings files when they change
// (spec §12, "Reload"). Without an install record in hookd's file it plans nothing.
//
// An installation with the http transport needs o.HTTP (the daemon's endpoint); without
// it PlanResync is an error rather than a switch back to hookc.
func PlanResync(o Options) (*Plan, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	hpath := settings.HookdPathFor(o.Settings, o.Scope)
	hf, err := readHookd(hpath)
	if err != nil {
		return nil, err
	}
	sf, err := readSettings(o.Settings)
	if err != nil {
		return nil, err
	}
	p := &Plan{Settings: o.Settings, Hookd: hpath, SettingsBefore: sf.data, SettingsAfter: sf.data,
		HookdBefore: hf.data, HookdAfter: hf.data, Backups: map[string]string{}}
	if hf.meta == nil || hf.meta.Forwarder == "" || sf.data == nil {
		return p, nil // not installed here (or Claude Code's file is gone): nothing to keep in sync
	}
	var ep *HTTPEndpoint
	if hf.meta.Transport == TransportHTTP {
		if o.HTTP == nil {
			return nil, fmt.Errorf("%s: installed with --transport http, but this hookd serves no http forwarder (no %s in its state directory)", hpath, HTTPEndpointFile)
		}
		ep = o.HTTP
		p.SettingsPrivate = true
	}
	fwd := forwarders(hf.hooks, forwarderOf(hf.meta.Forwarder, hf.meta.Form), ep, o.warmStart(hf.hooks))
	newHooks := withForwarders(withoutForwarders(sf.hooks), fwd)
	if sf.hasHooks && equalJSON(newHooks.JSON(), mustRaw(sf.top, "hooks")) {
		return p, nil
	}
	if len(bytes.TrimSpace(sf.data)) == 0 {
		p.SettingsAfter = append(indent(jsonobj.Object{}.SetRaw("hooks", newHooks.JSON()).JSON(), "", "  "), '\n')
	} else if p.SettingsAfter, err = spliceTopLevel(sf.data, "hooks", newHooks.JSON()); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Settings, err)
	}
	p.Summary = append(p.Summary, fmt.Sprintf("forwarders in %s follow %s: %s", o.Settings, hpath, joinOrNone(eventsOf(fwd))))
	return p, nil
}

// PlanResyncFile is PlanResync for the scope whose hookd-owned file is hookdPath, as its
// install record names it; nil when the file does not exist or has no install record. ep
// is the daemon's http forwarder endpoint (nil: none).
func PlanResyncFile(hookdPath string, ep *HTTPEndpoint, startsWarm func(event, command string, args []string, dir string) bool) (*Plan, error) {
	hf, err := readHookd(hookdPath)
	if err != nil || hf.meta == nil {
		return nil, err
	}
	o := Options{Scope: settings.Kind(hf.meta.Scope), Settings: hf.meta.InstalledFrom, HTTP: ep, StartsWarm: startsWarm}
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("%s: install record: %w", hookdPath, err)
	}
	if filepath.Clean(settings.HookdPathFor(o.Settings, o.Scope)) != filepath.Clean(hookdPath) {
		return nil, fmt.Errorf("%s: its install record names %s, whose hookd file is elsewhere", hookdPath, o.Settings)
	}
	return PlanResync(o)
}

func orHookc(t string) string {
	if t == "" {
		return TransportHookc
	}
	return t
}
