package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

func mustEvent(t testing.TB, name string) *Event {
	t.Helper()
	ev, ok := Lookup(name)
	if !ok {
		t.Fatalf("unknown event %q", name)
	}
	return ev
}

// summary flattens an Interpretation for got/want comparison.
type summary struct {
	Outcome          string
	Error            string // compared as a substring
	ExitCode         string
	Permission       string
	PermissionReason string
	UpdatedInput     string
	Block            bool
	BlockReason      string
	BlockVia         string
	Continue         string
	StopReason       string
	Context          string
	Plain            bool
	SystemMessage    string
	Specific         string // JSON of the map, keys sorted by encoding/json
	Worktree         string
	Warning          string // substring of the joined warnings
}

func summarize(in Interpretation) summary {
	s := summary{Outcome: in.Outcome, Error: in.Error, Permission: in.Permission,
		PermissionReason: in.PermissionReason, UpdatedInput: string(in.UpdatedInput),
		Block: in.Block, BlockReason: in.BlockReason, BlockVia: in.BlockVia,
		StopReason: in.StopReason, Context: in.AdditionalContext, Plain: in.PlainContext,
		SystemMessage: in.SystemMessage, Worktree: in.WorktreePath,
		Warning: strings.Join(in.Warnings, "|")}
	if in.ExitCode != nil {
		b, _ := json.Marshal(*in.ExitCode)
		s.ExitCode = string(b)
	}
	if in.Continue != nil {
		s.Continue = map[bool]string{true: "true", false: "false"}[*in.Continue]
	}
	if in.Specific != nil {
		b, _ := json.Marshal(in.Specific)
		s.Specific = string(b)
	}
	return s
}

func cmd(code int, stdout, stderr string) RawOutput {
	return RawOutput{Kind: Command, Command: "./guard.sh", ExitCode: code, Stdout: []byte(stdout), Stderr: []byte(stderr), Duration: 3 * time.Millisecond}
}

// Outputs from spec §4.5 and the probes.
const (
	denyJSON      = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Destructive command blocked by policy"}}`
	allowRewrite  = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"rewritten to dry-run","updatedInput":{"command":"npm publish --dry-run"},"additionalContext":"Publishing is dry-run only in this repo."}}`
	allowPlain    = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`
	prAllow       = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}}}`
	prDeny        = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Not allowed on CI","interrupt":false}}}`
	postBlock     = `{"decision":"block","reason":"Lint failed: see output","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"Run npm run lint:fix","updatedToolOutput":{"stdout":"[redacted]","stderr":"","interrupted":false,"isImage":false}}}`
	upsBlock      = `{"decision":"block","reason":"Prompt contains a secret","hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"Branch: main"}}`
	stopBlock     = `{"decision":"block","reason":"Tests are failing; fix them before stopping"}`
	stopCtx       = `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"Run the test suite before finishing"}}`
	sessionStart  = `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"Branch feat/x","sessionTitle":"feat-x","watchPaths":["/home/u/proj/.envrc"],"reloadSkills":false}}`
	continueFalse = `{"continue":false,"stopReason":"Build failed, fix errors before continuing"}`
)

