package show

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

// Every part of the status is a table or a line of text: no JSON leaks into `hookd status`.
func TestStatusRendersEveryPartWithoutJSON(t *testing.T) {
	at := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
	st := protocol.Status{
		Version: "v1", PID: 42, Uptime: "1m", StartedAt: at, Generation: 3, Mode: "parallel",
		Sources: []protocol.SourceStatus{
			{Path: "/p/.claude/settings.json", Source: "project", State: "invalid", Revision: "abcdef0123456789",
				KeptRevision: "abcdef0123456789", Error: "/p/.claude/settings.json:4:1: invalid JSON", LoadedAt: at,
				Warnings: []string{"unknown hook field"}, Watch: &protocol.WatchInfo{Mode: "polling", Detail: "inotify full"},
				Refused: &protocol.Refusal{Revision: "fedcba9876543210", Reason: "frozen", Project: "/p", At: at}},
		},
		Watcher:    &protocol.WatcherStatus{Backend: "fsnotify", Debounce: "30ms", Dirs: []string{"/p/.claude"}, Events: 7, Reloads: 2},
		LastReload: &protocol.ReloadSummary{Trigger: "watch", At: at, Took: "1ms", FilesRead: 4, Changed: []string{"x"}, Swapped: 1},
		Projects: []protocol.ProjectStatus{{Dir: "/p", Revision: "0123456789abcdef", Generation: 3, Handlers: 5, NotRunnable: []string{"prompt hook"},
			RoutedBy: "/etc/claude-code/managed-settings.d/50-hookd.json", NotForwarded: []string{"FileChanged", "WorktreeCreate"},
			RunNowhere:     []string{"/h/.claude/settings.json: hooks.FileChanged: user:FileChanged:0:0 runs nowhere"},
			ClaudeCodeRuns: []string{"managed:PreToolUse:0:0"}}},
		Counters: protocol.Counters{Events: 11, HooksRun: 12, RuleOverrides: 1},
		PerEvent: map[string]uint64{"PreToolUse": 9, "Stop": 2},
		Prewarm:  &protocol.PrewarmStatus{Hits: 5, Misses: 1, Idle: 2, PerKey: 2, Total: 32, IdleTimeout: "10m0s"},
		Workers:  &protocol.WorkerStatus{Workers: 1, Started: 2, Crashes: 1},
		Audit:    &protocol.AuditStatus{Path: "/s/audit/decisions.jsonl", Fsync: "batch", Seq: 9, LastError: "disk full", LastErrorAt: &at},
		Clients: []protocol.ClientStatus{{Client: "hookc", Version: "v1", Requests: 9, FirstSeen: at, LastSeen: at},
			{Client: "hookc", Version: "v0.9", Requests: 2, FirstSeen: at, LastSeen: at, Skew: true},
			{Client: "hookc", Requests: 1, FirstSeen: at, LastSeen: at, Skew: true}},
	}
	// Through JSON, as the command gets it.
	data, err := json.Marshal(&st)
	if err != nil {
		t.Fatal(err)
	}
	var got protocol.Status
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	Status(&b, &got)
	out := b.String()
	if strings.ContainsAny(out, "{}[]\"") {
		t.Errorf("status output has JSON in it:\n%s", out)
	}
	for _, want := range []string{
		"sources:", "ERROR /p/.claude/settings.json:4:1", "REFUSED", "polling /p/.claude/settings.json: inotify full",
		"warning: unknown hook field", "watcher:", "last reload:", "projects:", "not run by hookd: prompt hook",
		"counters:", "RULE OVERRIDES", "events:", "PreToolUse", "prewarm:", "prewarm pool:", "10m0s",
		"workers:", "PROTOCOL ERRORS", "audit: FAILING", "last error", "disk full",
		"/p: routed by hookd's managed drop-in /etc/claude-code/managed-settings.d/50-hookd.json",
		"not forwarded: FileChanged, WorktreeCreate (user, project and local hooks of these run nowhere)",
		"warning: /h/.claude/settings.json: hooks.FileChanged: user:FileChanged:0:0 runs nowhere",
		"/p: run by Claude Code: managed:PreToolUse:0:0",
		"clients:", "LAST SEEN", "hookc   unknown",
		"warning: hookc v0.9 sent 2 requests (last at 2026-11-23T14:00:00.000Z) to hookd v1: they are not one release",
		"warning: hookc of unknown version (it predates hookc saying its version) sent 1 requests",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}
}

// `hookd reload` renders its summary as text too; every changed file, error and refusal
// is named.
func TestReloadRendersWithoutJSON(t *testing.T) {
	at := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
	sum := protocol.ReloadSummary{
		Trigger: "request", At: at, Took: "59µs", FilesRead: 7, Swapped: 1, Generation: 5,
		Changed: []string{"/p/.claude/settings.json"},
		Errors:  []string{"/p/.claude/settings.local.json:3:9: hooks.Stop: expected an array"},
		Refused: []string{"/p/.claude/settings.json: frozen by policy"},
	}
	data, err := json.Marshal(&sum)
	if err != nil {
		t.Fatal(err)
	}
	var got protocol.ReloadSummary
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	Reload(&b, &got)
	out := b.String()
	if strings.ContainsAny(out, "{}[]\"") {
		t.Errorf("reload output has JSON in it:\n%s", out)
	}
	for _, want := range []string{
		"TRIGGER", "request", "59µs", "GENERATION", "changed /p/.claude/settings.json",
		"ERROR /p/.claude/settings.local.json:3:9: hooks.Stop: expected an array", "REFUSED /p/.claude/settings.json: frozen by policy",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("reload output lacks %q:\n%s", want, out)
		}
	}
}
