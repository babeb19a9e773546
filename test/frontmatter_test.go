package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/protocol"
)

// frontmatterWorld lays out, in e, what `claude plugin install` from a local-directory
// marketplace leaves (Claude Code 2.1.332: plugin guard@localmkt, its PreToolUse guard
// denying rm and recording its environment), a project subagent "reviewer" and a project
// skill "greet" with frontmatter hooks. Every hook appends "<name> <event>
// <CLAUDE_PLUGIN_ROOT>" to the returned log.
func frontmatterWorld(t *testing.T, e *Env) (log string) {
	t.Helper()
	log = filepath.Join(e.Root, "hooks.log")
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkt := filepath.Join(e.Root, "mkt")
	guard := filepath.Join(mkt, "plugins", "guard")
	write(filepath.Join(e.UserDir, "plugins", "installed_plugins.json"), `{"version": 2, "plugins": {"guard@localmkt": [{"scope": "user", "installPath": "`+
		filepath.Join(e.UserDir, "plugins", "cache", "localmkt", "guard", "1.2.3")+`", "version": "1.2.3"}]}}`)
	write(filepath.Join(e.UserDir, "plugins", "known_marketplaces.json"), `{"localmkt": {"source": {"source": "directory", "path": "`+mkt+`"}, "installLocation": "`+mkt+`"}}`)
	write(filepath.Join(mkt, ".claude-plugin", "marketplace.json"), `{"name": "localmkt", "plugins": [{"name": "guard", "source": "./plugins/guard"}]}`)
	write(filepath.Join(guard, ".claude-plugin", "plugin.json"), `{"name": "guard", "version": "1.2.3"}`)
	write(filepath.Join(guard, "guard.sh"), `#!/bin/sh
echo "plugin $CLAUDE_PLUGIN_ROOT $CLAUDE_PLUGIN_DATA $CLAUDE_PLUGIN_OPTION_API_TOKEN $1" >> `+log+`
if grep -q '"rm ' ; then echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "guard: no rm"}}'; fi
`)
	write(filepath.Join(guard, "hooks", "hooks.json"), `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/guard.sh", "args": ["${user_config.api_token}"]}]}]}}`)
	e.WriteSettings("user", `{"enabledPlugins": {"guard@localmkt": true}, "pluginConfigs": {"guard@localmkt": {"options": {"api_token": "tok-1"}}}}`)
	hook := func(name string) string {
		p := filepath.Join(e.Root, "h", name+".sh")
		write(p, `#!/bin/sh
echo "`+name+` $(sed -n 's/.*"hook_event_name":"\([A-Za-z]*\)".*/\1/p') ${CLAUDE_PLUGIN_ROOT:-none}" >> `+log+"\n")
		return p
	}
	write(filepath.Join(e.Project, ".claude", "agents", "rev.md"), "---\nname: reviewer\ndescription: Reviews\nhooks:\n"+
		"  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: "+hook("agent-pre")+"\n"+
		"  Stop:\n    - hooks:\n        - type: command\n          command: "+hook("agent-stop")+"\n---\nYou review.\n")
	write(filepath.Join(e.Project, ".claude", "skills", "greet", "SKILL.md"), "---\nname: greet\ndescription: Greets\nhooks:\n"+
		"  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: "+hook("skill-once")+"\n          once: true\n"+
		"        - type: command\n          command: "+hook("skill-pre")+"\n"+
		"  PostToolUse:\n    - matcher: Skill\n      hooks:\n        - type: command\n          command: "+hook("skill-post")+"\n"+
		"  SessionEnd:\n    - hooks:\n        - type: command\n          command: "+hook("skill-end")+"\n---\nGreet: !`echo hi`\n")
	return log
}

// claudeEvent sends payload as Claude Code would (CLAUDECODE=1 in the caller's env).
func (e *Env) claudeEvent(t *testing.T, payload string) *protocol.Result {
	t.Helper()
	frames, err := e.Raw(&protocol.Request{Event: json.RawMessage(payload), ProjectDir: e.Project, Env: append(e.BaseEnv(), "CLAUDECODE=1")})
	if err != nil {
		t.Fatal(err)
	}
	return frames[len(frames)-1].Result
}

