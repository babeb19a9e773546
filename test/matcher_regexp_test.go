package test

import (
	"encoding/json"
	"strings"
	"testing"
)

// A guard whose matcher uses JavaScript-only syntax (Claude Code evaluates matchers with
// RegExp) runs through hookd as it does natively. Before, hookd rejected the file, and on
// its first version that meant no hooks from it at all: the guard failed open.
func TestJavaScriptMatcherGuardRuns(t *testing.T) {
	e := NewEnv(t)
	deny := cmdHook(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not Read: denied"}}'`)
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "^(?!Read$).*", "hooks": []any{deny}}},
	}})
	e.WriteSettings("project", string(b))
	e.Start()
	r := e.Hookc(bashPayload(e, "echo hi"))
	if got := hso(t, r)["permissionDecision"]; got != "deny" || !strings.Contains(r.Stdout, "not Read: denied") {
		t.Fatalf("Bash under a ^(?!Read$) guard: decision %v, stdout %q stderr %q", got, r.Stdout, r.Stderr)
	}
	read := e.Payload("PreToolUse", map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "/etc/hostname"}, "tool_use_id": "toolu_2"})
	if r := e.Hookc(read); r.Code != 0 || strings.Contains(r.Stdout, "deny") {
		t.Fatalf("Read is excluded by the lookahead: exit %d stdout %q", r.Code, r.Stdout)
	}
}
