package events

import (
	"strings"
	"testing"

	"github.com/hookd/hookd/protocol"
)

// TestModelSwitchEvents: PreModelSwitch answers like PreToolUse without defer and
// updatedInput, refuses on exit 2 and on timeout (Claude Code 2.1.251); PostModelSwitch
// carries additionalContext. Shapes from the 2.1.330 binary's output schema.
func TestModelSwitchEvents(t *testing.T) {
	pre := `{"hookSpecificOutput":{"hookEventName":"PreModelSwitch","permissionDecision":"%s","permissionDecisionReason":"R"}}`
	tests := []struct {
		name, event string
		out         RawOutput
		want        summary
	}{
		{"pre/allow", "PreModelSwitch", cmd(0, strings.Replace(pre, "%s", "allow", 1), ""), summary{Outcome: "ok", ExitCode: "0", Permission: "allow", PermissionReason: "R"}},
		{"pre/deny", "PreModelSwitch", cmd(0, strings.Replace(pre, "%s", "deny", 1), ""), summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: "R"}},
		{"pre/ask", "PreModelSwitch", cmd(0, strings.Replace(pre, "%s", "ask", 1), ""), summary{Outcome: "ok", ExitCode: "0", Permission: "ask", PermissionReason: "R"}},
		{"pre/defer is not in its schema", "PreModelSwitch", cmd(0, strings.Replace(pre, "%s", "defer", 1), ""),
			summary{Outcome: "error", ExitCode: "0", Error: `permissionDecision: expected "allow" | "deny" | "ask", received "defer"`}},
		{"pre/updatedInput is not its field", "PreModelSwitch", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreModelSwitch","permissionDecision":"allow","updatedInput":{"x":1}}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Permission: "allow"}},
		{"pre/exit2 refuses", "PreModelSwitch", cmd(2, "", "no opus\n"), summary{Outcome: "blocked", ExitCode: "2", Permission: "deny", PermissionReason: "[./guard.sh]: no opus\n"}},
		{"pre/exit1 is no decision", "PreModelSwitch", cmd(1, "", "x\n"), summary{Outcome: "error", ExitCode: "1", Error: "Failed with non-blocking status code: x"}},
		// Claude Code names the hook "<Event>:<to_model>" here (e2e model-switch-timeout).
		{"pre/timeout refuses", "PreModelSwitch", RawOutput{Kind: Command, Command: "./guard.sh", HookName: "PreModelSwitch:claude-sonnet-4-5", TimedOut: true},
			summary{Outcome: "blocked", Error: "timed out", Permission: "deny", PermissionReason: "PreModelSwitch hook PreModelSwitch:claude-sonnet-4-5 did not respond before its timeout"}},
		{"post/context", "PostModelSwitch", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PostModelSwitch","additionalContext":"now sonnet"}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Context: "now sonnet"}},
		{"post/timeout is no decision", "PostModelSwitch", RawOutput{Kind: Command, TimedOut: true}, summary{Outcome: "timeout", Error: "timed out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(Interpret(mustEvent(t, tt.event), protocol.HookRef{ID: "h"}, tt.out))
			if tt.want.Error != "" && strings.Contains(got.Error, tt.want.Error) {
				got.Error = tt.want.Error
			}
			if got != tt.want {
				t.Errorf("Interpret:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}

	// Rendered like PreToolUse: JSON permissionDecision, exit 0.
	ev := mustEvent(t, "PreModelSwitch")
	res := mergeRender(ev, []Interpretation{Interpret(ev, protocol.HookRef{ID: "h"}, cmd(2, "", "no opus\n"))})
	if res.ExitCode != 0 || !strings.Contains(string(res.Output), `"permissionDecision":"deny"`) || !strings.Contains(string(res.Output), `"hookEventName":"PreModelSwitch"`) {
		t.Errorf("rendered exit %d %s", res.ExitCode, res.Output)
	}
}

func TestModelMatch(t *testing.T) {
	for in, want := range map[string]string{
		"claude-opus-4-6[1m]": "claude-opus-4-6", "claude-opus-4-6[1M]": "claude-opus-4-6",
		"claude-opus-4-6[2m]": "claude-opus-4-6", "claude-opus-4-6": "claude-opus-4-6",
		"[1m]": "[1m]", "sonnet[1m]x": "sonnet[1m]x",
	} {
		if got := ModelMatchValue(in); got != want {
			t.Errorf("ModelMatchValue(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"opus[1m]|sonnet[1m]": "opus|sonnet", "opus[1m], haiku": "opus, haiku", "claude-.*": "claude-.*", "[1m]": "[1m]",
	} {
		if got := ModelMatcherText(in); got != want {
			t.Errorf("ModelMatcherText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestElicitationDecisionBlock: {"decision":"block"} declines an elicitation (Claude Code
// 2.1.284), as exit 2 does.
func TestElicitationDecisionBlock(t *testing.T) {
	for _, name := range []string{"Elicitation", "ElicitationResult"} {
		ev := mustEvent(t, name)
		in := Interpret(ev, protocol.HookRef{ID: "h"}, cmd(0, `{"decision":"block","reason":"no forms"}`, ""))
		if !in.Block || in.BlockReason != "no forms" || in.Outcome != protocol.OutcomeBlocked {
			t.Fatalf("%s: %+v", name, summarize(in))
		}
		// Rendered with exit 2, which declines on every Claude Code version.
		res := mergeRender(ev, []Interpretation{in})
		if res.ExitCode != 2 || res.Stderr != "no forms\n" {
			t.Errorf("%s rendered exit %d %s / %q", name, res.ExitCode, res.Output, res.Stderr)
		}
	}
}
