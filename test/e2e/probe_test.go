//go:build probe

// Probes of real Claude Code's handling of hook output. Run with
//
//	HOOKD_CLAUDE_BIN=/path/to/claude go test -tags probe ./test/e2e -run Probe -v -count=1
//
// Each experiment writes report.md, stream.jsonl, requests.json and
// debug.txt under $PROBE_OUT (default /tmp/hookd-probe)/<name>/, and the
// reports are concatenated into $PROBE_OUT/ALL.md. FINDINGS.md records what
// they showed for Claude Code 2.1.330.
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hookd/hookd/test/claudeapi"
)

func endTurn(s string) claudeapi.Turn { return claudeapi.Turn{Text: s} }

// out is a hook body that drains stdin, prints stdout verbatim, stderr
// verbatim, and exits with code.
func out(stdout, stderr string, code int) string {
	var b strings.Builder
	b.WriteString("cat > /dev/null\n")
	if stdout != "" {
		fmt.Fprintf(&b, "cat <<'EOF_OUT'\n%s\nEOF_OUT\n", stdout)
	}
	if stderr != "" {
		fmt.Fprintf(&b, "cat >&2 <<'EOF_ERR'\n%s\nEOF_ERR\n", stderr)
	}
	fmt.Fprintf(&b, "exit %d", code)
	return b.String()
}

func pre(name, body string) hookSpec {
	return hookSpec{Event: "PreToolUse", Matcher: "Bash", Name: name, Body: body}
}

func post(name, body string) hookSpec {
	return hookSpec{Event: "PostToolUse", Matcher: "Bash", Name: name, Body: body}
}

const (
	denyR1  = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R1"}}`
	denyR2  = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R2"}}`
	allowA  = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"AR","additionalContext":"ctx-A"}}`
	ctxA    = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx-A"}}`
	ctxB    = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx-B"}}`
	askQ    = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"Q1"}}`
	allowNo = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`
)

