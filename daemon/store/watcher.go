package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hookd/hookd/protocol"
	"go.uber.org/zap"
	"strconv"
)

// Default watcher timings. The debounce is a throttle: the first event schedules a reload
// DefaultDebounce later and everything that arrives meanwhile joins it, so an editor's
// save (truncate + write, or write temp + rename) is one reload and a stream of edits
// still reloads at least every DefaultDebounce + reload time.
const (
	DefaultDebounce     = 30 * time.Millisecond
	DefaultPollInterval = 500 * time.Millisecond
)

// WatchOptions configure a Watcher.
type WatchOptions struct {
	Logger       *zap.Logger
	Debounce     time.Duration // default DefaultDebounce
	PollInterval time.Duration // for files that cannot be watched; default DefaultPollInterval
	// Signals, if set, reloads every file on each value received (hookd serve passes
	// SIGHUP here).
	Signals <-chan os.Signal
	// MaxDescriptors bounds the file descriptors the watches may hold where each costs
	// some (kqueue: watchCost); a directory that would cross it is polled instead.
	// Default DefaultMaxWatchDescriptors; ignored where watches cost none (inotify).
	MaxDescriptors int
	// addWatch replaces fsnotify's Add: tests simulate a full inotify table with it.
	addWatch func(fw *fsnotify.Watcher, dir string) error
	// cost replaces watchCost: tests run the kqueue budget on Linux with it.
	cost func(dir string) int
	// errs, if set, is read like fsnotify's error channel (tests inject an overflow).
	errs chan error
}

// Watcher follows the settings files of a Store with fsnotify and reloads the store when
// they change (issue #4, STYLE §7).
//
// It watches directories, not files — editors save by renaming a new file over the old
// one, which a file watch would lose — and filters events by name: the tracked files'
// base names, any *.json in managed-settings.d, and names starting with ".." (a
// Kubernetes ConfigMap swaps its "..data" symlink; the settings file itself never
// changes). A tracked file that is a symlink also has its target's directory watched. A
// directory that does not exist yet is covered by a watch on its nearest existing
// ancestor, so a project's first .claude/ or a new managed dir is noticed; after every
// reload the watch set is recomputed. A directory that cannot be watched (inotify limit,
// permissions) has its files polled instead, and status says so. A queue overflow
// reloads everything.
//
// One goroutine owns all of the watcher's state; reloads run on a second goroutine (one at
// a time) so events keep being read while hooks of a ConfigChange event run.
type Watcher struct {
	store *Store
	log   *zap.Logger
	opt   WatchOptions
	fw    *fsnotify.Watcher // nil: fsnotify could not start, everything is polled
	fwErr error

	resync chan struct{}
	done   chan protocol.ReloadSummary
	cancel context.CancelFunc
	wg     sync.WaitGroup

	events, overflows, reloads atomic.Uint64
	status                     atomic.Pointer[protocol.WatcherStatus]
	busyFlag                   atomic.Bool // a reload is scheduled or running

	// Owned by the run goroutine.
	dirs       map[string]*dirWatch
	polls      map[string]*polledFile
	dirty      map[string]bool
	dirtyAll   bool
	why        string // trigger of the next reload: watch, overflow, signal
	firstDirty time.Time
	timer      *time.Timer
	armed      bool
	running    bool
}

// dirWatch is one watched directory and what its entries mean.
type dirWatch struct {
	names   map[string][]string // entry name → tracked paths to reload when it changes
	paths   []string            // every tracked path routed through the directory
	anyJSON bool                // managed-settings.d: any *.json entry matters
}

// polledFile is a file followed by polling: its fingerprint at the last look.
type polledFile struct {
	why string
	fp  string
}

