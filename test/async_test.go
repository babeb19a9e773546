package test

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Async hooks (spec §5) run in the background: the event does not wait for them, they
// cannot decide, and their additionalContext/systemMessage reach the model with the
// session's next event.
func TestAsyncHooks(t *testing.T) {
	e := NewEnv(t)
	marker := e.Root + "/async-done"
	// The async hook waits for release, which the test creates only after the event has
	// answered: an event that waited for it would have to wait out its 60 s timeout, which
	// kills it, and the marker would never appear. No wall-clock bound is needed.
	release := e.Root + "/async-release"
	e.WriteSettings("project", `{"hooks":{"PostToolUse":[{"hooks":[
		{"type":"command","async":true,"timeout":60,"command":"while [ ! -e `+release+` ]; do sleep 0.05; done; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"late context\"},\"systemMessage\":\"late note\",\"decision\":\"block\",\"reason\":\"ignored\"}'; touch `+marker+`"},
		{"type":"command","async":true,"command":"echo never >&2; exit 2"},
		{"type":"command","command":"echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"sync context\"}}'"}]}]}}`)
	e.Start()
	post := e.Payload("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}, "tool_response": map[string]any{}})
	res, _ := e.Event(post)
	if _, err := readFile(marker); err == nil {
		t.Fatal("the async hook finished before it was released")
	}
	if res.Block != nil || strings.Join(res.AdditionalContext, "|") != "sync context" {
		t.Fatalf("async hooks decided or added context at once: block %+v context %q", res.Block, res.AdditionalContext)
	}
	var async int
	for _, h := range res.Hooks {
		if h.Outcome == "async" {
			async++
		}
	}
	if async != 2 {
		t.Fatalf("hooks %+v: want 2 async outcomes", res.Hooks)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 10*time.Second, "the async hook to finish", func() bool { _, err := readFile(marker); return err == nil })
	Eventually(t, 5*time.Second, "the daemon to note the async result", func() bool {
		return strings.Contains(e.Logs(), "async hook finished") && strings.Count(e.Logs(), "async hook finished") >= 2
	})
	// The session's next event carries the late texts first; the one after, no longer.
	ups := e.Payload("UserPromptSubmit", map[string]any{"prompt": "next"})
	res, _ = e.Event(ups)
	if got := strings.Join(res.AdditionalContext, "|"); got != "late context|late note" {
		t.Fatalf("next event's context %q", got)
	}
	r := e.Hookc(ups)
	if strings.Contains(r.Stdout, "late context") {
		t.Fatalf("async context delivered twice: %q", r.Stdout)
	}
}
