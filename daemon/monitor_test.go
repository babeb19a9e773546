package daemon

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookd/hookd/events"
)

// TestBashShapedGolden: the payload hookd gives a Bash hook for a Monitor command is
// byte for byte the one Claude Code 2.1.330 gave it (both captured from the binary in one
// run, test/testdata/README.md).
func TestBashShapedGolden(t *testing.T) {
	root := filepath.Join("..", "test", "testdata", "payloads")
	monitor, err := os.ReadFile(filepath.Join(root, "claude-code-2.1.330", "PreToolUse-Monitor.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "claude-code-2.1.330-bash-hook-on-monitor", "PreToolUse-Bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := events.Lookup("PreToolUse")
	var top struct {
		Tool  string          `json:"tool_name"`
		Input json.RawMessage `json:"tool_input"`
	}
	if err := json.Unmarshal(monitor, &top); err != nil {
		t.Fatal(err)
	}
	in, ok := monitorCommand(ev, top.Tool, top.Input)
	if !ok {
		t.Fatal("the captured Monitor call is not recognised as a Monitor command")
	}
	if got := bashShaped(monitor, in); !bytes.Equal(got, want) {
		t.Fatalf("Bash-shaped payload\n got  %s\n want %s", got, want)
	}
}

func TestMonitorCommand(t *testing.T) {
	pre, _ := events.Lookup("PreToolUse")
	post, _ := events.Lookup("PostToolUse")
	pr, _ := events.Lookup("PermissionRequest")
	tests := []struct {
		name  string
		ev    *events.Event
		tool  string
		input string
		ok    bool
	}{
		{"pre", pre, "Monitor", `{"command":"tail -f x","description":"d","timeout_ms":1}`, true},
		{"permission request", pr, "Monitor", `{"command":"tail -f x"}`, true},
		{"post: no Bash name (Claude Code reads the input only on Pre/PermissionRequest)", post, "Monitor", `{"command":"tail -f x"}`, false},
		{"websocket monitor has no command", pre, "Monitor", `{"ws":{"url":"wss://x"}}`, false},
		{"empty command", pre, "Monitor", `{"command":""}`, false},
		{"non-string command", pre, "Monitor", `{"command":["rm"]}`, false},
		{"other tool", pre, "Bash", `{"command":"ls"}`, false},
		{"not an object", pre, "Monitor", `"ls"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, ok := monitorCommand(tt.ev, tt.tool, json.RawMessage(tt.input))
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%v)", ok, tt.ok, in)
			}
		})
	}
	in, _ := monitorCommand(pre, "Monitor", json.RawMessage(`{"command":"c","timeout_ms":5,"persistent":true}`))
	if len(in) != 1 || in["command"] != "c" {
		t.Fatalf("Bash input %v: only command (and a string description) carry over", in)
	}
}