func TestInterpret(t *testing.T) {
	tests := []struct {
		name  string
		event string
		out   RawOutput
		want  summary
	}{
		// PreToolUse: spec §4.1 rows, §4.4 decision control.
		{"pre/exit0 empty", "PreToolUse", cmd(0, "", ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"pre/exit0 deny json", "PreToolUse", cmd(0, denyJSON+"\n", ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: "Destructive command blocked by policy"}},
		{"pre/exit0 allow rewrite ctx", "PreToolUse", cmd(0, allowRewrite, ""),
			summary{Outcome: "ok", ExitCode: "0", Permission: "allow", PermissionReason: "rewritten to dry-run",
				UpdatedInput: `{"command":"npm publish --dry-run"}`, Context: "Publishing is dry-run only in this repo."}},
		{"pre/exit0 ask", "PreToolUse", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"Q1"}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Permission: "ask", PermissionReason: "Q1"}},
		{"pre/exit0 defer", "PreToolUse", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Permission: "defer"}},
		{"pre/deny drops updatedInput", "PreToolUse", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","updatedInput":{"command":"x"}}}`, ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny"}},
		{"pre/legacy block", "PreToolUse", cmd(0, `{"decision":"block","reason":"DB"}`, ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: "DB"}},
		{"pre/legacy approve", "PreToolUse", cmd(0, `{"decision":"approve","reason":"fine"}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Permission: "allow", PermissionReason: "fine"}},
		{"pre/permissionDecision beats legacy", "PreToolUse", cmd(0, `{"decision":"approve","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Permission: "ask"}},
		{"pre/exit2 stderr", "PreToolUse", cmd(2, "", "E2\n"),
			summary{Outcome: "blocked", ExitCode: "2", Permission: "deny", PermissionReason: "[./guard.sh]: E2\n"}},
		{"pre/exit2 empty stderr", "PreToolUse", cmd(2, "plain-out", ""),
			summary{Outcome: "blocked", ExitCode: "2", Permission: "deny", PermissionReason: "[./guard.sh]: No stderr output"}},
		{"pre/exit2 beats allow json", "PreToolUse", cmd(2, allowRewrite, "E2\n"),
			summary{Outcome: "blocked", ExitCode: "2", Permission: "deny", PermissionReason: "[./guard.sh]: E2\n", Context: "Publishing is dry-run only in this repo."}},
		{"pre/exit2 deny json reason wins", "PreToolUse", cmd(2, denyJSON, "E2\n"),
			summary{Outcome: "blocked", ExitCode: "2", Permission: "deny", PermissionReason: "Destructive command blocked by policy"}},
		{"pre/exit2 invalid json still blocks", "PreToolUse", cmd(2, `{"continue":"nope"}`, "E2\n"),
			summary{Outcome: "blocked", ExitCode: "2", Permission: "deny", PermissionReason: "[./guard.sh]: E2\n", Warning: "continue: expected boolean, received string"}},
		{"pre/exit1 deny json honoured", "PreToolUse", cmd(1, denyJSON, "E1\n"),
			summary{Outcome: "blocked", ExitCode: "1", Permission: "deny", PermissionReason: "Destructive command blocked by policy"}},
		{"pre/exit1 allow json honoured", "PreToolUse", cmd(1, allowPlain, ""),
			summary{Outcome: "ok", ExitCode: "1", Permission: "allow"}},
		{"pre/exit1 stderr", "PreToolUse", cmd(1, "", "oops\nsecond\n"),
			summary{Outcome: "error", ExitCode: "1", Error: "Failed with non-blocking status code: oops\nsecond"}},
		{"pre/exit3 plain stdout", "PreToolUse", cmd(3, "so", ""),
			summary{Outcome: "error", ExitCode: "3", Error: "Failed with non-blocking status code: No stderr output"}},
		{"pre/exit1 invalid json", "PreToolUse", cmd(1, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"yes"}}`, ""),
			summary{Outcome: "error", ExitCode: "1", Error: `permissionDecision: expected "allow" | "deny" | "ask" | "defer", received "yes"`}},
		{"pre/exit0 plain stdout ignored", "PreToolUse", cmd(0, "plain-out\n", ""), summary{Outcome: "ok", ExitCode: "0"}},
		// Claude Code 2.1.248: a "{…}" that is not valid JSON is a hook error; output that
		// only starts with '{' stays plain text (observed with 2.1.330, e2e brace-text-prompt).
		{"pre/exit0 brace text is text", "PreToolUse", cmd(0, "{not json\n", ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"pre/exit0 invalid {…} is an error", "PreToolUse", cmd(0, `{"decision": oops}`, ""),
			summary{Outcome: "error", ExitCode: "0", Error: "looks like a JSON object but is not valid JSON"}},
		{"pre/exit0 array is text", "PreToolUse", cmd(0, `[{"permissionDecision":"allow"}]`, ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"pre/exit0 json then garbage is text", "PreToolUse", cmd(0, allowPlain+" trailing", ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"pre/exit0 several json documents are text", "PreToolUse", cmd(0, allowPlain+"\n"+allowPlain, ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"pre/exit0 leading space then invalid {…} is an error", "PreToolUse", cmd(0, "  \n {oops}\n", ""),
			summary{Outcome: "error", ExitCode: "0", Error: "not valid JSON"}},
		{"pre/bad type drops everything", "PreToolUse", cmd(0, `{"continue":"nope","hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx-A"}}`, ""),
			summary{Outcome: "error", ExitCode: "0", Error: "continue: expected boolean, received string"}},
		{"pre/null is a wrong type", "PreToolUse", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":null}}`, ""),
			summary{Outcome: "error", ExitCode: "0", Error: "additionalContext: expected string, received null"}},
		{"pre/updatedInput must be object", "PreToolUse", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":"rm -rf /"}}`, ""),
			summary{Outcome: "error", ExitCode: "0", Error: "updatedInput: expected object, received string"}},
		{"pre/wrong event name", "PreToolUse", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"ctx-A"}}`, ""),
			summary{Outcome: "error", ExitCode: "0", Error: `expected "PreToolUse" but got "PostToolUse"`}},
		{"pre/missing event name", "PreToolUse", cmd(0, `{"hookSpecificOutput":{"permissionDecision":"allow"}}`, ""),
			summary{Outcome: "error", ExitCode: "0", Error: "hookEventName: required"}},
		{"pre/unknown fields ignored", "PreToolUse", cmd(0, `{"hookdFoo":1,"hookSpecificOutput":{"hookEventName":"PreToolUse","hookdFoo":1,"additionalContext":"ctx-A"}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Context: "ctx-A"}},
		{"pre/other event's hso member ignored", "PreToolUse", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","decision":{"behavior":"allow"},"sessionTitle":5}}`, ""),
			summary{Outcome: "ok", ExitCode: "0"}},
		{"pre/top-level additionalContext ignored", "PreToolUse", cmd(0, `{"additionalContext":"top"}`, ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"pre/continue false", "PreToolUse", cmd(0, continueFalse, ""),
			summary{Outcome: "ok", ExitCode: "0", Continue: "false", StopReason: "Build failed, fix errors before continuing"}},
		{"pre/stopReason needs continue false", "PreToolUse", cmd(0, `{"continue":true,"stopReason":"x"}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Continue: "true"}},
		{"pre/systemMessage", "PreToolUse", cmd(0, `{"systemMessage":"M","suppressOutput":true}`, ""),
			summary{Outcome: "ok", ExitCode: "0", SystemMessage: "M"}},
		{"pre/terminalSequence", "PreToolUse", cmd(0, `{"terminalSequence":"\u0007"}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Specific: `{"terminalSequence":"\u0007"}`}},
		{"pre/async marker strips decisions", "PreToolUse", cmd(0, "{\"async\":true,\"asyncTimeout\":5000}\n"+allowRewrite+"\n", ""),
			summary{Outcome: "ok", ExitCode: "0", Context: "Publishing is dry-run only in this repo.", Warning: `{"async":true}`}},
		{"pre/truncated json is an error", "PreToolUse", RawOutput{Kind: Command, ExitCode: 0, Stdout: []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permiss`), StdoutTruncated: true},
			summary{Outcome: "error", ExitCode: "0", Error: "output cap", Warning: "stdout truncated"}},

		// Hooks that did not run to a normal end: never a decision.
		{"pre/start error", "PreToolUse", RawOutput{Kind: Command, ExitCode: -1, StartErr: errors.New("fork/exec ./guard.sh: permission denied")},
			summary{Outcome: "error", Error: "could not start hook: fork/exec ./guard.sh: permission denied"}},
		{"pre/127 not found", "PreToolUse", cmd(127, allowPlain, "/bin/sh: 1: /nonexistent/x.sh: not found\n"),
			summary{Outcome: "error", ExitCode: "127", Error: "could not start hook: /bin/sh: 1: /nonexistent/x.sh: not found"}},
		{"pre/126 not executable", "PreToolUse", cmd(126, "", "/bin/sh: 1: ./guard.sh: Permission denied\n"),
			summary{Outcome: "error", ExitCode: "126", Error: "could not start hook: /bin/sh: 1: ./guard.sh: Permission denied"}},
		{"pre/timeout discards allow", "PreToolUse", RawOutput{Kind: Command, TimedOut: true, Stdout: []byte(allowPlain), Duration: 30 * time.Second},
			summary{Outcome: "timeout", Error: "timed out after 30s"}},
		{"pre/cancelled", "PreToolUse", RawOutput{Kind: Command, Cancelled: true, Stdout: []byte(allowPlain)},
			summary{Outcome: "cancelled", Error: "cancelled"}},

		// UserPromptSubmit / UserPromptExpansion / SessionStart: plain stdout is context.
		{"ups/plain stdout", "UserPromptSubmit", cmd(0, "P1\n", ""), summary{Outcome: "ok", ExitCode: "0", Context: "P1", Plain: true}},
		{"ups/brace text is plain context", "UserPromptSubmit", cmd(0, "{not json\n", ""), summary{Outcome: "ok", ExitCode: "0", Context: "{not json", Plain: true}},
		{"ups/invalid {…} is an error, not context", "UserPromptSubmit", cmd(0, "{not: json}\n", ""),
			summary{Outcome: "error", ExitCode: "0", Error: "not valid JSON"}},
		{"ups/text with a brace later is context", "UserPromptSubmit", cmd(0, "note {x}\n", ""), summary{Outcome: "ok", ExitCode: "0", Context: "note {x}", Plain: true}},
		{"ups/block json", "UserPromptSubmit", cmd(0, upsBlock, ""),
			summary{Outcome: "blocked", ExitCode: "0", Block: true, BlockReason: "Prompt contains a secret", BlockVia: "json", Context: "Branch: main"}},
		{"ups/exit2", "UserPromptSubmit", cmd(2, "", "B\n"),
			summary{Outcome: "blocked", ExitCode: "2", Block: true, BlockReason: "[./guard.sh]: B\n", BlockVia: "exit2"}},
		{"ups/exit2 json reason", "UserPromptSubmit", cmd(2, `{"decision":"block","reason":"BR"}`, "B\n"),
			summary{Outcome: "blocked", ExitCode: "2", Block: true, BlockReason: "BR", BlockVia: "exit2"}},
		{"ups/exit1 plain is not context", "UserPromptSubmit", cmd(1, "P1\n", "oops\n"),
			summary{Outcome: "error", ExitCode: "1", Error: "Failed with non-blocking status code: oops"}},
		{"ups/sessionTitle suppressOriginalPrompt", "UserPromptSubmit", cmd(0, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","sessionTitle":"T","suppressOriginalPrompt":true}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Specific: `{"sessionTitle":"T","suppressOriginalPrompt":true}`}},
		{"upe/plain stdout", "UserPromptExpansion", cmd(0, "E\n", ""), summary{Outcome: "ok", ExitCode: "0", Context: "E", Plain: true}},
		{"setup/plain stdout is not context", "Setup", cmd(0, "S\n", ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"ss/plain stdout", "SessionStart", cmd(0, "S1\n", ""), summary{Outcome: "ok", ExitCode: "0", Context: "S1", Plain: true}},
		{"ss/json fields", "SessionStart", cmd(0, sessionStart, ""),
			summary{Outcome: "ok", ExitCode: "0", Context: "Branch feat/x",
				Specific: `{"reloadSkills":false,"sessionTitle":"feat-x","watchPaths":["/home/u/proj/.envrc"]}`}},
		{"ss/exit2 is a non-blocking error", "SessionStart", cmd(2, "S1\n", "SE\n"),
			summary{Outcome: "error", ExitCode: "2", Error: "[./guard.sh]: SE"}},
		{"ss/exit2 json still read", "SessionStart", cmd(2, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"S2"}}`, ""),
			summary{Outcome: "error", ExitCode: "2", Error: "[./guard.sh]: No stderr output", Context: "S2"}},
		{"ss/watchPaths wrong type", "SessionStart", cmd(0, `{"hookSpecificOutput":{"hookEventName":"SessionStart","watchPaths":["a",1]}}`, ""),
			summary{Outcome: "error", ExitCode: "0", Error: "watchPaths: expected array of strings, received number at index 1"}},

		// Stop / SubagentStop.
		{"stop/block json", "Stop", cmd(0, stopBlock, ""),
			summary{Outcome: "blocked", ExitCode: "0", Block: true, BlockReason: "Tests are failing; fix them before stopping", BlockVia: "json"}},
		{"stop/context", "Stop", cmd(0, stopCtx, ""), summary{Outcome: "ok", ExitCode: "0", Context: "Run the test suite before finishing"}},
		{"stop/exit2", "Stop", cmd(2, "", "SE\n"),
			summary{Outcome: "blocked", ExitCode: "2", Block: true, BlockReason: "[./guard.sh]: SE\n", BlockVia: "exit2"}},
		{"stop/plain stdout ignored", "Stop", cmd(0, "plain-out", ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"stop/approve is no block", "Stop", cmd(0, `{"decision":"approve"}`, ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"stop/bad decision value", "Stop", cmd(0, `{"decision":"allow"}`, ""),
			summary{Outcome: "error", ExitCode: "0", Error: `decision: expected "approve" | "block", received "allow"`}},
		{"subagentstop/exit2", "SubagentStop", cmd(2, "", "next"),
			summary{Outcome: "blocked", ExitCode: "2", Block: true, BlockReason: "[./guard.sh]: next", BlockVia: "exit2"}},

		// PostToolUse: decision:block and exit 2 both feed Claude a "blocking error".
		{"post/block ctx updatedToolOutput", "PostToolUse", cmd(0, postBlock, ""),
			summary{Outcome: "blocked", ExitCode: "0", Block: true, BlockReason: "Lint failed: see output", BlockVia: "json", Context: "Run npm run lint:fix",
				Specific: `{"updatedToolOutput":{"stdout":"[redacted]","stderr":"","interrupted":false,"isImage":false}}`}},
		{"post/exit2", "PostToolUse", cmd(2, "", "P2E\n"),
			summary{Outcome: "blocked", ExitCode: "2", Block: true, BlockReason: "[./guard.sh]: P2E\n", BlockVia: "exit2"}},
		{"post/updatedMCPToolOutput", "PostToolUse", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedMCPToolOutput":[{"type":"text","text":"x"}]}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Specific: `{"updatedMCPToolOutput":[{"type":"text","text":"x"}]}`}},
		{"postfailure/exit2 non-blocking", "PostToolUseFailure", cmd(2, "", "F\n"),
			summary{Outcome: "error", ExitCode: "2", Error: "[./guard.sh]: F"}},
		{"postbatch/block", "PostToolBatch", cmd(0, `{"decision":"block","reason":"stop here"}`, ""),
			summary{Outcome: "blocked", ExitCode: "0", Block: true, BlockReason: "stop here", BlockVia: "json"}},

		// PermissionRequest: JSON decision only; exit 2 not honoured.
		{"pr/allow updatedPermissions", "PermissionRequest", cmd(0, prAllow, ""),
			summary{Outcome: "ok", ExitCode: "0", Permission: "allow", Specific: `{"updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}`}},
		{"pr/allow updatedInput", "PermissionRequest", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"ls"}}}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Permission: "allow", UpdatedInput: `{"command":"ls"}`}},
		{"pr/deny message interrupt", "PermissionRequest", cmd(0, prDeny, ""),
			summary{Outcome: "blocked", ExitCode: "0", Permission: "deny", PermissionReason: "Not allowed on CI", Specific: `{"interrupt":false}`}},
		{"pr/exit2 not honoured", "PermissionRequest", cmd(2, "", "E2\n"),
			summary{Outcome: "error", ExitCode: "2", Error: "Failed with non-blocking status code: E2"}},
		{"pr/exit2 json decides", "PermissionRequest", cmd(2, prAllow, "E2\n"),
			summary{Outcome: "ok", ExitCode: "2", Permission: "allow", Specific: `{"updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}`}},
		{"pr/ask is invalid", "PermissionRequest", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"ask"}}}`, ""),
			summary{Outcome: "error", ExitCode: "0", Error: "decision: behavior: expected"}},
		{"pr/permissionDecision is not its field", "PermissionRequest", cmd(0, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","permissionDecision":"allow"}}`, ""),
			summary{Outcome: "ok", ExitCode: "0"}},

		// Events that ignore exit codes.
		{"permdenied/retry", "PermissionDenied", cmd(1, `{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":true}}`, "x"),
			summary{Outcome: "ok", ExitCode: "1", Specific: `{"retry":true}`}},
		{"notification/exit2 ignored", "Notification", cmd(2, "", "E\n"), summary{Outcome: "ok", ExitCode: "2"}},
		{"notification/fields discarded", "Notification", cmd(0, `{"continue":false,"systemMessage":"M"}`, ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"stopfailure/only terminalSequence", "StopFailure", cmd(1, `{"systemMessage":"M","terminalSequence":"\u001b]9;done\u0007","hookSpecificOutput":{"hookEventName":"StopFailure","additionalContext":"x"}}`, ""),
			summary{Outcome: "ok", ExitCode: "1", Specific: `{"terminalSequence":"\u001b]9;done\u0007"}`}},
		{"instructions/exit1 ignored", "InstructionsLoaded", cmd(1, "", "x"), summary{Outcome: "ok", ExitCode: "1"}},

		// Blocks only exit 2 can express.
		{"teammate/exit2", "TeammateIdle", cmd(2, "", "keep working\n"),
			summary{Outcome: "blocked", ExitCode: "2", Block: true, BlockReason: "[./guard.sh]: keep working\n", BlockVia: "exit2"}},
		{"teammate/json block not honoured", "TeammateIdle", cmd(0, `{"decision":"block","reason":"r"}`, ""), summary{Outcome: "ok", ExitCode: "0"}},
		{"teammate/continue false", "TeammateIdle", cmd(0, `{"continue":false,"stopReason":"done"}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Continue: "false", StopReason: "done"}},
		{"taskcreated/continue ignored", "TaskCreated", cmd(0, `{"continue":false,"decision":"block","reason":"no"}`, ""),
			summary{Outcome: "blocked", ExitCode: "0", Block: true, BlockReason: "no", BlockVia: "json"}},
		{"elicitation/exit2 ignores hso", "Elicitation", cmd(2, `{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"accept"}}`, ""),
			summary{Outcome: "blocked", ExitCode: "2", Block: true, BlockReason: "[./guard.sh]: No stderr output", BlockVia: "exit2"}},
		{"elicitation/action", "ElicitationResult", cmd(0, `{"hookSpecificOutput":{"hookEventName":"ElicitationResult","action":"decline","content":{"a":1}}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Specific: `{"action":"decline","content":{"a":1}}`}},
		{"configchange/block", "ConfigChange", cmd(0, `{"decision":"block","reason":"frozen"}`, ""),
			summary{Outcome: "blocked", ExitCode: "0", Block: true, BlockReason: "frozen", BlockVia: "json"}},
		{"precompact/exit2", "PreCompact", cmd(2, "", "no"),
			summary{Outcome: "blocked", ExitCode: "2", Block: true, BlockReason: "[./guard.sh]: no", BlockVia: "exit2"}},

		// Side-effect events.
		{"cwd/watchPaths", "CwdChanged", cmd(0, `{"hookSpecificOutput":{"hookEventName":"CwdChanged","watchPaths":["/a"]}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Specific: `{"watchPaths":["/a"]}`}},
		{"display/content", "MessageDisplay", cmd(0, `{"systemMessage":"dropped","hookSpecificOutput":{"hookEventName":"MessageDisplay","displayContent":"D"}}`, ""),
			summary{Outcome: "ok", ExitCode: "0", Specific: `{"displayContent":"D"}`}},
		{"sessionend/exit2 error", "SessionEnd", cmd(2, "", "bye\n"), summary{Outcome: "error", ExitCode: "2", Error: "[./guard.sh]: bye"}},

		// WorktreeCreate.
		{"worktree/path", "WorktreeCreate", cmd(0, "creating...\n\x1b[32m/tmp/wt/feat\x1b[0m\n\n", ""),
			summary{Outcome: "ok", ExitCode: "0", Worktree: "/tmp/wt/feat"}},
		{"worktree/empty", "WorktreeCreate", cmd(0, "\n", ""),
			summary{Outcome: "blocked", ExitCode: "0", Block: true, BlockReason: "hook succeeded but returned no worktree path", BlockVia: "exit"}},
		{"worktree/exit1", "WorktreeCreate", cmd(1, "/tmp/wt\n", "boom\n"),
			summary{Outcome: "blocked", ExitCode: "1", Block: true, BlockReason: "boom", BlockVia: "exit"}},
		{"worktree/exit1 json ignored", "WorktreeCreate", cmd(1, `{"hookSpecificOutput":{"hookEventName":"WorktreeCreate","worktreePath":"/x"}}`, ""),
			summary{Outcome: "blocked", ExitCode: "1", Block: true, BlockReason: "WorktreeCreate hook failed with exit code 1", BlockVia: "exit"}},
		{"worktree/exit2", "WorktreeCreate", cmd(2, "", "no\n"),
			summary{Outcome: "blocked", ExitCode: "2", Block: true, BlockReason: "no", BlockVia: "exit2"}},
		{"worktree/timeout fails", "WorktreeCreate", RawOutput{Kind: Command, TimedOut: true},
			summary{Outcome: "timeout", Error: "timed out", Block: true, BlockReason: "timed out", BlockVia: "exit"}},
		{"worktree/start error fails", "WorktreeCreate", RawOutput{Kind: Command, StartErr: errors.New("no such file")},
			summary{Outcome: "error", Error: "could not start hook: no such file", Block: true, BlockReason: "could not start hook: no such file", BlockVia: "exit"}},
		{"worktree/http path", "WorktreeCreate", RawOutput{Kind: HTTP, HTTPStatus: 200, Stdout: []byte(`{"hookSpecificOutput":{"hookEventName":"WorktreeCreate","worktreePath":"/tmp/wt/h"}}`)},
			summary{Outcome: "ok", Worktree: "/tmp/wt/h"}},

		// HTTP (spec §4.2).
		{"http/2xx empty", "PreToolUse", RawOutput{Kind: HTTP, HTTPStatus: 204}, summary{Outcome: "ok"}},
		{"http/2xx deny", "PreToolUse", RawOutput{Kind: HTTP, HTTPStatus: 200, Stdout: []byte(denyJSON)},
			summary{Outcome: "blocked", Permission: "deny", PermissionReason: "Destructive command blocked by policy"}},
		{"http/2xx text", "UserPromptSubmit", RawOutput{Kind: HTTP, HTTPStatus: 200, Stdout: []byte("hello")},
			summary{Outcome: "error", Error: "not a JSON object"}},
		{"http/500 cannot block", "PreToolUse", RawOutput{Kind: HTTP, HTTPStatus: 500, ExitCode: 1, Stdout: []byte(denyJSON), Stderr: []byte("HTTP 500 from http://x: boom")},
			summary{Outcome: "error", Error: "http hook failed: HTTP 500 from http://x: boom"}},
		{"http/connection refused", "PreToolUse", RawOutput{Kind: HTTP, ExitCode: -1, StartErr: errors.New("dial tcp: connection refused")},
			summary{Outcome: "error", Error: "http hook request failed: dial tcp: connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(Interpret(mustEvent(t, tt.event), protocol.HookRef{ID: "h"}, tt.out))
			if tt.want.Error != "" && strings.Contains(got.Error, tt.want.Error) {
				got.Error = tt.want.Error
			}
			if tt.want.Warning != "" && strings.Contains(got.Warning, tt.want.Warning) {
				got.Warning = tt.want.Warning
			}
			if got != tt.want {
				t.Errorf("Interpret:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestInterpretCapsContext(t *testing.T) {
	long := strings.Repeat("é", MaxContextChars+500)
	out, _ := json.Marshal(map[string]any{"systemMessage": long, "hookSpecificOutput": map[string]any{
		"hookEventName": "PreToolUse", "additionalContext": long}})
	for _, tc := range []struct {
		event string
		out   RawOutput
	}{
		{"PreToolUse", cmd(0, string(out), "")},
		{"UserPromptSubmit", cmd(0, long, "")},
	} {
		in := Interpret(mustEvent(t, tc.event), protocol.HookRef{}, tc.out)
		for _, s := range []string{in.AdditionalContext, in.SystemMessage} {
			if s == "" && tc.event == "UserPromptSubmit" {
				continue
			}
			if n := len([]rune(s)); n != MaxContextChars {
				t.Errorf("%s: capped length = %d runes, want %d", tc.event, n, MaxContextChars)
			}
			if !strings.HasSuffix(s, "characters omitted]") || !strings.HasPrefix(s, "éé") {
				t.Errorf("%s: capped text lacks its marker: ...%q", tc.event, s[len(s)-60:])
			}
		}
		if len(in.Warnings) == 0 {
			t.Errorf("%s: no truncation warning", tc.event)
		}
	}
}

func TestFrames(t *testing.T) {
	ref := protocol.HookRef{ID: "user:/s.json#PreToolUse[0].hooks[0]"}
	in := Interpret(mustEvent(t, "PreToolUse"), ref, cmd(0,
		`{"continue":false,"stopReason":"S","systemMessage":"M","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"a":1},"additionalContext":"C"}}`, ""))
	var got []string
	for _, f := range in.Frames() {
		if f.Hook == nil || f.Hook.ID != ref.ID {
			t.Errorf("frame %s without hook ref", f.Type)
		}
		got = append(got, string(f.Type)+"/"+f.Kind)
	}
	want := []string{"permission/", "updated_input/", "additional_context/", "prevent_continuation/", "stop_reason/", "message/system_message", "message/finished"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("frames = %v, want %v", got, want)
	}
	last := in.Frames()[len(want)-1]
	if last.ExitCode == nil || *last.ExitCode != 0 || last.DurationMS == nil || *last.DurationMS != 3 {
		t.Errorf("final frame = %+v, want exit 0 and 3 ms", last)
	}

	block := Interpret(mustEvent(t, "Stop"), ref, cmd(2, "", "SE\n"))
	fs := block.Frames()
	if len(fs) != 2 || fs[0].Type != protocol.FrameStop || fs[0].Reason != "[./guard.sh]: SE\n" || fs[1].Kind != protocol.MsgFinished {
		t.Errorf("exit-2 Stop frames = %+v", fs)
	}
	for _, out := range []RawOutput{{Kind: Command, TimedOut: true}, {Kind: Command, Cancelled: true}, {Kind: Command, StartErr: errors.New("x")}} {
		in := Interpret(mustEvent(t, "PreToolUse"), ref, out)
		fs := in.Frames()
		if len(fs) != 1 || fs[0].Type != protocol.FrameMessage || fs[0].Kind == protocol.MsgFinished || fs[0].Text == "" {
			t.Errorf("%+v: frames = %+v, want one error/timeout/cancelled message", out, fs)
		}
	}
}

func TestStripANSIAndLastLine(t *testing.T) {
	got := lastLine(stripANSI("x\n\x1b]0;title\x07\x1b[1;32m/p/wt\x1b[0m \r\n  \n"))
	if got != "/p/wt" {
		t.Errorf("got %q", got)
	}
}

// TestCapRunes: the capped string has exactly limit runes and its marker's count is true.
func TestCapRunes(t *testing.T) {
	for _, limit := range []int{0, 10, 45, 60, 2000} {
		for n := 0; n < 3000; n += 7 {
			s := strings.Repeat("ü", n)
			got := capRunes(s, limit)
			if n <= limit {
				if got != s {
					t.Fatalf("n=%d limit=%d: changed a short string", n, limit)
				}
				continue
			}
			kept := strings.Count(got, "ü")
			var omitted, total int
			if _, err := fmt.Sscanf(got[strings.Index(got, "[hookd"):], "[hookd: truncated, %d of %d characters omitted]", &omitted, &total); err != nil {
				t.Fatalf("n=%d limit=%d: marker: %v in %q", n, limit, err, got)
			}
			if total != n || kept+omitted != n || (limit > 60 && len([]rune(got)) != limit) {
				t.Fatalf("n=%d limit=%d: kept %d omitted %d total %d, %d runes", n, limit, kept, omitted, total, len([]rune(got)))
			}
		}
	}
}