// StartWatcher starts watching store's settings files until ctx is done or Close is
// called. It never fails: what cannot be watched is polled.
func StartWatcher(ctx context.Context, store *Store, opt WatchOptions) *Watcher {
	if opt.Logger == nil {
		opt.Logger = zap.NewNop()
	}
	if opt.Debounce <= 0 {
		opt.Debounce = DefaultDebounce
	}
	if opt.PollInterval <= 0 {
		opt.PollInterval = DefaultPollInterval
	}
	if opt.addWatch == nil {
		opt.addWatch = func(fw *fsnotify.Watcher, dir string) error { return fw.Add(dir) }
	}
	if opt.cost == nil {
		opt.cost = watchCost
	}
	if opt.MaxDescriptors <= 0 {
		opt.MaxDescriptors = DefaultMaxWatchDescriptors
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{
		store: store, log: opt.Logger, opt: opt, cancel: cancel,
		resync: make(chan struct{}, 1), done: make(chan protocol.ReloadSummary, 1),
		dirs: map[string]*dirWatch{}, polls: map[string]*polledFile{}, dirty: map[string]bool{},
	}
	w.fw, w.fwErr = fsnotify.NewWatcher()
	if w.fwErr != nil {
		w.log.Error("fsnotify unavailable; polling every settings file", zap.Error(w.fwErr),
			zap.Duration("interval", opt.PollInterval))
	}
	w.timer = time.NewTimer(time.Hour)
	w.timer.Stop()
	// A new project's files get watches; evicted projects' watches are dropped.
	store.attachWatcher(func(string) { w.Resync() }, func([]string) { w.Resync() }, w.Status)
	w.sync()
	w.wg.Add(1)
	go w.run(ctx)
	return w
}

// Close stops the watcher and waits for its goroutines (an in-flight reload is cancelled).
func (w *Watcher) Close() error {
	w.cancel()
	w.wg.Wait()
	if w.fw != nil {
		return w.fw.Close()
	}
	return nil
}

// Resync asks the watcher to recompute its watch set (a project was loaded). It does not
// block.
func (w *Watcher) Resync() {
	select {
	case w.resync <- struct{}{}:
	default:
	}
}

// Reload re-reads every settings file now (SIGHUP, `hookd reload`) and re-checks the
// watches. It returns when the reload is done.
func (w *Watcher) Reload(ctx context.Context, why string) protocol.ReloadSummary {
	sum := w.store.Reload(ctx, why)
	w.reloads.Add(1)
	w.Resync()
	return sum
}

func (w *Watcher) busy() bool { return w.busyFlag.Load() }

// Status reports the watcher's state.
func (w *Watcher) Status() *protocol.WatcherStatus {
	st := *w.status.Load()
	st.Events, st.Overflows, st.Reloads = w.events.Load(), w.overflows.Load(), w.reloads.Load()
	st.Pending = w.busyFlag.Load()
	return &st
}

func (w *Watcher) run(ctx context.Context) {
	defer w.wg.Done()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.fw != nil {
		events, errs = w.fw.Events, w.fw.Errors
	}
	var ticker *time.Ticker
	var tick <-chan time.Time
	// Idle projects are evicted by a sweep at a quarter of the idle time (issue 13,
	// defect 7), between 100 ms and a minute.
	var sweep <-chan time.Time
	if _, idle := w.store.ProjectLimits(); idle > 0 {
		t := time.NewTicker(min(max(idle/4, 100*time.Millisecond), time.Minute))
		defer t.Stop()
		sweep = t.C
	}
	defer func() {
		w.timer.Stop()
		if ticker != nil {
			ticker.Stop()
		}
	}()
	w.kick(false) // the files read before the watches existed
	for {
		w.busyFlag.Store(w.armed || w.running)
		// Poll only while some file needs it.
		if len(w.polls) > 0 && ticker == nil {
			ticker = time.NewTicker(w.opt.PollInterval)
			tick = ticker.C
		} else if len(w.polls) == 0 && ticker != nil {
			ticker.Stop()
			ticker, tick = nil, nil
		}
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			w.onEvent(ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.onError(err)
		case err := <-w.opt.errs:
			w.onError(err)
		case <-w.opt.Signals:
			w.log.Info("reload requested by signal")
			w.dirtyAll, w.why = true, "signal"
			w.markTime()
			w.kick(true)
		case <-w.resync:
			w.sync()
			w.kick(false)
		case <-tick:
			w.pollFiles()
			w.kick(false)
		case now := <-sweep:
			w.store.Sweep(now) // its OnEvict callback asks for a resync
		case <-w.timer.C:
			w.armed = false
			w.startReload(ctx)
		case sum := <-w.done:
			w.running = false
			if len(sum.Changed)+len(sum.Refused)+len(sum.Errors) > 0 || sum.Trigger != "watch" {
				w.log.Info("reload", zap.String("trigger", sum.Trigger), zap.Int("files_read", sum.FilesRead), zap.Strings("changed", sum.Changed),
					zap.Int("projects_swapped", sum.Swapped), zap.Uint64("generation", sum.Generation),
					zap.Strings("errors", sum.Errors), zap.Strings("refused", sum.Refused), zap.String("took", sum.Took))
			}
			// Symlinks may point elsewhere now, directories may have appeared.
			w.sync()
			w.kick(false)
		}
	}
}

// onError handles an error from fsnotify. An overflow means events were lost: anything may
// have changed, so every file is re-read at once.
func (w *Watcher) onError(err error) {
	if !errors.Is(err, fsnotify.ErrEventOverflow) {
		w.log.Error("watcher error", zap.Error(err))
		return
	}
	w.overflows.Add(1)
	w.log.Warn("file-system event queue overflowed; reloading every settings file")
	w.dirtyAll, w.why = true, "overflow"
	w.markTime()
	w.sync()
	w.kick(true)
}

// onEvent routes one fsnotify event to the tracked files it concerns.
func (w *Watcher) onEvent(ev fsnotify.Event) {
	var hit, resync bool
	if dw, ok := w.dirs[ev.Name]; ok && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		// A watched directory itself went away (its watch is gone with it).
		w.markDirty(dw.paths...)
		hit, resync = true, true
	} else if ok && ev.Has(fsnotify.Chmod) {
		// Its owner or mode changed: the managed files' trust (settings.CheckManaged)
		// depends on it.
		w.markDirty(dw.paths...)
		hit = true
	}
	dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	if dw := w.dirs[dir]; dw != nil {
		if ps := dw.names[name]; len(ps) > 0 {
			w.markDirty(ps...)
			hit = true
			resync = resync || !ev.Has(fsnotify.Write) // created, removed, renamed: the set may change
		}
		if strings.HasPrefix(name, "..") {
			// A ConfigMap-style swap of a "..data" symlink: every file here may now
			// resolve elsewhere.
			w.markDirty(dw.paths...)
			hit, resync = true, true
		}
		if dw.anyJSON && strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".") {
			w.markDirty(ev.Name) // a drop-in; the store lists managed-settings.d again
			hit = true
		}
	}
	if !hit {
		return // unrelated churn (Claude Code writes ~/.claude/projects, history, ... constantly)
	}
	w.events.Add(1)
	if resync {
		w.sync()
	}
	w.kick(false)
}

