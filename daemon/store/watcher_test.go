package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/hookd/hookd/test/testutil"
)

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, what, cond)
}

func (w *world) watch(t *testing.T, opt WatchOptions) *Watcher {
	t.Helper()
	wt := StartWatcher(context.Background(), w.store, opt)
	t.Cleanup(func() { wt.Close() })
	// The start-up reload (the files read before the watches existed) must not sweep up
	// the test's first edit.
	eventually(t, "the start-up reload", func() bool { return wt.reloads.Load() > 0 && !wt.busy() })
	return wt
}

func (w *world) waitCommands(t *testing.T, want ...string) {
	t.Helper()
	eventually(t, fmt.Sprint(want), func() bool { return slices.Equal(w.commands(), want) })
}

func TestWatcherFollowsEdits(t *testing.T) {
	w := newWorld(t)
	w.write("project", hooksFile("p1"))
	w.commands()
	w.watch(t, WatchOptions{})
	w.write("project", hooksFile("p2"))
	w.waitCommands(t, "project:p2")
	w.write("user", hooksFile("u1"))
	w.waitCommands(t, "user:u1", "project:p2")
	if s := w.state("project"); s.Watch == nil || s.Watch.Mode != "watching" || s.Watch.Detail != filepath.Join(w.proj, ".claude") {
		t.Errorf("project watch = %+v", s.Watch)
	}
}

// TestWatcherPollsWhenAWatchCannotBeAdded: a full inotify table makes the watcher poll
// that directory's files, and status says so.
func TestWatcherPollsWhenAWatchCannotBeAdded(t *testing.T) {
	w := newWorld(t)
	w.write("project", hooksFile("p1"))
	w.commands()
	claudeDir := filepath.Join(w.proj, ".claude")
	wt := w.watch(t, WatchOptions{PollInterval: 10 * time.Millisecond, addWatch: func(fw *fsnotify.Watcher, dir string) error {
		if dir == claudeDir {
			return fmt.Errorf("inotify_add_watch: %w", syscall.ENOSPC)
		}
		return fw.Add(dir)
	}})
	s := w.state("project")
	if s.Watch == nil || s.Watch.Mode != "polling" || !strings.Contains(s.Watch.Detail, "inotify watch limit") {
		t.Fatalf("project watch = %+v, want polling because of the inotify limit", s.Watch)
	}
	st := wt.Status()
	if len(st.Polling) < 2 || st.Backend != "fsnotify" || slices.Contains(st.Dirs, claudeDir) {
		t.Errorf("watcher status = %+v, want the project's files polled", st)
	}
	for _, p := range st.Polling {
		if !strings.HasPrefix(p, claudeDir+"/") {
			t.Errorf("%s is polled; only %s's files should be", p, claudeDir)
		}
	}
	w.write("project", hooksFile("p2"))
	w.waitCommands(t, "project:p2")
	w.write("local", hooksFile("l1"))
	w.waitCommands(t, "project:p2", "local:l1")
	// The user dir is still watched.
	if s := w.state("user"); s.Watch == nil || s.Watch.Mode != "watching" {
		t.Errorf("user watch = %+v", s.Watch)
	}
}

// TestWatcherCoalescesBursts: a burst of writes is a handful of reloads, and the last
// content wins.
func TestWatcherCoalescesBursts(t *testing.T) {
	w := newWorld(t)
	w.write("project", hooksFile("p0"))
	w.commands()
	const debounce = 100 * time.Millisecond
	wt := w.watch(t, WatchOptions{Debounce: debounce})
	before := wt.reloads.Load()
	start := time.Now()
	for i := 1; i <= 50; i++ {
		w.write("project", hooksFile(fmt.Sprintf("p%d", i)))
	}
	// The bound follows from the throttle, not from this machine's speed: every reload
	// window is at least one debounce long, so a burst that took elapsed can cause at
	// most elapsed/debounce reloads, plus the one that catches its tail.
	elapsed := time.Since(start)
	w.waitCommands(t, "project:p50")
	limit := uint64(elapsed/debounce) + 2
	if n := wt.reloads.Load() - before; n > limit {
		t.Errorf("50 writes in %v caused %d reloads; a %v debounce allows at most %d", elapsed, n, debounce, limit)
	}
}

