package daemon

import (
	"errors"
	"io/fs"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs"
)

// Store owns the compiled settings: the last good version of every settings file, and
// one immutable Snapshot per project built from them.
//
// Reads are lock-free (atomic.Pointer): an event loads its project's snapshot once and
// finishes on it even if a reload swaps a new one in meanwhile. Reloads build the new
// snapshot off the hot path and swap it in; an invalid file keeps its last good version
// (an edit with a typo never drops a guard), a deleted file drops its hooks.
type Store struct {
	log  *zap.Logger
	base configs.Sources

	mu       sync.Mutex // guards files and projects (the maps, not the snapshots)
	files    map[string]*fileState
	projects map[string]*projectState

	generation atomic.Uint64
	// onSwap, if set, is called (without locks held) after a project's snapshot changed.
	onSwap func(project string, old, new *configs.Snapshot)
	// onNewProject, if set, is called when a project is seen for the first time, with
	// the files it reads (the watcher adds watches for them).
	onNewProject func(project string, refs []configs.FileRef)
}

type fileState struct {
	ref      configs.FileRef
	good     *configs.File // last good parse; nil if absent or never valid
	err      error         // current error (the file on disk is invalid), nil if fine
	absent   bool
	loadedAt time.Time
	hash     string // hash of the bytes last seen on disk (good or bad)
}

type projectState struct {
	dir  string
	refs []configs.FileRef
	snap atomic.Pointer[configs.Snapshot]
	gen  atomic.Uint64
	at   atomic.Int64 // unix nanos of the last swap
}

// NewStore returns a store over base sources (ManagedDir, UserDir, Home, Extra); each
// project adds its own project and local files.
func NewStore(log *zap.Logger, base configs.Sources) *Store {
	return &Store{log: log, base: base, files: map[string]*fileState{}, projects: map[string]*projectState{}}
}

// Snapshot returns the current snapshot for project, loading the project on first use.
func (s *Store) Snapshot(project string) *configs.Snapshot {
	s.mu.Lock()
	p, ok := s.projects[project]
	s.mu.Unlock()
	if ok {
		return p.snap.Load()
	}
	return s.addProject(project).snap.Load()
}

// Generation counts snapshot swaps since start.
func (s *Store) Generation() uint64 { return s.generation.Load() }

func (s *Store) sourcesFor(project string) configs.Sources {
	src := s.base
	src.ProjectDir = project
	return src
}

func (s *Store) addProject(project string) *projectState {
	refs := s.sourcesFor(project).Files()
	s.mu.Lock()
	if p, ok := s.projects[project]; ok { // lost a race with another first event
		s.mu.Unlock()
		return p
	}
	p := &projectState{dir: project, refs: refs}
	for _, r := range refs {
		if _, ok := s.files[r.Path]; !ok {
			s.files[r.Path] = s.loadLocked(r, nil)
		}
	}
	snap := s.compileLocked(p)
	p.snap.Store(snap)
	p.gen.Store(s.generation.Add(1))
	p.at.Store(time.Now().UnixNano())
	s.projects[project] = p
	s.mu.Unlock()
	s.log.Info("project loaded", zap.String("project", project), zap.String("revision", snap.Revision),
		zap.Int("files", len(snap.Files)))
	if s.onNewProject != nil {
		s.onNewProject(project, refs)
	}
	return p
}

// loadLocked reads one file and returns its new state, keeping prev's last good
// version if the file is now invalid.
func (s *Store) loadLocked(ref configs.FileRef, prev *fileState) *fileState {
	st := &fileState{ref: ref, loadedAt: time.Now()}
	if prev != nil {
		st.good = prev.good
	}
	f, err := configs.LoadFile(ref, s.base.Home)
	switch {
	case err == nil:
		st.good, st.hash = f, f.Hash
		for _, w := range f.Warnings {
			s.log.Warn("settings warning", zap.String("file", ref.Path), zap.String("warning", w.String()))
		}
	case errors.Is(err, fs.ErrNotExist):
		st.good, st.absent = nil, true
	default:
		st.err = err
		if prev != nil && prev.err != nil && prev.err.Error() == err.Error() {
			break // already reported
		}
		keep := "no previous version"
		if st.good != nil {
			keep = "keeping last good version " + short(st.good.Hash)
		}
		s.log.Error("invalid settings file", zap.String("file", ref.Path), zap.Error(err), zap.String("action", keep))
	}
	return st
}

func (s *Store) compileLocked(p *projectState) *configs.Snapshot {
	files := make([]*configs.File, 0, len(p.refs))
	for _, r := range p.refs {
		if st := s.files[r.Path]; st != nil && st.good != nil {
			files = append(files, st.good)
		}
	}
	return configs.Compile(files)
}

