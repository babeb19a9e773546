package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/testutil"
)

// world is a scratch settings hierarchy with one project and a Store over it.
type world struct {
	t                               testing.TB
	root, managed, user, home, proj string
	store                           *Store
	logs                            *observer.ObservedLogs
}

// newWorld makes a scratch world and its store; opts adjust the store's options.
func newWorld(t testing.TB, opts ...func(*StoreOptions)) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, root: root, managed: filepath.Join(root, "managed"), home: filepath.Join(root, "home")}
	w.user = filepath.Join(w.home, ".claude")
	w.proj = filepath.Join(w.home, "proj")
	for _, d := range []string{w.managed, w.user, filepath.Join(w.proj, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	core, logs := observer.New(zap.DebugLevel)
	w.logs = logs
	o := StoreOptions{Logger: zap.New(core), Sources: settings.Sources{ManagedDir: w.managed, UserDir: w.user, Home: w.home}}
	for _, f := range opts {
		f(&o)
	}
	w.store = NewStore(o)
	return w
}

func (w *world) path(kind string) string {
	switch kind {
	case "managed":
		return filepath.Join(w.managed, "managed-settings.json")
	case "user":
		return filepath.Join(w.user, "settings.json")
	case "project":
		return filepath.Join(w.proj, ".claude", "settings.json")
	case "local":
		return filepath.Join(w.proj, ".claude", "settings.local.json")
	}
	if strings.HasPrefix(kind, "dropin:") {
		return filepath.Join(w.managed, "managed-settings.d", strings.TrimPrefix(kind, "dropin:"))
	}
	w.t.Fatalf("unknown kind %q", kind)
	return ""
}

// write replaces a file atomically; content "" deletes it.
func (w *world) write(kind, content string) {
	w.t.Helper()
	p := w.path(kind)
	if content == "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			w.t.Fatal(err)
		}
		return
	}
	testutil.WriteAtomic(w.t, p, content)
}

// commands lists the project's handlers as "<file kind>:<command>" in configuration order.
func (w *world) commands() []string {
	var out []string
	for _, h := range w.store.Snapshot(w.proj).Handlers() {
		out = append(out, string(h.Source)+":"+h.Command)
	}
	return out
}

func (w *world) state(kind string) protocol.SourceStatus {
	files, _ := w.store.Status()
	for _, f := range files {
		if f.Path == w.path(kind) {
			return f
		}
	}
	return protocol.SourceStatus{State: "unknown"}
}

// hooksFile is a settings file with one Stop handler per command.
// withBadRule adds permission rules to a settings file, one of which does not parse.
func withBadRule(file string) string {
	return strings.Replace(file, `{"hooks"`, `{"permissions":{"deny":["Bash(rm -rf /","Bash(curl *)"]},"hooks"`, 1)
}

func hooksFile(cmds ...string) string {
	var hs []any
	for _, c := range cmds {
		hs = append(hs, map[string]any{"type": "command", "command": c})
	}
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": hs}}}})
	return string(b)
}

