package events

import (
	"errors"
	"testing"

	"github.com/hookd/hookd/protocol"
)

// failClosed is a command hook's output from a handler with onFailure "block".
func failClosed(out RawOutput) RawOutput {
	out.FailClosed, out.Command = true, "/g/guard.sh"
	return out
}

// TestOnFailure: every failure Claude Code 2.1.330 counts ("could not start, timed out,
// exited with a code other than 0 or 2, or printed JSON that is invalid or fails
// validation") blocks where the event can block; answers, exit 2 and cancellations are
// left as they are. Texts are Claude Code's: "[<command>]: failed; blocking because
// onFailure is "block"" then the hook's stderr.
func TestOnFailure(t *testing.T) {
	const failed = `[/g/guard.sh]: failed; blocking because onFailure is "block"`
	tests := []struct {
		name, event string
		out         RawOutput
		want        summary
		via         string
	}{
		{"pre/exit1", "PreToolUse", failClosed(cmd(1, "", "boom\n")),
			summary{Outcome: "blocked", ExitCode: "1", Error: "Failed with non-blocking status code: boom",
				Permission: "deny", PermissionReason: failed + "\nboom"}, ViaOnFailure},
		{"pre/exit1 no stderr", "PreToolUse", failClosed(cmd(1, "", "")),
			summary{Outcome: "blocked", ExitCode: "1", Error: "Failed with non-blocking status code: No stderr output",
				Permission: "deny", PermissionReason: failed}, ViaOnFailure},
		{"pre/missing script (shell 127)", "PreToolUse", failClosed(cmd(127, "", "sh: 1: /g/guard.sh: not found\n")),
			summary{Outcome: "blocked", ExitCode: "127", Error: "could not start hook: sh: 1: /g/guard.sh: not found",
				Permission: "deny", PermissionReason: failed + "\nsh: 1: /g/guard.sh: not found"}, ViaOnFailure},
		{"pre/exec form start error", "PreToolUse", failClosed(RawOutput{Kind: Command, StartErr: errors.New("fork/exec /g/guard.sh: no such file or directory")}),
			summary{Outcome: "blocked", Error: "could not start hook: fork/exec /g/guard.sh: no such file or directory",
				Permission: "deny", PermissionReason: failed + "\nfork/exec /g/guard.sh: no such file or directory"}, ViaOnFailure},
		{"pre/timeout", "PreToolUse", failClosed(RawOutput{Kind: Command, TimedOut: true}),
			summary{Outcome: "blocked", Error: "timed out", Permission: "deny",
				PermissionReason: `[/g/guard.sh]: timed out; blocking because onFailure is "block"`}, ViaOnFailure},
		{"pre/invalid json", "PreToolUse", failClosed(cmd(0, "{nope}", "")),
			summary{Outcome: "blocked", ExitCode: "0", Error: "not valid JSON", Permission: "deny",
				PermissionReason: failed + "\nHook output looks like a JSON object but is not valid JSON — invalid character 'n' looking for beginning of object key string. Emit the payload with a JSON encoder (jq, ConvertTo-Json, json.dumps) rather than string concatenation so backslashes and quotes inside strings are escaped."}, ViaOnFailure},
		{"pre/brace text is an answer (plain text)", "PreToolUse", failClosed(cmd(0, "{nope", "")), summary{Outcome: "ok", ExitCode: "0"}, ""},
		{"pre/schema-invalid json", "PreToolUse", failClosed(cmd(0, `{"continue":"nope"}`, "")),
			summary{Outcome: "blocked", ExitCode: "0", Error: "continue", Permission: "deny",
				PermissionReason: failed + "\nhook JSON output validation failed: continue: expected boolean, received string"}, ViaOnFailure},
		{"pre/exit 0 allow is an answer", "PreToolUse", failClosed(cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, "")),
			summary{Outcome: "ok", ExitCode: "0", Permission: "allow"}, ""},
		{"pre/exit 1 with a JSON answer is an answer", "PreToolUse", failClosed(cmd(1, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, "")),
			summary{Outcome: "ok", ExitCode: "1", Permission: "allow"}, ""},
		{"pre/exit 2 is the ordinary block", "PreToolUse", failClosed(cmd(2, "", "E2\n")),
			summary{Outcome: "blocked", ExitCode: "2", Permission: "deny", PermissionReason: "[/g/guard.sh]: E2\n"}, ""},
		{"pre/cancelled is not a failure", "PreToolUse", failClosed(RawOutput{Kind: Command, Cancelled: true}),
			summary{Outcome: "cancelled", Error: "cancelled before it finished"}, ""},
		{"permission request/exit1 denies", "PermissionRequest", failClosed(cmd(1, "", "x\n")),
			summary{Outcome: "blocked", ExitCode: "1", Error: "Failed with non-blocking status code: x", Permission: "deny", PermissionReason: failed + "\nx"}, ViaOnFailure},
		{"ups/exit1 blocks the prompt", "UserPromptSubmit", failClosed(cmd(1, "", "")),
			summary{Outcome: "blocked", ExitCode: "1", Error: "Failed with non-blocking status code: No stderr output", Block: true, BlockReason: failed, BlockVia: ViaOnFailure,
				Specific: `{"suppressOriginalPrompt":true}`}, ViaOnFailure},
		// PostToolUse: the tool already ran, but the block reaches the model as a
		// blocking error, as with exit 2 (observed with 2.1.330, e2e onfailure-posttooluse).
		{"post/exit1 blocks like exit 2", "PostToolUse", failClosed(cmd(1, "", "x\n")),
			summary{Outcome: "blocked", ExitCode: "1", Error: "Failed with non-blocking status code: x", Block: true, BlockReason: failed + "\nx", BlockVia: ViaOnFailure}, ViaOnFailure},
		{"session start/exit1 cannot block", "SessionStart", failClosed(cmd(1, "", "")),
			summary{Outcome: "error", ExitCode: "1", Error: "Failed with non-blocking status code: No stderr output"}, ""},
		{"http/500", "PreToolUse", RawOutput{Kind: HTTP, HTTPStatus: 500, ExitCode: 1, Stderr: []byte("HTTP 500 from http://x: boom"), FailClosed: true, Command: "http://x"},
			summary{Outcome: "blocked", Error: "http hook failed: HTTP 500 from http://x: boom", Permission: "deny",
				PermissionReason: "[http://x]: failed; blocking because onFailure is \"block\"\nhttp hook failed: HTTP 500 from http://x: boom"}, ViaOnFailure},
		{"http/timeout", "PreToolUse", RawOutput{Kind: HTTP, TimedOut: true, FailClosed: true, Command: "http://x"},
			summary{Outcome: "blocked", Error: "timed out", Permission: "deny",
				PermissionReason: `[http://x]: timed out; blocking because onFailure is "block"`}, ViaOnFailure},
		// Without onFailure the same failures stay non-blocking errors.
		{"pre/exit1 without onFailure", "PreToolUse", cmd(1, "", "boom\n"),
			summary{Outcome: "error", ExitCode: "1", Error: "Failed with non-blocking status code: boom"}, ""},
		{"pre/timeout without onFailure", "PreToolUse", RawOutput{Kind: Command, TimedOut: true},
			summary{Outcome: "timeout", Error: "timed out"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Interpret(mustEvent(t, tt.event), protocol.HookRef{ID: "h"}, tt.out)
			got := summarize(in)
			if tt.want.Error != "" && containsStr(got.Error, tt.want.Error) {
				got.Error = tt.want.Error
			}
			if got != tt.want {
				t.Errorf("Interpret:\n got %+v\nwant %+v", got, tt.want)
			}
			if in.Via != tt.via {
				t.Errorf("Via = %q, want %q", in.Via, tt.via)
			}
			// The frames say it too: the permission or stop frame carries via.
			if tt.via != "" {
				found := false
				for _, f := range in.Frames() {
					if (f.Type == protocol.FramePermission || f.Type == protocol.FrameStop) && f.Via == tt.via && f.Hook != nil && f.Hook.ID == "h" {
						found = true
					}
				}
				if !found {
					t.Errorf("no permission/stop frame with via %q naming the hook: %+v", tt.via, in.Frames())
				}
			}
		})
	}
}

