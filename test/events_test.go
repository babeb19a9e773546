package test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

// goldenPayloads maps event name → payload file captured from Claude Code 2.1.330.
var goldenPayloads = map[string]string{
	"SessionStart": "SessionStart.json", "InstructionsLoaded": "InstructionsLoaded.json",
	"UserPromptSubmit": "UserPromptSubmit.json", "MessageDisplay": "MessageDisplay.json",
	"PreToolUse": "PreToolUse-Bash.json", "PermissionRequest": "PermissionRequest-Bash.json",
	"PostToolUse": "PostToolUse-Bash.json", "PostToolUseFailure": "PostToolUseFailure-Bash.json",
	"PostToolBatch": "PostToolBatch.json", "ConfigChange": "ConfigChange.json",
	"WorktreeCreate": "WorktreeCreate.json", "Stop": "Stop.json", "SessionEnd": "SessionEnd.json",
	"PreModelSwitch": "PreModelSwitch.json", "PostModelSwitch": "PostModelSwitch.json",
	// Captured from Claude Code 2.1.332, the first version with the event.
	"PreSkillShellCommand": "../claude-code-2.1.332/PreSkillShellCommand-Bash.json",
}

// syntheticFields are the event-specific fields (spec §1.3) of the events Claude Code does
// not fire in a plain -p run.
var syntheticFields = map[string]map[string]any{
	"Setup":               {"trigger": "init"},
	"UserPromptExpansion": {"expansion_type": "slash_command", "command_name": "review", "command_args": "", "command_source": "project", "prompt": "/review"},
	"PermissionDenied":    {"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf /"}, "tool_use_id": "toolu_9", "reason": "Blocked by classifier"},
	"Notification":        {"message": "Claude needs your permission", "title": "Permission needed", "notification_type": "permission_prompt"},
	"SubagentStart":       {"agent_id": "a1", "agent_type": "Explore"},
	"SubagentStop":        {"stop_hook_active": false, "agent_id": "a1", "agent_type": "Explore", "agent_transcript_path": "/x/a1.jsonl", "last_assistant_message": "done", "background_tasks": []any{}, "session_crons": []any{}},
	"TaskCreated":         {"task_id": "t1", "task_subject": "write tests"},
	"TaskCompleted":       {"task_id": "t1", "task_subject": "write tests"},
	"StopFailure":         {"error": "rate_limit", "last_assistant_message": "API Error: rate limited"},
	"TeammateIdle":        {"teammate_name": "bob"},
	"CwdChanged":          {"old_cwd": "/a", "new_cwd": "/b"},
	"DirectoryAdded":      {"directory": "/extra", "source": "slash_command"},
	"FileChanged":         {"file_path": "/home/dev/proj/.envrc", "event": "change"},
	"WorktreeRemove":      {"worktree_path": "/home/dev/proj/.claude/worktrees/x"},
	"PreCompact":          {"trigger": "manual", "custom_instructions": ""},
	"PostCompact":         {"trigger": "auto", "compact_summary": "summary"},
	"Elicitation":         {"mcp_server_name": "srv", "message": "need input", "mode": "form", "elicitation_id": "e1", "requested_schema": map[string]any{}},
	"ElicitationResult":   {"mcp_server_name": "srv", "action": "accept", "mode": "form", "elicitation_id": "e1", "content": map[string]any{"x": 1}},
}

// payloadFor returns a payload for ev rooted in env's project.
func payloadFor(t *testing.T, e *Env, ev string) string {
	t.Helper()
	if f, ok := goldenPayloads[ev]; ok {
		b, err := os.ReadFile(filepath.Join(GoldenPayloadDir(), f))
		if err != nil {
			t.Fatalf("golden payload: %v", err)
		}
		// Point the captured paths at this test's scratch world; nothing else changes.
		s := strings.ReplaceAll(string(b), "/home/dev/proj", e.Project)
		return strings.ReplaceAll(s, "/home/dev", e.Home)
	}
	fields, ok := syntheticFields[ev]
	if !ok {
		t.Fatalf("no payload for %s", ev)
	}
	return e.Payload(ev, fields)
}

// probeScript is one hook used for every event: it records its stdin and environment and
// then behaves as PROBE_MODE (sent in the caller's environment, which hookd hands to hooks)
// says.
const probeScript = `#!/bin/sh
cat > "$PROBE_OUT/stdin"
env > "$PROBE_OUT/env"
echo run >> "$PROBE_OUT/count"
ev=$(sed -n 's/.*"hook_event_name": *"\([A-Za-z]*\)".*/\1/p' "$PROBE_OUT/stdin" | head -n1)
case "$PROBE_MODE" in
allow) exit 0 ;;
exit2) echo "blocked by probe" >&2; exit 2 ;;
ctx) printf '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"probe-ctx"}}\n' "$ev" ;;
stop) printf '{"continue":false,"stopReason":"probe says stop"}\n' ;;
esac
`