func TestStoreLastGoodPerFile(t *testing.T) {
	w := newWorld(t)
	w.write("user", hooksFile("u1"))
	w.write("project", hooksFile("p1"))
	if got, want := w.commands(), []string{"user:u1", "project:p1"}; !slices.Equal(got, want) {
		t.Fatalf("initial: got %v, want %v", got, want)
	}
	steps := []struct {
		name   string
		kind   string
		write  string
		want   []string
		states map[string]string // kind → state
		swap   bool
		errIn  string // the pending error names this field
	}{
		{"bad JSON keeps the last good version", "project", `{"hooks": {`, []string{"user:u1", "project:p1"},
			map[string]string{"project": "invalid"}, false, "invalid JSON"},
		{"other files still apply", "user", hooksFile("u2"), []string{"user:u2", "project:p1"},
			map[string]string{"project": "invalid", "user": "loaded"}, true, ""},
		{"fixed", "project", hooksFile("p2"), []string{"user:u2", "project:p2"},
			map[string]string{"project": "loaded"}, true, ""},
		{"bad regex", "project", `{"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": [{"type": "command", "command": "x"}]}]}}`,
			[]string{"user:u2", "project:p2"}, map[string]string{"project": "invalid"}, false, "hooks.PreToolUse[0].matcher"},
		{"unknown handler type", "project", `{"hooks": {"Stop": [{"hooks": [{"type": "bogus", "command": "x"}]}]}}`,
			[]string{"user:u2", "project:p2"}, map[string]string{"project": "invalid"}, false, "hooks.Stop[0].hooks[0].type"},
		{"same content again: no swap", "project", hooksFile("p2"), []string{"user:u2", "project:p2"},
			map[string]string{"project": "loaded"}, false, ""},
		{"a bad permission rule costs only itself", "project", withBadRule(hooksFile("p2")),
			[]string{"user:u2", "project:p2"}, map[string]string{"project": "loaded"}, true, ""},
		{"deleted file removes its hooks", "project", "", []string{"user:u2"},
			map[string]string{"project": "absent"}, true, ""},
		{"recreated", "project", hooksFile("p3"), []string{"user:u2", "project:p3"},
			map[string]string{"project": "loaded"}, true, ""},
		{"a new local file", "local", hooksFile("l1"), []string{"user:u2", "project:p3", "local:l1"},
			map[string]string{"local": "loaded"}, true, ""},
	}
	for _, st := range steps {
		gen := w.store.Generation()
		w.write(st.kind, st.write)
		sum := w.store.Reload(context.Background(), "test")
		if got := w.commands(); !slices.Equal(got, st.want) {
			t.Fatalf("%s: got %v, want %v", st.name, got, st.want)
		}
		for k, want := range st.states {
			if got := w.state(k); got.State != want {
				t.Errorf("%s: %s state = %q, want %q (%+v)", st.name, k, got.State, want, got)
			}
		}
		if swapped := w.store.Generation() != gen; swapped != st.swap || (sum.Swapped > 0) != st.swap {
			t.Errorf("%s: swapped = %v (summary %d), want %v", st.name, swapped, sum.Swapped, st.swap)
		}
		if st.errIn != "" {
			if len(sum.Errors) != 1 || !strings.Contains(sum.Errors[0], st.errIn) || !strings.HasPrefix(sum.Errors[0], w.path(st.kind)) {
				t.Errorf("%s: errors = %v, want one naming %s and %q", st.name, sum.Errors, w.path(st.kind), st.errIn)
			}
			if s := w.state(st.kind); s.KeptRevision == "" || s.KeptRevision != s.Revision {
				t.Errorf("%s: kept revision %q, revision %q", st.name, s.KeptRevision, s.Revision)
			}
		} else if invalid := slices.Contains(slices.Collect(maps.Values(st.states)), "invalid"); invalid != (len(sum.Errors) > 0) {
			t.Errorf("%s: errors %v (the summary lists every file invalid now)", st.name, sum.Errors)
		}
	}
	if n := w.logs.FilterMessage("invalid settings file").FilterField(zap.String("field", "hooks.PreToolUse[0].matcher")).Len(); n != 1 {
		t.Errorf("the bad regex was logged %d times with its field, want once", n)
	}
}

func TestStoreRetriesAFileMidWrite(t *testing.T) {
	tests := []struct {
		name    string
		reads   []string // successive contents the reader sees ("" = the real file)
		wantErr bool
		wantN   int // reads of the project file
		want    []string
	}{
		{"completes within the retry window", []string{`{"hooks": {"St`, ""}, false, 2, []string{"project:p2"}},
		{"empty then complete (truncate, write)", []string{" ", " ", ""}, false, 3, []string{"project:p2"}},
		{"never completes", []string{"{", "{", "{", "{"}, true, 3, []string{"project:p1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.write("project", hooksFile("p1"))
			w.commands()
			w.write("project", hooksFile("p2"))
			var n atomic.Int32
			w.store.readFile = func(path string) ([]byte, error) {
				if path == w.path("project") {
					i := int(n.Add(1)) - 1
					if i < len(tc.reads) && tc.reads[i] != "" {
						return []byte(tc.reads[i]), nil
					}
				}
				return readCapped(path)
			}
			start := time.Now()
			sum := w.store.Reload(context.Background(), "test")
			if got := w.commands(); !slices.Equal(got, tc.want) {
				t.Errorf("hooks = %v, want %v", got, tc.want)
			}
			if (len(sum.Errors) > 0) != tc.wantErr {
				t.Errorf("errors = %v, want error %v", sum.Errors, tc.wantErr)
			}
			if int(n.Load()) != tc.wantN {
				t.Errorf("project file read %d times, want %d", n.Load(), tc.wantN)
			}
			if took := time.Since(start); tc.wantErr && took < 75*time.Millisecond {
				t.Errorf("gave up after %v; the retries should span 25+50 ms", took)
			}
			// No error is ever logged for a write that completed in time.
			if logged := w.logs.FilterMessage("invalid settings file").Len() > 0; logged != tc.wantErr {
				t.Errorf("invalid file logged = %v, want %v", logged, tc.wantErr)
			}
		})
	}
}

