package httpfwd

import (
	"encoding/json"
	"testing"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

// TestHTTPAnswer: what a command hook says with exit 2 is said in JSON where the event has
// a JSON form, and reported lost where it has none.
func TestHTTPAnswer(t *testing.T) {
	ev := func(n string) *events.Event { e, _ := events.Lookup(n); return e }
	for _, c := range []struct {
		name, event string
		res         protocol.Result
		want        string
		lost        bool
	}{
		{"JSON passes", "PreToolUse", protocol.Result{Output: []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`)},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, false},
		{"nothing to say", "PostToolUse", protocol.Result{}, `{}`, false},
		{"PreToolUse fail-closed", "PreToolUse", *events.FailClosed("PreToolUse", "down"),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"down"}}`, false},
		{"PreToolUse exit 2 drops updatedInput", "PreToolUse", protocol.Result{ExitCode: 2, Stderr: "no\n",
			Output: []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"a":1},"additionalContext":"c"}}`)},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"c","permissionDecision":"deny","permissionDecisionReason":"no"}}`, false},
		{"Stop exit 2", "Stop", protocol.Result{ExitCode: 2, Stderr: "keep going\n"}, `{"decision":"block","reason":"keep going"}`, false},
		{"PermissionRequest JSON deny", "PermissionRequest", *events.FailClosed("PermissionRequest", "down"),
			`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"down"},"hookEventName":"PermissionRequest"}}`, false},
		{"Notification exit-2 notice lost", "Notification", protocol.Result{ExitCode: 2, Stderr: "note"}, `{}`, true},
		{"TeammateIdle exit-2 block lost", "TeammateIdle", protocol.Result{ExitCode: 2, Stderr: "work on"}, `{}`, true},
		{"plain stdout lost", "UserPromptSubmit", protocol.Result{Stdout: "ctx\n"}, `{}`, true},
	} {
		got, lost := HTTPAnswer(ev(c.event), &c.res)
		if string(got) != c.want || (lost != "") != c.lost {
			t.Errorf("%s: got %s (lost %q), want %s (lost %v)", c.name, got, lost, c.want, c.lost)
		}
	}
}

// FuzzHTTPAnswer: whatever the merged answer holds (a hook's JSON, stray stdout, any exit
// code), the http body is one JSON object.
func FuzzHTTPAnswer(f *testing.F) {
	f.Add("PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"a":1}}}`, "", "no", 2)
	f.Add("Stop", "", "text", "why", 2)
	f.Add("PermissionRequest", `{"hookSpecificOutput":{"decision":{"behavior":"deny"}}}`, "", "", 0)
	f.Add("Notification", `[1]`, "", "", 1)
	f.Add("PostToolUse", `{"hookSpecificOutput":[]}`, "", "x", 2)
	f.Fuzz(func(t *testing.T, event, output, stdout, stderr string, code int) {
		ev, ok := events.Lookup(event)
		if !ok {
			ev, _ = events.Lookup("PreToolUse")
		}
		res := &protocol.Result{Output: []byte(output), Stdout: stdout, Stderr: stderr, ExitCode: code}
		body, _ := HTTPAnswer(ev, res)
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("not a JSON object: %v: %s", err, body)
		}
	})
}