func TestEveryEventThroughHookcAndSocket(t *testing.T) {
	e := NewEnv(t)
	probe := e.Script("probe.sh", probeScript)
	hooks := map[string]any{}
	for _, ev := range events.All() {
		hooks[ev.Name] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": probe}}}}
	}
	b, _ := json.Marshal(map[string]any{"hooks": hooks})
	e.WriteSettings("project", string(b))
	e.Start()
	if n := len(events.All()); n != 34 {
		t.Fatalf("catalogue has %d events, want 34 (Claude Code 2.1.332)", n)
	}

	for _, ev := range events.All() {
		for _, mode := range []string{"allow", "exit2", "ctx", "stop"} {
			t.Run(ev.Name+"/"+mode, func(t *testing.T) {
				out := t.TempDir()
				e.extraEnv = []string{"PROBE_OUT=" + out, "PROBE_MODE=" + mode}
				defer func() { e.extraEnv = nil }()
				payload := payloadFor(t, e, ev.Name)

				// Through hookc, as Claude Code runs it.
				r := e.Hookc(payload)
				got, _ := os.ReadFile(filepath.Join(out, "stdin"))
				// Claude Code 2.1.332 ends the payload with a newline (2.1.330 did not);
				// hookd passes it on as it came.
				if strings.TrimSpace(string(got)) != strings.TrimSpace(payload) {
					t.Fatalf("hook stdin differs from the payload:\n got %s\nwant %s", got, payload)
				}
				checkHookEnv(t, ev, filepath.Join(out, "env"), e)
				checkRendered(t, ev, mode, r)

				// Through the raw protocol: the same hook runs once more, and the result
				// carries the variants.
				res, frames := e.Event(payload)
				if res.Event != ev.Name || res.DecisionID == "" || res.Revision == "" {
					t.Fatalf("result header: %+v", res)
				}
				if c, _ := os.ReadFile(filepath.Join(out, "count")); strings.Count(string(c), "run") != 2 {
					t.Fatalf("hook ran %d times for two deliveries", strings.Count(string(c), "run"))
				}
				checkFrames(t, ev, mode, res, frames)
			})
		}
	}
}

// checkHookEnv: the caller's environment plus the CLAUDE_* fill-ins (spec §6).
func checkHookEnv(t *testing.T, ev *events.Event, path string, e *Env) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := string(b)
	for _, want := range []string{"CLAUDE_PROJECT_DIR=" + e.Project + "\n", "CLAUDECODE=1\n", "PROBE_MODE=", "HOME=" + e.Home + "\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("hook env lacks %q", want)
		}
	}
	if !strings.Contains(env, "CLAUDE_CODE_SESSION_ID=") {
		t.Errorf("hook env lacks CLAUDE_CODE_SESSION_ID")
	}
	if has := strings.Contains(env, "CLAUDE_ENV_FILE="); has != ev.EnvFile {
		t.Errorf("CLAUDE_ENV_FILE present=%v, want %v (spec §6)", has, ev.EnvFile)
	}
}

// checkRendered asserts what Claude Code would see from hookc.
func checkRendered(t *testing.T, ev *events.Event, mode string, r Result) {
	t.Helper()
	var out map[string]any
	if strings.HasPrefix(strings.TrimSpace(r.Stdout), "{") {
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatalf("hookc printed invalid JSON %q", r.Stdout)
		}
	}
	hso, _ := out["hookSpecificOutput"].(map[string]any)
	blocked := r.Code == 2 || out["decision"] == "block" ||
		(hso != nil && hso["permissionDecision"] == "deny") ||
		(hso != nil && hso["decision"] != nil && hso["decision"].(map[string]any)["behavior"] == "deny")
	if ev.Name == "WorktreeCreate" {
		checkWorktreeCreate(t, mode, r)
		return
	}
	switch mode {
	case "allow":
		if r.Code != 0 || blocked {
			t.Fatalf("silent hook rendered as exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		if strings.TrimSpace(r.Stdout) != "" {
			t.Fatalf("silent hook produced output %q", r.Stdout)
		}
	case "exit2":
		switch {
		case ev.Name == "PermissionRequest", ev.ExitCodeIgnored:
			if blocked {
				t.Fatalf("exit 2 is not honoured on %s, but hookc blocked: exit %d %q", ev.Name, r.Code, r.Stdout)
			}
		case ev.CanBlock:
			if !blocked {
				t.Fatalf("exit 2 on blocking event %s not rendered as a block: exit %d stdout %q", ev.Name, r.Code, r.Stdout)
			}
			if !strings.Contains(r.Stdout+r.Stderr, "blocked by probe") {
				t.Fatalf("block reason lost: stdout %q stderr %q", r.Stdout, r.Stderr)
			}
		default:
			// A non-blocking event may show the stderr (PostToolUse renders it as
			// decision:"block" + reason, which shows it to Claude), but never as a decision
			// the event does not have.
			if out["decision"] == "block" && !ev.Honoured(events.FDecision) {
				t.Fatalf("non-blocking event %s rendered a block", ev.Name)
			}
		}
	case "ctx":
		wantCtx := ev.Honoured(events.FAdditionalContext)
		gotCtx := hso != nil && hso["additionalContext"] == "probe-ctx"
		if wantCtx != gotCtx {
			t.Fatalf("additionalContext rendered=%v, want %v (stdout %q)", gotCtx, wantCtx, r.Stdout)
		}
	case "stop":
		want := ev.Honoured(events.FContinue)
		got := out["continue"] == false && out["stopReason"] == "probe says stop"
		if want != got {
			t.Fatalf("continue:false rendered=%v, want %v (stdout %q)", got, want, r.Stdout)
		}
	}
}