// Reload re-reads the given files (all known files when paths is empty) and swaps in new
// snapshots for the projects whose compiled settings changed. It returns the number of
// projects whose snapshot was swapped.
func (s *Store) Reload(paths ...string) int {
	type swap struct {
		project  string
		old, new *configs.Snapshot
	}
	var swaps []swap
	s.mu.Lock()
	if len(paths) == 0 {
		for p := range s.files {
			paths = append(paths, p)
		}
	}
	changed := map[string]bool{}
	for _, path := range paths {
		prev, ok := s.files[path]
		if !ok {
			continue
		}
		st := s.loadLocked(prev.ref, prev)
		s.files[path] = st
		if goodHash(prev) != goodHash(st) {
			changed[path] = true
		}
	}
	if len(changed) > 0 {
		for _, p := range s.projects {
			if !usesAny(p, changed) {
				continue
			}
			old := p.snap.Load()
			snap := s.compileLocked(p)
			if snap.Revision == old.Revision {
				continue
			}
			p.snap.Store(snap)
			p.gen.Store(s.generation.Add(1))
			p.at.Store(time.Now().UnixNano())
			swaps = append(swaps, swap{p.dir, old, snap})
		}
	}
	s.mu.Unlock()
	for _, sw := range swaps {
		s.log.Info("settings reloaded", zap.String("project", sw.project),
			zap.String("old_revision", short(sw.old.Revision)), zap.String("revision", short(sw.new.Revision)),
			zap.Strings("changes", DiffSnapshots(sw.old, sw.new)))
		if s.onSwap != nil {
			s.onSwap(sw.project, sw.old, sw.new)
		}
	}
	return len(swaps)
}

func goodHash(st *fileState) string {
	if st == nil || st.good == nil {
		return ""
	}
	return st.good.Hash
}

func usesAny(p *projectState, paths map[string]bool) bool {
	for _, r := range p.refs {
		if paths[r.Path] {
			return true
		}
	}
	return false
}

// KnownFiles returns every settings file the store reads, sorted.
func (s *Store) KnownFiles() []configs.FileRef {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]configs.FileRef, 0, len(s.files))
	for _, st := range s.files {
		out = append(out, st.ref)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// SourceStatus describes one settings file for `hookd status`.
type SourceStatus struct {
	Path     string    `json:"path"`
	Source   string    `json:"source"`
	State    string    `json:"state"` // loaded | absent | invalid
	Revision string    `json:"revision,omitempty"`
	LoadedAt time.Time `json:"loaded_at"`
	Error    string    `json:"error,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
	// KeptRevision is the last good version still in force while the file is invalid.
	KeptRevision string `json:"kept_revision,omitempty"`
}

// ProjectStatus describes one project's snapshot.
type ProjectStatus struct {
	Dir         string    `json:"dir"`
	Revision    string    `json:"revision"`
	Generation  uint64    `json:"generation"`
	SwappedAt   time.Time `json:"swapped_at"`
	Handlers    int       `json:"handlers"`
	NotRunnable []string  `json:"not_runnable,omitempty"`
}

// Status reports every file and project.
func (s *Store) Status() ([]SourceStatus, []ProjectStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var files []SourceStatus
	for _, st := range s.files {
		fs := SourceStatus{Path: st.ref.Path, Source: string(st.ref.Origin), LoadedAt: st.loadedAt}
		if fs.Source == "" {
			fs.Source = string(st.ref.Kind)
		}
		switch {
		case st.err != nil:
			fs.State, fs.Error = "invalid", st.err.Error()
			if st.good != nil {
				fs.KeptRevision = st.good.Hash
			}
		case st.absent:
			fs.State = "absent"
		default:
			fs.State = "loaded"
		}
		if st.good != nil {
			fs.Revision = st.good.Hash
			for _, w := range st.good.Warnings {
				fs.Warnings = append(fs.Warnings, w.String())
			}
		}
		files = append(files, fs)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	var projects []ProjectStatus
	for _, p := range s.projects {
		snap := p.snap.Load()
		ps := ProjectStatus{Dir: p.dir, Revision: snap.Revision, Generation: p.gen.Load(),
			SwappedAt: time.Unix(0, p.at.Load())}
		for _, f := range snap.Files {
			for _, h := range f.Handlers {
				ps.Handlers++
				if !h.Runnable {
					ps.NotRunnable = append(ps.NotRunnable, h.ID+" ("+string(h.Type)+")")
				}
			}
		}
		projects = append(projects, ps)
	}
	sort.Slice(projects, func(i, j int) bool { return projects[i].Dir < projects[j].Dir })
	return files, projects
}

// ProjectGeneration returns the generation of project's current snapshot (0 if unknown).
func (s *Store) ProjectGeneration(project string) uint64 {
	s.mu.Lock()
	p, ok := s.projects[project]
	s.mu.Unlock()
	if !ok {
		return 0
	}
	return p.gen.Load()
}

// DiffSnapshots summarises what changed between two snapshots, per event:
// "PreToolUse: +1 -0 ~1".
func DiffSnapshots(old, new *configs.Snapshot) []string {
	index := func(s *configs.Snapshot) map[string]map[string]string {
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
			out = append(out, e+": +"+itoa(add)+" -"+itoa(del)+" ~"+itoa(chg))
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