func TestStoreDoesNotRetryUnchangedInvalidFile(t *testing.T) {
	w := newWorld(t)
	w.write("project", "{")
	w.commands()
	var n atomic.Int32
	w.store.readFile = func(path string) ([]byte, error) {
		if path == w.path("project") {
			n.Add(1)
		}
		return readCapped(path)
	}
	// Reload waits only before reading a file again, so one read means no retry and no
	// wait; counting reads instead of timing the reload keeps the test independent of the
	// machine's speed (it used to assert < 20 ms, which -race on a busy machine broke).
	w.store.Reload(context.Background(), "test")
	if n.Load() != 1 {
		t.Errorf("an invalid file whose bytes did not change was read %d times", n.Load())
	}
}

func TestStoreConfigChangeVeto(t *testing.T) {
	var mu sync.Mutex
	var offered []SettingsChange
	refuse := map[string]bool{}
	veto := func(_ context.Context, cs []SettingsChange) map[string]protocol.Refusal {
		mu.Lock()
		defer mu.Unlock()
		offered = append(offered, cs...)
		out := map[string]protocol.Refusal{}
		for _, c := range cs {
			if refuse[c.Source] {
				out[c.Ref.Path] = protocol.Refusal{Reason: "frozen", Project: c.Projects[0]}
			}
		}
		return out
	}
	w := newWorld(t, func(o *StoreOptions) { o.Veto = veto })
	w.write("managed", hooksFile("m1"))
	w.write("user", hooksFile("u1"))
	w.write("project", hooksFile("p1"))
	w.commands()
	if len(offered) != 0 {
		t.Fatalf("veto offered changes at first load: %+v", offered)
	}

	steps := []struct {
		name      string
		kind      string
		content   string
		refuse    string // ConfigChange source the veto refuses
		want      []string
		wantState string
		offer     []string // "source deleted?" of the changes offered
	}{
		{"refused project change keeps the previous version", "project", hooksFile("p2"), SourceProject,
			[]string{"managed:m1", "user:u1", "project:p1"}, "refused", []string{"project_settings false"}},
		{"the same refused bytes are not offered again", "project", hooksFile("p2"), SourceProject,
			[]string{"managed:m1", "user:u1", "project:p1"}, "refused", nil},
		{"a refused deletion keeps the hooks", "user", "", SourceUser,
			[]string{"managed:m1", "user:u1", "project:p1"}, "refused", []string{"user_settings true"}},
		{"policy cannot be refused", "managed", hooksFile("m2"), SourcePolicy,
			[]string{"managed:m2", "user:u1", "project:p1"}, "loaded", []string{"policy_settings false"}},
		{"an accepted change applies and clears the refusal", "project", hooksFile("p3"), "",
			[]string{"managed:m2", "user:u1", "project:p3"}, "loaded", []string{"project_settings false"}},
		{"an invalid edit is not offered", "local", "{", "",
			[]string{"managed:m2", "user:u1", "project:p3"}, "invalid", nil},
		{"a new drop-in is offered as policy", "dropin:10-a.json", hooksFile("d1"), "",
			[]string{"managed:m2", "managed:d1", "user:u1", "project:p3"}, "loaded", []string{"policy_settings false"}},
	}
	for _, st := range steps {
		mu.Lock()
		offered, refuse = nil, map[string]bool{st.refuse: true}
		mu.Unlock()
		w.write(st.kind, st.content)
		sum := w.store.Reload(context.Background(), "test")
		if got := w.commands(); !slices.Equal(got, st.want) {
			t.Fatalf("%s: hooks %v, want %v", st.name, got, st.want)
		}
		if s := w.state(st.kind); s.State != st.wantState {
			t.Errorf("%s: state %q, want %q", st.name, s.State, st.wantState)
		}
		var got []string
		for _, c := range offered {
			got = append(got, fmt.Sprintf("%s %v", c.Source, c.Deleted))
			if !slices.Equal(c.Projects, []string{w.proj}) {
				t.Errorf("%s: change offered for projects %v", st.name, c.Projects)
			}
		}
		if !slices.Equal(got, st.offer) {
			t.Errorf("%s: offered %v, want %v", st.name, got, st.offer)
		}
		// The summary lists what this reload refused (not refusals still standing).
		if want := st.wantState == "refused" && len(st.offer) > 0; want != (len(sum.Refused) > 0) {
			t.Errorf("%s: summary refused = %v, want some %v", st.name, sum.Refused, want)
		}
	}
	if s := w.state("project"); s.Refused != nil {
		t.Errorf("refusal not cleared: %+v", s.Refused)
	}
}