func (w *Watcher) markDirty(paths ...string) {
	if len(paths) == 0 {
		return
	}
	w.markTime()
	for _, p := range paths {
		w.dirty[p] = true
	}
}

func (w *Watcher) markTime() {
	if w.firstDirty.IsZero() {
		w.firstDirty = time.Now()
	}
}

// kick schedules a reload of the dirty files: DefaultDebounce after the first of them
// was marked, or at once when now is set (overflow). While a reload runs, nothing is
// scheduled; its completion schedules the next one.
func (w *Watcher) kick(now bool) {
	if len(w.dirty) == 0 && !w.dirtyAll || w.running {
		return
	}
	delay := time.Until(w.firstDirty.Add(w.opt.Debounce))
	if now || delay < 0 {
		delay = 0
	}
	if w.armed && !now {
		return
	}
	w.timer.Reset(delay)
	w.armed = true
}

// startReload hands the dirty set to a reload goroutine.
func (w *Watcher) startReload(ctx context.Context) {
	if len(w.dirty) == 0 && !w.dirtyAll {
		return
	}
	var paths []string
	if !w.dirtyAll {
		paths = make([]string, 0, len(w.dirty))
		for p := range w.dirty {
			paths = append(paths, p)
		}
	}
	why := w.why
	if why == "" {
		why = "watch"
	}
	w.dirty, w.dirtyAll, w.why, w.firstDirty = map[string]bool{}, false, "", time.Time{}
	w.running = true
	w.reloads.Add(1)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.done <- w.store.Reload(ctx, why, paths...)
	}()
}

