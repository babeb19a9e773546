package test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

// TestOnFailureBlock: a handler with "onFailure": "block" that cannot start, times out or
// exits with a code other than 0 and 2 blocks the action, through hookc and through the
// raw socket, exactly where Claude Code 2.1.330 blocks (docs/differences.md): not
// without the field, not for async hooks, not on Stop; on PostToolUse the tool already
// ran and the block is the feedback an exit 2 gives. The block
// says it was an onFailure block and of which hook, in the answer, the frames, the audit
// record and `hookd audit query`.
func TestOnFailureBlock(t *testing.T) {
	e := NewEnv(t)
	exit1 := e.Script("exit1.sh", "cat >/dev/null; echo 'guard broke' >&2; exit 1")
	slow := e.Script("slow.sh", "cat >/dev/null; sleep 30")
	settings := map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{
			map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": "/nonexistent/guard.sh", "onFailure": "block"}}},
			map[string]any{"matcher": "Write", "hooks": []any{map[string]any{"type": "command", "command": exit1, "onFailure": "block"}}},
			map[string]any{"matcher": "Edit", "hooks": []any{map[string]any{"type": "command", "command": slow, "timeout": 1, "onFailure": "block"}}},
			map[string]any{"matcher": "Read", "hooks": []any{map[string]any{"type": "command", "command": exit1}}},
			map[string]any{"matcher": "Glob", "hooks": []any{map[string]any{"type": "command", "command": exit1, "onFailure": "block", "async": true}}},
		},
		"UserPromptSubmit": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": exit1, "onFailure": "block"}}}},
		"PostToolUse":      []any{map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": exit1, "onFailure": "block"}}}},
		"Stop":             []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": exit1, "onFailure": "block"}}}},
	}}
	b, _ := json.Marshal(settings)
	e.WriteSettings("project", string(b))
	e.Start()

	tool := func(name string) string {
		return e.Payload("PreToolUse", map[string]any{"tool_name": name, "tool_input": map[string]any{"command": "echo hi", "file_path": e.Project + "/f"}, "tool_use_id": "toolu_1"})
	}
	const because = `blocking because onFailure is "block"`
	blocks := []struct {
		name, payload, command, what string
	}{
		{"missing script", tool("Bash"), "/nonexistent/guard.sh", "failed"},
		{"exit 1", tool("Write"), exit1, "failed"},
		{"timeout", tool("Edit"), slow, "timed out"},
	}
	for _, tt := range blocks {
		t.Run(tt.name, func(t *testing.T) {
			want := "[" + tt.command + "]: " + tt.what + "; " + because
			// Through hookc, as Claude Code runs it.
			r := e.Hookc(tt.payload)
			h := hso(t, r)
			reason, _ := h["permissionDecisionReason"].(string)
			if h["permissionDecision"] != "deny" || !strings.HasPrefix(reason, want) {
				t.Fatalf("hookc: %v (exit %d), want deny %q…", h, r.Code, want)
			}
			// Through the raw socket: the result and the frames name the hook and say via.
			res, frames := e.Event(tt.payload)
			p := res.Permission
			if p == nil || p.Decision != "deny" || p.Via != "on_failure" || p.Hook == nil || p.Hook.Command != tt.command {
				t.Fatalf("raw: permission %+v, want deny via on_failure by %s", p, tt.command)
			}
			if len(res.Hooks) != 1 || res.Hooks[0].Outcome != protocol.OutcomeBlocked || res.Hooks[0].Via != "on_failure" || res.Hooks[0].Error == "" {
				t.Fatalf("raw: hooks %+v", res.Hooks)
			}
			var framed bool
			for _, f := range frames {
				framed = framed || f.Type == protocol.FramePermission && f.Via == "on_failure" && f.Hook != nil && f.Hook.Command == tt.command
			}
			if !framed {
				t.Errorf("raw: no permission frame via on_failure naming the hook")
			}
			if tt.what == "failed" && tt.command == exit1 && !strings.Contains(reason, "\nguard broke") {
				t.Errorf("reason %q does not carry the hook's stderr", reason)
			}
		})
	}

	t.Run("onFailure absent: the failure lets the call through", func(t *testing.T) {
		r := e.Hookc(tool("Read"))
		if strings.Contains(r.Stdout, "deny") || r.Code == 2 {
			t.Fatalf("hookc: %q exit %d", r.Stdout, r.Code)
		}
		res, _ := e.Event(tool("Read"))
		if res.Permission != nil || res.Hooks[0].Outcome != protocol.OutcomeError || res.Hooks[0].Via != "" {
			t.Fatalf("raw: %+v %+v", res.Permission, res.Hooks)
		}
	})
	t.Run("async: ignored", func(t *testing.T) {
		res, _ := e.Event(tool("Glob"))
		if res.Permission != nil || res.Block != nil {
			t.Fatalf("async hook blocked: %+v %+v", res.Permission, res.Block)
		}
	})
	t.Run("UserPromptSubmit: blocks the prompt", func(t *testing.T) {
		payload := e.Payload("UserPromptSubmit", map[string]any{"prompt": "hi"})
		r := e.Hookc(payload)
		m := r.JSON(t)
		if m["decision"] != "block" || !strings.Contains(m["reason"].(string), because) {
			t.Fatalf("hookc: %q exit %d", r.Stdout, r.Code)
		}
		res, _ := e.Event(payload)
		if res.Block == nil || res.Block.Via != "on_failure" || res.Block.Hook == nil || res.Block.Hook.Command != exit1 {
			t.Fatalf("raw: block %+v", res.Block)
		}
	})
	t.Run("PostToolUse: the tool already ran; the block reaches the model as with exit 2", func(t *testing.T) {
		payload := e.Payload("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "echo hi"}, "tool_response": map[string]any{"stdout": "hi"}, "tool_use_id": "toolu_1"})
		r := e.Hookc(payload)
		m := r.JSON(t)
		if m["decision"] != "block" || !strings.Contains(m["reason"].(string), because) {
			t.Fatalf("hookc: %q exit %d", r.Stdout, r.Code)
		}
	})
	t.Run("Stop: ignored", func(t *testing.T) {
		payload := e.Payload("Stop", map[string]any{"stop_hook_active": false})
		r := e.Hookc(payload)
		if strings.Contains(r.Stdout, "block") || r.Code == 2 {
			t.Fatalf("hookc: %q exit %d", r.Stdout, r.Code)
		}
		res, _ := e.Event(payload)
		if res.Block != nil {
			t.Fatalf("raw: block %+v", res.Block)
		}
	})

	t.Run("audit", func(t *testing.T) {
		var onFailure []map[string]any
		for _, rec := range auditLines(t, e) {
			if rec["decision_via"] == "on_failure" {
				onFailure = append(onFailure, rec)
			}
		}
		// 3 tool blocks and the prompt, each through hookc and the socket; PostToolUse
		// through hookc.
		if len(onFailure) != 9 {
			t.Fatalf("%d audit records with decision_via on_failure, want 9", len(onFailure))
		}
		for _, rec := range onFailure {
			if id, _ := rec["decision_hook"].(string); id == "" || !strings.Contains(id, "#") {
				t.Errorf("record %v: decision_hook %q does not name the hook", rec["decision_id"], id)
			}
			hooks, _ := rec["hooks"].([]any)
			if len(hooks) != 1 || hooks[0].(map[string]any)["via"] != "on_failure" {
				t.Errorf("record %v: hooks %v", rec["decision_id"], hooks)
			}
		}
		q := e.Hookd("", "audit", "query", "--via", "on_failure")
		if q.Code != 0 || strings.Count(q.Stdout, "onFailure block by ") != 9 {
			t.Fatalf("audit query --via on_failure (exit %d):\n%s%s", q.Code, q.Stdout, q.Stderr)
		}
		if !strings.Contains(q.Stdout, "#PreToolUse[0].hooks[0]") {
			t.Errorf("query output does not name the failed hook:\n%s", q.Stdout)
		}
	})
}

