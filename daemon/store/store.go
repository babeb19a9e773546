package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/protocol"
)

// Store owns the compiled settings: the last good version of every settings file, and
// one immutable Snapshot per project built from them.
//
// Reads are lock-free: the project table is a copy-on-write map behind an atomic.Pointer
// and each project's snapshot is an atomic.Pointer, so an event for a known project never
// waits for a reload; it loads its snapshot once and finishes on it even if a reload
// swaps a new one in meanwhile (STYLE §6).
//
// A reload reads and parses files without any lock (retrying a file that may be
// mid-write), offers the content changes to the ConfigChange veto (spec §4.4), then takes
// the mutex briefly to record the new file states, compile and swap. An invalid file
// keeps its last good version (an edit with a typo never drops a guard), a deleted file
// drops its hooks, a refused change keeps the previous version; each is visible in
// Status until the file changes again.
type Store struct {
	log  *zap.Logger
	base settings.Sources

	// reloadMu serialises reloads: one read → veto → commit cycle at a time. The hot path
	// never takes it, and neither does loading a new project.
	reloadMu sync.Mutex

	mu    sync.Mutex // guards files, every projectState.refs, hooks, and writes to projects
	files map[string]*fileState
	// projects is copy-on-write: writers (holding mu) publish a new map; readers load it
	// without a lock.
	projects atomic.Pointer[map[string]*projectState]
	// dropIns is the managed-settings.d listing the projects' refs were built with.
	dropIns []string
	hooks   storeHooks

	generation atomic.Uint64
	watch      atomic.Pointer[map[string]protocol.WatchInfo]
	// watcherStatus reports the watcher that follows this store, registered by the watcher
	// (the store does not know the watcher itself).
	watcherStatus atomic.Pointer[func() *protocol.WatcherStatus]
	lastReload    atomic.Pointer[protocol.ReloadSummary]
	retry         retryPolicy
	// readFile reads a settings file (readCapped; tests simulate a writer mid-write).
	readFile func(path string) ([]byte, error)

	// The live-project cache (issue 13, defect 7: 20,000 project directories used to
	// hold 222 MB and 19,801 inotify watches for ever). At most maxProjects projects
	// stay loaded; one unused for idleTTL is evicted by Sweep. Evicting a project drops
	// its snapshot and the states of its own files (so the watcher drops their
	// watches); its next event loads it from disk again, exactly like a first event.
	// Zero means no limit (StoreOptions.MaxProjects, IdleTimeout).
	maxProjects int
	idleTTL     time.Duration
	// refCount counts, per file path, the live projects whose refs include it (guarded
	// by mu): a project-owned file no live project reads is forgotten.
	refCount  map[string]int
	evictions atomic.Uint64
}

type storeHooks struct {
	// veto, if set, is offered every content change before it is applied (ConfigChange).
	veto VetoFunc
	// newProject, if set, is called (without locks held) when a project is loaded for
	// the first time: the watcher adds watches for its files.
	newProject func(project string)
	// reloaded, if set, is called (without locks held) after every reload.
	reloaded func(protocol.ReloadSummary)
	// evicted are called (without locks held) with the projects just evicted.
	evicted []func(projects []string)
}

// retryPolicy bounds how long a reload waits for a file that may be mid-write: a parse
// error in a file whose bytes changed is retried tries-1 times, the n-th retry after
// n*step, before the file is called invalid (25+50 ms by default; the 150 ms budget of
// issue #4 with room to spare).
type retryPolicy struct {
	tries int
	step  time.Duration
}

var defaultRetry = retryPolicy{tries: 3, step: 25 * time.Millisecond}

type fileState struct {
	ref  settings.FileRef
	good *settings.File // version in force; nil: the file contributes nothing
	err  error          // the content on disk is invalid (good stays in force)
	// absent: the file does not exist on disk. good is nil then, unless a ConfigChange
	// hook refused the deletion.
	absent bool
	// seen identifies what the last read found (content hash, absentToken, or an error
	// token), so a reload skips files that did not change.
	seen     string
	loadedAt time.Time         // when good last changed (or the file was first read)
	refused  *protocol.Refusal // a change a ConfigChange hook refused, until the file changes again
	// readAt is when the read that produced this state started: a reload whose read
	// started earlier must not overwrite it (a project loaded again after eviction reads
	// its files while a reload that began before may still hold older bytes).
	readAt time.Time
}

const absentToken = "absent"

type projectState struct {
	dir  string
	refs []settings.FileRef // guarded by Store.mu
	snap atomic.Pointer[settings.Snapshot]
	gen  atomic.Uint64
	at   atomic.Int64 // unix nanos of the last swap
	used atomic.Int64 // unix nanos of the last Snapshot call (coarse: see touch)
}

