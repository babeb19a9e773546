//go:build probe

package e2e

import (
	"github.com/hookd/hookd/test/claudeapi"
)

// Subagent and skill frontmatter hooks (issue 23, phase 3): when Claude Code registers a
// skill's hooks (which events show the invocation, and whether the skill's own hooks see
// the event that invoked it), how agent types and skill names are derived, and what
// allowManagedHooksOnly does to frontmatter and plugin hooks. Every hook appends
// "<name> <event> <tool>" to seq beside the project, in the order they ran.

// seq is a hook body that appends one line to $CLAUDE_PROJECT_DIR/seq and saves stdin.
func seq(name string) string {
	return `d="$CLAUDE_PROJECT_DIR"; in=$(cat); ev=$(printf '%s' "$in" | sed -n 's/.*"hook_event_name":"\([A-Za-z]*\)".*/\1/p')
tool=$(printf '%s' "$in" | sed -n 's/.*"tool_name":"\([^"]*\)".*/\1/p'); cn=$(printf '%s' "$in" | sed -n 's/.*"command_name":"\([^"]*\)".*/\1/p')
at=$(printf '%s' "$in" | sed -n 's/.*"agent_type":"\([^"]*\)".*/\1/p')
n=$(grep -c . "$d/seq" 2>/dev/null || echo 0); printf '%s\n' "$in" > "$d/stdin-` + name + `-$n.json"
echo "` + name + ` $ev tool=$tool cmd=$cn agent=$at root=${CLAUDE_PLUGIN_ROOT:-} data=${CLAUDE_PLUGIN_DATA:-}" >> "$d/seq"; exit 0`
}

// fmSkill is a skill whose frontmatter hooks cover the events that could show or follow
// its invocation; "once" on one PreToolUse hook.
const fmSkill = "---\nname: greet\ndescription: Greets\nhooks:\n" +
	"  UserPromptSubmit:\n    - hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/sk-ups.sh\"\n" +
	"  UserPromptExpansion:\n    - hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/sk-upe.sh\"\n" +
	"  PreToolUse:\n    - matcher: \"*\"\n      hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/sk-pre.sh\"\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/sk-once.sh\"\n          once: true\n" +
	"  PostToolUse:\n    - matcher: \"*\"\n      hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/sk-post.sh\"\n" +
	"  PreSkillShellCommand:\n    - hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/sk-pssc.sh\"\n" +
	"  Stop:\n    - hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/sk-stop.sh\"\n" +
	"  SessionEnd:\n    - hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/sk-end.sh\"\n" +
	"---\nGreet: !`echo GREET-LINE`\n"

const fmAgent = "---\nname: reviewer\ndescription: Reviews the code when asked to review\nhooks:\n" +
	"  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/ag-pre.sh\"\n" +
	"  Stop:\n    - hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/ag-stop.sh\"\n" +
	"---\nYou review code.\n"

