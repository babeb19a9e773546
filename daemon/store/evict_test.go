package store

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd/test/testutil"
)

// Issue 13, defect 7: projects were never evicted (20,000 project directories held
// 222 MB and 19,801 inotify watches). These tests drive the live-project cache.

// projects makes n project directories, each with a settings file whose Stop hook is
// "p<i>-v1", and returns their paths.
func (w *world) projects(n int) []string {
	w.t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		dir := filepath.Join(w.root, "projects", fmt.Sprintf("p%d", i))
		testutil.WriteAtomic(w.t, filepath.Join(dir, ".claude", "settings.json"), hooksFile(fmt.Sprintf("p%d-v1", i)))
		out = append(out, dir)
	}
	return out
}

func commandsOf(s *Store, project string) []string {
	var out []string
	for _, h := range s.Snapshot(project).Handlers() {
		out = append(out, h.Command)
	}
	return out
}

func knows(s *Store, path string) bool {
	for _, r := range s.KnownFiles() {
		if r.Path == path {
			return true
		}
	}
	return false
}

func TestStoreEvictsLeastRecentlyUsedAndReloadsFromDisk(t *testing.T) {
	var evicted []string
	w := newWorld(t, func(o *StoreOptions) {
		o.MaxProjects = 8
		o.OnEvict = func(ps []string) { evicted = append(evicted, ps...) }
	})
	w.write("user", hooksFile("u"))
	ps := w.projects(40)
	for i, p := range ps {
		if got := commandsOf(w.store, p); !slices.Equal(got, []string{"u", fmt.Sprintf("p%d-v1", i)}) {
			t.Fatalf("project %d: %v", i, got)
		}
		if n := w.store.LiveProjects(); n > 8 {
			t.Fatalf("after %d projects: %d live, limit 8", i+1, n)
		}
		// p0 is used with every new project: it is the most recently used, never evicted.
		commandsOf(w.store, ps[0])
		time.Sleep(110 * time.Millisecond / 10) // let touch's 100 ms granularity order some of them
	}
	if len(evicted) == 0 || w.store.Evictions() != uint64(len(evicted)) {
		t.Fatalf("evicted %v, counter %d", evicted, w.store.Evictions())
	}
	// An evicted project's own files are forgotten (no state, no watch); shared ones stay.
	victim := ps[1]
	if !slices.Contains(evicted, victim) {
		t.Fatalf("p1 was not evicted: %v", evicted)
	}
	own := filepath.Join(victim, ".claude", "settings.json")
	if knows(w.store, own) {
		t.Fatalf("the evicted project's file %s is still held", own)
	}
	if !knows(w.store, w.path("user")) {
		t.Fatal("the user settings file was dropped with an evicted project")
	}
	// Edited while evicted (nothing watches it): its next event sees the edit, and the
	// shared files too — never a stale snapshot, never "no hooks".
	testutil.WriteAtomic(t, own, hooksFile("p1-v2"))
	w.write("user", hooksFile("u2"))
	w.store.Reload(context.Background(), "test") // the user file is watched: this is the watcher's reload
	if got := commandsOf(w.store, victim); !slices.Equal(got, []string{"u2", "p1-v2"}) {
		t.Fatalf("evicted project after an edit: %v", got)
	}
	// A local file that appeared while evicted is read too.
	testutil.WriteAtomic(t, filepath.Join(ps[2], ".claude", "settings.local.json"), hooksFile("p2-local"))
	if got := commandsOf(w.store, ps[2]); !slices.Equal(got, []string{"u2", "p2-v1", "p2-local"}) {
		t.Fatalf("evicted project with a new local file: %v", got)
	}
	if n := w.store.LiveProjects(); n > 8 {
		t.Fatalf("%d live, limit 8", n)
	}
	_, projects := w.store.Status()
	if len(projects) > 8 {
		t.Fatalf("status lists %d projects", len(projects))
	}
}

func TestStoreSweepEvictsIdleProjectsButNotConfigChangeGuards(t *testing.T) {
	w := newWorld(t, func(o *StoreOptions) { o.IdleTimeout = time.Minute })
	ps := w.projects(3)
	guarded := ps[2]
	cc, _ := json.Marshal(map[string]any{"hooks": map[string]any{"ConfigChange": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "veto"}}}}}})
	testutil.WriteAtomic(t, filepath.Join(guarded, ".claude", "settings.json"), string(cc))
	for _, p := range ps {
		w.store.Snapshot(p)
	}
	now := time.Now()
	if ev := w.store.Sweep(now); len(ev) != 0 {
		t.Fatalf("swept fresh projects: %v", ev)
	}
	commandsOf(w.store, ps[1])
	// Two minutes later nothing was used: p0 and p1 go, the project with a ConfigChange
	// hook stays watched (an edit while it is evicted would skip its veto).
	ev := w.store.Sweep(now.Add(2 * time.Minute))
	if !slices.Equal(ev, []string{ps[0], ps[1]}) {
		t.Fatalf("swept %v", ev)
	}
	if w.store.LiveProjects() != 1 || !knows(w.store, filepath.Join(guarded, ".claude", "settings.json")) {
		t.Fatalf("live %d; guarded project files held: %v", w.store.LiveProjects(), knows(w.store, filepath.Join(guarded, ".claude", "settings.json")))
	}
}

// A reload that read project files before their projects were evicted must neither put
// an evicted project's file back (no live project reads it: it would keep a watch for
// nothing) nor overwrite the newer bytes a project loaded again after eviction read.
func TestStoreReloadDoesNotResurrectEvictedOrStaleFiles(t *testing.T) {
	w := newWorld(t, func(o *StoreOptions) { o.MaxProjects = 2 })
	ps := w.projects(4)
	own := func(i int) string { return filepath.Join(ps[i], ".claude", "settings.json") }
	w.store.Snapshot(ps[0])
	w.store.Snapshot(ps[1])

	// The reload of p0's and p1's files blocks inside its read of p0's, then reads p1's.
	entered, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	w.store.readFile = func(path string) ([]byte, error) {
		b, err := readCapped(path)
		if path == own(0) && first.CompareAndSwap(false, true) {
			close(entered)
			<-release
		}
		return b, err
	}
	testutil.WriteAtomic(t, own(0), hooksFile("p0-v2"))
	testutil.WriteAtomic(t, own(1), hooksFile("p1-v2"))
	done := make(chan struct{})
	go func() { defer close(done); w.store.Reload(context.Background(), "test", own(0), own(1)) }()
	<-entered

	w.store.Snapshot(ps[2]) // evicts p0
	w.store.Snapshot(ps[3]) // evicts p1
	if knows(w.store, own(0)) || knows(w.store, own(1)) {
		t.Fatal("evicted projects' files still held")
	}
	testutil.WriteAtomic(t, own(0), hooksFile("p0-v3"))
	if got := commandsOf(w.store, ps[0]); !slices.Equal(got, []string{"p0-v3"}) { // p0 comes back
		t.Fatalf("p0 loaded again after eviction: %v", got)
	}
	close(release)
	<-done
	if got := commandsOf(w.store, ps[0]); !slices.Equal(got, []string{"p0-v3"}) {
		t.Fatalf("a reload that started before the eviction put back older bytes: %v", got)
	}
	if knows(w.store, own(1)) {
		t.Fatal("a reload brought back the file of the evicted p1")
	}
}