// touch records that the project was used now. It writes the shared word at most every
// 100 ms, so concurrent events of one project do not contend on it.
func (p *projectState) touch() {
	now := time.Now().UnixNano()
	if now-p.used.Load() >= int64(100*time.Millisecond) {
		p.used.Store(now)
	}
}

// SettingsChange is one detected content change of a settings file, offered to the veto
// (ConfigChange hooks) before it is applied.
type SettingsChange struct {
	Ref settings.FileRef
	// Source is the ConfigChange source: user_settings, project_settings, local_settings
	// or policy_settings.
	Source string
	// Projects are the loaded projects that read the file; their current (old) snapshots
	// judge the change.
	Projects []string
	Deleted  bool
}

// Vetoable reports whether a ConfigChange hook can refuse the change: not for managed
// policy (spec §1.1, §4.4).
func (c SettingsChange) Vetoable() bool { return c.Source != SourcePolicy }

// ConfigChange sources (spec §1.1).
const (
	SourceUser    = "user_settings"
	SourceProject = "project_settings"
	SourceLocal   = "local_settings"
	SourcePolicy  = "policy_settings"
)

// configChangeSource maps a file to its ConfigChange source; "" for files Claude Code
// does not watch (--settings files, hookd-owned files). It goes by where the file is
// (Kind), not its label.
func configChangeSource(ref settings.FileRef) string {
	switch ref.Kind {
	case settings.KindManaged:
		return SourcePolicy
	case settings.KindUser:
		return SourceUser
	case settings.KindProject:
		return SourceProject
	case settings.KindLocal:
		return SourceLocal
	}
	return ""
}

// VetoFunc judges changes before they are applied. It returns, by file path, why a
// change is refused; a refusal of a change that is not Vetoable is logged and ignored.
// It is called without store locks held, so it may read snapshots (and run events).
type VetoFunc func(ctx context.Context, changes []SettingsChange) map[string]protocol.Refusal

// StoreOptions configure a Store. Only Sources is needed.
type StoreOptions struct {
	Logger *zap.Logger // nil: no logging
	// Sources are the settings files every project shares (ManagedDir, UserDir, Home,
	// Extra); each project adds its own project and local files.
	Sources settings.Sources
	// Veto, if set, is offered every content change before it is applied (the daemon
	// runs the ConfigChange hooks there).
	Veto VetoFunc
	// OnReload, if set, is called (without locks held) after every reload with its
	// summary.
	OnReload func(protocol.ReloadSummary)
	// MaxProjects bounds the live projects: beyond it the least recently used is
	// evicted. IdleTimeout evicts, on Sweep, projects unused that long. Zero disables
	// either bound.
	MaxProjects int
	IdleTimeout time.Duration
	// OnEvict, if set, is called (without locks held) with the projects just evicted.
	OnEvict func(projects []string)
}

// NewStore returns a store over o.Sources. Everything a store is told is in o; the one
// thing attached later is the Watcher that follows the store's files (StartWatcher),
// which cannot exist before the store it watches.
func NewStore(o StoreOptions) *Store {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	s := &Store{log: o.Logger, base: o.Sources, files: map[string]*fileState{}, retry: defaultRetry, readFile: readCapped,
		refCount: map[string]int{}, maxProjects: o.MaxProjects, idleTTL: o.IdleTimeout}
	s.hooks.veto, s.hooks.reloaded = o.Veto, o.OnReload
	if o.OnEvict != nil {
		s.hooks.evicted = append(s.hooks.evicted, o.OnEvict)
	}
	s.projects.Store(&map[string]*projectState{})
	return s
}

// attachWatcher is how StartWatcher attaches itself: newProject runs (without locks)
// after a project is first loaded, evicted after projects are evicted, and status reports
// the watcher in WatcherStatus (nil until then).
func (s *Store) attachWatcher(newProject func(project string), evicted func(projects []string), status func() *protocol.WatcherStatus) {
	s.mu.Lock()
	s.hooks.newProject = newProject
	s.hooks.evicted = append(s.hooks.evicted, evicted)
	s.mu.Unlock()
	s.watcherStatus.Store(&status)
}

// Snapshot returns the current snapshot for project, loading the project on first use.
// For a known project it takes no lock.
func (s *Store) Snapshot(project string) *settings.Snapshot {
	if p, ok := (*s.projects.Load())[project]; ok {
		p.touch()
		return p.snap.Load()
	}
	return s.addProject(project).snap.Load()
}

// Generation counts snapshot swaps since start.
func (s *Store) Generation() uint64 { return s.generation.Load() }

// Base returns the sources every project shares.
func (s *Store) Base() settings.Sources { return s.base }

