package events

import (
	"encoding/json"
	"testing"

	"github.com/hookd/hookd/protocol"
)

// FuzzInterpret feeds arbitrary (event, exit code, stdout, stderr, failure mode) through
// Interpret, Frames, Merge and Render: nothing panics, a hook that failed never allows,
// and every rendered Output is a JSON object.
func FuzzInterpret(f *testing.F) {
	names := Names()
	seeds := []struct {
		event          string
		code           int
		stdout, stderr string
	}{
		{"PreToolUse", 0, denyJSON, ""},
		{"PreToolUse", 0, allowRewrite, ""},
		{"PreToolUse", 2, allowPlain, "E2\n"},
		{"PreToolUse", 1, denyJSON, "E1"},
		{"PreToolUse", 127, allowPlain, "sh: x: not found"},
		{"PreToolUse", 0, "{\"async\":true}\n" + allowPlain, ""},
		{"PreToolUse", 0, `{"continue":"nope"}`, ""},
		{"PermissionRequest", 0, prAllow, ""},
		{"PermissionRequest", 2, prDeny, "x"},
		{"PostToolUse", 0, postBlock, ""},
		{"UserPromptSubmit", 0, upsBlock, ""},
		{"UserPromptSubmit", 0, "plain context", ""},
		{"Stop", 2, stopBlock, "SE"},
		{"SessionStart", 0, sessionStart, ""},
		{"StopFailure", 1, `{"terminalSequence":"\u0007"}`, ""},
		{"WorktreeCreate", 0, "\x1b[1m/tmp/wt\x1b[0m\n", ""},
		{"TeammateIdle", 2, continueFalse, "keep going"},
		{"Elicitation", 0, `{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"accept","content":{}}}`, ""},
		{SkillShell, 0, `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"allow","updatedInput":{}}}`, ""},
		{SkillShell, 0, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{}]}}}`, ""},
		{SkillShell, 2, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}`, "E2\n"},
	}
	for _, s := range seeds {
		for mode := range uint8(4) {
			f.Add(s.event, s.code, []byte(s.stdout), []byte(s.stderr), mode)
		}
	}
	f.Fuzz(func(t *testing.T, event string, code int, stdout, stderr []byte, mode uint8) {
		ev, ok := Lookup(event)
		if !ok {
			ev, _ = Lookup(names[uint(len(event))%uint(len(names))])
		}
		out := RawOutput{Kind: Command, Command: "./h.sh", ExitCode: code, Stdout: stdout, Stderr: stderr}
		switch mode % 6 {
		case 1:
			out.TimedOut = true
		case 2:
			out.Cancelled = true
		case 3:
			out.StartErr = errString("exec: no such file")
		case 4:
			out.Kind, out.HTTPStatus = HTTP, 200+code%400
			if out.HTTPStatus/100 != 2 {
				out.ExitCode = 1
			} else {
				out.ExitCode = 0
			}
		case 5:
			out.StdoutTruncated = true
		}
		in := Interpret(ev, protocol.HookRef{ID: "h"}, out)
		switch in.Outcome {
		case protocol.OutcomeOK, protocol.OutcomeBlocked:
		case protocol.OutcomeError, protocol.OutcomeTimeout, protocol.OutcomeCancelled:
			if in.Permission == "allow" {
				t.Fatalf("%s outcome with an allow: %+v", in.Outcome, in)
			}
			if in.Error == "" {
				t.Fatalf("%s outcome without Error", in.Outcome)
			}
		default:
			t.Fatalf("unknown outcome %q", in.Outcome)
		}
		if out.TimedOut || out.Cancelled || out.StartErr != nil {
			// A hook that did not finish decides nothing, except the one fail-closed
			// answer Claude Code gives itself: a timed-out hook of an event whose timeout
			// refuses (PreModelSwitch) denies.
			refuses := out.TimedOut && ev.TimeoutRefuses && in.Permission == "deny"
			if (in.Permission != "" && !refuses) || len(in.UpdatedInput) > 0 || in.AdditionalContext != "" || in.Continue != nil {
				t.Fatalf("a hook that did not finish decided something: %+v", in)
			}
		}
		if in.Permission == "deny" && len(in.UpdatedInput) > 0 {
			t.Fatal("deny with updatedInput")
		}
		fs := in.Frames()
		if len(fs) == 0 || fs[len(fs)-1].Type != protocol.FrameMessage {
			t.Fatalf("frames do not end with a message: %+v", fs)
		}
		res := mergeRender(ev, []Interpretation{in, in})
		if len(res.Output) > 0 {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(res.Output, &m); err != nil {
				t.Fatalf("Output is not a JSON object: %s: %v", res.Output, err)
			}
		}
		if res.Permission != nil && res.Permission.Decision == "allow" && in.Outcome != protocol.OutcomeOK {
			t.Fatalf("merged allow from a %s hook", in.Outcome)
		}
		if ev.Name == SkillShell {
			// Every answer but allow keeps a skill's shell command from running: a hook
			// that gave one is blocked, and hookc never exits non-zero there (an exit 1
			// under an onFailure:block forwarder would block a command no hook refused).
			if in.Outcome == protocol.OutcomeOK && in.Permission != "" && in.Permission != "allow" {
				t.Fatalf("PreSkillShellCommand %q with outcome ok", in.Permission)
			}
			if res.ExitCode != 0 || len(res.UpdatedInput) > 0 {
				t.Fatalf("PreSkillShellCommand rendered exit %d, updatedInput %s", res.ExitCode, res.UpdatedInput)
			}
		}
	})
}

type errString string

func (e errString) Error() string { return string(e) }
