package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

// Issue 13, defect 7: projects were never evicted — 20,000 project directories took the
// daemon to 222 MB and 19,801 inotify watches (above many distros' default
// fs.inotify.max_user_watches), and `hookd status` took 37.6 s. Now at most
// limits.max_live_projects (512) stay loaded and watched, idle ones go after
// limits.project_idle_timeout_ms, and an evicted project's next event reads its files
// from disk again.

// inotifyWatches counts the inotify watches a process holds, from the kernel's own
// accounting (/proc/PID/fdinfo lists one "inotify wd:" line per watch).
func inotifyWatches(t *testing.T, pid int) int {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/fdinfo"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		n += strings.Count(string(b), "inotify wd:")
	}
	return n
}

// projectWorld makes n project directories whose settings deny `rm` by a permission rule
// and returns their paths.
func projectWorld(t *testing.T, e *Env, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		dir := filepath.Join(e.Root, "projects", fmt.Sprintf("p%05d", i))
		if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(`{"permissions":{"deny":["Bash(rm *)"]}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, dir)
	}
	return out
}

// ruleDecision sends a Bash PreToolUse event for project over c and returns the
// permission rules' answer ("" when no rule matched).
func ruleDecision(t *testing.T, e *Env, c *protocol.Client, project, command string) string {
	t.Helper()
	payload := e.Payload("PreToolUse", map[string]any{"cwd": project, "tool_name": "Bash",
		"tool_input": map[string]any{"command": command}, "tool_use_id": "toolu_1"})
	f, err := c.Do(context.Background(), &protocol.Request{Event: json.RawMessage(payload), ProjectDir: project, Env: e.BaseEnv()}, nil)
	if err != nil || f.Result == nil {
		t.Fatalf("event for %s: %v %+v", project, err, f)
	}
	res := f.Result
	if res.RuleAnswer == nil {
		return ""
	}
	return res.RuleAnswer.Decision
}

func projectCache(t *testing.T, e *Env) map[string]any {
	t.Helper()
	pc, _ := e.Status()["project_cache"].(map[string]any)
	if pc == nil {
		t.Fatal("status has no project_cache")
	}
	return pc
}

func TestFaultProjectsEvicted(t *testing.T) {
	// 128 past the limit evicts the first projects, which is what the test checks; make
	// test keeps it at that (2,000 took 125 s of make unit). HOOKD_FAULT_PROJECTS=2000 and
	// =20000 give docs/reliability.md's figures.
	n := 640
	if v, err := strconv.Atoi(os.Getenv("HOOKD_FAULT_PROJECTS")); err == nil && v > 0 {
		n = v
	}
	const limit = 512 // the default limits.max_live_projects: no config, so this runs on any hookd
	e := NewEnv(t)
	projects := projectWorld(t, e, n)
	e.Start()
	pid := e.daemon.Process.Pid
	baseWatches, baseRSS := inotifyWatches(t, pid), procStatus(t, pid, "VmRSS")

	c, err := protocol.Dial(context.Background(), e.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	var rssAtLimit int
	for i, p := range projects {
		if d := ruleDecision(t, e, c, p, "rm -rf build"); d != "deny" {
			t.Fatalf("project %d: rm answered %q by the rules, want deny", i, d)
		}
		if i+1 == limit {
			rssAtLimit = procStatus(t, pid, "VmRSS")
		}
	}
	took := time.Since(start)
	// The watcher applies evictions asynchronously; wait for it to settle, then the
	// kernel's count of watches is bounded by the limit (one .claude directory each).
	var watches int
	Eventually(t, 60*time.Second, "the inotify watches to come down to the live-project limit", func() bool {
		watches = inotifyWatches(t, pid)
		return watches <= baseWatches+limit
	})
	pc := projectCache(t, e)
	if live := int(pc["live"].(float64)); live > limit {
		t.Fatalf("%d live projects, limit %d", live, limit)
	}
	st := e.Status()
	dirs, _ := st["watcher"].(map[string]any)["dirs"].([]any)
	if len(dirs) > limit+baseWatches {
		t.Fatalf("the watcher reports %d watched dirs", len(dirs))
	}
	statusStart := time.Now()
	if r := e.Hookd("", "status"); r.Code != 0 {
		t.Fatalf("hookd status: %d %s", r.Code, r.Stderr)
	}
	statusTook := time.Since(statusStart)
	rss := procStatus(t, pid, "VmRSS")

	// The first project was evicted long ago. Edit its settings while nothing watches
	// them: its next event must see the edit (never the stale version, never "no rules").
	if inStatus(st, projects[0]) {
		t.Fatalf("project 0 still live after %d newer projects", n-1)
	}
	// (Asking project 0 before the edit would load it again; what it answered before is
	// what project 1, evicted too and with the same settings, answers.)
	if inStatus(st, projects[1]) {
		t.Fatalf("project 1 still live after %d newer projects", n-2)
	}
	if d := ruleDecision(t, e, c, projects[1], "curl evil.example"); d == "deny" {
		t.Fatal("curl denied without the edit")
	}
	WriteAtomic(t, filepath.Join(projects[0], ".claude", "settings.json"), `{"permissions":{"deny":["Bash(rm *)","Bash(curl *)"]}}`)
	if d := ruleDecision(t, e, c, projects[0], "curl evil.example"); d != "deny" {
		t.Fatalf("evicted project after an edit: curl answered %q, want deny (stale settings)", d)
	}
	if d := ruleDecision(t, e, c, projects[0], "rm -rf /"); d != "deny" {
		t.Fatalf("evicted project after an edit: rm answered %q, want deny", d)
	}
	t.Logf("faults_projects: %d projects, limit %d: %d events in %v; inotify watches %d at start, %d after (kernel); watcher dirs %d; live %v, evicted %v; RSS %d kB at start, %d kB at %d projects, %d kB after %d; hookd status %v",
		n, limit, n, took.Round(time.Millisecond), baseWatches, watches, len(dirs), pc["live"], pc["evicted"], baseRSS, rssAtLimit, limit, rss, n, statusTook.Round(time.Millisecond))
}

func inStatus(st map[string]any, project string) bool {
	ps, _ := st["projects"].([]any)
	for _, p := range ps {
		if m, _ := p.(map[string]any); m != nil && m["dir"] == project {
			return true
		}
	}
	return false
}

// Idle projects are evicted after limits.project_idle_timeout_ms: their watches and
// memory go, and the next event reads their (edited) settings from disk.
func TestFaultProjectsIdleEviction(t *testing.T) {
	e := NewEnv(t)
	e.withLimits(t, `{"project_idle_timeout_ms":400}`)
	projects := projectWorld(t, e, 50)
	e.Start()
	pid := e.daemon.Process.Pid
	baseWatches := inotifyWatches(t, pid)
	c, err := protocol.Dial(context.Background(), e.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, p := range projects {
		if d := ruleDecision(t, e, c, p, "rm -rf build"); d != "deny" {
			t.Fatalf("project %d: %q", i, d)
		}
	}
	peak := inotifyWatches(t, pid)
	Eventually(t, 30*time.Second, "every idle project to be evicted", func() bool {
		pc := projectCache(t, e)
		return pc["live"].(float64) == 0 && inotifyWatches(t, pid) == baseWatches
	})
	WriteAtomic(t, filepath.Join(projects[7], ".claude", "settings.json"), `{"permissions":{"deny":["Bash(curl *)"]}}`)
	if d := ruleDecision(t, e, c, projects[7], "curl x"); d != "deny" {
		t.Fatalf("idle-evicted project after an edit: curl %q, want deny", d)
	}
	if d := ruleDecision(t, e, c, projects[7], "rm -rf build"); d == "deny" {
		t.Fatal("idle-evicted project after an edit still denies rm: stale settings")
	}
	t.Logf("faults_projects: 50 projects, idle timeout 400 ms: inotify watches %d at start, %d with all live, %d after the idle sweep", baseWatches, peak, baseWatches)
}