// Projects returns the loaded projects' directories, sorted.
func (s *Store) Projects() []string {
	m := *s.projects.Load()
	out := make([]string, 0, len(m))
	for d := range m {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func (s *Store) sourcesFor(project string) settings.Sources {
	src := s.base
	src.ProjectDir = project
	return src
}

// addProject loads a project seen for the first time. Files the store does not know yet
// (the project's own) are read before the lock is taken; shared files are reused.
func (s *Store) addProject(project string) *projectState {
	refs := s.sourcesFor(project).Files()
	s.mu.Lock()
	var unknown []settings.FileRef
	for _, r := range refs {
		if _, ok := s.files[r.Path]; !ok {
			unknown = append(unknown, r)
		}
	}
	s.mu.Unlock()
	reads := make([]readResult, len(unknown))
	for i, r := range unknown {
		reads[i] = s.read(r, "")
	}

	s.mu.Lock()
	if p, ok := (*s.projects.Load())[project]; ok { // lost a race with another first event
		s.mu.Unlock()
		return p
	}
	now := time.Now()
	for _, r := range reads {
		if _, ok := s.files[r.ref.Path]; !ok {
			s.files[r.ref.Path] = s.firstStateLocked(r, now)
		}
	}
	p := &projectState{dir: project, refs: refs}
	snap := s.compileLocked(p)
	p.snap.Store(snap)
	p.gen.Store(s.generation.Add(1))
	p.at.Store(now.UnixNano())
	p.used.Store(now.UnixNano())
	s.publishLocked(project, p)
	var evicted []string
	if s.maxProjects > 0 && len(*s.projects.Load()) > s.maxProjects {
		evicted = s.evictLocked(now, project)
	}
	cb, evictCBs := s.hooks.newProject, s.hooks.evicted
	s.mu.Unlock()

	s.log.Info("project loaded", zap.String("project", project), zap.String("revision", short(snap.Revision)),
		zap.Int("files", len(snap.Files)))
	s.notifyEvicted(evicted, evictCBs, "limit")
	if cb != nil {
		cb(project)
	}
	return p
}

// publishLocked adds p to the copy-on-write project table.
func (s *Store) publishLocked(project string, p *projectState) {
	old := *s.projects.Load()
	m := make(map[string]*projectState, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[project] = p
	s.projects.Store(&m)
	s.countRefsLocked(p.refs, +1)
}

func (s *Store) countRefsLocked(refs []settings.FileRef, delta int) {
	for _, r := range refs {
		if n := s.refCount[r.Path] + delta; n > 0 {
			s.refCount[r.Path] = n
		} else {
			delete(s.refCount, r.Path)
		}
	}
}

// projectOwned reports whether a file belongs to one project (its .claude/settings*.json
// and their hookd files, its harnesses' own files) rather than to every project
// (managed, user, --settings, the user's harness files).
func projectOwned(ref settings.FileRef) bool {
	switch ref.Kind {
	case settings.KindProject, settings.KindLocal:
		return true
	case settings.KindHookd:
		return ref.Origin == settings.KindProject || ref.Origin == settings.KindLocal
	case settings.KindHarness, settings.KindHarnessConfig:
		return strings.HasSuffix(string(ref.Origin), "-project")
	}
	return false
}

// ProjectLimits returns StoreOptions.MaxProjects and IdleTimeout.
func (s *Store) ProjectLimits() (max int, idle time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxProjects, s.idleTTL
}

// Evictions counts the projects evicted since start.
func (s *Store) Evictions() uint64 { return s.evictions.Load() }

// LiveProjects returns the number of loaded projects (cheap: no list is built).
func (s *Store) LiveProjects() int { return len(*s.projects.Load()) }

// Sweep evicts the projects unused for the idle time (and any above the limit). The
// watcher calls it periodically; it returns the evicted projects.
func (s *Store) Sweep(now time.Time) []string {
	s.mu.Lock()
	if s.idleTTL <= 0 && (s.maxProjects <= 0 || len(*s.projects.Load()) <= s.maxProjects) {
		s.mu.Unlock()
		return nil
	}
	evicted := s.evictLocked(now, "")
	cbs := s.hooks.evicted
	s.mu.Unlock()
	s.notifyEvicted(evicted, cbs, "idle")
	return evicted
}

func (s *Store) notifyEvicted(evicted []string, cbs []func([]string), why string) {
	if len(evicted) == 0 {
		return
	}
	s.log.Info("projects evicted", zap.String("why", why), zap.Int("count", len(evicted)),
		zap.Int("live", s.LiveProjects()), zap.Strings("sample", evicted[:min(len(evicted), 5)]))
	for _, f := range cbs {
		f(evicted)
	}
}

// evictLocked evicts the projects idle for longer than idleTTL and, while more than
// maxProjects remain, the least recently used, never keep (the project being loaded).
// Over the limit it evicts down to 7/8 of it, so a stream of new projects sorts the table
// once per maxProjects/8 loads, not on every one.
//
// A project whose settings have ConfigChange hooks is not evicted for being idle: while
// it is evicted nothing watches its files, so an edit made meanwhile would apply at its
// next event without being offered to those hooks (it still is evicted over the limit;
// docs/reliability.md).
func (s *Store) evictLocked(now time.Time, keep string) []string {
	m := *s.projects.Load()
	type cand struct {
		p    *projectState
		used int64
	}
	var victims, rest []cand
	cutoff := now.Add(-s.idleTTL).UnixNano()
	for dir, p := range m {
		if dir == keep {
			continue
		}
		c := cand{p, p.used.Load()}
		if s.idleTTL > 0 && c.used < cutoff && len(p.snap.Load().HandlersFor("ConfigChange")) == 0 {
			victims = append(victims, c)
			continue
		}
		rest = append(rest, c)
	}
	if live := len(m) - len(victims); s.maxProjects > 0 && live > s.maxProjects {
		target := max(s.maxProjects-s.maxProjects/8, 1)
		sort.Slice(rest, func(i, j int) bool { return rest[i].used < rest[j].used })
		n := min(live-target, len(rest))
		victims = append(victims, rest[:n]...)
	}
	if len(victims) == 0 {
		return nil
	}
	nm := make(map[string]*projectState, len(m)-len(victims))
	for k, v := range m {
		nm[k] = v
	}
	out := make([]string, 0, len(victims))
	for _, v := range victims {
		delete(nm, v.p.dir)
		s.countRefsLocked(v.p.refs, -1)
		for _, r := range v.p.refs {
			if projectOwned(r) && s.refCount[r.Path] == 0 {
				delete(s.files, r.Path) // read again from disk if the project comes back
			}
		}
		out = append(out, v.p.dir)
	}
	s.projects.Store(&nm)
	s.evictions.Add(uint64(len(out)))
	sort.Strings(out)
	return out
}

// firstStateLocked is the state of a file read for the first time: no ConfigChange, no
// retry (the watcher sees the end of a write in progress and reloads then).
func (s *Store) firstStateLocked(r readResult, now time.Time) *fileState {
	st := &fileState{ref: r.ref, seen: r.token, loadedAt: now, absent: r.absent, good: r.file, err: r.err, readAt: r.readAt}
	s.logRead(r, nil)
	return st
}

// readResult is one file as read from disk, parsed but not yet applied.
type readResult struct {
	ref    settings.FileRef
	token  string // content hash, absentToken, or an error token
	absent bool
	file   *settings.File // valid content
	err    error          // invalid content, or unreadable
	parse  bool           // err is about the content (a retry may help), not the file system
	readAt time.Time      // when the read started
}

// maxSettingsBytes bounds a read; configs rejects files over 8 MiB with a clear error.
const maxSettingsBytes = 16 << 20

// read reads and parses one file without locks. When the content hash equals prevSeen
// the file is not parsed again (the caller keeps its state).
func (s *Store) read(ref settings.FileRef, prevSeen string) readResult {
	r := readResult{ref: ref, readAt: time.Now()}
	path := ref.Path
	if s.base.Home != "" && strings.HasPrefix(path, "~/") {
		path = filepath.Join(s.base.Home, path[2:])
	}
	data, err := s.readFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.token, r.absent = absentToken, true
		return r
	case err != nil:
		r.err = &settings.FileError{File: path, Err: err}
		r.token = "error:" + err.Error()
		return r
	}
	sum := sha256.Sum256(data)
	r.token = hex.EncodeToString(sum[:])
	// A managed file is trusted only while it and its directories are root's and
	// nobody else can write them (settings.CheckManaged, issue 28 item 5); the verdict is
	// part of the token, so a chown or chmod alone changes the file's state.
	untrusted := ""
	if err := s.base.CheckTrust(settings.FileRef{Path: path, Kind: ref.Kind, Channel: ref.Channel}); err != nil {
		untrusted = err.Error()
		r.token += "\x00untrusted: " + untrusted
	}
	if r.token == prevSeen {
		return r
	}
	if len(data) > maxSettingsBytes {
		// configs names the limit; hand it a prefix that is surely too long.
		data = data[:maxSettingsBytes]
	}
	r.file, r.err = settings.ParseFile(ref, data, s.base.Home)
	r.parse = r.err != nil
	if r.file != nil && untrusted != "" {
		settings.Untrust(r.file, untrusted)
	}
	return r
}

// readCapped reads a settings file the safe way (settings.ReadFile): opened
// non-blocking, regular files only, bounded in size and time. A FIFO among the
// settings files used to block this read — and with it every later reload, SIGHUP and
// shutdown — forever.
func readCapped(path string) ([]byte, error) { return settings.ReadFile(path) }

func (s *Store) compileLocked(p *projectState) *settings.Snapshot {
	files := make([]*settings.File, 0, len(p.refs))
	for _, r := range p.refs {
		if st := s.files[r.Path]; st != nil && st.good != nil {
			files = append(files, st.good)
		}
	}
	return settings.Compile(files)
}

// Reload re-reads the given files — every known file when paths is empty — and swaps in
// new snapshots for the projects whose compiled settings changed. managed-settings.d is
// listed again each time, so drop-ins that appeared or vanished are followed. why names
// the trigger in logs and the summary ("watch", "signal", "request").
//
// A file that fails to parse after its bytes changed may be mid-write: it is read again
// (retryPolicy) before it is called invalid; the other files' changes are applied
// meanwhile.
func (s *Store) Reload(ctx context.Context, why string, paths ...string) protocol.ReloadSummary {
	sum := s.reload(ctx, why, paths...)
	s.mu.Lock()
	cb := s.hooks.reloaded
	s.mu.Unlock()
	if cb != nil {
		cb(sum)
	}
	return sum
}

func (s *Store) reload(ctx context.Context, why string, paths ...string) protocol.ReloadSummary {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	start := time.Now()
	sum := protocol.ReloadSummary{Trigger: why, At: start}

	refs, rebuilt := s.reloadSetLocked(paths)
	for attempt := 1; len(refs) > 0 || rebuilt; attempt++ {
		prev := s.seenTokens(refs)
		reads := make([]readResult, len(refs))
		for i, r := range refs {
			reads[i] = s.read(r, prev[r.Path])
		}
		sum.FilesRead += len(reads)
		var final []readResult
		refs = refs[:0:0]
		for _, r := range reads {
			if r.parse && attempt < s.retry.tries && r.token != prev[r.ref.Path] {
				refs = append(refs, r.ref) // maybe mid-write: read it again shortly
				continue
			}
			final = append(final, r)
		}
		s.apply(ctx, final, rebuilt, &sum)
		rebuilt = false
		if len(refs) == 0 {
			break
		}
		t := time.NewTimer(time.Duration(attempt) * s.retry.step)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			refs = nil
		}
	}

	sum.Generation = s.generation.Load()
	s.mu.Lock()
	s.pruneLocked()
	for _, st := range s.files {
		if st.err != nil {
			sum.Errors = append(sum.Errors, st.err.Error())
		}
	}
	s.mu.Unlock()
	sort.Strings(sum.Errors)
	sum.Took = time.Since(start).Round(time.Microsecond).String()
	s.lastReload.Store(&sum)
	return sum
}

// reloadSetLocked returns the files a reload reads: paths (or every known file), plus
// drop-ins that appeared since the last reload. It rebuilds the projects' file lists
// when the managed-settings.d listing changed or on a full reload (no paths), and reports
// rebuilt when a list changed. Called with reloadMu held.
func (s *Store) reloadSetLocked(paths []string) (refs []settings.FileRef, rebuilt bool) {
	base := s.base.Files() // lists managed-settings.d and the installed plugins now
	var dropIns []string
	for _, r := range base {
		if r.Kind == settings.KindManaged && filepath.Dir(r.Path) == s.base.ManagedDropInDir() ||
			r.Kind == settings.KindPlugin {
			dropIns = append(dropIns, r.Path)
		}
	}
	s.mu.Lock()
	listingChanged := !slices.Equal(dropIns, s.dropIns)
	// A plugin registry or plugin file that changed may add or move a plugin visible
	// only from some projects (project and local installs): list every project again.
	for _, path := range paths {
		if st, ok := s.files[path]; ok && (st.ref.Kind == settings.KindPluginRegistry || st.ref.Kind == settings.KindPlugin) {
			listingChanged = true
		}
	}
	s.mu.Unlock()
	var newRefs map[string][]settings.FileRef
	if listingChanged || len(paths) == 0 {
		// Rare (a drop-in was added or removed, or a full reload: SIGHUP, `hookd
		// reload`, a lost event, a harness directory that appeared in a project): list
		// every project's files again, reading the disk outside the lock.
		newRefs = map[string][]settings.FileRef{}
		for _, p := range s.Projects() {
			newRefs[p] = s.sourcesFor(p).Files()
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropIns = dropIns
	for dir, refs := range newRefs {
		p, ok := (*s.projects.Load())[dir]
		if !ok || slices.Equal(p.refs, refs) {
			delete(newRefs, dir)
			continue
		}
		s.countRefsLocked(p.refs, -1)
		p.refs = refs
		s.countRefsLocked(p.refs, +1)
	}
	want := map[string]settings.FileRef{}
	if len(paths) == 0 {
		for path, st := range s.files {
			want[path] = st.ref
		}
	} else {
		for _, path := range paths {
			if st, ok := s.files[path]; ok {
				want[path] = st.ref
			}
		}
	}
	// New drop-ins, and the files of every rebuilt list the store has not read yet.
	for _, r := range base {
		if _, ok := s.files[r.Path]; !ok {
			want[r.Path] = r
		}
	}
	for _, refs := range newRefs {
		for _, r := range refs {
			if _, ok := s.files[r.Path]; !ok {
				want[r.Path] = r
			}
		}
	}
	refs = make([]settings.FileRef, 0, len(want))
	for _, r := range want {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Path < refs[j].Path })
	return refs, len(newRefs) > 0
}

// Lists reports whether project's file list has path. A project not loaded yet lists
// what exists when it loads: true.
func (s *Store) Lists(project, path string) bool {
	p, ok := (*s.projects.Load())[project]
	if !ok {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(p.refs, func(r settings.FileRef) bool { return r.Path == path })
}

// pruneLocked forgets absent files that no project reads any more (a drop-in that was
// deleted), so status does not list them forever.
func (s *Store) pruneLocked() {
	used := map[string]bool{}
	for _, path := range s.dropIns {
		used[path] = true
	}
	for path, st := range s.files {
		if st.absent && st.good == nil && !used[path] && s.refCount[path] == 0 && st.ref.Kind == settings.KindManaged {
			delete(s.files, path)
		}
	}
}

func (s *Store) seenTokens(refs []settings.FileRef) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]string, len(refs))
	for _, r := range refs {
		if st := s.files[r.Path]; st != nil {
			m[r.Path] = st.seen
		}
	}
	return m
}