// sync recomputes the watch set from the store's files and applies it: new directories
// are watched (and their files reloaded, in case they changed before the watch existed),
// directories no longer needed are dropped, and files whose directory cannot be watched
// are polled.
func (w *Watcher) sync() {
	want, routes := w.plan()
	live := map[string]bool{}
	if w.fw != nil {
		for _, d := range w.fw.WatchList() {
			live[d] = true
		}
	}
	info := map[string]protocol.WatchInfo{}
	polling := map[string]string{}
	var dirs []string
	// Where a watch costs descriptors (kqueue: one for the directory and one per entry
	// in it), they are handed out in a fixed order — the watches already live first,
	// then by path — until MaxDescriptors; a directory beyond is polled.
	order := make([]string, 0, len(want))
	for dir := range want {
		order = append(order, dir)
	}
	sort.Slice(order, func(i, j int) bool {
		if live[order[i]] != live[order[j]] {
			return live[order[i]]
		}
		return order[i] < order[j]
	})
	used := 0
	for _, dir := range order {
		dw := want[dir]
		var err error
		if w.fw != nil {
			if c := w.opt.cost(dir); c > 0 && used+c > w.opt.MaxDescriptors {
				err = &budgetError{dir: dir, cost: c, used: used, max: w.opt.MaxDescriptors}
				if live[dir] {
					_ = w.fw.Remove(dir)
				}
			} else {
				used += c
			}
		}
		switch {
		case err != nil:
		case w.fw == nil:
			err = w.fwErr
		case !live[dir]:
			if err = w.opt.addWatch(w.fw, dir); err == nil {
				w.log.Debug("watching", zap.String("dir", dir))
				w.markDirty(dw.paths...) // it may have changed before the watch existed
			}
		}
		if err == nil {
			dirs = append(dirs, dir)
			continue
		}
		why := "cannot watch " + dir + ": " + describeWatchErr(err)
		for _, p := range dw.paths {
			polling[p] = why
		}
		if w.fw != nil && !w.pollingAll(dw.paths) {
			w.log.Warn("cannot watch settings directory; polling its files", zap.String("dir", dir),
				zap.Error(err), zap.Duration("interval", w.opt.PollInterval))
		}
	}
	if w.fw != nil {
		for d := range live {
			if _, ok := want[d]; !ok {
				_ = w.fw.Remove(d)
			}
		}
	}
	w.dirs = want
	// Polled files: keep the fingerprints of those still polled, start the new ones.
	for p := range w.polls {
		if _, ok := polling[p]; !ok {
			delete(w.polls, p)
		}
	}
	for p, why := range polling {
		if pl, ok := w.polls[p]; ok {
			pl.why = why
			continue
		}
		w.polls[p] = &polledFile{why: why, fp: statFingerprint(p)}
		w.markDirty(p)
	}
	var polled []string
	for p, r := range routes {
		if why, ok := polling[p]; ok {
			info[p] = protocol.WatchInfo{Mode: "polling", Detail: why}
			polled = append(polled, p+" ("+why+")")
			continue
		}
		info[p] = protocol.WatchInfo{Mode: "watching", Detail: r}
	}
	sort.Strings(dirs)
	sort.Strings(polled)
	backend := "fsnotify"
	if w.fw == nil {
		backend = "polling"
	}
	st := &protocol.WatcherStatus{Backend: backend, Debounce: w.opt.Debounce.String(), Dirs: dirs, Polling: polled}
	if used > 0 {
		st.Descriptors, st.MaxDescriptors = used, w.opt.MaxDescriptors
	}
	w.status.Store(st)
	w.store.setWatchInfo(info)
}