// TestOnFailureMerge: the merged answer names the failed hook and says via on_failure;
// a real deny from another hook keeps its own attribution.
func TestOnFailureMerge(t *testing.T) {
	ev := mustEvent(t, "PreToolUse")
	a := Interpret(ev, protocol.HookRef{ID: "a"}, failClosed(cmd(1, "", "")))
	b := Interpret(ev, protocol.HookRef{ID: "b"}, cmd(0, "", ""))
	res := mergeRender(ev, []Interpretation{b, a})
	if res.Permission == nil || res.Permission.Decision != "deny" || res.Permission.Via != ViaOnFailure || res.Permission.Hook.ID != "a" {
		t.Fatalf("merged permission = %+v, want deny via on_failure by a", res.Permission)
	}
	if res.Hooks[1].Via != ViaOnFailure || res.Hooks[1].Outcome != protocol.OutcomeBlocked {
		t.Errorf("hook outcome = %+v", res.Hooks[1])
	}
	if res.Output == nil || !containsStr(string(res.Output), `blocking because onFailure is \"block\"`) {
		t.Errorf("rendered output %s does not carry the onFailure reason", res.Output)
	}

	ups := mustEvent(t, "UserPromptSubmit")
	c := Interpret(ups, protocol.HookRef{ID: "c"}, failClosed(cmd(3, "", "")))
	r2 := mergeRender(ups, []Interpretation{c})
	if r2.Block == nil || r2.Block.Via != ViaOnFailure || r2.Block.Hook.ID != "c" {
		t.Fatalf("merged block = %+v, want via on_failure by c", r2.Block)
	}
}

func containsStr(s, sub string) bool { return len(sub) == 0 || indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