var experiments = []experiment{
	// PreToolUse(Bash): one Bash call, then end_turn.
	{Name: "pre-a-baseline", Hooks: []hookSpec{pre("a", out("", "", 0))}},
	{Name: "pre-b-deny-exit0", Hooks: []hookSpec{pre("a", out(denyR1, "", 0))}},
	{Name: "pre-c-exit2-stderr", Hooks: []hookSpec{pre("a", out("", "E2", 2))}},
	{Name: "pre-c2-exit2-multiline-stderr", Hooks: []hookSpec{pre("a", out("", "E2 line1\nE2 line2", 2))}},
	{Name: "pre-c3-exit2-empty", Hooks: []hookSpec{pre("a", out("", "", 2))}},
	{Name: "pre-c4-exit2-stdout-only", Hooks: []hookSpec{pre("a", out("plain-out", "", 2))}},
	{Name: "pre-c5-exit2-inline-command", Hooks: []hookSpec{{Event: "PreToolUse", Matcher: "Bash", Name: "inline", Command: "echo E2 >&2; exit 2"}}},
	{Name: "pre-c6-exit2-no-newline", Hooks: []hookSpec{pre("a", "cat >/dev/null; printf E2 >&2; exit 2")}},
	{Name: "pre-c7-exit2-stderr-and-ctx-json", Hooks: []hookSpec{pre("a", out(ctxA, "E2", 2))}},
	{Name: "pre-d3-deny-reason-mimics-exit2", Hooks: []hookSpec{pre("a", out(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"[/orig/hook.sh]: E2\n"}}`, "", 0))}},
	{Name: "pre-d-exit2-stderr-plus-deny-json", Hooks: []hookSpec{pre("a", out(denyR1, "E2", 2))}},
	{Name: "pre-d2-exit2-stderr-plus-allow-json", Hooks: []hookSpec{pre("a", out(allowNo, "E2", 2))}},
	{Name: "pre-e-exit1-deny-json", Hooks: []hookSpec{pre("a", out(denyR1, "", 1))}},
	{Name: "pre-e2-exit1-deny-json-plus-stderr", Hooks: []hookSpec{pre("a", out(denyR1, "E1", 1))}},
	{Name: "pre-f1-allow-ctx", Hooks: []hookSpec{pre("a", out(allowA, "", 0))}},
	{Name: "pre-f2-two-ctx", Hooks: []hookSpec{pre("a", out(ctxA, "", 0)), pre("b", out(ctxB, "", 0))}},
	{Name: "pre-f3-two-ctx-first-slow", Hooks: []hookSpec{pre("a", "sleep 1\n"+out(ctxA, "", 0)), pre("b", out(ctxB, "", 0))}},
	{Name: "pre-f4-ctx-multiline", Hooks: []hookSpec{pre("a", out(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"line1\nline2"}}`, "", 0))}},
	{Name: "pre-f5-deny-plus-ctx", Hooks: []hookSpec{pre("a", out(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R1","additionalContext":"ctx-A"}}`, "", 0))}},
	{Name: "pre-g-continue-false", Hooks: []hookSpec{pre("a", out(`{"continue":false,"stopReason":"S"}`, "", 0))}},
	{Name: "pre-g2-continue-false-no-reason", Hooks: []hookSpec{pre("a", out(`{"continue":false}`, "", 0))}},
	{Name: "pre-g3-continue-false-side-effect", Allow: []string{"Bash(touch *)"}, Hooks: []hookSpec{pre("a", out(`{"continue":false,"stopReason":"S"}`, "", 0))},
		Script: []claudeapi.Turn{{ToolName: "Bash", ToolInput: map[string]any{"command": "touch marker"}}, endTurn("finished")}},
	{Name: "pre-g4-continue-false-plus-deny", Hooks: []hookSpec{pre("a", out(`{"continue":false,"stopReason":"S","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R1"}}`, "", 0))}},
	{Name: "pre-h2-two-systemMessages", Hooks: []hookSpec{pre("a", out(`{"systemMessage":"M1"}`, "", 0)), pre("b", out(`{"systemMessage":"M2"}`, "", 0))}},
	{Name: "pre-h-systemMessage", Hooks: []hookSpec{pre("a", out(`{"systemMessage":"M"}`, "", 0))}},
	{Name: "pre-i-exit1-stderr", Hooks: []hookSpec{pre("a", out("", "oops", 1))}},
	{Name: "pre-i2-exit3-stderr-stdout", Hooks: []hookSpec{pre("a", out("so", "oops\nsecond", 3))}},
	{Name: "pre-j-ask", Hooks: []hookSpec{pre("a", out(askQ, "", 0))}},
	{Name: "pre-j2-allow-unlisted-cmd", Allow: []string{}, Hooks: []hookSpec{pre("a", out(allowNo, "", 0))},
		Script: []claudeapi.Turn{{ToolName: "Bash", ToolInput: map[string]any{"command": "touch x"}}, endTurn("finished")}},
	{Name: "pre-j3-no-hook-unlisted-cmd", Allow: []string{}, Hooks: []hookSpec{pre("a", out("", "", 0))},
		Script: []claudeapi.Turn{{ToolName: "Bash", ToolInput: map[string]any{"command": "touch x"}}, endTurn("finished")}},
	{Name: "pre-j4-ask-no-reason", Hooks: []hookSpec{pre("a", out(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}`, "", 0))}},
	{Name: "pre-j5-allow-plus-ask", Hooks: []hookSpec{pre("a", out(allowNo, "", 0)), pre("b", out(askQ, "", 0))}},
	{Name: "pre-j6-ask-plus-deny", Hooks: []hookSpec{pre("a", out(askQ, "", 0)), pre("b", out(denyR2, "", 0))}},
	{Name: "pre-j7-allow-plus-deny", Hooks: []hookSpec{pre("a", out(allowNo, "", 0)), pre("b", out(denyR2, "", 0))}},
	{Name: "pre-k-two-exit2", Hooks: []hookSpec{pre("a", out("", "E1", 2)), pre("b", out("", "E2", 2))}},
	{Name: "pre-k3-two-exit2-first-slow", Hooks: []hookSpec{pre("a", "sleep 1\n"+out("", "E1", 2)), pre("b", out("", "E2", 2))}},
	{Name: "pre-k4-two-deny-first-slow", Hooks: []hookSpec{pre("a", "sleep 1\n"+out(denyR1, "", 0)), pre("b", out(denyR2, "", 0))}},
	{Name: "pre-k2-two-deny", Hooks: []hookSpec{pre("a", out(denyR1, "", 0)), pre("b", out(denyR2, "", 0))}},
	{Name: "pre-l-nonexistent", Hooks: []hookSpec{{Event: "PreToolUse", Matcher: "Bash", Name: "missing", Command: "/nonexistent/x.sh"}}},
	{Name: "pre-m-deny-plus-exit2", Hooks: []hookSpec{pre("a", out(denyR1, "", 0)), pre("b", out("", "E2", 2))}},
	{Name: "pre-m2-exit2-then-deny", Hooks: []hookSpec{pre("a", out("", "E2", 2)), pre("b", out(denyR1, "", 0))}},
	{Name: "pre-m3-slow-deny-plus-exit2", Hooks: []hookSpec{pre("a", "sleep 1\n"+out(denyR1, "", 0)), pre("b", out("", "E2", 2))}},
	{Name: "pre-m4-deny-plus-slow-exit2", Hooks: []hookSpec{pre("a", out(denyR1, "", 0)), pre("b", "sleep 1\n"+out("", "E2", 2))}},
	{Name: "pre-n-unknown-field", Hooks: []hookSpec{pre("a", out(`{"hookdFoo":1,"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx-A"}}`, "", 0))}},
	{Name: "pre-n2-unknown-hso-field", Hooks: []hookSpec{pre("a", out(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","hookdFoo":1,"additionalContext":"ctx-A"}}`, "", 0))}},
	{Name: "pre-n3-bad-type", Hooks: []hookSpec{pre("a", out(`{"continue":"nope","hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx-A"}}`, "", 0))}},
	{Name: "pre-n4-wrong-event-name", Hooks: []hookSpec{pre("a", out(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"ctx-A"}}`, "", 0))}},
	{Name: "pre-o-plain-stdout-exit0", Hooks: []hookSpec{pre("a", out("plain-out", "", 0))}},
	{Name: "pre-o2-invalid-json-exit0", Hooks: []hookSpec{pre("a", out(`{not json`, "", 0))}},
	{Name: "pre-p-deprecated-block", Hooks: []hookSpec{pre("a", out(`{"decision":"block","reason":"DB"}`, "", 0))}},
	{Name: "pre-q-updatedInput", Hooks: []hookSpec{pre("a", out(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo rewritten"}}}`, "", 0))}},
	{Name: "pre-r-deny-plus-ctx-other-hook", Hooks: []hookSpec{pre("a", out(denyR1, "", 0)), pre("b", out(ctxB, "", 0))}},
	// What a forwarder may add to say it answered in a degraded way (issue 29: hookc's
	// in-process fallback): a stderr line on exit 0, a systemMessage beside an exit 2.
	{Name: "pre-t1-exit0-stderr", Hooks: []hookSpec{pre("a", out("", "NOTE0", 0))}},
	{Name: "pre-t2-exit0-deny-json-plus-stderr", Hooks: []hookSpec{pre("a", out(denyR1, "NOTE0", 0))}},
	{Name: "pre-t3-exit2-stderr-plus-sysmsg-json", Hooks: []hookSpec{pre("a", out(`{"systemMessage":"M"}`, "E2", 2))}},
	{Name: "pre-t4-sysmsg-first-and-last", Hooks: []hookSpec{pre("a", out(`{"systemMessage":"FIRST","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R1"},"systemMessage":"LAST"}`, "", 0))}},
	{Name: "ups-10-exit0-stderr", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out("", "NOTE0", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ss-7-exit0-stderr", Hooks: []hookSpec{{Event: "SessionStart", Name: "a", Body: out("", "NOTE0", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	// Which events reach hooks when Claude Code's own permission rules decide (issue 29:
	// what a decision log fed by forwarded events can see). Every hook only drains stdin.
	{Name: "cov-1-deny-rule-bash", Allow: []string{"Bash(echo *)"}, Settings: map[string]any{"permissions": map[string]any{"allow": []string{"Bash(echo *)"}, "deny": []string{"Bash(cat *)"}}},
		Hooks:  coverageHooks(),
		Script: []claudeapi.Turn{{ToolName: "Bash", ToolInput: map[string]any{"command": "cat .env", "description": "read env"}}, endTurn("finished")}},
	{Name: "cov-2-deny-rule-read", Settings: map[string]any{"permissions": map[string]any{"deny": []string{"Read(./.env)"}}},
		Hooks:  coverageHooks(),
		Script: []claudeapi.Turn{{ToolName: "Read", ToolInput: map[string]any{"file_path": ".env"}}, endTurn("finished")}},
	{Name: "cov-3-no-rule-ask-in-print-mode", Allow: []string{},
		Hooks:  coverageHooks(),
		Script: []claudeapi.Turn{{ToolName: "Bash", ToolInput: map[string]any{"command": "touch x", "description": "touch"}}, endTurn("finished")}},
	{Name: "cov-4-allow-rule", Hooks: coverageHooks()},
	{Name: "cov-5-deny-rule-write", Settings: map[string]any{"permissions": map[string]any{"deny": []string{"Edit(./secret.txt)"}}},
		Hooks:  coverageHooks(),
		Script: []claudeapi.Turn{{ToolName: "Write", ToolInput: map[string]any{"file_path": "secret.txt", "content": "x"}}, endTurn("finished")}},
	{Name: "cov-6-ask-rule-bash", Settings: map[string]any{"permissions": map[string]any{"allow": []string{"Bash(echo *)"}, "ask": []string{"Bash(echo *)"}}},
		Hooks: coverageHooks()},
	{Name: "pre-s-deny-plus-sysmsg", Hooks: []hookSpec{pre("a", out(`{"systemMessage":"M","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R1"}}`, "", 0))}},

	// UserPromptSubmit: the prompt, then end_turn.
	{Name: "ups-1-plain-stdout", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out("P1", "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-2-json-ctx", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"P2"}}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-3-both", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out("P1", "", 0)}, {Event: "UserPromptSubmit", Name: "b", Body: out(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"P2"}}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-3b-two-plain", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out("P1", "", 0)}, {Event: "UserPromptSubmit", Name: "b", Body: out("P1b", "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-3c-two-json-ctx", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"P2"}}`, "", 0)}, {Event: "UserPromptSubmit", Name: "b", Body: out(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"P3"}}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-3d-multiline-plain", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out("P1 line1\nP1 line2\n", "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-3e-prompt-with-tool", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out("P1", "", 0)}}},
	{Name: "ups-4-exit2", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out("", "B", 2)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-4b-exit2-two-hooks", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out("", "B1", 2)}, {Event: "UserPromptSubmit", Name: "b", Body: out("", "B2", 2)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-5b-decision-block-plus-ctx-other", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out(`{"decision":"block","reason":"BR"}`, "", 0)}, {Event: "UserPromptSubmit", Name: "b", Body: out("P1", "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-4c-exit2-plus-json-block", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out(`{"decision":"block","reason":"BR"}`, "B", 2)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-5-decision-block", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out(`{"decision":"block","reason":"BR"}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-6-exit1-stderr", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out("P1", "oops", 1)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-7-continue-false", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out(`{"continue":false,"stopReason":"S"}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ups-8-systemMessage", Hooks: []hookSpec{{Event: "UserPromptSubmit", Name: "a", Body: out(`{"systemMessage":"M"}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},

	// SessionStart.
	{Name: "ss-1-plain-stdout", Hooks: []hookSpec{{Event: "SessionStart", Name: "a", Body: out("S1", "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}, Markers: []string{"S1"}},
	{Name: "ss-2-json-ctx", Hooks: []hookSpec{{Event: "SessionStart", Name: "a", Body: out(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"S2"}}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}, Markers: []string{"S2"}},
	{Name: "ss-3-both", Hooks: []hookSpec{{Event: "SessionStart", Name: "a", Body: out("S1", "", 0)}, {Event: "SessionStart", Name: "b", Body: out(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"S2"}}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}, Markers: []string{"S1", "S2"}},
	{Name: "ss-3b-two-json-ctx", Hooks: []hookSpec{{Event: "SessionStart", Name: "a", Body: out(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"S2"}}`, "", 0)}, {Event: "SessionStart", Name: "b", Body: out(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"S3"}}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}, Markers: []string{"S2", "S3"}},
	{Name: "ss-5-systemMessage", Hooks: []hookSpec{{Event: "SessionStart", Name: "a", Body: out(`{"systemMessage":"M"}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("finished")}},
	{Name: "ss-4-exit2", Hooks: []hookSpec{{Event: "SessionStart", Name: "a", Body: out("S1", "SE", 2)}}, Script: []claudeapi.Turn{endTurn("finished")}, Markers: []string{"S1", "SE"}},

	// Stop: block once (stop_hook_active false), then allow.
	{Name: "stop-1-block-then-allow", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: stopOnce(`{"decision":"block","reason":"keep going"}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("first"), endTurn("second")}},
	{Name: "stop-2-exit2-then-allow", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: stopOnce("", "SE", 2)}}, Script: []claudeapi.Turn{endTurn("first"), endTurn("second")}},
	{Name: "stop-2b-exit2-plus-json-block", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: stopOnce(`{"decision":"block","reason":"[/orig/a.sh]: SE\n"}`, "x", 2)}}, Script: []claudeapi.Turn{endTurn("first"), endTurn("second")}},
	{Name: "stop-9-exit0-stderr", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: out("", "NOTE0", 0)}}, Script: []claudeapi.Turn{endTurn("first")}},
	{Name: "stop-11-exit2-plus-sysmsg-json", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: stopOnce(`{"systemMessage":"M"}`, "SE", 2)}}, Script: []claudeapi.Turn{endTurn("first"), endTurn("second")}},
	{Name: "stop-10-exit0-sysmsg", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: out(`{"systemMessage":"M"}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("first")}},
	{Name: "stop-3-ctx-then-allow", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: stopOnce(`{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"SC"}}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("first"), endTurn("second")}},
	{Name: "stop-4-two-blocks", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: stopOnce(`{"decision":"block","reason":"keep going A"}`, "", 0)}, {Event: "Stop", Name: "b", Body: stopOnce(`{"decision":"block","reason":"keep going B"}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("first"), endTurn("second")}},
	{Name: "stop-4b-block-plus-ctx-other", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: stopOnce(`{"decision":"block","reason":"keep going"}`, "", 0)}, {Event: "Stop", Name: "b", Body: stopOnce(`{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"SC"}}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("first"), endTurn("second")}},
	{Name: "stop-4c-inline-block", Hooks: []hookSpec{{Event: "Stop", Name: "inline", Command: `grep -q '"stop_hook_active":true' || echo '{"decision":"block","reason":"keep going"}'`}}, Script: []claudeapi.Turn{endTurn("first"), endTurn("second")}},
	{Name: "stop-4d-continue-false", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: stopOnce(`{"continue":false,"stopReason":"S"}`, "", 0)}}, Script: []claudeapi.Turn{endTurn("first"), endTurn("second")}},
	{Name: "stop-5-plain-stdout", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: stopOnce("plain-out", "", 0)}}, Script: []claudeapi.Turn{endTurn("first"), endTurn("second")}},
	{Name: "stop-6-exit1", Hooks: []hookSpec{{Event: "Stop", Name: "a", Body: stopOnce("", "oops", 1)}}, Script: []claudeapi.Turn{endTurn("first"), endTurn("second")}},

	// PostToolUse(Bash).
	{Name: "post-1-block", Hooks: []hookSpec{post("a", out(`{"decision":"block","reason":"PB"}`, "", 0))}},
	{Name: "post-2-ctx", Hooks: []hookSpec{post("a", out(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"PC"}}`, "", 0))}},
	{Name: "post-3-exit2", Hooks: []hookSpec{post("a", out("", "P2E", 2))}},
	{Name: "post-4-block-plus-ctx", Hooks: []hookSpec{post("a", out(`{"decision":"block","reason":"PB","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"PC"}}`, "", 0))}},
	{Name: "post-5-exit1", Hooks: []hookSpec{post("a", out("", "oops", 1))}},
	{Name: "post-6-continue-false", Hooks: []hookSpec{post("a", out(`{"continue":false,"stopReason":"S"}`, "", 0))}},
	{Name: "post-7-two-exit2", Hooks: []hookSpec{post("a", out("", "P2E-a", 2)), post("b", out("", "P2E-b", 2))}},
	{Name: "post-7b-two-ctx", Hooks: []hookSpec{post("a", out(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"PC-a"}}`, "", 0)), post("b", out(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"PC-b"}}`, "", 0))}},
	{Name: "post-7c-two-blocks", Hooks: []hookSpec{post("a", out(`{"decision":"block","reason":"PB-a"}`, "", 0)), post("b", out(`{"decision":"block","reason":"PB-b"}`, "", 0))}},
	{Name: "post-7d-inline-exit2", Hooks: []hookSpec{{Event: "PostToolUse", Matcher: "Bash", Name: "inline", Command: "echo P2E >&2; exit 2"}}},
	{Name: "post-7e-block-reason-mimics-two", Hooks: []hookSpec{post("a", out(`{"decision":"block","reason":"PB-a\n\nPostToolUse:Bash hook blocking error from command: \"/orig/b.sh\": PB-b"}`, "", 0))}},
	{Name: "post-3b-exit2-plus-json-block", Hooks: []hookSpec{post("a", out(`{"decision":"block","reason":"PB"}`, "P2E", 2))}},
	{Name: "post-8-updatedToolOutput", Hooks: []hookSpec{post("a", out(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"REDACTED","stderr":"","interrupted":false,"isImage":false}}}`, "", 0))}},
	{Name: "post-9-systemMessage", Hooks: []hookSpec{post("a", out(`{"systemMessage":"M"}`, "", 0))}},

	// Environment of hook processes.
	{Name: "env", Hooks: []hookSpec{
		{Event: "SessionStart", Name: "env-SessionStart", Body: envDump("SessionStart")},
		{Event: "UserPromptSubmit", Name: "env-UserPromptSubmit", Body: envDump("UserPromptSubmit")},
		pre("env-PreToolUse", envDump("PreToolUse")),
		post("env-PostToolUse", envDump("PostToolUse")),
		{Event: "Stop", Name: "env-Stop", Body: envDump("Stop")},
	}},
}

// coverageHooks are one draining hook on each tool-permission event, matching every tool.
func coverageHooks() []hookSpec {
	var hs []hookSpec
	for _, ev := range []string{"PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure"} {
		hs = append(hs, hookSpec{Event: ev, Matcher: "*", Name: strings.ToLower(ev), Body: out("", "", 0)})
	}
	return hs
}

// stopOnce blocks (prints stdout/stderr, exits code) only when
// stop_hook_active is false, else allows.
func stopOnce(stdout, stderr string, code int) string {
	return "in=$(cat)\ncase \"$in\" in *'\"stop_hook_active\":true'*) exit 0;; esac\n" + strings.Replace(out(stdout, stderr, code), "cat > /dev/null\n", "", 1)
}

func envDump(event string) string {
	return fmt.Sprintf("cat > /dev/null\ncd \"$(dirname \"$0\")/..\" && env | sort > env-%s.txt; pwd > cwd-%s.txt\nexit 0", event, event)
}

func TestProbe(t *testing.T) {
	only := os.Getenv("PROBE_ONLY")
	if only == "" {
		_ = os.RemoveAll(outRoot())
	}
	var reports []string
	for _, ex := range experiments {
		if only != "" && !strings.Contains(ex.Name, only) {
			continue
		}
		t.Run(ex.Name, func(t *testing.T) {
			if ex.Script == nil {
				ex.Script = []claudeapi.Turn{bashEcho, endTurn("finished")}
			}
			o := run(t, ex)
			reports = append(reports, o.Report)
			if ex.Name == "env" {
				files, _ := filepath.Glob(filepath.Join(o.Dir, "proj", "env-*.txt"))
				sort.Strings(files)
				for _, f := range files {
					data, _ := os.ReadFile(f)
					t.Logf("%s:\n%s", filepath.Base(f), data)
				}
			}
		})
	}
	if only == "" {
		_ = os.WriteFile(filepath.Join(outRoot(), "ALL.md"), []byte(strings.Join(reports, "\n\n")), 0o644)
	}
}