// apply turns reads into new file states: unchanged files are skipped, content changes
// are offered to the veto (without locks), then states are recorded and the affected
// projects recompiled and swapped under the mutex.
// rebuilt forces every project to be recompiled (its file list changed).
func (s *Store) apply(ctx context.Context, reads []readResult, rebuilt bool, sum *protocol.ReloadSummary) {
	type pending struct {
		r      readResult
		change *SettingsChange
	}
	var todo []pending
	var changes []SettingsChange
	s.mu.Lock()
	veto := s.hooks.veto
	for _, r := range reads {
		prev := s.files[r.ref.Path]
		if prev != nil && prev.seen == r.token || s.staleLocked(r, prev) {
			continue // nothing changed on disk, or the read is out of date
		}
		pd := pending{r: r}
		if r.err == nil && goodHash(prev) != fileHash(r.file) {
			// The version in force changes (new content, a new file, or a deletion).
			// Files read for the first time before any project was loaded have no
			// users, so start-up runs no ConfigChange.
			if src := configChangeSource(r.ref); src != "" {
				if users := s.usersLocked(r.ref.Path); len(users) > 0 {
					c := SettingsChange{Ref: r.ref, Source: src, Deleted: r.absent, Projects: users}
					pd.change = &c
					changes = append(changes, c)
				}
			}
		}
		todo = append(todo, pd)
	}
	s.mu.Unlock()
	if len(todo) == 0 && !rebuilt {
		return
	}

	var refusals map[string]protocol.Refusal
	if veto != nil && len(changes) > 0 {
		refusals = veto(ctx, changes)
	}

	type swap struct {
		project  string
		old, new *settings.Snapshot
	}
	var swaps []swap
	now := time.Now()
	changed := map[string]bool{}
	s.mu.Lock()
	for _, pd := range todo {
		r, prev := pd.r, s.files[pd.r.ref.Path]
		if s.staleLocked(r, prev) {
			continue
		}
		st := &fileState{ref: r.ref, seen: r.token, absent: r.absent, loadedAt: now, readAt: r.readAt}
		if prev != nil {
			st.good, st.loadedAt = prev.good, prev.loadedAt
		}
		refusal, refused := refusals[r.ref.Path]
		switch {
		case r.err != nil:
			st.err = r.err
		case refused && pd.change != nil && pd.change.Vetoable():
			refusal.Revision, refusal.At = fileHash(r.file), now
			st.refused = &refusal
			sum.Refused = append(sum.Refused, r.ref.Path+": "+refusal.Reason)
		default:
			if refused {
				s.log.Warn("ConfigChange hook cannot refuse a managed policy change; applying it",
					zap.String("file", r.ref.Path), zap.String("reason", refusal.Reason))
			}
			if goodHash(prev) != fileHash(r.file) {
				st.loadedAt = now
				changed[r.ref.Path] = true
				sum.Changed = append(sum.Changed, r.ref.Path)
			}
			st.good = r.file
		}
		s.files[r.ref.Path] = st
		s.logRead(r, prev)
		if st.refused != nil {
			s.log.Warn("settings change refused by a ConfigChange hook; keeping the previous version",
				zap.String("file", r.ref.Path), zap.String("project", st.refused.Project),
				zap.String("reason", st.refused.Reason), zap.String("kept_revision", short(goodHash(st))))
		}
	}
	for _, p := range *s.projects.Load() {
		if !rebuilt && !usesAny(p, changed) {
			continue
		}
		old := p.snap.Load()
		snap := s.compileLocked(p)
		if snap.Revision == old.Revision {
			continue
		}
		p.snap.Store(snap)
		p.gen.Store(s.generation.Add(1))
		p.at.Store(now.UnixNano())
		swaps = append(swaps, swap{p.dir, old, snap})
	}
	s.mu.Unlock()

	sum.Swapped += len(swaps)
	for _, sw := range swaps {
		s.log.Info("settings reloaded", zap.String("project", sw.project),
			zap.String("old_revision", short(sw.old.Revision)), zap.String("revision", short(sw.new.Revision)),
			zap.Uint64("generation", s.generation.Load()), zap.Strings("changes", DiffSnapshots(sw.old, sw.new)))
	}
}

