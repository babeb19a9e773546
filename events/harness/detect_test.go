package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookd/hookd/protocol"
)

// The payloads are abbreviated from captures of the real binaries (test/testdata/harnesses).
func TestDetect(t *testing.T) {
	for _, c := range []struct{ payload, want string }{
		{`{"session_id":"s","transcript_path":"/h/.claude/projects/p/s.jsonl","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}`, protocol.HarnessClaudeCode},
		{`{"session_id":"s","turn_id":"t","transcript_path":"/h/.codex/sessions/2026/11/23/r.jsonl","cwd":"/p","hook_event_name":"PreToolUse","model":"gpt-5","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"call_1"}`, protocol.HarnessCodex},
		{`{"session_id":"s","transcript_path":"/h/.codex/sessions/2026/11/23/r.jsonl","cwd":"/p","hook_event_name":"SessionStart","model":"gpt-5","source":"startup"}`, protocol.HarnessCodex},
		{`{"session_id":"s","cwd":"/p","hook_event_name":"Interrupt","model":"m","permission_mode":"default","transcript_path":null,"turn_id":"t"}`, protocol.HarnessCodex},
		{`{"session_id":"s","transcript_path":"/h/.gemini/tmp/p/chats/s.jsonl","cwd":"/p","hook_event_name":"BeforeTool","timestamp":"2026-11-23T14:33:54.104Z","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`, protocol.HarnessGemini},
		{`{"session_id":"s","transcript_path":"/h/.gemini/tmp/p/chats/s.jsonl","cwd":"/p","hook_event_name":"SessionStart","timestamp":"2026-11-23T14:33:54.104Z","source":"startup"}`, protocol.HarnessGemini},
		{`{"hook_event_name":"SessionStart","timestamp":"x"}`, protocol.HarnessClaudeCode},
		{`not json`, protocol.HarnessClaudeCode},
	} {
		if got := Detect([]byte(c.payload)); got != c.want {
			t.Errorf("Detect(%s) = %q, want %q", c.payload, got, c.want)
		}
	}
}

// Every payload captured from Claude Code 2.1.330 is detected as Claude Code (MessageDisplay
// carries a turn_id, like Codex's payloads).
func TestDetectClaudeCaptures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "test", "testdata", "payloads", "claude-code-2.1.330", "*.json"))
	if len(files) < 20 {
		t.Fatalf("found only %d captured payloads", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := Detect(b); got != protocol.HarnessClaudeCode {
			t.Errorf("%s: detected %q", filepath.Base(f), got)
		}
		// Without the transcript path (some callers omit it) as well.
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		delete(m, "transcript_path")
		b, _ = json.Marshal(m)
		if got := Detect(b); got != protocol.HarnessClaudeCode {
			t.Errorf("%s without transcript_path: detected %q", filepath.Base(f), got)
		}
	}
}

func BenchmarkDetect(b *testing.B) {
	p := []byte(`{"session_id":"4b48c78d-47fd-4fe8-873f-8a0a9e5749fe","transcript_path":"/home/dev/.claude/projects/-home-dev-proj/4b48c78d-47fd-4fe8-873f-8a0a9e5749fe.jsonl","cwd":"/home/dev/proj","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status --short","description":"Show status"},"tool_use_id":"toolu_01ABCDEF"}`)
	for i := 0; i < b.N; i++ {
		if Detect(p) != protocol.HarnessClaudeCode {
			b.Fatal("misdetected")
		}
	}
}