// TestUnknownHandlerFieldFinding: a handler field hookd does not know is an error-level
// finding in `hookd validate` (exit 1), `hookd status` and the daemon's load log, naming
// file and field; the hook still runs.
func TestUnknownHandlerFieldFinding(t *testing.T) {
	e := NewEnv(t)
	guard := e.Script("guard.sh", `cat >/dev/null; printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"still runs"}}'`)
	e.WriteSettings("project", `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"`+guard+`","failMode":"closed"}]}]}}`)
	field := "hooks.PreToolUse[0].hooks[0].failMode"
	settings := e.SettingsPath("project")

	v := e.Hookd("", "validate")
	if v.Code != 1 || !strings.Contains(v.Stdout, "  error: "+settings+": "+field+": unknown handler field") || !strings.Contains(v.Stderr, "error-level finding") {
		t.Fatalf("validate: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}

	e.Start()
	if h := hso(t, e.Hookc(bashPayload(e, "echo hi"))); h["permissionDecision"] != "deny" || h["permissionDecisionReason"] != "still runs" {
		t.Fatalf("the hook with an unknown field did not run: %v", h)
	}
	st := e.Hookd("", "status")
	if !strings.Contains(st.Stdout, "ERROR finding: "+settings+": "+field) {
		t.Errorf("status does not show the finding:\n%s", st.Stdout)
	}
	Eventually(t, 10*time.Second, "the load log names the finding", func() bool {
		logs := e.Logs()
		return strings.Contains(logs, "settings finding") && strings.Contains(logs, field)
	})
}
