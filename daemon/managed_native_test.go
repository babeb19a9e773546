package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/configs"
	"github.com/hookd/hookd/protocol"
)

// A managed hook is Claude Code's to run for the events Claude Code sends — harness
// claude-code and CLAUDECODE=1 in the request's environment, as in every hook Claude Code
// starts (hookc passes its environment) — and hookd's for everyone else: a raw client
// with a Claude Code payload, and Codex even when started from inside Claude Code. The
// hook is a real process that appends a line; the result says why it did not run.
func TestManagedHookRunByClaudeCodeOnly(t *testing.T) {
	dir := t.TempDir()
	managed, home, proj := filepath.Join(dir, "m"), filepath.Join(dir, "home"), filepath.Join(dir, "proj")
	count := filepath.Join(dir, "count")
	for _, d := range []string{managed, filepath.Join(home, ".claude"), filepath.Join(proj, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hook := `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo x >> ` + count + `"}]}]}}`
	if err := os.WriteFile(filepath.Join(managed, "managed-settings.json"), []byte(hook), 0o644); err != nil {
		t.Fatal(err)
	}
	e := NewEngine(EngineOptions{Sources: configs.Sources{Home: home, UserDir: filepath.Join(home, ".claude"), ManagedDir: managed}})
	runs := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x\n")
	}
	claudePayload := `{"session_id":"s","transcript_path":"` + filepath.Join(home, ".claude", "projects", "p", "s.jsonl") + `","cwd":"` + proj + `","hook_event_name":"UserPromptSubmit","prompt":"hi"}`
	codexPayload := `{"session_id":"s","transcript_path":"` + filepath.Join(home, ".codex", "sessions", "s.jsonl") + `","cwd":"` + proj + `","hook_event_name":"UserPromptSubmit","prompt":"hi","turn_id":"t","model":"m","permission_mode":"default"}`
	for _, c := range []struct {
		name, harness, payload string
		env                    []string
		hookdRuns              bool
	}{
		{"Claude Code's forwarder", "", claudePayload, []string{"CLAUDECODE=1"}, false},
		{"Claude Code's forwarder, harness named", protocol.HarnessClaudeCode, claudePayload, []string{"CLAUDECODE=1", "PATH=/usr/bin:/bin"}, false},
		{"raw client, Claude Code payload", "", claudePayload, []string{"PATH=/usr/bin:/bin"}, true},
		{"CLAUDECODE set to something else", "", claudePayload, []string{"CLAUDECODE=0"}, true},
		{"Codex started inside Claude Code", protocol.HarnessCodex, codexPayload, []string{"CLAUDECODE=1"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := runs()
			req := &protocol.Request{V: protocol.Version, Event: []byte(c.payload), Env: c.env, ProjectDir: proj, Harness: c.harness}
			res, err := e.Handle(context.Background(), req, Caller{}, func(*protocol.Frame) {})
			if err != nil {
				t.Fatal(err)
			}
			if got := runs() - before; c.hookdRuns != (got == 1) || got > 1 {
				t.Errorf("the managed hook ran %d times in hookd; want hookd to run it: %v", got, c.hookdRuns)
			}
			var notRun []string
			for _, h := range res.Hooks {
				if h.Outcome == protocol.OutcomeNotRun {
					notRun = append(notRun, h.Error)
				}
			}
			if c.hookdRuns != (len(notRun) == 0) || len(notRun) > 0 && (len(notRun) != 1 || notRun[0] != configs.ReasonClaudeCodeRuns) {
				t.Errorf("not run: %q", notRun)
			}
		})
	}
}