// takeLog returns the hook log's lines and empties it.
func takeLog(t *testing.T, log string) []string {
	t.Helper()
	b, _ := os.ReadFile(log)
	_ = os.Remove(log)
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
}

// TestFrontmatterAndPluginHooksUnderDropIn: under hookd's managed drop-in (Claude Code
// then runs neither non-forced plugin hooks nor any frontmatter hook) hookd runs them —
// the plugin's guard with its plugin's environment and options, still denying; the
// subagent's hooks only for its own events (its Stop as SubagentStop); the skill's from
// the Skill tool's PostToolUse on, on the main thread only, "once" gone after its first
// success, and none after SessionEnd — and names each source in the result; status
// lists none as running nowhere.
func TestFrontmatterAndPluginHooksUnderDropIn(t *testing.T) {
	e := NewEnv(t)
	log := frontmatterWorld(t, e)
	if r := e.Hookd("", "install", "claude-code", "--scope", "managed", "--hookc", bins.hookc); r.Code != 0 {
		t.Fatalf("install: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	} else if !strings.Contains(r.Stdout, "plugin:guard@localmkt") || !strings.Contains(r.Stdout, "agent:reviewer") || !strings.Contains(r.Stdout, "skill:greet") {
		t.Errorf("install --scope managed does not list the plugin hooks it takes over:\n%s", r.Stdout)
	}
	e.Start()
	guard := filepath.Join(e.Root, "mkt", "plugins", "guard")
	data := filepath.Join(e.UserDir, "plugins", "data", "guard-localmkt")
	bash := func(cmd string, agent ...string) string {
		f := map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "tool_use_id": "t"}
		if len(agent) > 0 {
			f["agent_id"], f["agent_type"] = "a1", agent[0]
		}
		return e.Payload("PreToolUse", f)
	}
	sources := func(r *protocol.Result) (out []string) {
		for _, h := range r.Hooks {
			out = append(out, h.Hook.Source+"="+h.Outcome)
		}
		return out
	}

	r := e.claudeEvent(t, bash("rm -rf /tmp/x"))
	if got := takeLog(t, log); strings.Join(got, " ") != "plugin_"+guard+"_"+data+"_tok-1_tok-1" {
		t.Errorf("main-thread rm: hooks ran %q", got)
	}
	if r.Permission == nil || r.Permission.Decision != "deny" || !strings.Contains(r.Permission.Reason, "guard: no rm") || strings.Join(sources(r), " ") != "plugin:guard@localmkt=blocked" {
		t.Errorf("the plugin guard under the drop-in: permission %+v hooks %v", r.Permission, sources(r))
	}
	e.claudeEvent(t, bash("ls", "reviewer"))
	if got := takeLog(t, log); len(got) != 2 || got[1] != "agent-pre_PreToolUse_none" {
		t.Errorf("subagent event: %q", got)
	}
	e.claudeEvent(t, bash("ls", "other"))
	if got := takeLog(t, log); len(got) != 1 {
		t.Errorf("another subagent's event ran the reviewer's hooks: %q", got)
	}
	e.claudeEvent(t, e.Payload("SubagentStop", map[string]any{"agent_id": "a1", "agent_type": "reviewer", "stop_hook_active": false}))
	if got := takeLog(t, log); strings.Join(got, " ") != "agent-stop_SubagentStop_none" {
		t.Errorf("the subagent's Stop as SubagentStop: %q", got)
	}

	// The skill: nothing before it is invoked; its PostToolUse sees the Skill call.
	e.claudeEvent(t, bash("ls"))
	if got := takeLog(t, log); len(got) != 1 {
		t.Errorf("skill hooks before the skill was invoked: %q", got)
	}
	r = e.claudeEvent(t, e.Payload("PostToolUse", map[string]any{"tool_name": "Skill", "tool_input": map[string]any{"skill": "greet"}, "tool_use_id": "s1", "tool_response": map[string]any{}}))
	skillDir := filepath.Join(e.Project, ".claude", "skills", "greet")
	if got := takeLog(t, log); strings.Join(got, " ") != "skill-post_PostToolUse_"+skillDir || strings.Join(sources(r), " ") != "skill:greet=ok" {
		t.Errorf("the Skill call's PostToolUse: %q, hooks %v", got, sources(r))
	}
	e.claudeEvent(t, bash("ls"))
	if got := takeLog(t, log); len(got) != 3 || !strings.Contains(strings.Join(got, " "), "skill-once") {
		t.Errorf("first Bash after the skill: %q", got)
	}
	e.claudeEvent(t, bash("ls"))
	if got := takeLog(t, log); len(got) != 2 || strings.Contains(strings.Join(got, " "), "skill-once") {
		t.Errorf("second Bash after the skill (once gone): %q", got)
	}
	e.claudeEvent(t, bash("ls", "reviewer"))
	if got := strings.Join(takeLog(t, log), " "); strings.Contains(got, "skill-") {
		t.Errorf("a skill hook ran inside a subagent: %q", got)
	}
	e.claudeEvent(t, e.Payload("SessionEnd", map[string]any{"reason": "other"}))
	e.claudeEvent(t, bash("ls"))
	if got := strings.Join(takeLog(t, log), " "); strings.Contains(got, "skill-") {
		t.Errorf("skill hooks after SessionEnd (or its SessionEnd hook ran): %q", got)
	}

	audit, _ := os.ReadFile(e.auditFile())
	for _, want := range []string{`"source":"plugin:guard@localmkt"`, `"source":"agent:reviewer"`, `"source":"skill:greet"`} {
		if !strings.Contains(string(audit), want) {
			t.Errorf("the decision log does not name %s", want)
		}
	}
	st := e.Status()
	var labels []string
	for _, f := range st["sources"].([]any) {
		labels = append(labels, f.(map[string]any)["source"].(string))
	}
	for _, want := range []string{"plugin:guard@localmkt", "agent:reviewer", "skill:greet"} {
		if !strings.Contains(strings.Join(labels, " "), want) {
			t.Errorf("status sources %v lack %s", labels, want)
		}
	}
	for _, p := range st["projects"].([]any) {
		if rn := p.(map[string]any)["run_nowhere"]; rn != nil {
			t.Errorf("run nowhere under the drop-in: %v", rn)
		}
	}
}