func TestStoreDropIns(t *testing.T) {
	w := newWorld(t)
	w.write("dropin:20-b.json", hooksFile("b"))
	if got, want := w.commands(), []string{"managed:b"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	w.write("dropin:10-a.json", hooksFile("a"))
	w.store.Reload(context.Background(), "test", w.path("dropin:10-a.json"))
	if got, want := w.commands(), []string{"managed:a", "managed:b"}; !slices.Equal(got, want) {
		t.Fatalf("a new drop-in: got %v, want %v (alphabetical)", got, want)
	}
	w.write("dropin:20-b.json", "")
	w.store.Reload(context.Background(), "test")
	if got, want := w.commands(), []string{"managed:a"}; !slices.Equal(got, want) {
		t.Fatalf("a deleted drop-in: got %v, want %v", got, want)
	}
	if s := w.state("dropin:20-b.json"); s.State != "unknown" {
		t.Errorf("a deleted drop-in is still listed: %+v", s)
	}
}

// TestStoreSnapshotIsLockFree: an event for a known project never waits for a reload —
// not for the store mutex, not for a reload in progress.
func TestStoreSnapshotIsLockFree(t *testing.T) {
	w := newWorld(t)
	w.write("project", hooksFile("p1"))
	w.commands()
	w.store.reloadMu.Lock()
	w.store.mu.Lock()
	done := make(chan *settings.Snapshot)
	go func() { done <- w.store.Snapshot(w.proj) }()
	select {
	case s := <-done:
		if len(s.Handlers()) != 1 {
			t.Errorf("snapshot has %d handlers", len(s.Handlers()))
		}
	case <-time.After(5 * time.Second):
		t.Error("Snapshot blocked on the store's locks")
	}
	w.store.mu.Unlock()
	w.store.reloadMu.Unlock()
	if t.Failed() {
		<-done
	}
}

// TestStoreConcurrentReadersSeeWholeVersions: readers racing reloads always see every
// handler of one version (run with -race).
func TestStoreConcurrentReadersSeeWholeVersions(t *testing.T) {
	w := newWorld(t)
	w.write("project", hooksFile("v0-a", "v0-b"))
	w.commands()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Value
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				hs := w.store.Snapshot(w.proj).Handlers()
				if len(hs) != 2 || strings.TrimSuffix(hs[0].Command, "-a") != strings.TrimSuffix(hs[1].Command, "-b") {
					bad.CompareAndSwap(nil, fmt.Sprint(len(hs)))
				}
			}
		}()
	}
	for i := 1; i <= 50; i++ {
		w.write("project", hooksFile(fmt.Sprintf("v%d-a", i), fmt.Sprintf("v%d-b", i)))
		w.store.Reload(context.Background(), "test")
	}
	stop.Store(true)
	wg.Wait()
	if b := bad.Load(); b != nil {
		t.Fatalf("a reader saw a mixed or partial snapshot: %v", b)
	}
	if got := w.commands(); !slices.Equal(got, []string{"project:v50-a", "project:v50-b"}) {
		t.Fatalf("final: %v", got)
	}
}

func TestDiffSnapshots(t *testing.T) {
	parse := func(content string) *settings.Snapshot {
		f, err := settings.ParseFile(settings.FileRef{Path: "/p/.claude/settings.json", Kind: settings.KindProject}, []byte(content), "")
		if err != nil {
			t.Fatal(err)
		}
		return settings.Compile([]*settings.File{f})
	}
	a := parse(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "b"}]}]}}`)
	b := parse(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a2"}]}],
		"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "c"}]}]}}`)
	got := DiffSnapshots(a, b)
	want := []string{"PreToolUse: +1 -0 ~0", "Stop: +0 -1 ~1"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if d := DiffSnapshots(a, a); len(d) != 0 {
		t.Errorf("no change: got %v", d)
	}
}
