//go:build probe

package e2e

import (
	"fmt"

	"github.com/hookd/hookd/test/claudeapi"
)

// PreSkillShellCommand (Claude Code 2.1.332): the shell lines embedded in a skill
// (!`…`) and what each hook answer does to them. The skill "greet" has one line that
// creates ran.txt (so "ran?" is a file check) and prints MARK-OUT.

const greetSkill = "---\nname: greet\ndescription: Say hello with a marker\n---\nMarker: !`touch ran.txt && echo MARK-OUT`\nThen say hi.\n"

// pssc is a PreSkillShellCommand hook (matcher Bash) that saves its stdin to
// stdin-<name>.json beside the project and prints stdout / exits code.
func pssc(name, stdout string, code int, fields map[string]any) hookSpec {
	body := fmt.Sprintf("cat > \"$(dirname \"$0\")/../stdin-%s.json\"\n", name) + out(stdout, "", code)[len("cat > /dev/null\n"):]
	return hookSpec{Event: "PreSkillShellCommand", Matcher: "Bash", Name: name, Body: body, Fields: fields}
}

func psscDecision(d string) string {
	return `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"` + d + `","permissionDecisionReason":"R-` + d + `"}}`
}

func init() {
	files := map[string]string{".claude/skills/greet/SKILL.md": greetSkill}
	user := []claudeapi.Turn{endTurn("finished")}
	allow := []string{"Bash(echo *)", "Bash(touch *)"}
	experiments = append(experiments,
		experiment{Name: "pssc-0-no-hook", Files: files, Prompt: "/greet", Script: user, Allow: allow},
		experiment{Name: "pssc-1-exit0", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", "", 0, nil)}},
		experiment{Name: "pssc-2-allow", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", psscDecision("allow"), 0, nil)}},
		experiment{Name: "pssc-2b-allow-not-permitted", Files: files, Prompt: "/greet", Script: user, Allow: []string{}, Hooks: []hookSpec{pssc("a", psscDecision("allow"), 0, nil)}},
		experiment{Name: "pssc-3-deny", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", psscDecision("deny"), 0, nil)}},
		experiment{Name: "pssc-3b-ask", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", psscDecision("ask"), 0, nil)}},
		experiment{Name: "pssc-3c-defer", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", psscDecision("defer"), 0, nil)}},
		experiment{Name: "pssc-3d-exit2", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "a", Body: out("", "E2", 2)}}},
		experiment{Name: "pssc-3e-decision-block", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"decision":"block","reason":"DB"}`, 0, nil)}},
		experiment{Name: "pssc-3f-deny-no-reason", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"deny"}}`, 0, nil)}},
		experiment{Name: "pssc-4-updatedInput-allow", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"allow","updatedInput":{"command":"echo REWRITTEN"}}}`, 0, nil)}},
		experiment{Name: "pssc-4b-updatedInput-alone", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","updatedInput":{}}}`, 0, nil)}},
		experiment{Name: "pssc-4c-pretooluse-shaped", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R-pre"}}`, 0, nil)}},
		experiment{Name: "pssc-4d-permissionrequest-shaped", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"M-pr"}}}`, 0, nil)}},
		experiment{Name: "pssc-4e-permissionrequest-updatedPermissions", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch *"}],"behavior":"allow","destination":"session"}]}}}`, 0, nil)}},
		experiment{Name: "pssc-4f-additionalContext", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","additionalContext":"CTX"}}`, 0, nil)}},
		experiment{Name: "pssc-4g-wrong-event-name", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny","permissionDecisionReason":"R-post"}}`, 0, nil)}},
		experiment{Name: "pssc-4h-bogus-decision", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"maybe"}}`, 0, nil)}},
		experiment{Name: "pssc-4i-deny-plus-updatedInput", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"deny","permissionDecisionReason":"R-deny","updatedInput":{"command":"x"}}}`, 0, nil)}},
		experiment{Name: "pssc-4j-permissionrequest-allow", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`, 0, nil)}},
		experiment{Name: "pssc-4k-permissionrequest-allow-updatedInput", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"x"}}}}`, 0, nil)}},
		experiment{Name: "pssc-4l-pretooluse-updatedInput", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"x"}}}`, 0, nil)}},
		experiment{Name: "pssc-4m-ask-then-deny", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", psscDecision("ask"), 0, nil), pssc("b", psscDecision("deny"), 0, nil)}},
		experiment{Name: "pssc-4n-deprecated-approve", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"decision":"approve","reason":"AP"}`, 0, nil)}},
		experiment{Name: "pssc-3g-exit2-plus-json-deny", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "a", Body: out(psscDecision("deny"), "E2", 2)}}},
		experiment{Name: "pssc-3h-exit2-no-stderr", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "a", Body: out("", "", 2)}}},
		experiment{Name: "pssc-3i-deny-and-exit2", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", psscDecision("deny"), 0, nil), {Event: "PreSkillShellCommand", Matcher: "Bash", Name: "b", Body: "sleep 1\n" + out("", "E2", 2)}}},
		experiment{Name: "pssc-3j-exit2-multiline", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "a", Body: out("", "E2 line1\n  E2 line2", 2)}}},
		experiment{Name: "pssc-3k-decision-block-no-reason", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"decision":"block"}`, 0, nil)}},
		experiment{Name: "pssc-5c-plain-stdout", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", "hello plain", 0, nil)}},
		experiment{Name: "pssc-7h-invalid-json-braces", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"a":}`, 0, nil)}},
		experiment{Name: "pssc-7i-exit1-two-lines", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "a", Body: out("", "E1 first\nE1 second", 1)}}},
		experiment{Name: "pssc-7j-exit1-json-deny", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "a", Body: out(psscDecision("deny"), "E1", 1)}}},
		experiment{Name: "pssc-10-unloadable-entry", Files: files, Prompt: "/greet", Script: user, Allow: allow,
			Settings: map[string]any{"hooks": map[string]any{"PreSkillShellCommand": []any{map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "timeout": "soon"}}}}}}},
		experiment{Name: "pssc-10b-unloadable-pretooluse-entry", Files: files, Prompt: "/greet", Script: user, Allow: allow,
			Settings: map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "timeout": "soon"}}}}}}},
		experiment{Name: "pssc-10c-unloadable-stop-entry", Files: files, Prompt: "/greet", Script: user, Allow: allow,
			Settings: map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "timeout": "soon"}}}}}}},
		experiment{Name: "pssc-5-systemMessage", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"systemMessage":"SM"}`, 0, nil)}},
		experiment{Name: "pssc-5b-continue-false", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{"continue":false,"stopReason":"STOP"}`, 0, nil)}},
		experiment{Name: "pssc-6-prompt-handler", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "p", Fields: map[string]any{"type": "prompt", "prompt": "ok?"}}}},
		experiment{Name: "pssc-6b-agent-handler", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "p", Fields: map[string]any{"type": "agent", "prompt": "ok?"}}}},
		experiment{Name: "pssc-7-timeout", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "a", Body: "cat >/dev/null; sleep 5", Fields: map[string]any{"timeout": 1}}}},
		experiment{Name: "pssc-7b-timeout-onfailure-block", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "a", Body: "cat >/dev/null; sleep 5", Fields: map[string]any{"timeout": 1, "onFailure": "block"}}}},
		experiment{Name: "pssc-7c-exit1", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "a", Body: out("", "E1", 1)}}},
		experiment{Name: "pssc-7d-exit1-onfailure-block", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "a", Body: out("", "E1", 1), Fields: map[string]any{"onFailure": "block"}}}},
		experiment{Name: "pssc-7e-missing", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "missing", Command: "/nonexistent/guard.sh"}}},
		experiment{Name: "pssc-7f-missing-onfailure-block", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "missing", Command: "/nonexistent/guard.sh", Fields: map[string]any{"onFailure": "block"}}}},
		experiment{Name: "pssc-7g-invalid-json", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", `{not json`, 0, nil)}},
		experiment{Name: "pssc-8-matcher-powershell", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "PowerShell", Name: "a", Body: out(psscDecision("deny"), "", 0)}}},
		experiment{Name: "pssc-8b-if-match", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", psscDecision("deny"), 0, map[string]any{"if": "Bash(touch *)"})}},
		experiment{Name: "pssc-8c-if-nomatch", Files: files, Prompt: "/greet", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", psscDecision("deny"), 0, map[string]any{"if": "Bash(rm *)"})}},
		experiment{Name: "pssc-9-model-invoked", Files: files, Allow: allow, Hooks: []hookSpec{pssc("a", "", 0, nil)},
			Script: []claudeapi.Turn{{ToolName: "Skill", ToolInput: map[string]any{"skill": "greet"}}, endTurn("finished")}},
		experiment{Name: "pssc-9b-model-invoked-deny", Files: files, Allow: allow, Hooks: []hookSpec{pssc("a", psscDecision("deny"), 0, nil)},
			Script: []claudeapi.Turn{{ToolName: "Skill", ToolInput: map[string]any{"skill": "greet"}}, endTurn("finished")}},
		experiment{Name: "pssc-9c-slash-command", Files: map[string]string{".claude/commands/hello.md": "Say: !`touch ran.txt && echo CMD-OUT`\n"}, Prompt: "/hello arg1", Script: user, Allow: allow, Hooks: []hookSpec{pssc("a", "", 0, nil)}},
		experiment{Name: "pssc-9d-two-lines-one-denied", Files: map[string]string{".claude/skills/greet/SKILL.md": "---\nname: greet\ndescription: two lines\n---\nA: !`echo LINE-A`\nB: !`touch ran.txt && echo LINE-B`\n"}, Prompt: "/greet", Script: user, Allow: allow,
			Hooks: []hookSpec{{Event: "PreSkillShellCommand", Matcher: "Bash", Name: "a", Body: "in=$(cat); case \"$in\" in *LINE-B*) echo '" + psscDecision("deny") + "';; esac; exit 0"}}},
	)
}