func init() {
	names := []string{"sk-ups", "sk-upe", "sk-pre", "sk-once", "sk-post", "sk-pssc", "sk-stop", "sk-end", "ag-pre", "ag-stop", "ag2-pre",
		"s-ups", "s-upe", "s-pre", "s-post", "s-pssc", "s-stop", "s-end", "s-substop", "m-pre", "skill-pre", "skill-pssc", "agent-pre", "agent-stop"}
	files := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for _, n := range names {
			m["h/"+n+".sh"] = seq(n)
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	settingsHooks := []hookSpec{
		{Event: "UserPromptSubmit", Name: "s-ups", Command: `sh "$CLAUDE_PROJECT_DIR/h/s-ups.sh"`},
		{Event: "UserPromptExpansion", Name: "s-upe", Command: `sh "$CLAUDE_PROJECT_DIR/h/s-upe.sh"`},
		{Event: "PreToolUse", Matcher: "*", Name: "s-pre", Command: `sh "$CLAUDE_PROJECT_DIR/h/s-pre.sh"`},
		{Event: "PostToolUse", Matcher: "*", Name: "s-post", Command: `sh "$CLAUDE_PROJECT_DIR/h/s-post.sh"`},
		{Event: "PreSkillShellCommand", Name: "s-pssc", Command: `sh "$CLAUDE_PROJECT_DIR/h/s-pssc.sh"`},
		{Event: "Stop", Name: "s-stop", Command: `sh "$CLAUDE_PROJECT_DIR/h/s-stop.sh"`},
		{Event: "SubagentStop", Name: "s-substop", Command: `sh "$CLAUDE_PROJECT_DIR/h/s-substop.sh"`},
		{Event: "SessionEnd", Name: "s-end", Command: `sh "$CLAUDE_PROJECT_DIR/h/s-end.sh"`},
	}
	skill := map[string]string{".claude/skills/greet/SKILL.md": fmSkill}
	allow := []string{"Bash(echo *)", "Skill(greet)", "Skill(guard:hello)"}
	skillTool := claudeapi.Turn{ToolName: "Skill", ToolInput: map[string]any{"skill": "greet"}}
	agentCall := func(typ string) claudeapi.Turn {
		return claudeapi.Turn{ToolName: "Agent", ToolInput: map[string]any{"subagent_type": typ, "description": "look", "prompt": "look around"}}
	}
	managedPre := map[string]any{"PreToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": `sh "$CLAUDE_PROJECT_DIR/h/m-pre.sh"`}}}}}
	experiments = append(experiments,
		// /greet typed by the user: which settings events show it, and which of the
		// skill's own hooks see that very prompt.
		experiment{Name: "fm-1-skill-user", Prompt: "/greet", Allow: allow, Hooks: settingsHooks, Files: files(skill),
			Script: []claudeapi.Turn{bashEcho, bashEcho, endTurn("finished")}},
		// The Skill tool: does the skill's PostToolUse hook see the Skill call itself?
		experiment{Name: "fm-2-skill-tool", Allow: allow, Hooks: settingsHooks, Files: files(skill),
			Script: []claudeapi.Turn{bashEcho, skillTool, bashEcho, bashEcho, endTurn("finished")}},
		// A skill invoked inside a subagent: are its hooks the subagent's only?
		experiment{Name: "fm-3-skill-in-agent", Allow: allow, Hooks: settingsHooks, Files: files(map[string]string{
			".claude/skills/greet/SKILL.md": fmSkill,
			".claude/agents/helper.md":      "---\nname: helper\ndescription: Helps when asked\n---\nYou help.\n"}),
			Script: []claudeapi.Turn{agentCall("helper"), skillTool, bashEcho, endTurn("sub done"), bashEcho, endTurn("finished")}},
		// Agent type from the frontmatter name, the file in a subdirectory, another name.
		experiment{Name: "fm-4-agent-subdir-name", Allow: allow, Hooks: settingsHooks, Files: files(map[string]string{
			".claude/agents/sub/some-file.md": "---\nname: rev2\ndescription: Reviews when asked\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/ag2-pre.sh\"\n---\nYou review.\n"}),
			Script: []claudeapi.Turn{agentCall("rev2"), bashEcho, endTurn("sub done"), bashEcho, endTurn("finished")}},
		// Skill name from the directory or the frontmatter name?
		experiment{Name: "fm-5-skill-name-dir", Prompt: "/hello-dir", Allow: allow, Hooks: settingsHooks, Files: files(map[string]string{
			".claude/skills/hello-dir/SKILL.md": "---\nname: hello-fm\ndescription: Says hello\n---\nSay hello: !`echo HELLO-LINE`\n"}),
			Script: []claudeapi.Turn{endTurn("finished")}},
		experiment{Name: "fm-5b-skill-name-fm", Prompt: "/hello-fm", Allow: allow, Hooks: settingsHooks, Files: files(map[string]string{
			".claude/skills/hello-dir/SKILL.md": "---\nname: hello-fm\ndescription: Says hello\n---\nSay hello: !`echo HELLO-LINE`\n"}),
			Script: []claudeapi.Turn{endTurn("finished")}},
		// allowManagedHooksOnly (managed): which of agent, skill and plugin hooks run.
		experiment{Name: "fm-6-managed-only", Prompt: "/greet", Allow: allow, Hooks: settingsHooks, Prepare: installPlugin(),
			Managed: map[string]any{"allowManagedHooksOnly": true, "hooks": managedPre},
			Files:   files(map[string]string{".claude/skills/greet/SKILL.md": fmSkill, ".claude/agents/reviewer.md": fmAgent}),
			Script:  []claudeapi.Turn{bashEcho, agentCall("reviewer"), bashEcho, endTurn("sub done"), bashEcho, endTurn("finished")}},
		// The same with the plugin force-enabled by managed settings, and its skill used.
		experiment{Name: "fm-7-managed-forced-plugin", Allow: allow, Hooks: settingsHooks, Prepare: installPlugin(),
			Managed: map[string]any{"allowManagedHooksOnly": true, "hooks": managedPre, "enabledPlugins": map[string]any{"guard@localmkt": true}},
			Files:   files(map[string]string{".claude/skills/greet/SKILL.md": fmSkill}),
			Script:  []claudeapi.Turn{bashEcho, {ToolName: "Skill", ToolInput: map[string]any{"skill": "guard:hello"}}, bashEcho, skillTool, bashEcho, endTurn("finished")}},
		// A skill invoked on the main thread, then a subagent: do the skill's hooks apply
		// inside it? And a plugin skill's environment.
		experiment{Name: "fm-9-skill-then-agent", Allow: allow, Hooks: settingsHooks, Prepare: installPlugin(), Files: files(map[string]string{
			".claude/skills/greet/SKILL.md": fmSkill,
			".claude/agents/helper.md":      "---\nname: helper\ndescription: Helps when asked\n---\nYou help.\n"}),
			Script: []claudeapi.Turn{skillTool, {ToolName: "Skill", ToolInput: map[string]any{"skill": "guard:hello"}}, agentCall("helper"), bashEcho, endTurn("sub done"), bashEcho, endTurn("finished"), endTurn("finished")}},
		// once: removed only after a successful run of a group whose matcher is the
		// event's match value itself?
		experiment{Name: "fm-10-once", Prompt: "/once2", Allow: allow, Hooks: settingsHooks, Files: files(map[string]string{
			".claude/skills/once2/SKILL.md": "---\nname: once2\ndescription: once semantics\nhooks:\n" +
				"  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/o-fail.sh\"; exit 1\n          once: true\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/o-ok.sh\"\n          once: true\n" +
				"  PostToolUse:\n    - matcher: \"Bash|Read\"\n      hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/o-regex.sh\"\n          once: true\n" +
				"  Stop:\n    - hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/o-stop.sh\"\n          once: true\n" +
				"---\nDo it.\n",
			"h/o-fail.sh": seq("o-fail"), "h/o-ok.sh": seq("o-ok"), "h/o-regex.sh": seq("o-regex"), "h/o-stop.sh": seq("o-stop")}),
			Script: []claudeapi.Turn{bashEcho, bashEcho, endTurn("finished")}},
		// A slash command (.claude/commands) with frontmatter hooks; a plugin skill's
		// hooks and their environment on the main thread.
		experiment{Name: "fm-11-command-hooks", Prompt: "/cmdx", Allow: allow, Hooks: settingsHooks, Files: files(map[string]string{
			".claude/commands/cmdx.md": "---\ndescription: a command\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: sh \"$CLAUDE_PROJECT_DIR/h/cmd-pre.sh\"\n---\nDo it.\n",
			"h/cmd-pre.sh":             seq("cmd-pre")}),
			Script: []claudeapi.Turn{bashEcho, endTurn("finished")}},
		experiment{Name: "fm-12-plugin-skill", Allow: allow, Hooks: settingsHooks, Prepare: installPlugin(), Files: files(nil),
			Script: []claudeapi.Turn{{ToolName: "Skill", ToolInput: map[string]any{"skill": "guard:hello"}}, bashEcho, endTurn("finished")}},
		// The baseline for fm-6: no managed settings.
		experiment{Name: "fm-8-native-agent", Allow: allow, Hooks: settingsHooks, Prepare: installPlugin(),
			Files:  files(map[string]string{".claude/agents/reviewer.md": fmAgent}),
			Script: []claudeapi.Turn{agentCall("reviewer"), bashEcho, endTurn("sub done"), bashEcho, endTurn("finished")}},
	)
}
