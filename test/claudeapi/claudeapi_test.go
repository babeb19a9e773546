package claudeapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type sseEvent struct {
	Name string
	Data map[string]any
}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var events []sseEvent
	var name string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if d["type"] != name {
				t.Errorf("event %q carries data type %v", name, d["type"])
			}
			events = append(events, sseEvent{name, d})
		}
	}
	return events
}

func names(events []sseEvent) string {
	var n []string
	for _, e := range events {
		n = append(n, e.Name)
	}
	return strings.Join(n, ",")
}

var mainReq = map[string]any{
	"model":    "claude-opus-5-5",
	"stream":   true,
	"tools":    []any{map[string]any{"name": "Bash"}},
	"messages": []any{map[string]any{"role": "user", "content": "go"}},
}

func TestScriptedStream(t *testing.T) {
	s := Start(t, []Turn{
		{ToolName: "Bash", ToolInput: map[string]any{"command": "echo hi"}},
		{Text: "finished"},
	})

	// Turn 1: a tool_use block.
	resp := post(t, s.URL+"/v1/messages?beta=true", mainReq)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	ev := readSSE(t, resp.Body)
	want := "message_start,content_block_start,content_block_delta,content_block_stop,message_delta,message_stop"
	if got := names(ev); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	block := ev[1].Data["content_block"].(map[string]any)
	if block["type"] != "tool_use" || block["name"] != "Bash" || !strings.HasPrefix(block["id"].(string), "toolu_") {
		t.Errorf("content_block_start = %v", block)
	}
	delta := ev[2].Data["delta"].(map[string]any)
	if delta["type"] != "input_json_delta" || delta["partial_json"] != `{"command":"echo hi"}` {
		t.Errorf("delta = %v", delta)
	}
	if sr := ev[4].Data["delta"].(map[string]any)["stop_reason"]; sr != "tool_use" {
		t.Errorf("stop_reason = %v", sr)
	}

	// A side request (no tools) does not consume the script.
	side := post(t, s.URL+"/v1/messages?beta=true", map[string]any{"model": "claude-haiku-4-5", "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "title?"}}})
	if got := names(readSSE(t, side.Body)); !strings.Contains(got, "content_block_delta") {
		t.Errorf("side request events %s", got)
	}

	// Turn 2: text with end_turn.
	ev = readSSE(t, post(t, s.URL+"/v1/messages?beta=true", mainReq).Body)
	if got := ev[2].Data["delta"].(map[string]any); got["type"] != "text_delta" || got["text"] != "finished" {
		t.Errorf("text delta = %v", got)
	}
	if sr := ev[4].Data["delta"].(map[string]any)["stop_reason"]; sr != "end_turn" {
		t.Errorf("stop_reason = %v", sr)
	}

	// Past the script: "done." and end_turn.
	ev = readSSE(t, post(t, s.URL+"/v1/messages", mainReq).Body)
	if got := ev[2].Data["delta"].(map[string]any)["text"]; got != "done." {
		t.Errorf("past script text = %v", got)
	}

	// Non-streamed request: a whole message.
	nonStream := map[string]any{"model": "claude-opus-5-5", "tools": []any{map[string]any{"name": "Bash"}}}
	var msg map[string]any
	if err := json.NewDecoder(post(t, s.URL+"/v1/messages", nonStream).Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg["type"] != "message" || msg["stop_reason"] != "end_turn" {
		t.Errorf("non-streamed = %v", msg)
	}

	// count_tokens and unknown paths answer harmlessly.
	var ct map[string]any
	if err := json.NewDecoder(post(t, s.URL+"/v1/messages/count_tokens", mainReq).Body).Decode(&ct); err != nil || ct["input_tokens"] == nil {
		t.Errorf("count_tokens = %v, %v", ct, err)
	}
	head, err := http.Head(s.URL + "/")
	if err != nil || head.StatusCode != 200 {
		t.Errorf("HEAD / = %v, %v", head, err)
	}
	get, err := http.Get(s.URL + "/api/whatever")
	if err != nil || get.StatusCode != 200 {
		t.Errorf("GET unknown = %v, %v", get, err)
	} else {
		get.Body.Close()
	}
	if got := s.Unknown(); len(got) != 2 {
		t.Errorf("Unknown() = %v", got)
	}

	if got := len(s.Requests()); got != 4 {
		t.Errorf("Requests() = %d, want 4 main-loop requests", got)
	}
	if got := s.Consumed(); got != 2 {
		t.Errorf("Consumed() = %d, want 2", got)
	}
	var sides int
	for _, r := range s.AllRequests() {
		if r.Side {
			sides++
		}
	}
	if sides != 1 {
		t.Errorf("side requests = %d, want 1", sides)
	}
}

func TestInspect(t *testing.T) {
	body := json.RawMessage(`{"messages":[
		{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"go"}]},
		{"role":"system","content":[{"type":"text","text":"# Environment"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"echo hi"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"PreToolUse:Bash hook error: R1","is_error":true}]},
		{"role":"system","content":[{"type":"text","text":"PreToolUse:Bash hook additional context: ctx-A"}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}
	]}`)
	tr, err := ToolResults(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 2 || tr[0].Text != "PreToolUse:Bash hook error: R1" || !tr[0].IsError || tr[1].Text != "a\nb" || tr[1].IsError {
		t.Errorf("ToolResults = %+v", tr)
	}
	ut, err := UserTexts(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(ut) != 2 || ut[1] != "go" {
		t.Errorf("UserTexts = %q", ut)
	}
	msgs, _ := Messages(body)
	if msgs[4].Role != "system" || msgs[4].Blocks[0].Text != "PreToolUse:Bash hook additional context: ctx-A" {
		t.Errorf("Messages[4] = %+v", msgs[4])
	}
}

// TestRealClaude drives the real binary when HOOKD_CLAUDE_BIN names it: one
// Bash call denied by a PreToolUse hook, then end_turn.
func TestRealClaude(t *testing.T) {
	bin := os.Getenv("HOOKD_CLAUDE_BIN")
	if bin == "" {
		t.Skip("HOOKD_CLAUDE_BIN not set")
	}
	dir := t.TempDir()
	home, proj := filepath.Join(dir, "home"), filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"R1\"}}'"}]}]}}`
	if err := os.WriteFile(filepath.Join(proj, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Start(t, []Turn{{ToolName: "Bash", ToolInput: map[string]any{"command": "echo hi"}}, {Text: "finished"}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-p", "go", "--output-format", "stream-json", "--verbose")
	cmd.Dir = proj
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + s.URL,
		"ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("main requests = %d, want 2\n%s", len(reqs), out)
	}
	tr, err := ToolResults(reqs[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 1 || tr[0].Text != "PreToolUse:Bash hook error: R1" || !tr[0].IsError {
		t.Errorf("tool results = %+v", tr)
	}
}
