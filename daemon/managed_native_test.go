package daemon

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/protocol"
)

// A managed hook, and a hook of a project file no install moved, are Claude Code's to run
// for the events Claude Code sends — harness claude-code and CLAUDECODE=1 in the request's
// environment, as in every hook Claude Code starts (hookc passes its environment) — and
// hookd's for everyone else: a raw client with a Claude Code payload, and Codex even when
// started from inside Claude Code. A hook a user-scope install moved into hookd.json is
// hookd's in every case. The hooks are real processes that append a line; the result
// says why one did not run.
func TestManagedHookRunByClaudeCodeOnly(t *testing.T) {
	dir := t.TempDir()
	managed, home, proj := filepath.Join(dir, "m"), filepath.Join(dir, "home"), filepath.Join(dir, "proj")
	count := filepath.Join(dir, "count")
	for _, d := range []string{managed, filepath.Join(home, ".claude"), filepath.Join(proj, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hook := func(line string) []byte {
		return []byte(`{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo ` + line + ` >> ` + count + `"}]}]}}`)
	}
	for path, content := range map[string][]byte{
		filepath.Join(managed, "managed-settings.json"): hook("x"),
		filepath.Join(proj, ".claude", "settings.json"): hook("p"),
		filepath.Join(home, ".claude", "settings.json"): []byte(`{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "/usr/local/bin/hookc"}]}]}}`),
		filepath.Join(home, ".claude", "hookd.json"): append([]byte(`{"hookd": {"version": 1, "forwarder": "/usr/local/bin/hookc"},`),
			hook("u")[1:]...),
	} {
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newEngine(engineOptions{Sources: settings.Sources{Home: home, UserDir: filepath.Join(home, ".claude"), ManagedDir: managed}})
	runs := func() string {
		b, _ := os.ReadFile(count)
		return string(b)
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
			want := "u\n"
			if c.hookdRuns {
				want = "x\np\nu\n"
			}
			if got := strings.TrimPrefix(runs(), before); !sameLines(got, want) {
				t.Errorf("hookd ran %q, want %q", got, want)
			}
			var notRun []string
			for _, h := range res.Hooks {
				if h.Outcome == protocol.OutcomeNotRun {
					notRun = append(notRun, h.Error)
				}
			}
			var wantNot []string
			if !c.hookdRuns {
				wantNot = []string{settings.ReasonClaudeCodeRuns, settings.ReasonClaudeCodeRunsFile}
			}
			if !reflect.DeepEqual(notRun, wantNot) {
				t.Errorf("not run: %q, want %q", notRun, wantNot)
			}
		})
	}
}

// sameLines: a and b hold the same lines in any order (hooks run in parallel).
func sameLines(a, b string) bool {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	sort.Strings(x)
	sort.Strings(y)
	return reflect.DeepEqual(x, y)
}