func (w *Watcher) pollingAll(paths []string) bool {
	for _, p := range paths {
		if _, ok := w.polls[p]; !ok {
			return false
		}
	}
	return len(paths) > 0
}

// plan computes the directories to watch: for every tracked file its directory (or, while
// that does not exist, its nearest existing ancestor), its symlink target's directory,
// and managed-settings.d. routes describes, per file, the directories that cover it.
func (w *Watcher) plan() (map[string]*dirWatch, map[string]string) {
	want := map[string]*dirWatch{}
	routes := map[string]string{}
	route := func(path, dir, name string) string {
		for !isDir(dir) {
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir, name = parent, filepath.Base(dir)
		}
		dw := want[dir]
		if dw == nil {
			dw = &dirWatch{names: map[string][]string{}}
			want[dir] = dw
		}
		if !contains(dw.names[name], path) {
			dw.names[name] = append(dw.names[name], path)
		}
		if !contains(dw.paths, path) {
			dw.paths = append(dw.paths, path)
		}
		return dir
	}
	seen := map[string]bool{}
	base := w.store.Base()
	files := append(base.Files(), w.store.KnownFiles()...)
	for _, f := range files {
		p := f.Path
		if seen[p] {
			continue
		}
		seen[p] = true
		d := route(p, filepath.Dir(p), filepath.Base(p))
		desc := d
		if d != filepath.Dir(p) {
			desc = d + " (until " + filepath.Dir(p) + " exists)"
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if t, err := filepath.EvalSymlinks(p); err == nil && filepath.Dir(t) != filepath.Dir(p) {
				desc += " and " + route(p, filepath.Dir(t), filepath.Base(t)) + " (symlink target)"
			}
		}
		routes[p] = desc
	}
	// managed-settings.d: any drop-in may appear. The directory itself is the marker the
	// store ignores (it lists the directory on every reload anyway).
	dropIns := base.ManagedDropInDir()
	if d := route(dropIns, filepath.Dir(dropIns), filepath.Base(dropIns)); d == filepath.Dir(dropIns) && isDir(dropIns) {
		dw := want[dropIns]
		if dw == nil {
			dw = &dirWatch{names: map[string][]string{}}
			want[dropIns] = dw
		}
		dw.anyJSON = true
		if !contains(dw.paths, dropIns) {
			dw.paths = append(dw.paths, dropIns)
		}
	}
	return want, routes
}

// pollFiles compares each polled file's fingerprint with the last one.
func (w *Watcher) pollFiles() {
	for p, pl := range w.polls {
		if fp := statFingerprint(p); fp != pl.fp {
			pl.fp = fp
			w.markDirty(p)
		}
	}
}

// statFingerprint identifies a file's current version without reading it: inode, size,
// modification and change times (following symlinks; a retargeted link changes inode).
func statFingerprint(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "absent"
	}
	var ino, ctime int64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino, ctime = int64(st.Ino), ctimeNano(st)
	}
	return strings.Join([]string{strconv.Itoa(int(ino)), strconv.Itoa(int(fi.Size())), fi.ModTime().String(), strconv.Itoa(int(ctime))}, "|")
}

// budgetError: watching a directory would take more descriptors than are left.
type budgetError struct {
	dir             string
	cost, used, max int
}

func (e *budgetError) Error() string {
	return fmt.Sprintf("watching %s would take %d file descriptors (kqueue: one per entry), and %d of the watcher's %d are in use", e.dir, e.cost, e.used, e.max)
}

func describeWatchErr(err error) string {
	var be *budgetError
	switch {
	case errors.As(err, &be):
		return "descriptor budget: " + be.Error()
	case errors.Is(err, syscall.ENOSPC):
		return "inotify watch limit reached (fs.inotify.max_user_watches)"
	case errors.Is(err, syscall.EMFILE):
		return "inotify instance limit reached (fs.inotify.max_user_instances)"
	case errors.Is(err, os.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
