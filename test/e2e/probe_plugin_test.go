//go:build probe

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/test/claudeapi"
)

// Plugins, plugin agents and skills, and skill frontmatter hooks (issue 23, phase 2): a
// local marketplace installed with the real `claude plugin` commands, then a session.
// Every hook saves its stdin and environment beside the project (capture, in
// probe_subagent_test.go).

// pluginFiles is the marketplace: one plugin "guard" 1.2.3 with hooks, an agent and a skill.
func pluginFiles() map[string]string {
	return map[string]string{
		".claude-plugin/marketplace.json": `{"name": "localmkt", "owner": {"name": "hookd tests"}, "plugins": [{"name": "guard", "source": "./plugins/guard", "description": "a guard", "version": "1.2.3"}]}`,
		"plugins/guard/.claude-plugin/plugin.json": `{"name": "guard", "version": "1.2.3", "description": "guard plugin",
 "userConfig": {"api_token": {"type": "string", "title": "token", "description": "a token", "default": "tok-default"},
                "secret": {"type": "string", "title": "secret", "description": "a secret", "sensitive": true}}}`,
		"plugins/guard/hooks/hooks.json": `{"description": "guard hooks", "hooks": {
 "PreToolUse": [{"matcher": "Bash", "hooks": [
   {"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"},
   {"type": "command", "command": "sh", "args": ["${CLAUDE_PLUGIN_ROOT}/hooks/exec.sh", "${user_config.api_token}", "${CLAUDE_PLUGIN_DATA}", "${CLAUDE_PROJECT_DIR}", "$HOME"]},
   {"type": "command", "command": "echo ${user_config.api_token} > \"$CLAUDE_PROJECT_DIR/shell-form-user-config.txt\""}]}],
 "SessionStart": [{"hooks": [{"type": "command", "command": "env | sort > \"$CLAUDE_PROJECT_DIR/plugin-sessionstart-env.txt\""}]}]}}`,
		"plugins/guard/hooks/guard.sh": `in=$(cat); d="$CLAUDE_PROJECT_DIR"; n=$(ls "$d" | grep -c '^plugin-guard-stdin'); n=$((n+1))
echo "$in" > "$d/plugin-guard-stdin-$n.json"; env | sort > "$d/plugin-guard-env-$n.txt"; pwd > "$d/plugin-guard-cwd.txt"
case "$in" in *"rm -rf"*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"plugin guard says no"}}';; esac
exit 0`,
		"plugins/guard/hooks/exec.sh": `cat > /dev/null; printf '%s\n' "$@" > "$CLAUDE_PROJECT_DIR/plugin-exec-args.txt"; exit 0`,
		"plugins/guard/agents/reviewer.md": `---
name: reviewer
description: Reviews code for the guard plugin
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: sh "$CLAUDE_PROJECT_DIR/h/agent-pre.sh"
  Stop:
    - hooks:
        - type: command
          command: sh "$CLAUDE_PROJECT_DIR/h/agent-stop.sh"
---
You review code.
`,
		"plugins/guard/skills/hello/SKILL.md": "---\nname: hello\ndescription: Say hello from the guard plugin\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/skill-pre.sh\"\n  PreSkillShellCommand:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/skill-pssc.sh\"\n---\nHello: !`echo HELLO-SKILL`\n",
	}
}

// installPlugin writes the marketplace beside the project and installs it as the real CLI
// does; extra are more `plugin install` arguments.
func installPlugin(extra ...string) func(t *testing.T, home, proj string) {
	return func(t *testing.T, home, proj string) {
		mkt := filepath.Join(filepath.Dir(proj), "mkt")
		for name, body := range pluginFiles() {
			p := filepath.Join(mkt, name)
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
		for _, args := range [][]string{{"plugin", "marketplace", "add", mkt}, append([]string{"plugin", "install", "guard@localmkt"}, extra...)} {
			cmd := exec.Command(claudeBin(t), args...)
			cmd.Env, cmd.Dir = env, proj
			out, err := cmd.CombinedOutput()
			t.Logf("claude %s: %s", strings.Join(args, " "), out)
			if err != nil {
				t.Fatalf("claude %v: %v", args, err)
			}
		}
	}
}

const projectSkill = "---\nname: greet\ndescription: Greets\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/greet-pre.sh\"\n          once: true\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/greet-pre-always.sh\"\n  PreSkillShellCommand:\n    - hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/greet-pssc.sh\"\n  Stop:\n    - hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/greet-stop.sh\"\n---\nGreet: !`echo GREET-LINE`\n"

func init() {
	hooks := map[string]string{}
	for _, n := range []string{"agent-pre", "agent-stop", "skill-pre", "skill-pssc", "greet-pre", "greet-pre-always", "greet-pssc", "greet-stop"} {
		hooks["h/"+n+".sh"] = capture(n, "", 0)
	}
	withHooks := func(m map[string]string) map[string]string {
		for k, v := range hooks {
			m[k] = v
		}
		return m
	}
	rm := claudeapi.Turn{ToolName: "Bash", ToolInput: map[string]any{"command": "rm -rf /tmp/hookd-probe-nothing-here", "description": "clean"}}
	allow := []string{"Bash(echo *)", "Bash(rm *)"}
	experiments = append(experiments,
		experiment{Name: "plug-1-guard", Prepare: installPlugin("--config", "api_token=tok-xyz"), Allow: allow, Files: withHooks(map[string]string{}),
			Script: []claudeapi.Turn{bashEcho, rm, endTurn("finished")}},
		experiment{Name: "plug-2-skill", Prepare: installPlugin(), Allow: allow, Files: withHooks(map[string]string{}),
			Script: []claudeapi.Turn{bashEcho, {ToolName: "Skill", ToolInput: map[string]any{"skill": "guard:hello"}}, bashEcho, endTurn("finished")}},
		experiment{Name: "plug-3-agent", Prepare: installPlugin(), Allow: allow, Files: withHooks(map[string]string{}),
			Script: []claudeapi.Turn{{ToolName: "Agent", ToolInput: map[string]any{"subagent_type": "guard:reviewer", "description": "look", "prompt": "look around"}}, bashEcho, endTurn("sub done"), bashEcho, endTurn("finished")}},
		experiment{Name: "skill-1-project-frontmatter", Allow: allow, Files: withHooks(map[string]string{".claude/skills/greet/SKILL.md": projectSkill}),
			Script: []claudeapi.Turn{bashEcho, {ToolName: "Skill", ToolInput: map[string]any{"skill": "greet"}}, bashEcho, bashEcho, endTurn("finished")}},
		experiment{Name: "skill-2-project-frontmatter-user", Allow: allow, Prompt: "/greet", Files: withHooks(map[string]string{".claude/skills/greet/SKILL.md": projectSkill}),
			Script: []claudeapi.Turn{bashEcho, bashEcho, endTurn("finished")}},
	)
}