// staleLocked reports whether a reload's read must not be applied: its project-owned
// file was evicted meanwhile (no live project reads it; keeping its state would keep a
// watch and memory for nothing, and the project reads it afresh when it comes back), or
// the state in force came from a read that started later.
func (s *Store) staleLocked(r readResult, prev *fileState) bool {
	if prev == nil {
		return projectOwned(r.ref) && s.refCount[r.ref.Path] == 0
	}
	return prev.readAt.After(r.readAt)
}

// usersLocked lists the loaded projects that read path.
func (s *Store) usersLocked(path string) []string {
	var out []string
	for dir, p := range *s.projects.Load() {
		for _, r := range p.refs {
			if r.Path == path {
				out = append(out, dir)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// logRead logs what a read found, once per distinct error.
func (s *Store) logRead(r readResult, prev *fileState) {
	if r.err != nil {
		if prev != nil && prev.err != nil && prev.err.Error() == r.err.Error() {
			return // already reported
		}
		keep := "no previous version: its hooks are not loaded"
		if prev != nil && prev.good != nil {
			keep = "keeping last good version " + short(prev.good.Hash)
		}
		fields := []zap.Field{zap.String("file", r.ref.Path), zap.Error(r.err), zap.String("action", keep)}
		var fe *settings.FileError
		if errors.As(r.err, &fe) {
			if fe.Field != "" {
				fields = append(fields, zap.String("field", fe.Field))
			}
			if fe.Line > 0 {
				fields = append(fields, zap.Int("line", fe.Line), zap.Int("col", fe.Col))
			}
		}
		s.log.Error("invalid settings file", fields...)
		return
	}
	if r.file != nil {
		for _, w := range r.file.Warnings {
			if w.IsError() {
				s.log.Error("settings finding", zap.String("file", r.ref.Path), zap.String("field", w.Field), zap.String("error", w.String()))
				continue
			}
			s.log.Warn("settings warning", zap.String("file", r.ref.Path), zap.String("warning", w.String()))
		}
	}
}

func fileHash(f *settings.File) string {
	if f == nil {
		return ""
	}
	return f.Hash
}

func goodHash(st *fileState) string {
	if st == nil {
		return ""
	}
	return fileHash(st.good)
}

func usesAny(p *projectState, paths map[string]bool) bool {
	if len(paths) == 0 {
		return false
	}
	for _, r := range p.refs {
		if paths[r.Path] {
			return true
		}
	}
	return false
}

// KnownFiles returns every settings file the store reads, sorted.
func (s *Store) KnownFiles() []settings.FileRef {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]settings.FileRef, 0, len(s.files))
	for _, st := range s.files {
		out = append(out, st.ref)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// setWatchInfo publishes how each file is watched (the watcher calls it after every
// change to its watch set).
func (s *Store) setWatchInfo(m map[string]protocol.WatchInfo) { s.watch.Store(&m) }

// WatcherStatus reports the watcher following the store's files; nil when none runs.
func (s *Store) WatcherStatus() *protocol.WatcherStatus {
	if f := s.watcherStatus.Load(); f != nil {
		return (*f)()
	}
	return nil
}

// LastReload returns the summary of the last reload, nil before the first.
func (s *Store) LastReload() *protocol.ReloadSummary { return s.lastReload.Load() }

// Status reports every file and project.
func (s *Store) Status() ([]protocol.SourceStatus, []protocol.ProjectStatus) {
	var watch map[string]protocol.WatchInfo
	if w := s.watch.Load(); w != nil {
		watch = *w
	}
	s.mu.Lock()
	var files []protocol.SourceStatus
	for _, st := range s.files {
		fs := protocol.SourceStatus{Path: st.ref.Path, Source: string(st.ref.Origin), LoadedAt: st.loadedAt, Refused: st.refused}
		if fs.Source == "" {
			fs.Source = string(st.ref.Kind)
		}
		if p := st.ref.Plugin; p != nil {
			fs.Source, fs.Version = p.Label(), p.Version
		}
		if fm := st.ref.Frontmatter; fm != nil {
			if st.good != nil && st.good.Ref.Frontmatter != nil {
				fm = st.good.Ref.Frontmatter // an agent's type is its frontmatter's "name"
			}
			fs.Source = fm.Label()
		}
		if wi, ok := watch[st.ref.Path]; ok {
			fs.Watch = &wi
		}
		switch {
		case st.err != nil:
			fs.State, fs.Error = "invalid", st.err.Error()
			if st.good != nil {
				fs.KeptRevision = st.good.Hash
			}
		case st.refused != nil:
			fs.State = "refused"
		case st.good != nil && st.good.Untrusted != "":
			fs.State = "untrusted" // its error-level finding (Warnings) says why
		case st.absent:
			fs.State = "absent"
		default:
			fs.State = "loaded"
		}
		if st.good != nil {
			fs.Revision = st.good.Hash
			for _, w := range st.good.Warnings {
				if w.IsError() {
					fs.Warnings = append(fs.Warnings, "error: "+w.String())
					continue
				}
				fs.Warnings = append(fs.Warnings, w.String())
			}
		}
		files = append(files, fs)
	}
	s.mu.Unlock()
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	var projects []protocol.ProjectStatus
	for _, p := range *s.projects.Load() {
		snap := p.snap.Load()
		ps := protocol.ProjectStatus{Dir: p.dir, Revision: snap.Revision, Generation: p.gen.Load(),
			SwappedAt: time.Unix(0, p.at.Load())}
		for _, f := range snap.Files {
			for _, h := range f.Handlers {
				ps.Handlers++
				if !h.Runnable {
					ps.NotRunnable = append(ps.NotRunnable, h.ID+" ("+string(h.Type)+")")
				}
				if snap.ClaudeCodeRuns(h) {
					id := h.ID
					if h.Plugin != nil && h.Plugin.Version != "" {
						id += " (version " + h.Plugin.Version + ")"
					}
					ps.ClaudeCodeRuns = append(ps.ClaudeCodeRuns, id)
				}
			}
		}
		ps.RoutedBy, ps.NotForwarded = snap.RoutedBy, snap.NotForwarded
		ps.ManagedSource = snap.Managed.String()
		for _, w := range snap.Managed.Skipped {
			if w.IsError() {
				ps.ManagedSkipped = append(ps.ManagedSkipped, "error: "+w.String())
				continue
			}
			ps.ManagedSkipped = append(ps.ManagedSkipped, w.String())
		}
		for _, w := range snap.RunNowhere {
			ps.RunNowhere = append(ps.RunNowhere, w.String())
		}
		projects = append(projects, ps)
	}
	sort.Slice(projects, func(i, j int) bool { return projects[i].Dir < projects[j].Dir })
	return files, projects
}

// DiffSnapshots summarises what changed between two snapshots, per event:
// "PreToolUse: +1 -0 ~1".
func DiffSnapshots(old, new *settings.Snapshot) []string {
	index := func(s *settings.Snapshot) map[string]map[string]string {
		m := map[string]map[string]string{}
		for _, f := range s.Files {
			for _, h := range f.Handlers {
				ev := h.Event.Name
				if m[ev] == nil {
					m[ev] = map[string]string{}
				}
				m[ev][h.ID] = string(h.Raw) + "\x00" + h.MatcherText
			}
		}
		return m
	}
	a, b := index(old), index(new)
	evs := map[string]bool{}
	for e := range a {
		evs[e] = true
	}
	for e := range b {
		evs[e] = true
	}
	var out []string
	for e := range evs {
		var add, del, chg int
		for id, v := range b[e] {
			if ov, ok := a[e][id]; !ok {
				add++
			} else if ov != v {
				chg++
			}
		}
		for id := range a[e] {
			if _, ok := b[e][id]; !ok {
				del++
			}
		}
		if add+del+chg > 0 {
			out = append(out, fmt.Sprintf("%s: +%d -%d ~%d", e, add, del, chg))
		}
	}
	sort.Strings(out)
	return out
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