// TestWatcherIgnoresUnrelatedChurn: Claude Code writes ~/.claude constantly; those
// events must not reload anything.
func TestWatcherIgnoresUnrelatedChurn(t *testing.T) {
	w := newWorld(t)
	w.write("project", hooksFile("p1"))
	w.commands()
	wt := w.watch(t, WatchOptions{})
	events, reloads := wt.events.Load(), wt.reloads.Load()
	for i := 0; i < 20; i++ {
		for _, p := range []string{filepath.Join(w.user, "history.jsonl"), filepath.Join(w.user, "settings.json.lock"),
			filepath.Join(w.proj, ".claude", "notes.md"), filepath.Join(w.proj, "main.go")} {
			if err := os.WriteFile(p, []byte(fmt.Sprint(i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A relevant edit last: once it is applied, every earlier event has been handled.
	w.write("project", hooksFile("p2"))
	w.waitCommands(t, "project:p2")
	eventually(t, "the watcher idle", func() bool { return !wt.busy() })
	if n := wt.reloads.Load() - reloads; n != 1 {
		t.Errorf("%d reloads, want 1 (only the settings edit)", n)
	}
	if n := wt.events.Load() - events; n == 0 || n > 4 {
		t.Errorf("%d relevant events counted, want the settings edit's few", n)
	}
}

func TestWatcherStopsItsGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	w := newWorld(t)
	w.write("project", hooksFile("p1"))
	w.commands()
	wt := StartWatcher(context.Background(), w.store, WatchOptions{PollInterval: time.Millisecond, addWatch: func(fw *fsnotify.Watcher, dir string) error {
		if strings.HasSuffix(dir, ".claude") {
			return syscall.EMFILE // some files polled, so the poll ticker runs too
		}
		return fw.Add(dir)
	}})
	w.write("project", hooksFile("p2"))
	w.waitCommands(t, "project:p2")
	if err := wt.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "goroutines to stop", func() bool { return runtime.NumGoroutine() <= before })
}

func TestWatcherFollowsAMovedDirectory(t *testing.T) {
	// `mv .claude .claude.old && mkdir .claude`: the watch must move to the new directory,
	// not follow the old inode.
	w := newWorld(t)
	w.write("project", hooksFile("p1"))
	w.commands()
	w.watch(t, WatchOptions{})
	dir := filepath.Join(w.proj, ".claude")
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	w.waitCommands(t)
	w.write("project", hooksFile("p2"))
	w.waitCommands(t, "project:p2")
	if err := os.WriteFile(filepath.Join(dir+".old", "settings.json"), []byte(hooksFile("old")), 0o644); err != nil {
		t.Fatal(err)
	}
	w.write("project", hooksFile("p3"))
	w.waitCommands(t, "project:p3")
}

// TestWatcherOverflowReloadsEverything: when the kernel queue overflows, events were lost,
// so every file is read again at once, although no event said anything changed.
func TestWatcherOverflowReloadsEverything(t *testing.T) {
	w := newWorld(t)
	w.write("user", hooksFile("u1"))
	w.write("project", hooksFile("p1"))
	w.commands()
	errs := make(chan error)
	wt := w.watch(t, WatchOptions{errs: errs}) // waits until the start-up reload is done
	reloads := wt.reloads.Load()
	errs <- fmt.Errorf("reading events: %w", fsnotify.ErrEventOverflow)
	eventually(t, "the overflow reload", func() bool {
		lr := w.store.LastReload()
		return lr != nil && lr.Trigger == "overflow" && !wt.busy()
	})
	if lr := w.store.LastReload(); lr.FilesRead < len(w.store.KnownFiles()) {
		t.Errorf("overflow reload read %d files, want every known file (%d)", lr.FilesRead, len(w.store.KnownFiles()))
	}
	if st := wt.Status(); st.Overflows != 1 || wt.reloads.Load() != reloads+1 {
		t.Errorf("overflows = %d, reloads %d → %d", st.Overflows, reloads, wt.reloads.Load())
	}
	// A change the lost events would have announced is applied by it.
	w.write("project", hooksFile("p2"))
	errs <- fmt.Errorf("reading events: %w", fsnotify.ErrEventOverflow)
	w.waitCommands(t, "user:u1", "project:p2")
}

// TestWatcherDescriptorBudget runs the kqueue descriptor budget on Linux with kqueue's
// cost (watchcost_kqueue.go: one descriptor for the directory and one per entry): the
// directories that fit are watched, the next one — here the project's .claude, made
// large — is polled with the reason in status, and its changes still reload.
func TestWatcherDescriptorBudget(t *testing.T) {
	w := newWorld(t)
	w.write("project", hooksFile("p1"))
	w.commands()
	claudeDir := filepath.Join(w.proj, ".claude")
	for i := 0; i < 40; i++ { // a busy .claude: 40 more entries
		if err := os.WriteFile(filepath.Join(claudeDir, fmt.Sprintf("junk-%d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kqueueCost := func(dir string) int {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return 1
		}
		return 1 + len(ents)
	}
	wt := w.watch(t, WatchOptions{PollInterval: 10 * time.Millisecond, MaxDescriptors: 30, cost: kqueueCost})
	st := wt.Status()
	if st.MaxDescriptors != 30 || st.Descriptors == 0 || st.Descriptors > 30 {
		t.Fatalf("status descriptors %d of %d, want some of 30", st.Descriptors, st.MaxDescriptors)
	}
	if slices.Contains(st.Dirs, claudeDir) {
		t.Fatalf("%s (%d descriptors) is watched within a budget of 30: %v", claudeDir, kqueueCost(claudeDir), st.Dirs)
	}
	s := w.state("project")
	if s.Watch == nil || s.Watch.Mode != "polling" || !strings.Contains(s.Watch.Detail, "descriptor budget") {
		t.Fatalf("project watch = %+v, want polling because of the descriptor budget", s.Watch)
	}
	if u := w.state("user"); u.Watch == nil || u.Watch.Mode != "watching" {
		t.Errorf("user watch = %+v, want watching (it fits)", u.Watch)
	}
	w.write("project", hooksFile("p2"))
	w.waitCommands(t, "project:p2")
}
