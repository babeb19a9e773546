//go:build probe

package e2e

import (
	"github.com/hookd/hookd/test/claudeapi"
)

// Subagents (issue 23): which hooks fire inside a subagent, what agent_type/agent_id they
// carry, when SubagentStop runs relative to the subagent's transcript (2.1.331: "SubagentStop
// hooks now wait for it too"), and how a custom agent's frontmatter hooks behave.

// capture is a hook body (run as `sh "$CLAUDE_PROJECT_DIR/h/<name>.sh"`) that saves its stdin
// to stdin-<name>-<n>.json beside the project, appends a line to count-<name>, then prints
// stdout and exits code.
func capture(name, stdout string, code int) string {
	return `d="$CLAUDE_PROJECT_DIR"; n=$(wc -l < "$d/count-` + name + `" 2>/dev/null || echo 0); n=$((n+1))
cat > "$d/stdin-` + name + `-$n.json"; echo run >> "$d/count-` + name + `"
` + out(stdout, "", code)[len("cat > /dev/null\n"):]
}

// subagentStopTranscript: a SubagentStop hook that records whether the subagent's own
// transcript already holds its last reply ("sub done").
const subagentStopTranscript = `d="$CLAUDE_PROJECT_DIR"; in=$(cat); echo "$in" > "$d/stdin-substop.json"
p=$(printf '%s' "$in" | sed -n 's/.*"agent_transcript_path":"\([^"]*\)".*/\1/p')
if grep -q 'sub done' "$p" 2>/dev/null; then echo has-last-reply > "$d/substop-transcript.txt"; else echo missing-last-reply > "$d/substop-transcript.txt"; fi
exit 0`

const reviewerAgent = `---
name: reviewer
description: Reviews the code when asked to review
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: sh "$CLAUDE_PROJECT_DIR/h/fm-pre.sh"
  Stop:
    - hooks:
        - type: command
          command: sh "$CLAUDE_PROJECT_DIR/h/fm-stop.sh"
  SubagentStop:
    - hooks:
        - type: command
          command: sh "$CLAUDE_PROJECT_DIR/h/fm-substop.sh"
---
You review code.
`

func init() {
	agentCall := func(typ string) claudeapi.Turn {
		return claudeapi.Turn{ToolName: "Agent", ToolInput: map[string]any{"subagent_type": typ, "description": "look", "prompt": "look around"}}
	}
	script := func(typ string) []claudeapi.Turn {
		return []claudeapi.Turn{agentCall(typ), bashEcho, endTurn("sub done"), bashEcho, endTurn("finished")}
	}
	experiments = append(experiments,
		experiment{Name: "sub-1-general-purpose", Script: script("general-purpose"),
			Hooks: []hookSpec{
				{Event: "SubagentStop", Name: "substop", Body: subagentStopTranscript},
				{Event: "SubagentStart", Name: "substart", Body: capture("substart", "", 0)},
				{Event: "PreToolUse", Matcher: "Bash", Name: "pre", Body: capture("pre", "", 0)},
				{Event: "Stop", Name: "stop", Body: capture("stop", "", 0)},
			}},
		experiment{Name: "sub-2-frontmatter", Script: script("reviewer"),
			Files: map[string]string{
				".claude/agents/reviewer.md": reviewerAgent,
				"h/fm-pre.sh":                capture("fm-pre", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"fm says no"}}`, 0),
				"h/fm-stop.sh":               capture("fm-stop", "", 0),
				"h/fm-substop.sh":            capture("fm-substop", "", 0),
			},
			Hooks: []hookSpec{
				{Event: "SubagentStop", Name: "substop", Body: capture("substop", "", 0)},
				{Event: "PreToolUse", Matcher: "Bash", Name: "pre", Body: capture("pre", "", 0)},
				{Event: "Stop", Name: "stop", Body: capture("stop", "", 0)},
			}},
	)
}
