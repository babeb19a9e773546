package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestMonitorRunsBashHooks: hooks matching Bash also run on the Monitor tool's shell
// command, on a Bash-shaped payload, and may deny or ask but not approve or rewrite it;
// `if: "Monitor(…)"` matches the command as `Bash(…)` does; Bash permission rules judge
// it (Claude Code 2.1.314, observed with 2.1.330: docs/differences.md, daemon/monitor.go).
// Without this, a Bash guard installed through hookd would silently not run on commands
// the model starts through Monitor.
func TestMonitorRunsBashHooks(t *testing.T) {
	e := NewEnv(t)
	dumps := filepath.Join(e.Root, "dumps")
	if err := os.MkdirAll(dumps, 0o755); err != nil {
		t.Fatal(err)
	}
	// Each hook saves its stdin as dumps/<name>.json and prints its answer.
	hook := func(name, answer string) map[string]any {
		body := "cat > " + filepath.Join(dumps, name+".json") + "\n"
		if answer != "" {
			body += "printf '%s' '" + answer + "'\n"
		}
		return map[string]any{"type": "command", "command": e.Script(name+".sh", body)}
	}
	decide := func(d string, extra string) string {
		return `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + d + `","permissionDecisionReason":"` + d + ` by hook"` + extra + `}}`
	}
	withIf := func(h map[string]any, cond string) map[string]any { h["if"] = cond; return h }
	group := func(matcher string, hs ...map[string]any) map[string]any {
		var list []any
		for _, h := range hs {
			list = append(list, h)
		}
		return map[string]any{"matcher": matcher, "hooks": list}
	}
	settings := map[string]any{
		"permissions": map[string]any{"deny": []any{"Bash(rm *)"}},
		"hooks": map[string]any{"PreToolUse": []any{
			group("*", hook("star", "")),
			group("Monitor", hook("mon", "")),
			group("Bash", hook("bash", "")),
			group("Bash", withIf(hook("bash-if-monitor", ""), "Monitor(tail *)")),
			group("Monitor", withIf(hook("mon-if-monitor", ""), "Monitor(tail *)")),
			group("Monitor", withIf(hook("mon-if-monitor-ls", ""), "Monitor(ls *)")),
			group("*", withIf(hook("star-if-bash", decide("allow", "")), "Bash(tail *)")),
			group("Bash", withIf(hook("bash-if-bash", ""), "Bash(tail *)")),
			group("^[^M]", hook("negative-lookahead", "")), // a negated class fits through Bash only if it spells Bash
			group("Edit", hook("edit", "")),
		}},
	}
	b, _ := json.Marshal(settings)
	e.WriteSettings("project", string(b))
	e.Start()

	monitor := func(cmd string) string {
		return e.Payload("PreToolUse", map[string]any{"tool_name": "Monitor", "tool_use_id": "toolu_1",
			"tool_input": map[string]any{"description": "watch", "timeout_ms": 300000, "command": cmd}})
	}
	r := e.Hookc(monitor("tail -f app.log"))
	if r.Code != 0 {
		t.Fatalf("hookc exit %d: %s", r.Code, r.Stderr)
	}
	// star-if-bash allowed, but its `if` names Bash: its allow does not count.
	if r.Stdout != "" {
		if h, _ := r.JSON(t)["hookSpecificOutput"].(map[string]any); h != nil && h["permissionDecision"] != nil {
			t.Fatalf("answer %s: an allow from a hook whose if names Bash must not approve a Monitor command", r.Stdout)
		}
	}
	read := func(name string) (map[string]any, bool) {
		data, err := os.ReadFile(filepath.Join(dumps, name+".json"))
		if err != nil {
			return nil, false
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s got %q: %v", name, data, err)
		}
		return m, true
	}
	wantTool := map[string]string{
		"star": "Monitor", "mon": "Monitor", "mon-if-monitor": "Monitor", "star-if-bash": "Monitor",
		"bash": "Bash", "bash-if-bash": "Bash",
	}
	for name, tool := range wantTool {
		m, ok := read(name)
		if !ok {
			t.Errorf("hook %s did not run on the Monitor command", name)
			continue
		}
		if m["tool_name"] != tool {
			t.Errorf("hook %s got tool_name %v, want %s", name, m["tool_name"], tool)
		}
		in, _ := json.Marshal(m["tool_input"])
		want := `{"command":"tail -f app.log","description":"watch","timeout_ms":300000}`
		if tool == "Bash" {
			want = `{"command":"tail -f app.log","description":"watch"}`
		}
		if string(in) != want {
			t.Errorf("hook %s got tool_input %s, want %s", name, in, want)
		}
	}
	for _, name := range []string{"bash-if-monitor", "mon-if-monitor-ls", "negative-lookahead", "edit"} {
		if _, ok := read(name); ok {
			t.Errorf("hook %s ran on the Monitor command; Claude Code 2.1.330 does not run it", name)
		}
	}
}

// TestMonitorBashHookAnswers: what a hook that met a Monitor command through Bash can say.
func TestMonitorBashHookAnswers(t *testing.T) {
	e := NewEnv(t)
	ans := e.Script("answer.sh", `in=$(cat)
case "$in" in
*'"tool_name":"Monitor"'*) echo "hook saw Monitor" >&2; exit 3 ;;
*'deny-me'*) d=deny ;;
*'ask-me'*) d=ask ;;
*) d=allow ;;
esac
printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"%s","permissionDecisionReason":"%s by guard","updatedInput":{"command":"echo rewritten"}}}' "$d" "$d"
`)
	settings := map[string]any{
		"permissions": map[string]any{"deny": []any{"Bash(rm *)"}},
		"hooks": map[string]any{"PreToolUse": []any{
			map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": ans}}},
		}},
	}
	b, _ := json.Marshal(settings)
	e.WriteSettings("project", string(b))
	e.Start()
	monitor := func(cmd string) string {
		return e.Payload("PreToolUse", map[string]any{"tool_name": "Monitor", "tool_use_id": "toolu_1",
			"tool_input": map[string]any{"description": "watch", "command": cmd}})
	}
	tests := []struct {
		name, cmd, decision, reason string
	}{
		{"deny stands", "tail deny-me", "deny", "deny by guard"},
		{"ask stands, without the rewrite", "tail ask-me", "ask", "ask by guard"},
		{"allow and rewrite ignored", "tail -f log", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Hookc(monitor(tt.cmd))
			var h map[string]any
			if r.Stdout != "" {
				h, _ = r.JSON(t)["hookSpecificOutput"].(map[string]any)
			}
			got, _ := h["permissionDecision"].(string)
			reason, _ := h["permissionDecisionReason"].(string)
			if got != tt.decision || reason != tt.reason || h["updatedInput"] != nil {
				t.Fatalf("answer %q (exit %d, stderr %q), want decision %q reason %q and no updatedInput", r.Stdout, r.Code, r.Stderr, tt.decision, tt.reason)
			}
		})
	}
	// A Bash deny rule judges the Monitor command (Claude Code: "Permission to use Bash
	// with command rm -rf x has been denied"): the guard's allow does not count, and
	// hookd reports the rule's answer; a Monitor-matched allow would be overridden.
	raw := e.Payload("PreToolUse", map[string]any{"tool_name": "Monitor", "tool_use_id": "toolu_2",
		"tool_input": map[string]any{"command": "rm -rf x"}})
	res, _ := e.Event(raw)
	if res.RuleAnswer == nil || res.RuleAnswer.Decision != "deny" {
		t.Fatalf("rule answer %+v for Monitor rm -rf x, want the Bash(rm *) deny rule", res.RuleAnswer)
	}
}
