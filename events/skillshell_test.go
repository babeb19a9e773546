package events

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookd/hookd/protocol"
)

// TestSkillShellInterpret: each PreSkillShellCommand answer as Claude Code 2.1.332 reads
// it (the probe named in each case; test/e2e/FINDINGS.md).
func TestSkillShellInterpret(t *testing.T) {
	own := func(hso string) string {
		return `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand",` + hso + `}}`
	}
	tests := []struct {
		name string
		out  RawOutput
		want summary
	}{
		{"exit 0, no output: nothing (pssc-1)", cmd(0, "", ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"allow adds nothing (pssc-2)", cmd(0, own(`"permissionDecision":"allow","permissionDecisionReason":"R"`), ""),
			summary{Outcome: "ok", ExitCode: "0", Permission: "allow", PermissionReason: "R"}},
		{"deny (pssc-3)", cmd(0, own(`"permissionDecision":"deny","permissionDecisionReason":"R"`), ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: "R"}},
		{"ask blocks (pssc-3b)", cmd(0, own(`"permissionDecision":"ask","permissionDecisionReason":"R"`), ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "ask", PermissionReason: "R"}},
		{"defer blocks (pssc-3c)", cmd(0, own(`"permissionDecision":"defer"`), ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "defer"}},
		{"exit 2 (pssc-3d)", cmd(2, "", "E2\n"),
			summary{Outcome: "blocked", ExitCode: "2", Permission: "deny", PermissionReason: "[./guard.sh]: E2\n"}},
		{"exit 2: the JSON reason wins (pssc-3g)", cmd(2, own(`"permissionDecision":"deny","permissionDecisionReason":"R"`), "E2\n"),
			summary{Outcome: "blocked", ExitCode: "2", Permission: "deny", PermissionReason: "R"}},
		{"decision block (pssc-3e)", cmd(0, `{"decision":"block","reason":"DB"}`, ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: "DB"}},
		{"decision approve adds nothing (pssc-4n)", cmd(0, `{"decision":"approve","reason":"AP"}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Permission: "allow", PermissionReason: "AP"}},
		{"updatedInput with allow blocks (pssc-4)", cmd(0, own(`"permissionDecision":"allow","updatedInput":{"command":"echo x"}`), ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: SkillShellChanged}},
		{"updatedInput alone blocks (pssc-4b)", cmd(0, own(`"updatedInput":{}`), ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: SkillShellChanged}},
		{"deny keeps its reason beside updatedInput (pssc-4i)", cmd(0, own(`"permissionDecision":"deny","permissionDecisionReason":"R","updatedInput":{"command":"x"}`), ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: "R"}},
		{"PreToolUse-shaped answer (pssc-4c)", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}`, ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: "R"}},
		{"PreToolUse-shaped rewrite blocks (pssc-4l)", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"x"}}}`, ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: SkillShellChanged}},
		{"PermissionRequest-shaped deny (pssc-4d)", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"M"}}}`, ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: "M"}},
		{"PermissionRequest-shaped allow adds nothing (pssc-4j)", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[]}}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Permission: "allow"}},
		{"PermissionRequest-shaped updatedPermissions blocks (pssc-4e)", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}}}`, ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: SkillShellPermissions}},
		{"PermissionRequest-shaped rewrite blocks (pssc-4k)", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"x"}}}}`, ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: SkillShellChanged}},
		{"another event's shape is a failed hook (pssc-4g)", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}`, ""),
			summary{Outcome: "error", ExitCode: "0", Error: `expected "PreSkillShellCommand" but got "PostToolUse"`}},
		{"a decision outside the schema is a failed hook (pssc-4h)", cmd(0, own(`"permissionDecision":"maybe"`), ""),
			summary{Outcome: "error", ExitCode: "0", Error: `permissionDecision: expected "allow" | "deny" | "ask" | "defer", received "maybe"`}},
		{"additionalContext is not read (pssc-4f)", cmd(0, own(`"additionalContext":"CTX"`), ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"plain stdout is not context (pssc-5c)", cmd(0, "hello plain\n", ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"systemMessage (pssc-5)", cmd(0, `{"systemMessage":"SM"}`, ""), summary{Outcome: "ok", ExitCode: "0", SystemMessage: "SM"}},
		{"continue false (pssc-5b)", cmd(0, `{"continue":false,"stopReason":"STOP"}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Continue: "false", StopReason: "STOP"}},
		{"exit 1 is no decision (pssc-7c)", cmd(1, "", "E1\n"), summary{Outcome: "error", ExitCode: "1", Error: "Failed with non-blocking status code: E1"}},
		{"exit 1 with a JSON deny denies (pssc-7j)", cmd(1, own(`"permissionDecision":"deny","permissionDecisionReason":"R"`), "E1\n"),
			summary{Outcome: "blocked", ExitCode: "1", Permission: "deny", PermissionReason: "R"}},
		{"a timeout is no decision (pssc-7)", RawOutput{Kind: Command, Command: "./guard.sh", TimedOut: true}, summary{Outcome: "timeout", Error: "timed out"}},
		{"a timeout with onFailure block blocks (pssc-7b)", RawOutput{Kind: Command, Command: "./guard.sh", TimedOut: true, FailClosed: true},
			summary{Outcome: "blocked", Error: "timed out", Permission: "deny", PermissionReason: `[./guard.sh]: timed out; blocking because onFailure is "block"`}},
		{"exit 1 with onFailure block blocks (pssc-7d)", func() RawOutput { o := cmd(1, "", "E1\n"); o.FailClosed = true; return o }(),
			summary{Outcome: "blocked", ExitCode: "1", Error: "E1", Permission: "deny", PermissionReason: "[./guard.sh]: failed; blocking because onFailure is \"block\"\nE1"}},
	}
	ev := mustEvent(t, SkillShell)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(Interpret(ev, protocol.HookRef{ID: "h"}, tt.out))
			if tt.want.Error != "" && strings.Contains(got.Error, tt.want.Error) {
				got.Error = tt.want.Error
			}
			if got != tt.want {
				t.Errorf("Interpret:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestSkillShellRender: what hookc answers Claude Code for each merged PreSkillShellCommand
// result, so that the notice and the skill text read as they would without hookd
// ("blocked by hook: E2", not "blocked by hook: [/path/guard.sh]: E2").
func TestSkillShellRender(t *testing.T) {
	ev := mustEvent(t, SkillShell)
	ref := protocol.HookRef{ID: "h", Command: "./guard.sh"}
	other := protocol.HookRef{ID: "h2", Command: "./other.sh"}
	failClosed := func(o RawOutput) RawOutput { o.FailClosed = true; return o }
	tests := []struct {
		name  string
		parts []Interpretation
		want  string // the hookSpecificOutput members but hookEventName, or the whole output
	}{
		{"nothing to say", []Interpretation{Interpret(ev, ref, cmd(0, "", ""))}, ``},
		{"exit 2: the command's prefix goes", []Interpretation{Interpret(ev, ref, cmd(2, "", "E2 line1\n  E2 line2\n"))},
			`"permissionDecision":"deny","permissionDecisionReason":"E2 line1\n  E2 line2"`},
		{"exit 2 without stderr: no reason", []Interpretation{Interpret(ev, ref, cmd(2, "", ""))}, `"permissionDecision":"deny"`},
		{"an onFailure block keeps the command", []Interpretation{Interpret(ev, ref, failClosed(RawOutput{Kind: Command, Command: "./guard.sh", TimedOut: true}))},
			`"permissionDecision":"deny","permissionDecisionReason":"[./guard.sh]: timed out; blocking because onFailure is \"block\""`},
		{"ask stays ask: Claude Code adds why it blocks", []Interpretation{Interpret(ev, ref, cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"ask","permissionDecisionReason":"R"}}`, ""))},
			`"permissionDecision":"ask","permissionDecisionReason":"R"`},
		{"a rewrite is said as Claude Code says it", []Interpretation{Interpret(ev, ref, cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","updatedInput":{"command":"x"}}}`, ""))},
			`"permissionDecision":"deny","permissionDecisionReason":"` + SkillShellChanged + `"`},
		{"deny beats ask; reasons of the denies only", []Interpretation{
			Interpret(ev, other, cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"ask","permissionDecisionReason":"RA"}}`, "")),
			Interpret(ev, ref, cmd(0, `{"decision":"block","reason":"DB"}`, ""))},
			`"permissionDecision":"deny","permissionDecisionReason":"DB"`},
		{"additionalContext is never forwarded", []Interpretation{Interpret(ev, ref, cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","additionalContext":"CTX"}}`, ""))}, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mergeRender(ev, tt.parts)
			if res.ExitCode != 0 || res.Stderr != "" {
				t.Errorf("exit %d, stderr %q: want 0 and none (a hookc exit 1 would be a failure under an onFailure:block forwarder)", res.ExitCode, res.Stderr)
			}
			var got string
			if len(res.Output) > 0 {
				var top struct {
					HSO json.RawMessage `json:"hookSpecificOutput"`
				}
				if err := json.Unmarshal(res.Output, &top); err != nil {
					t.Fatal(err)
				}
				got = strings.TrimSuffix(strings.TrimPrefix(string(top.HSO), `{"hookEventName":"PreSkillShellCommand",`), "}")
			}
			if got != tt.want {
				t.Errorf("hookSpecificOutput:\n got %s\nwant %s\n(output %s)", got, tt.want, res.Output)
			}
		})
	}
	// A fail-closed answer from the daemon (Block set, no permission) is a deny.
	res := &protocol.Result{Event: SkillShell, Block: &protocol.Block{Reason: "hookd: stopped", Hook: &ref}}
	finalize(ev, res)
	if !strings.Contains(string(res.Output), `"permissionDecision":"deny","permissionDecisionReason":"hookd: stopped"`) {
		t.Errorf("block rendered as %s", res.Output)
	}
}

func TestSkillShellCatalogue(t *testing.T) {
	ev := mustEvent(t, SkillShell)
	if ev.MatcherField != "tool_name" || !ev.CanBlock || !ev.ToolEvent || ev.DefaultTimeout.Seconds() != 600 {
		t.Errorf("catalogue entry %+v", ev)
	}
	for _, typ := range []HandlerType{Command, HTTP, MCPTool, Prompt, Agent} {
		if !ev.Accepts(typ) {
			t.Errorf("%s handlers are accepted in settings (prompt and agent block at run time, probe pssc-6)", typ)
		}
	}
	if n := len(All()); n != 34 {
		t.Errorf("%d events, want 34 (Claude Code 2.1.332)", n)
	}
}
