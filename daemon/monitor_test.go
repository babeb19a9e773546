package daemon

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
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

// monitorEvent is a PreToolUse of the Monitor tool running cmd, from a raw client (hookd
// runs every settings file's hooks).
func (w *world) monitorEvent(cmd string) *protocol.Request {
	payload, _ := json.Marshal(map[string]any{
		"session_id": "s1", "cwd": w.project, "hook_event_name": "PreToolUse", "tool_name": "Monitor", "tool_use_id": "toolu_1",
		"tool_input": map[string]any{"description": "watch", "timeout_ms": 300000, "command": cmd},
	})
	return &protocol.Request{V: protocol.Version, Event: payload, ProjectDir: w.project, Env: []string{"PATH=/usr/bin:/bin"}}
}

// TestMonitorRunsBashHooks: hooks matching Bash also run on the Monitor tool's shell
// command, on a Bash-shaped payload, and may deny or ask but not approve or rewrite it;
// `if: "Monitor(…)"` matches the command as `Bash(…)` does (Claude Code 2.1.314, observed
// with 2.1.330: docs/differences.md, monitor.go). Without this, a Bash guard installed
// through hookd would silently not run on commands the model starts through Monitor.
// (Moved down from the black-box suite: it is the engine's composition, not processes.)
func TestMonitorRunsBashHooks(t *testing.T) {
	group := func(matcher, command, cond string) string {
		h := `{"type":"command","command":"` + command + `"`
		if cond != "" {
			h += `,"if":"` + cond + `"`
		}
		return `{"matcher":"` + matcher + `","hooks":[` + h + `}]}`
	}
	groups := []string{
		group("*", "star", ""), group("Monitor", "mon", ""), group("Bash", "bash", ""),
		group("Bash", "bash-if-monitor", "Monitor(tail *)"), group("Monitor", "mon-if-monitor", "Monitor(tail *)"),
		group("Monitor", "mon-if-monitor-ls", "Monitor(ls *)"), group("*", "star-if-bash", "Bash(tail *)"),
		group("Bash", "bash-if-bash", "Bash(tail *)"),
		group("^[^M]", "negative-lookahead", ""), // a negated class fits through Bash only if it spells Bash
		group("Edit", "edit", ""),
	}
	w := newWorld(t, map[string]string{"./.claude/settings.json": `{"permissions":{"deny":["Bash(rm *)"]},
		"hooks":{"PreToolUse":[` + strings.Join(groups, ",") + `]}}`})
	w.run.out["star-if-bash"] = stdout(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"allow by hook"}}`)
	res := w.handle(w.monitorEvent("tail -f app.log"))
	// star-if-bash allowed, but its `if` names Bash: its allow does not count.
	if res.Permission != nil || strings.Contains(string(res.Output), "permissionDecision") {
		t.Fatalf("answer %s: an allow from a hook whose if names Bash must not approve a Monitor command", res.Output)
	}
	wantTool := map[string]string{
		"star": "Monitor", "mon": "Monitor", "mon-if-monitor": "Monitor", "star-if-bash": "Monitor",
		"bash": "Bash", "bash-if-bash": "Bash",
	}
	for name, tool := range wantTool {
		stdin, ok := w.run.stdin[name]
		if !ok {
			t.Errorf("hook %s did not run on the Monitor command", name)
			continue
		}
		var m struct {
			Tool  string          `json:"tool_name"`
			Input json.RawMessage `json:"tool_input"`
		}
		if err := json.Unmarshal(stdin, &m); err != nil || m.Tool != tool {
			t.Errorf("hook %s got tool_name %q (%v), want %s", name, m.Tool, err, tool)
		}
		want := `{"command":"tail -f app.log","description":"watch","timeout_ms":300000}` // as sent
		if tool == "Bash" {
			want = `{"command":"tail -f app.log","description":"watch"}`
		}
		if string(m.Input) != want {
			t.Errorf("hook %s got tool_input %s, want %s", name, m.Input, want)
		}
	}
	for _, name := range []string{"bash-if-monitor", "mon-if-monitor-ls", "negative-lookahead", "edit"} {
		if _, ok := w.run.stdin[name]; ok {
			t.Errorf("hook %s ran on the Monitor command; Claude Code 2.1.330 does not run it", name)
		}
	}
}

// TestMonitorBashHookAnswers: what a hook that met a Monitor command through Bash can say,
// and a Bash deny rule judges the Monitor command.
func TestMonitorBashHookAnswers(t *testing.T) {
	w := newWorld(t, map[string]string{"./.claude/settings.json": `{"permissions":{"deny":["Bash(rm *)"]},
		"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"guard"}]}]}}`})
	w.run.answer = func(_ string, stdin []byte) runner.ProcResult {
		d := "allow"
		switch s := string(stdin); {
		case strings.Contains(s, `"tool_name":"Monitor"`):
			return runner.ProcResult{ExitCode: 3, Stderr: []byte("hook saw Monitor")}
		case strings.Contains(s, "deny-me"):
			d = "deny"
		case strings.Contains(s, "ask-me"):
			d = "ask"
		}
		return stdout(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + d +
			`","permissionDecisionReason":"` + d + ` by guard","updatedInput":{"command":"echo rewritten"}}}`)
	}
	for _, tt := range []struct{ name, cmd, decision, reason string }{
		{"deny stands", "tail deny-me", "deny", "deny by guard"},
		{"ask stands, without the rewrite", "tail ask-me", "ask", "ask by guard"},
		{"allow and rewrite ignored", "tail -f log", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := w.handle(w.monitorEvent(tt.cmd))
			var out struct {
				HSO struct {
					Decision     string          `json:"permissionDecision"`
					Reason       string          `json:"permissionDecisionReason"`
					UpdatedInput json.RawMessage `json:"updatedInput"`
				} `json:"hookSpecificOutput"`
			}
			if len(res.Output) > 0 {
				_ = json.Unmarshal(res.Output, &out)
			}
			if out.HSO.Decision != tt.decision || out.HSO.Reason != tt.reason || out.HSO.UpdatedInput != nil {
				t.Fatalf("answer %s (exit %d), want decision %q reason %q and no updatedInput", res.Output, res.ExitCode, tt.decision, tt.reason)
			}
		})
	}
	// A Bash deny rule judges the Monitor command (Claude Code: "Permission to use Bash
	// with command rm -rf x has been denied"): hookd reports the rule's answer.
	if res := w.handle(w.monitorEvent("rm -rf x")); res.RuleAnswer == nil || res.RuleAnswer.Decision != "deny" {
		t.Fatalf("rule answer %+v for Monitor rm -rf x, want the Bash(rm *) deny rule", res.RuleAnswer)
	}
}
