package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

// Hot reload (issue #4), black box: real files, real fsnotify, a real daemon. Every wait
// polls for the daemon's answer; none sleeps for a fixed time.

const reloadWait = 10 * time.Second

// versioned is a settings file whose UserPromptSubmit hooks print "<version>-a" and
// "<version>-b": plain stdout of UserPromptSubmit is context (spec §4.1), so an answer
// names the version of every hook that ran — and shows whether two versions mixed.
func versioned(version string) string {
	return upsHooks(version+"-a", version+"-b")
}

func upsHooks(markers ...string) string {
	var hs []any
	for _, m := range markers {
		hs = append(hs, cmdHook("echo "+m))
	}
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"UserPromptSubmit": []any{map[string]any{"hooks": hs}},
	}})
	return string(b)
}

// contextIn sends a UserPromptSubmit event for project and returns its sorted contexts.
func contextIn(t *testing.T, e *Env, project string) []string {
	t.Helper()
	p := e.Payload("UserPromptSubmit", map[string]any{"prompt": "hi", "cwd": project})
	frames, err := e.Raw(&protocol.Request{Event: json.RawMessage(p), ProjectDir: project, Env: e.BaseEnv()})
	if err != nil {
		t.Fatalf("event failed: %v", err)
	}
	res := frames[len(frames)-1].Result
	if res == nil {
		t.Fatalf("no result: %+v", frames[len(frames)-1])
	}
	out := append([]string(nil), res.AdditionalContext...)
	sort.Strings(out)
	return out
}

func contexts(t *testing.T, e *Env) string { return strings.Join(contextIn(t, e, e.Project), ",") }

// waitContexts polls with events until the project's hooks print want ("" = no hooks).
func waitContexts(t *testing.T, e *Env, want string) {
	t.Helper()
	var got string
	Eventually(t, reloadWait, "hooks printing "+want, func() bool {
		got = contexts(t, e)
		return got == want
	})
}

func generation(t *testing.T, e *Env) uint64 {
	t.Helper()
	g, _ := e.Status()["generation"].(float64)
	return uint64(g)
}

// source returns the status entry of one settings file.
func source(t *testing.T, e *Env, path string) map[string]any {
	t.Helper()
	srcs, _ := e.Status()["sources"].([]any)
	for _, s := range srcs {
		m := s.(map[string]any)
		if m["path"] == path {
			return m
		}
	}
	return nil
}

// settle waits until the daemon's watcher has no reload scheduled or running, so that
// what a test does next is seen by the watcher, not swept up by an earlier reload.
func settle(t *testing.T, e *Env) {
	t.Helper()
	Eventually(t, reloadWait, "the watcher idle", func() bool {
		w, _ := e.Status()["watcher"].(map[string]any)
		return w != nil && w["pending"] == false
	})
}

func startWith(t *testing.T, kind, content string) *Env {
	t.Helper()
	e := NewEnv(t)
	e.WriteSettings(kind, content)
	e.Start()
	waitContexts(t, e, "v1-a,v1-b")
	settle(t, e)
	return e
}

func TestReloadAtomicRename(t *testing.T) {
	e := startWith(t, "project", versioned("v1"))
	gen := generation(t, e)
	before := source(t, e, e.SettingsPath("project"))
	e.WriteSettings("project", versioned("v2")) // temp file + rename, as editors save
	waitContexts(t, e, "v2-a,v2-b")
	if g := generation(t, e); g <= gen {
		t.Errorf("generation %d after a swap, was %d", g, gen)
	}
	after := source(t, e, e.SettingsPath("project"))
	if after["revision"] == before["revision"] || after["loaded_at"] == before["loaded_at"] {
		t.Errorf("status source not updated: before %v after %v", before, after)
	}
	if w, _ := after["watch"].(map[string]any); w["mode"] != "watching" {
		t.Errorf("watch = %v, want watching", after["watch"])
	}
	if !strings.Contains(e.Logs(), `"changes":["UserPromptSubmit: +0 -0 ~2"]`) {
		t.Errorf("no swap summary diff in the log:\n%s", e.Logs())
	}
}