// TestFrontmatterAndPluginHooksAtUserScope: without the drop-in Claude Code runs plugin,
// subagent and skill hooks itself: hookd reports them as "run by Claude Code" and runs
// none of them (each runs exactly once).
func TestFrontmatterAndPluginHooksAtUserScope(t *testing.T) {
	e := NewEnv(t)
	log := frontmatterWorld(t, e)
	e.Start()
	e.claudeEvent(t, e.Payload("PostToolUse", map[string]any{"tool_name": "Skill", "tool_input": map[string]any{"skill": "greet"}, "tool_use_id": "s1", "tool_response": map[string]any{}}))
	r := e.claudeEvent(t, e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf /tmp/x"}, "tool_use_id": "t", "agent_id": "a1", "agent_type": "reviewer"}))
	r2 := e.claudeEvent(t, e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}, "tool_use_id": "t"}))
	if got := takeLog(t, log); len(got) != 0 {
		t.Errorf("hookd ran hooks Claude Code runs itself: %q", got)
	}
	seen := map[string]bool{}
	for _, h := range append(r.Hooks, r2.Hooks...) {
		if h.Outcome != protocol.OutcomeNotRun || !strings.HasPrefix(h.Error, "run by Claude Code") {
			t.Errorf("%s: %s %q", h.Hook.Source, h.Outcome, h.Error)
		}
		seen[h.Hook.Source] = true
	}
	for _, want := range []string{"plugin:guard@localmkt", "agent:reviewer", "skill:greet"} {
		if !seen[want] {
			t.Errorf("no not-run report for %s: %v", want, seen)
		}
	}
}
