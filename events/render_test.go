package events

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hookd/hookd/protocol"
)

type rendered struct {
	Output, Stdout, Stderr string
	ExitCode               int
}

func render(res *protocol.Result) rendered {
	return rendered{string(res.Output), res.Stdout, res.Stderr, res.ExitCode}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name  string
		event string
		hooks []hook
		want  rendered
	}{
		{"no hooks", "PreToolUse", nil, rendered{}},
		{"nothing to say", "PreToolUse", []hook{{"a", cmd(0, "", "")}, {"b", cmd(1, "", "oops")}}, rendered{}},

		// PreToolUse.
		{"pre/exit2 reads like claude code", "PreToolUse", []hook{{"a", cmd(2, "", "E2\n")}},
			rendered{Output: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"[./a.sh]: E2\n"}}`}},
		{"pre/deny + other hook context", "PreToolUse", []hook{{"a", decision("deny", "R1")}, {"b", preJSON(`,"additionalContext":"ctx-B"`)}},
			rendered{Output: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R1","additionalContext":"ctx-B"}}`}},
		{"pre/allow rewrite", "PreToolUse", []hook{{"a", cmd(0, allowRewrite, "")}},
			rendered{Output: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"rewritten to dry-run","updatedInput":{"command":"npm publish --dry-run"},"additionalContext":"Publishing is dry-run only in this repo."}}`}},
		{"pre/defer drops rewrite", "PreToolUse", []hook{{"a", preJSON(`,"updatedInput":{"a":1}`)}, {"b", decision("defer", "")}},
			rendered{Output: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}`}},
		{"pre/two contexts one block", "PreToolUse", []hook{{"a", preJSON(`,"additionalContext":"ctx-A"`)}, {"b", preJSON(`,"additionalContext":"ctx-B"`)}},
			rendered{Output: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx-A\nctx-B"}}`}},
		{"pre/continue false", "PreToolUse", []hook{{"a", cmd(0, continueFalse, "")}, {"b", cmd(0, `{"systemMessage":"M"}`, "")}},
			rendered{Output: `{"continue":false,"stopReason":"Build failed, fix errors before continuing","systemMessage":"M"}`}},
		{"pre/no html escaping", "PreToolUse", []hook{{"echo E2 >&2; exit 2", cmd(2, "", "E2\n")}},
			rendered{Output: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"[./echo E2 >&2; exit 2.sh]: E2\n"}}`}},

		// PermissionRequest.
		{"pr/allow", "PermissionRequest", []hook{{"a", cmd(0, prAllow, "")}},
			rendered{Output: `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}}}`}},
		{"pr/deny beats allow", "PermissionRequest", []hook{{"a", cmd(0, prAllow, "")}, {"b", cmd(0, prDeny, "")}},
			rendered{Output: `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Not allowed on CI","interrupt":false}}}`}},
		{"pr/exit2 is nothing", "PermissionRequest", []hook{{"a", cmd(2, "", "E2")}}, rendered{}},

		// Top-level decision events.
		// One exit-2 Stop hook: exit 2 with its stderr, so Claude Code shows only the
		// feedback text (e2e stop-exit2-then-allow); two blocks need the JSON form.
		{"stop/exit2 as exit 2", "Stop", []hook{{"a", cmd(2, "", "SE\n")}},
			rendered{Stderr: "SE\n", ExitCode: 2}},
		{"stop/two exit2 as decision block", "Stop", []hook{{"a", cmd(2, "", "SE\n")}, {"b", cmd(2, "", "SE2\n")}},
			rendered{Output: `{"decision":"block","reason":"[./a.sh]: SE\n[./b.sh]: SE2\n"}`}},
		{"stop/block + context", "Stop", []hook{{"a", cmd(0, stopBlock, "")}, {"b", cmd(0, stopCtx, "")}},
			rendered{Output: `{"decision":"block","reason":"Tests are failing; fix them before stopping","hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"Run the test suite before finishing"}}`}},
		{"ups/plain + json contexts", "UserPromptSubmit", []hook{{"a", cmd(0, "P1\n", "")}, {"b", cmd(0, upsBlock, "")}},
			rendered{Output: `{"decision":"block","reason":"Prompt contains a secret","hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"P1\nBranch: main"}}`}},
		{"post/exit2 + updatedToolOutput", "PostToolUse", []hook{{"a", cmd(2, "", "P2E\n")}, {"b", cmd(0, postBlock, "")}},
			rendered{Output: `{"decision":"block","reason":"[./a.sh]: P2E\nLint failed: see output","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"Run npm run lint:fix","updatedToolOutput":{"stdout":"[redacted]","stderr":"","interrupted":false,"isImage":false}}}`}},
		{"ss/fields", "SessionStart", []hook{{"a", cmd(0, sessionStart, "")}, {"b", cmd(0, `{"terminalSequence":"\u0007"}`, "")}},
			rendered{Output: `{"terminalSequence":"\u0007","hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"Branch feat/x","reloadSkills":false,"sessionTitle":"feat-x","watchPaths":["/home/u/proj/.envrc"]}}`}},

		// Exit codes.
		{"teammate/exit2 only", "TeammateIdle", []hook{{"a", cmd(2, "", "keep working")}, {"b", cmd(0, `{"systemMessage":"M"}`, "")}},
			rendered{Output: `{"systemMessage":"M"}`, Stderr: "[./a.sh]: keep working\n", ExitCode: 2}},
		{"teammate/continue false outranks block", "TeammateIdle", []hook{{"a", cmd(2, "", "keep working")}, {"b", cmd(0, `{"continue":false,"stopReason":"done"}`, "")}},
			rendered{Output: `{"continue":false,"stopReason":"done"}`}},
		{"taskcompleted/exit2", "TaskCompleted", []hook{{"a", cmd(2, "", "not done\n")}},
			rendered{Stderr: "[./a.sh]: not done\n", ExitCode: 2}},
		{"elicitation/exit2", "Elicitation", []hook{{"a", cmd(2, "", "")}, {"b", cmd(0, `{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"accept"}}`, "")}},
			rendered{Output: `{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"accept"}}`, Stderr: "[./a.sh]: No stderr output\n", ExitCode: 2}},
		{"ss/exit2 notice alone", "SessionStart", []hook{{"a", cmd(2, "S1", "SE\n")}, {"b", cmd(1, "", "x")}},
			rendered{Stderr: "[./a.sh]: SE\n", ExitCode: 2}},
		{"ss/exit2 notice yields to context", "SessionStart", []hook{{"a", cmd(2, "", "SE\n")}, {"b", cmd(0, "S1\n", "")}},
			rendered{Stdout: "S1\n"}},
		// Plain stdout first: plain stdout, later contexts as labelled paragraphs (e2e
		// prompt-context, session-start-context).
		{"ss/plain then json contexts", "SessionStart", []hook{{"a", cmd(0, "S1\n", "")}, {"b", cmd(0, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"S2"}}`, "")}, {"c", cmd(0, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"S3"}}`, "")}},
			rendered{Stdout: "S1\n\nSessionStart hook additional context: S2\nS3\n"}},
		{"ups/two plain contexts", "UserPromptSubmit", []hook{{"a", cmd(0, "P1\n", "")}, {"b", cmd(0, "P2\n", "")}, {"c", cmd(0, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"P3"}}`, "")}},
			rendered{Stdout: "P1\n\nUserPromptSubmit hook success: P2\n\nUserPromptSubmit hook additional context: P3\n"}},
		{"ups/json first stays json", "UserPromptSubmit", []hook{{"a", cmd(0, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"P3"}}`, "")}, {"b", cmd(0, "P1\n", "")}},
			rendered{Output: `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"P3\nP1"}}`}},
		{"notification/nothing", "Notification", []hook{{"a", cmd(2, `{"systemMessage":"M"}`, "E")}}, rendered{}},

		// WorktreeCreate.
		{"worktree/path", "WorktreeCreate", []hook{{"a", cmd(0, "/tmp/wt/a\n", "")}, {"b", cmd(0, "/tmp/wt/b\n", "")}},
			rendered{Stdout: "/tmp/wt/a\n"}},
		{"worktree/failure wins", "WorktreeCreate", []hook{{"a", cmd(0, "/tmp/wt/a\n", "")}, {"b", cmd(1, "", "disk full\n")}},
			rendered{Stderr: "disk full\n", ExitCode: 1}},
		{"worktree/no hooks", "WorktreeCreate", nil, rendered{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := mustEvent(t, tt.event)
			res := mergeRender(ev, runHooks(t, ev, tt.hooks, nil))
			got := render(res)
			if got != tt.want {
				t.Errorf("rendered:\n got %+v\nwant %+v", got, tt.want)
			}
			if got.Output != "" && !json.Valid(res.Output) {
				t.Errorf("Output is not JSON: %s", res.Output)
			}
			finalize(ev, res) // idempotent
			if again := render(res); again != got {
				t.Errorf("second finalize changed the answer:\n%+v\n%+v", again, got)
			}
		})
	}
}