func TestReloadInPlaceTruncateAndWrite(t *testing.T) {
	e := startWith(t, "project", versioned("v1"))
	path := e.SettingsPath("project")
	// A slow writer: truncate and write half of the new content, and only finish once the
	// daemon has given up waiting for the rest and called the file invalid.
	full := versioned("v2")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(full[:len(full)/2]); err != nil {
		t.Fatal(err)
	}
	Eventually(t, reloadWait, "the half-written file reported invalid", func() bool {
		return source(t, e, path)["state"] == "invalid"
	})
	if got := contexts(t, e); got != "v1-a,v1-b" {
		t.Fatalf("while the file is half written, hooks = %q; want the last good v1", got)
	}
	if _, err := f.WriteString(full[len(full)/2:]); err != nil {
		t.Fatal(err)
	}
	waitContexts(t, e, "v2-a,v2-b")
	if s := source(t, e, path); s["state"] != "loaded" || s["error"] != nil {
		t.Errorf("after the write completed: %v", s)
	}
	// A whole rewrite in place (os.WriteFile truncates, then writes): no invalid state
	// is reported for it, the write lands within the retry window.
	if err := os.WriteFile(path, []byte(versioned("v3")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitContexts(t, e, "v3-a,v3-b")
}

func TestReloadSedInPlace(t *testing.T) {
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip("no sed")
	}
	e := startWith(t, "local", versioned("v1"))
	if out, err := exec.Command("sed", "-i", "s/v1-/v2-/g", e.SettingsPath("local")).CombinedOutput(); err != nil {
		t.Fatalf("sed: %v %s", err, out)
	}
	waitContexts(t, e, "v2-a,v2-b")
}

func TestReloadDeleteAndRecreate(t *testing.T) {
	e := startWith(t, "user", versioned("v1"))
	path := e.SettingsPath("user")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitContexts(t, e, "") // a deleted file removes its hooks
	if s := source(t, e, path); s["state"] != "absent" {
		t.Errorf("deleted file state = %v", s["state"])
	}
	if err := os.WriteFile(path, []byte(versioned("v2")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitContexts(t, e, "v2-a,v2-b")
}

func TestReloadInvalidJSONThenFixed(t *testing.T) {
	e := startWith(t, "project", versioned("v1"))
	path := e.SettingsPath("project")
	e.WriteSettings("project", "{\n  \"hooks\": {\n    \"UserPromptSubmit\": [\n  }\n")
	var st map[string]any
	Eventually(t, reloadWait, "the invalid file in status", func() bool {
		st = e.Status()
		pe, _ := st["pending_errors"].([]any)
		return len(pe) == 1
	})
	pe := st["pending_errors"].([]any)[0].(string)
	if !strings.HasPrefix(pe, path+":4:") || !strings.Contains(pe, "invalid JSON") {
		t.Errorf("pending error %q: want file:line:col and the cause", pe)
	}
	src := source(t, e, path)
	if src["state"] != "invalid" || src["kept_revision"] == "" || src["kept_revision"] != src["revision"] {
		t.Errorf("status source: %v", src)
	}
	if got := contexts(t, e); got != "v1-a,v1-b" {
		t.Fatalf("hooks while the file is invalid = %q, want the last good version", got)
	}
	if !strings.Contains(e.Logs(), `"msg":"invalid settings file"`) || !strings.Contains(e.Logs(), `"line":4`) {
		t.Errorf("the error is not logged with its line:\n%s", e.Logs())
	}
	e.WriteSettings("project", versioned("v2"))
	waitContexts(t, e, "v2-a,v2-b")
	if pe, _ := e.Status()["pending_errors"].([]any); len(pe) != 0 {
		t.Errorf("pending errors after the fix: %v", pe)
	}
}

func TestReloadBadRegexInOneFileWhileAnotherChanges(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", upsHooks("project-v1"))
	e.WriteSettings("local", upsHooks("local-v1"))
	e.Start()
	waitContexts(t, e, "local-v1,project-v1")
	settle(t, e)

	bad := `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo project-v2"}]}],
  "PreToolUse": [{"matcher": "Bash(", "hooks": [{"type": "command", "command": "true"}]}]}}`
	e.WriteSettings("project", bad)
	e.WriteSettings("local", upsHooks("local-v2"))
	// The local change applies; the project file keeps its last good version.
	waitContexts(t, e, "local-v2,project-v1")
	var pe []any
	Eventually(t, reloadWait, "the bad regex reported", func() bool {
		pe, _ = e.Status()["pending_errors"].([]any)
		return len(pe) == 1
	})
	msg := pe[0].(string)
	if !strings.HasPrefix(msg, e.SettingsPath("project")+":2:") || !strings.Contains(msg, "hooks.PreToolUse[0].matcher") {
		t.Errorf("pending error %q: want the project file, line and field", msg)
	}
	e.WriteSettings("project", upsHooks("project-v3"))
	waitContexts(t, e, "local-v2,project-v3")
}

func TestReloadSymlinkSwap(t *testing.T) {
	// A config-management tool (Kubernetes ConfigMap) publishes a new version by swapping
	// the "..data" symlink; managed-settings.json -> ..data/managed-settings.json never
	// changes itself.
	e := NewEnv(t)
	m := e.Managed
	publish := func(version string) {
		dir := filepath.Join(m, "..v_"+version)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "managed-settings.json"), []byte(versioned(version)), 0o644); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(m, "..data_tmp")
		if err := os.Symlink("..v_"+version, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(m, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	publish("v1")
	if err := os.Symlink("..data/managed-settings.json", filepath.Join(m, "managed-settings.json")); err != nil {
		t.Fatal(err)
	}
	e.Start()
	waitContexts(t, e, "v1-a,v1-b")
	settle(t, e)
	// The swap alone must be seen (the old version's directory is still there, so
	// nothing happens to the file the symlink used to resolve to).
	publish("v2")
	waitContexts(t, e, "v2-a,v2-b")
	if err := os.RemoveAll(filepath.Join(m, "..v_v1")); err != nil {
		t.Fatal(err)
	}
	publish("v3")
	waitContexts(t, e, "v3-a,v3-b")

	// A settings file that is a symlink to a file elsewhere: editing the target reloads.
	target := filepath.Join(e.Root, "dotfiles", "claude-settings.json")
	WriteAtomic(t, target, upsHooks("dot-v1"))
	if err := os.Symlink(target, e.SettingsPath("user")); err != nil {
		t.Fatal(err)
	}
	waitContexts(t, e, "dot-v1,v3-a,v3-b")
	WriteAtomic(t, target, upsHooks("dot-v2"))
	waitContexts(t, e, "dot-v2,v3-a,v3-b")
}

func TestReloadProjectDirCreatedLater(t *testing.T) {
	e := NewEnv(t)
	e.Start()
	other := filepath.Join(e.Root, "home", "later")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := contextIn(t, e, other); len(got) != 0 {
		t.Fatalf("hooks before any settings: %v", got)
	}
	settle(t, e)
	src := source(t, e, filepath.Join(other, ".claude", "settings.json"))
	if w, _ := src["watch"].(map[string]any); w["mode"] != "watching" || !strings.Contains(w["detail"].(string), "until") {
		t.Errorf("a missing .claude dir should be covered by its parent's watch: %v", src)
	}
	// The project's first .claude/ and settings file appear while the daemon runs.
	WriteAtomic(t, filepath.Join(other, ".claude", "settings.json"), upsHooks("late-v1"))
	Eventually(t, reloadWait, "the new project's hooks", func() bool {
		got := contextIn(t, e, other)
		return len(got) == 1 && got[0] == "late-v1"
	})
	// And later edits in the new directory are seen too (it is watched now).
	WriteAtomic(t, filepath.Join(other, ".claude", "settings.local.json"), upsHooks("late-local"))
	Eventually(t, reloadWait, "the new project's local hooks", func() bool {
		return strings.Join(contextIn(t, e, other), ",") == "late-local,late-v1"
	})
	// The managed dir and its managed-settings.d may be created later too.
	if err := os.RemoveAll(e.Managed); err != nil {
		t.Fatal(err)
	}
	WriteAtomic(t, filepath.Join(e.Managed, "managed-settings.d", "10-extra.json"), upsHooks("dropin"))
	Eventually(t, reloadWait, "the new drop-in's hooks", func() bool {
		return strings.Join(contextIn(t, e, other), ",") == "dropin,late-local,late-v1"
	})
}

func TestReloadRapidEdits(t *testing.T) {
	e := startWith(t, "project", versioned("v1"))
	path := e.SettingsPath("project")
	for i := 0; i < 100; i++ {
		content := versioned(fmt.Sprintf("r%d", i))
		if i%2 == 0 {
			WriteAtomic(t, path, content)
		} else if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	waitContexts(t, e, "r99-a,r99-b")
	if pe, _ := e.Status()["pending_errors"].([]any); len(pe) != 0 {
		t.Errorf("pending errors after the edits settled: %v", pe)
	}
}

// TestReloadNeverMixesVersions edits while events flow: every answer carries the hooks of
// exactly one version, and no event fails.
func TestReloadNeverMixesVersions(t *testing.T) {
	e := startWith(t, "project", versioned("v1"))
	var stop atomic.Bool
	var wg sync.WaitGroup
	var mixed, failed atomic.Int64
	var firstBad atomic.Value
	for c := 0; c < 3; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				p := e.Payload("UserPromptSubmit", map[string]any{"prompt": "hi"})
				frames, err := e.Raw(&protocol.Request{Event: json.RawMessage(p), ProjectDir: e.Project, Env: e.BaseEnv()})
				if err != nil || frames[len(frames)-1].Result == nil {
					failed.Add(1)
					firstBad.CompareAndSwap(nil, fmt.Sprint(err))
					continue
				}
				ctx := frames[len(frames)-1].Result.AdditionalContext
				if len(ctx) != 2 || strings.TrimSuffix(ctx[0], "-a") != strings.TrimSuffix(ctx[1], "-b") &&
					strings.TrimSuffix(ctx[0], "-b") != strings.TrimSuffix(ctx[1], "-a") {
					mixed.Add(1)
					firstBad.CompareAndSwap(nil, strings.Join(ctx, ","))
				}
			}
		}()
	}
	for i := 2; i <= 20; i++ {
		e.WriteSettings("project", versioned(fmt.Sprintf("v%d", i)))
		want := fmt.Sprintf("v%d-a,v%d-b", i, i)
		Eventually(t, reloadWait, want, func() bool { return contexts(t, e) == want })
	}
	stop.Store(true)
	wg.Wait()
	if mixed.Load()+failed.Load() > 0 {
		t.Fatalf("%d answers mixed versions, %d failed; first: %v", mixed.Load(), failed.Load(), firstBad.Load())
	}
}

func TestReloadConfigChangeVeto(t *testing.T) {
	e := NewEnv(t)
	logPath := filepath.Join(e.Root, "configchange.log")
	// The project freezes its local settings: a ConfigChange hook on local_settings
	// blocks with exit 2. Another hook records every ConfigChange payload.
	project := map[string]any{"hooks": map[string]any{
		"ConfigChange": []any{
			map[string]any{"matcher": "local_settings", "hooks": []any{cmdHook(`echo "local settings are frozen" >&2; exit 2`)}},
			map[string]any{"hooks": []any{cmdHook("cat >> " + logPath + "; echo >> " + logPath)}},
		},
		"UserPromptSubmit": []any{map[string]any{"hooks": []any{cmdHook("echo project-v1")}}},
	}}
	pb, _ := json.Marshal(project)
	e.WriteSettings("project", string(pb))
	e.WriteSettings("local", upsHooks("local-v1"))
	e.Start()
	waitContexts(t, e, "local-v1,project-v1")
	settle(t, e)
	if _, err := os.Stat(logPath); err == nil {
		t.Fatal("ConfigChange ran at first load")
	}

	e.WriteSettings("local", upsHooks("local-v2"))
	var src map[string]any
	Eventually(t, reloadWait, "the refused change in status", func() bool {
		src = source(t, e, e.SettingsPath("local"))
		return src["state"] == "refused"
	})
	ref, _ := src["refused"].(map[string]any)
	if ref["reason"] != "[echo \"local settings are frozen\" >&2; exit 2]: local settings are frozen" || ref["project"] != e.Project {
		t.Errorf("refusal = %v", ref)
	}
	if got := contexts(t, e); got != "local-v1,project-v1" {
		t.Fatalf("hooks after a refused change = %q, want the previous local version", got)
	}
	if rf, _ := e.Status()["refused"].([]any); len(rf) != 1 {
		t.Errorf("status refused = %v", rf)
	}
	if !strings.Contains(e.Logs(), "settings change refused by a ConfigChange hook") {
		t.Errorf("the refusal is not logged:\n%s", e.Logs())
	}

	// The payload Claude Code sends (spec §1.3), with the last session seen.
	data, _ := os.ReadFile(logPath)
	var got map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(string(data), "\n", 2)[0]), &got); err != nil {
		t.Fatalf("ConfigChange payload %q: %v", data, err)
	}
	want := map[string]any{"session_id": "sess-1", "transcript_path": "", "cwd": e.Project,
		"hook_event_name": "ConfigChange", "source": "local_settings", "file_path": e.SettingsPath("local")}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("payload %s = %v, want %v", k, got[k], v)
		}
	}

	// Project settings are not frozen: that change applies (and clears nothing else).
	e.WriteSettings("project", strings.Replace(string(pb), "project-v1", "project-v2", 1))
	waitContexts(t, e, "local-v1,project-v2")

	// Managed policy cannot be refused (as in Claude Code), even by a hook that blocks
	// every source.
	freeze := `{"hooks": {"ConfigChange": [{"hooks": [{"type": "command", "command": "exit 2"}]}]}}`
	e.WriteSettings("user", freeze)
	Eventually(t, reloadWait, "the user freeze hook", func() bool {
		return source(t, e, e.SettingsPath("user"))["state"] == "loaded"
	})
	e.WriteSettings("managed", versioned("m1"))
	waitContexts(t, e, "local-v1,m1-a,m1-b,project-v2")
	if !strings.Contains(e.Logs(), "managed policy cannot be refused") {
		t.Errorf("the ignored policy veto is not logged:\n%s", e.Logs())
	}

	// Fixing the file (here: back to the version in force) clears the refusal.
	e.WriteSettings("local", upsHooks("local-v1"))
	Eventually(t, reloadWait, "the refusal cleared", func() bool {
		return source(t, e, e.SettingsPath("local"))["state"] == "loaded"
	})
}

func TestReloadOnRequestAndSignal(t *testing.T) {
	e := startWith(t, "project", versioned("v1"))
	r := e.Hookd("", "reload", "--json")
	var sum map[string]any
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &sum) != nil {
		t.Fatalf("hookd reload --json: exit %d, %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if sum["trigger"] != "request" || sum["files_read"].(float64) < 4 || sum["generation"] == nil {
		t.Errorf("reload summary = %v", sum)
	}
	// Without --json: a table, as `hookd status` prints.
	r = e.Hookd("", "reload")
	if r.Code != 0 || !strings.Contains(r.Stdout, "TRIGGER") || !strings.Contains(r.Stdout, "request") || strings.ContainsAny(r.Stdout, "{}\"") {
		t.Errorf("hookd reload: exit %d, %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if err := e.daemon.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	Eventually(t, reloadWait, "a reload triggered by SIGHUP", func() bool {
		lr, _ := e.Status()["last_reload"].(map[string]any)
		return lr["trigger"] == "signal"
	})
	st := e.Status()
	w, _ := st["watcher"].(map[string]any)
	if w["backend"] != "fsnotify" || len(w["dirs"].([]any)) == 0 {
		t.Errorf("watcher status = %v", w)
	}
}
