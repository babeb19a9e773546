package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Payloads as Codex CLI 0.169.0 and Gemini CLI 0.61.0 send them (captured from the real
// binaries; test/testdata/harnesses holds the full captures).
func codexPre(e *Env, cmd string) string {
	b, _ := json.Marshal(map[string]any{"session_id": "cx1", "turn_id": "t1", "transcript_path": nil, "cwd": e.Project,
		"hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "default", "tool_name": "Bash",
		"tool_input": map[string]any{"command": cmd}, "tool_use_id": "call_1"})
	return string(b)
}

func geminiPre(e *Env, cmd string) string {
	b, _ := json.Marshal(map[string]any{"session_id": "gm1", "transcript_path": filepath.Join(e.Home, ".gemini/tmp/p/chats/s.jsonl"),
		"cwd": e.Project, "hook_event_name": "BeforeTool", "timestamp": "2026-11-23T14:33:54.104Z",
		"tool_name": "run_shell_command", "tool_input": map[string]any{"command": cmd}})
	return string(b)
}

// One policy: a deny rule in ~/.claude/settings.json answers every harness, in each
// harness's own format, and the audit log names the harness of each decision.
func TestOnePolicyEveryHarness(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("user", `{"permissions":{"deny":["Bash(rm:*)"]}}`)
	e.Start()

	// Claude Code keeps enforcing its own rules: with no hook, hookd only reports.
	cc := e.Hookc(e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf x"}}), "--harness", "claude-code")
	if cc.Code != 0 || strings.Contains(cc.Stdout, "permissionDecision") {
		t.Errorf("claude-code: %+v", cc)
	}
	cx := e.Hookc(codexPre(e, "rm -rf x"), "--harness", "codex")
	m := cx.JSON(t)
	hso, _ := m["hookSpecificOutput"].(map[string]any)
	if cx.Code != 0 || hso["permissionDecision"] != "deny" || !strings.Contains(hso["permissionDecisionReason"].(string), "Bash(rm:*)") {
		t.Errorf("codex: want a deny naming the rule, got %+v", cx)
	}
	gm := e.Hookc(geminiPre(e, "rm -rf x"), "--harness", "gemini")
	m = gm.JSON(t)
	if gm.Code != 0 || m["decision"] != "deny" || !strings.Contains(m["reason"].(string), "Bash(rm:*)") {
		t.Errorf("gemini: want decision deny, got %+v", gm)
	}
	for k := range m {
		if k != "decision" && k != "reason" {
			t.Errorf("gemini answer carries %q: %s", k, gm.Stdout)
		}
	}
	// Detected without --harness, from the payload alone.
	if r := e.Hookc(geminiPre(e, "rm x")); !strings.Contains(r.Stdout, `"decision":"deny"`) {
		t.Errorf("gemini payload without --harness: %+v", r)
	}
	// An allowed command: no decision rendered for either harness.
	if r := e.Hookc(geminiPre(e, "ls"), "--harness", "gemini"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "" {
		t.Errorf("gemini ls: %+v", r)
	}

	q := e.Hookd("", "audit", "query", "--harness", "gemini", "--json")
	if q.Code != 0 || strings.Count(q.Stdout, "\n") != 3 || !strings.Contains(q.Stdout, `"native_event":"BeforeTool"`) {
		t.Errorf("audit query --harness gemini: %+v", q)
	}
	q = e.Hookd("", "audit", "query", "--harness", "codex", "--decision", "deny", "--json")
	if q.Code != 0 || strings.Count(q.Stdout, "\n") != 1 || !strings.Contains(q.Stdout, `"harness":"codex"`) {
		t.Errorf("audit query --harness codex: %+v", q)
	}
	q = e.Hookd("", "audit", "query", "--harness", "claude-code", "--json")
	if q.Code != 0 || strings.Count(q.Stdout, "\n") != 1 {
		t.Errorf("audit query --harness claude-code: %+v", q)
	}
}

// Gemini's own hooks (moved into ~/.gemini/hookd.json) run on Gemini's payload, their
// decisions are read in Gemini's format, Claude Code's hooks on the same event run on the
// Claude-shaped payload, and a hook's allow never beats the deny rule.
func TestGeminiOwnHooksAndClaudeHooksTogether(t *testing.T) {
	e := NewEnv(t)
	seen := filepath.Join(e.Root, "seen")
	gallow := e.Script("gallow.sh", `#!/bin/sh
cat > `+seen+`.gemini
echo '{"decision":"allow","hookSpecificOutput":{"additionalContext":"from gemini hook"}}'
`)
	cdeny := e.Script("cdeny.sh", `#!/bin/sh
cat > `+seen+`.claude
grep -q forbidden `+seen+`.claude && { echo "claude hook says no" >&2; exit 2; }
exit 0
`)
	e.WriteSettings("user", `{"permissions":{"deny":["Bash(rm:*)"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"`+cdeny+`"}]}]}}`)
	WriteAtomic(t, filepath.Join(e.Home, ".gemini", "hookd.json"), `{"hooks":{"BeforeTool":[{"matcher":"run_shell_command","hooks":[{"type":"command","command":"`+gallow+`","name":"g1","timeout":5000}]}]}}`)
	e.Start()

	r := e.Hookc(geminiPre(e, "rm -rf build"), "--harness", "gemini")
	m := r.JSON(t)
	if m["decision"] != "deny" || !strings.Contains(m["reason"].(string), "Bash(rm:*)") {
		t.Errorf("hook allow must lose to the deny rule: %s", r.Stdout)
	}
	g, _ := os.ReadFile(seen + ".gemini")
	c, _ := os.ReadFile(seen + ".claude")
	if !strings.Contains(string(g), `"hook_event_name":"BeforeTool"`) || !strings.Contains(string(g), `"run_shell_command"`) {
		t.Errorf("gemini hook got %s", g)
	}
	if !strings.Contains(string(c), `"hook_event_name":"PreToolUse"`) || !strings.Contains(string(c), `"tool_name":"Bash"`) {
		t.Errorf("claude hook got %s", c)
	}

	r = e.Hookc(geminiPre(e, "echo forbidden"), "--harness", "gemini")
	if m := r.JSON(t); m["decision"] != "deny" || !strings.Contains(m["reason"].(string), "claude hook says no") {
		t.Errorf("claude hook's exit 2 must deny for gemini: %s", r.Stdout)
	}
	r = e.Hookc(geminiPre(e, "echo ok"), "--harness", "gemini")
	m = r.JSON(t)
	hso, _ := m["hookSpecificOutput"].(map[string]any)
	if m["decision"] != "allow" || hso["additionalContext"] != "from gemini hook" {
		t.Errorf("gemini hook's allow and context: %s", r.Stdout)
	}
	// hooksConfig.disabled in Gemini's settings switches the hook off for hookd too: the
	// file is a watched source like every settings file, applied without a restart.
	WriteAtomic(t, filepath.Join(e.Home, ".gemini", "settings.json"), `{"hooksConfig":{"disabled":["g1"]}}`)
	Eventually(t, 20*time.Second, "the watcher to apply hooksConfig.disabled", func() bool {
		r := e.Hookc(geminiPre(e, "echo ok"), "--harness", "gemini")
		return r.Code == 0 && !strings.Contains(r.Stdout, "from gemini hook")
	})
}

// Codex's Interrupt is answered (with only what its schema allows); an unknown harness or
// event is an error, which hookc turns into a block.
func TestCodexInterruptAndUnknowns(t *testing.T) {
	e := NewEnv(t)
	e.Start()
	b, _ := json.Marshal(map[string]any{"session_id": "cx1", "turn_id": "t1", "transcript_path": nil, "cwd": e.Project,
		"hook_event_name": "Interrupt", "model": "gpt-5", "permission_mode": "default"})
	if r := e.Hookc(string(b), "--harness", "codex"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "" {
		t.Errorf("Interrupt: %+v", r)
	}
	if r := e.Hookc(geminiPre(e, "ls"), "--harness", "cursor"); r.Code != 2 || !strings.Contains(r.Stderr, "unknown harness") {
		t.Errorf("unknown harness must fail closed: %+v", r)
	}
	bm := strings.Replace(geminiPre(e, "ls"), "BeforeTool", "BeforeModel", 1)
	if r := e.Hookc(bm, "--harness", "gemini"); r.Code != 2 || !strings.Contains(r.Stderr, "BeforeModel") {
		t.Errorf("an event hookd does not forward must fail closed: %+v", r)
	}
}

// With the daemon down, hookc's in-process fallback answers in the harness's format too.
func TestHarnessFallbackInProcess(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("user", `{"permissions":{"deny":["Bash(rm:*)"]}}`)
	r := e.Hookc(geminiPre(e, "rm -rf x"), "--harness", "gemini")
	if m := r.JSON(t); r.Code != 0 || m["decision"] != "deny" {
		t.Errorf("gemini fallback: %+v", r)
	}
	r = e.Hookc(codexPre(e, "rm -rf x"), "--harness", "codex")
	if !strings.Contains(r.Stdout, `"permissionDecision":"deny"`) {
		t.Errorf("codex fallback: %+v", r)
	}
}