// TestRenderAfterRules: the daemon changes the outcome's Permission after rules, then
// renders it.
func TestRenderAfterRules(t *testing.T) {
	ev := mustEvent(t, "PreToolUse")
	o := Merge(ev, runHooks(t, ev, []hook{{"a", cmd(0, allowRewrite, "")}}, nil))
	for _, tc := range []struct{ decision, want string }{
		{"ask", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"rule says ask","updatedInput":{"command":"npm publish --dry-run"},"additionalContext":"Publishing is dry-run only in this repo."}}`},
		{"deny", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"rule says deny","additionalContext":"Publishing is dry-run only in this repo."}}`},
	} {
		perm := *o.HookPermission
		perm.Decision, perm.Reason, perm.Source = tc.decision, "rule says "+tc.decision, "rule"
		o.Permission = &perm
		if res := Render(ev, o); string(res.Output) != tc.want {
			t.Errorf("%s: Output =\n%s\nwant\n%s", tc.decision, res.Output, tc.want)
		}
	}

	pr := mustEvent(t, "PermissionRequest")
	o = Merge(pr, runHooks(t, pr, []hook{{"a", cmd(0, prAllow, "")}}, nil))
	o.Permission = &protocol.Permission{Decision: "ask", Source: "rule"}
	if res := Render(pr, o); res.Output != nil {
		t.Errorf("PermissionRequest downgraded to ask still renders %s", res.Output)
	}
}

// TestRenderThenHookc: hookc's Render of a rendered result writes the JSON line and exits.
func TestRenderThenHookc(t *testing.T) {
	ev := mustEvent(t, "TaskCompleted")
	res := mergeRender(ev, runHooks(t, ev, []hook{{"a", cmd(2, "", "not done")}}, nil))
	var out, errb bytes.Buffer
	if code := res.Render(&out, &errb); code != 2 || out.Len() != 0 || errb.String() != "[./a.sh]: not done\n" {
		t.Errorf("Render = %d, %q, %q", code, out.String(), errb.String())
	}
}