func checkFrames(t *testing.T, ev *events.Event, mode string, res *protocol.Result, frames []*protocol.Frame) {
	t.Helper()
	kinds := map[string]int{}
	for _, f := range frames {
		k := string(f.Type)
		if f.Type == protocol.FrameMessage {
			k += ":" + f.Kind
		}
		kinds[k]++
		if f.Type != protocol.FrameResult && f.Hook == nil && f.Type != protocol.FrameError {
			t.Errorf("frame %s without hook identity", k)
		}
	}
	if kinds["message:started"] != 1 {
		t.Errorf("want one started message, got frames %v", sortedKinds(kinds))
	}
	if len(res.Hooks) != 1 || res.Hooks[0].Hook.File == "" {
		t.Fatalf("result hooks: %+v", res.Hooks)
	}
	switch mode {
	case "ctx":
		if ev.Honoured(events.FAdditionalContext) && (kinds["additional_context"] != 1 || len(res.AdditionalContext) != 1) {
			t.Errorf("ctx: frames %v, result context %q", sortedKinds(kinds), res.AdditionalContext)
		}
	case "stop":
		if ev.Honoured(events.FContinue) && (kinds["prevent_continuation"] != 1 || !res.PreventContinuation || res.StopReason != "probe says stop") {
			t.Errorf("stop: frames %v, result %+v", sortedKinds(kinds), res)
		}
	case "exit2":
		// PreToolUse, PreModelSwitch and PreSkillShellCommand answer with a permission:
		// exit 2 is a deny there.
		permissionEvent := ev.Name == "PreToolUse" || ev.Name == "PreModelSwitch" || ev.Name == events.SkillShell
		if ev.CanBlock && ev.Name != "PermissionRequest" && !permissionEvent && kinds["stop"] != 1 {
			t.Errorf("exit2 on %s: want a stop frame, got %v", ev.Name, sortedKinds(kinds))
		}
		if permissionEvent && (res.Permission == nil || res.Permission.Decision != "deny") {
			t.Errorf("exit2 on %s: permission %+v", ev.Name, res.Permission)
		}
	}
}

func sortedKinds(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s×%d", k, v))
	}
	sort.Strings(out)
	return out
}

// checkWorktreeCreate: Claude Code takes the last non-empty stdout line of a command hook
// as the worktree path and fails creation on any non-zero exit (spec §4.4); JSON fields
// are not interpreted for command hooks there.
func checkWorktreeCreate(t *testing.T, mode string, r Result) {
	t.Helper()
	switch mode {
	case "allow": // exit 0 without a path is a failure, as the captured payload shows
		if r.Code != 1 || !strings.Contains(r.Stderr, "no worktree path") {
			t.Fatalf("silent WorktreeCreate hook: exit %d stderr %q", r.Code, r.Stderr)
		}
	case "exit2":
		if r.Code != 1 || !strings.Contains(r.Stderr, "blocked by probe") {
			t.Fatalf("WorktreeCreate failure rendered as exit %d stderr %q", r.Code, r.Stderr)
		}
	case "ctx", "stop": // the printed line is the "path", passed through verbatim
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "{") {
			t.Fatalf("WorktreeCreate stdout line not passed through: exit %d stdout %q", r.Code, r.Stdout)
		}
		if strings.Contains(r.Stdout, "hookEventName") && !strings.Contains(r.Stdout, "probe-ctx") {
			t.Fatalf("WorktreeCreate stdout rewritten: %q", r.Stdout)
		}
		if mode == "stop" && strings.TrimSpace(r.Stdout) != `{"continue":false,"stopReason":"probe says stop"}` {
			t.Fatalf("WorktreeCreate stdout = %q, want the hook's last line", r.Stdout)
		}
		if mode == "ctx" && strings.TrimSpace(r.Stdout) != `{"hookSpecificOutput":{"hookEventName":"WorktreeCreate","additionalContext":"probe-ctx"}}` {
			t.Fatalf("WorktreeCreate stdout = %q, want the hook's last line", r.Stdout)
		}
	}
}
