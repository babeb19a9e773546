package events

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/hookd/hookd/events/jsonobj"
	"github.com/hookd/hookd/protocol"
)

// SkillShell is the event Claude Code 2.1.332 fires before a shell command embedded in a
// skill or slash command (a !`…` line) runs: PreSkillShellCommand.
//
// Everything below was observed with the 2.1.332 binary (test/e2e/FINDINGS.md,
// "PreSkillShellCommand"; probes pssc-*). Claude Code checks the command against its
// permission rules first and runs the hooks only when the rules let it run, so a hook can
// only keep it from running:
//
//   - permissionDecision allow adds nothing; deny blocks; ask and defer block too ("the
//     hook asked for approval, which a skill can't wait for");
//   - updatedInput, whatever its value and whatever the decision beside it but deny,
//     blocks ("the hook changed the command, which isn't supported here");
//   - an answer shaped for PreToolUse (hookEventName "PreToolUse") is read as its own; one
//     shaped for PermissionRequest too: decision.behavior deny blocks with its message,
//     allow adds nothing unless it carries updatedInput (blocks, as above) or a non-empty
//     updatedPermissions (blocks: "the hook asked to change permissions, which isn't
//     supported here"); any other hookEventName is a failed hook;
//   - exit 2 and decision:"block" block with the reason (JSON permissionDecisionReason
//     before stderr); decision:"approve" adds nothing; continue:false stops the prompt;
//     systemMessage is shown; additionalContext and plain stdout are ignored;
//   - a hook that fails (exit 1, timeout, invalid or wrong JSON, missing command) lets the
//     command run with a notice, unless its handler says onFailure:"block": then it blocks
//     ("[<command>]: timed out; blocking because onFailure is "block"").
//
// The blocked command's output in the skill text becomes "[not run: blocked by hook:
// <reason>]", which is what the model reads.
const SkillShell = "PreSkillShellCommand"

// Claude Code 2.1.332's own reasons for refusals that are not the hook's words. When the
// whole reason is one of them, Claude Code shows it without "blocked by hook: " in the
// notice, so hookd answers with exactly these texts and the notice reads as without hookd.
const (
	SkillShellChanged     = "the hook changed the command, which isn't supported here"
	SkillShellPermissions = "the hook asked to change permissions, which isn't supported here"
	SkillShellNoPrompt    = "prompt and agent hooks don't run on PreSkillShellCommand"
)

// skillShellShapes are the hookEventName values Claude Code 2.1.332 reads on
// PreSkillShellCommand besides its own.
var skillShellShapes = map[string]bool{"PreToolUse": true, "PermissionRequest": true}

// skillShellAnswer reads a PreSkillShellCommand hook's hookSpecificOutput, in the shape
// its hookEventName says.
func skillShellAnswer(in *Interpretation, hj *hookJSON) {
	h := hj.hso
	if hj.shape == "PermissionRequest" {
		var d map[string]json.RawMessage
		if raw, ok := h["decision"]; !ok || json.Unmarshal(raw, &d) != nil {
			return
		}
		switch str(d, "behavior") {
		case "deny":
			in.Permission, in.PermissionReason = "deny", str(d, "message")
		case "allow":
			var perms []json.RawMessage
			_ = json.Unmarshal(d["updatedPermissions"], &perms)
			switch _, rewrites := d["updatedInput"]; {
			case rewrites:
				in.Permission, in.PermissionReason = "deny", SkillShellChanged
			case len(perms) > 0:
				in.Permission, in.PermissionReason = "deny", SkillShellPermissions
			default:
				in.Permission, in.PermissionReason = "allow", ""
			}
		}
		return
	}
	if d := str(h, "permissionDecision"); d != "" {
		in.Permission, in.PermissionReason = d, str(h, "permissionDecisionReason")
	}
	if _, ok := h["updatedInput"]; ok && in.Permission != "deny" {
		in.Permission, in.PermissionReason = "deny", SkillShellChanged
	}
}

// skillShellRefuses: on PreSkillShellCommand every decision but allow keeps the command
// from running, so a hook that answered ask or defer blocked it.
func skillShellRefuses(ev *Event, in *Interpretation) {
	if ev.Name == SkillShell && in.Outcome == protocol.OutcomeOK && (in.Permission == "ask" || in.Permission == "defer") {
		in.Outcome = protocol.OutcomeBlocked
	}
}

// renderSkillShell answers PreSkillShellCommand like PreToolUse — permissionDecision and
// its reason, no updatedInput (a rewrite is already a deny) and no context (not read
// there) — with the reason as Claude Code would have shown it for the hook itself. A
// block from one hook's exit 2 reads "[<command>]: <stderr>" in hookd, and Claude Code
// strips its own "[<command>]:" from an exit-2 text (but keeps it when the rest starts
// "failed; " or "timed out; ", its onFailure texts) and shows "No stderr output" as no
// reason at all: hookd's answer says it the same way, so the skill text reads "[not run:
// blocked by hook: <stderr>]" through hookd as without it.
func renderSkillShell(res *protocol.Result) (hso jsonobj.Object) {
	decision, reason, hook := "", "", (*protocol.HookRef)(nil)
	if p := res.Permission; p != nil {
		decision, reason, hook = p.Decision, p.Reason, p.Hook
	}
	if res.Block != nil && decision != "deny" {
		// A caller that sets Block (protocol.FailClosed, hookd's on_timeout) means deny.
		decision, reason, hook = "deny", res.Block.Reason, res.Block.Hook
	}
	if decision == "" {
		return nil
	}
	hso = hso.Set("permissionDecision", decision)
	if reason = skillShellReason(reason, hook); reason != "" {
		hso = hso.Set("permissionDecisionReason", reason)
	}
	return hso
}

// onFailureText is how Claude Code's onFailure refusals continue after "[<command>]: ".
var onFailureText = regexp.MustCompile(`^(?:failed|timed out); `)

// skillShellReason is reason as Claude Code shows a PreSkillShellCommand refusal of hook.
func skillShellReason(reason string, hook *protocol.HookRef) string {
	if hook == nil || hook.Command == "" {
		return reason
	}
	rest, ok := strings.CutPrefix(reason, "["+hook.Command+"]:")
	if !ok {
		return reason
	}
	rest = strings.TrimSpace(rest)
	switch {
	case onFailureText.MatchString(rest):
		return reason
	case rest == "No stderr output" || rest == "Blocked by hook":
		return ""
	}
	return rest
}
