package events

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/hookd/hookd/events/jsonobj"
	"github.com/hookd/hookd/protocol"
)

// finalize builds res.Output, res.Stdout, res.Stderr and res.ExitCode — the one Claude
// Code hook answer hookc prints — from the other Result fields (Render's second half). It
// reads res.Permission (the decision after permission rules), not HookPermission. It is
// idempotent and its bytes depend only on res.
//
// Rendering is one function per event family, so it can be tuned against the real binary:
//
//   - WorktreeCreate: plain stdout path, or exit 1 + stderr (renderWorktreeCreate).
//   - PreToolUse: hookSpecificOutput.permissionDecision & co. (renderPreToolUse).
//   - PermissionRequest: hookSpecificOutput.decision (renderPermissionRequest).
//   - PreSkillShellCommand: permissionDecision and reason only (renderSkillShell).
//   - every other event: top-level decision:"block" where honoured, hookSpecificOutput
//     with additionalContext and the event's own fields (renderEventFields).
//
// Then exit codes (renderExitCode): blocks that only exit 2 can express, and the stderr of
// hooks whose exit 2 on a non-blocking event Claude Code would have shown.
func finalize(ev *Event, res *protocol.Result) {
	res.Output, res.Stdout, res.Stderr, res.ExitCode = nil, "", "", 0
	if ev.AnyNonZeroFails {
		renderWorktreeCreate(res)
		return
	}
	top := renderUniversal(res)
	var hso jsonobj.Object // hookSpecificOutput's members but hookEventName
	switch ev.Name {
	case "PreToolUse", "PreModelSwitch":
		// PreModelSwitch answers like PreToolUse; Merge never gives it updatedInput.
		hso = renderPreToolUse(res)
	case "PermissionRequest":
		hso = renderPermissionRequest(res)
	case SkillShell:
		hso = renderSkillShell(res)
	default:
		top, hso = renderEventFields(ev, res, top)
	}
	if len(hso) > 0 {
		full := jsonobj.Object{}.Set("hookEventName", ev.Name).Merge(hso)
		top = top.SetRaw("hookSpecificOutput", full.JSON())
	}
	if len(top) > 0 {
		res.Output = top.JSON()
	}
	renderPlainContext(ev, res, top, hso)
	renderCompactInstructions(ev, res)
	renderExitCode(ev, res)
	renderStopExit2(ev, res)
}

// renderPlainContext: on the events where plain stdout is context (SessionStart,
// UserPromptSubmit, UserPromptExpansion) Claude Code labels a hook's plain stdout "<hook>
// hook success: <text>" and JSON context "<Event> hook additional context: <text>", each
// its own paragraph of the system message (probes ups-1..3, ss-1..3). When the first
// context in configuration order is plain stdout and the answer has nothing else to say,
// hookd answers with plain stdout, so Claude Code writes the same label; later contexts
// follow as paragraphs carrying the label Claude Code would have given them (SessionStart
// joins several JSON contexts into one paragraph). When the answer must be JSON the
// contexts stay one additionalContext, as before.
func renderPlainContext(ev *Event, res *protocol.Result, top, hso jsonobj.Object) {
	if !ev.PlainTextContext || len(res.PlainContext) != len(res.AdditionalContext) || len(res.AdditionalContext) == 0 ||
		!res.PlainContext[0] || len(top) != 1 || len(hso) != 1 || res.Block != nil {
		return
	}
	var paras []string
	jsonPara := -1 // SessionStart: the paragraph that joins the JSON contexts
	for i, c := range res.AdditionalContext {
		switch {
		case i == 0:
			paras = append(paras, c) // Claude Code adds the label
		case res.PlainContext[i]:
			paras = append(paras, plainLabel(ev, res)+c)
		case ev.Name == "SessionStart" && jsonPara >= 0:
			paras[jsonPara] += "\n" + c
		default:
			if ev.Name == "SessionStart" {
				jsonPara = len(paras)
			}
			paras = append(paras, ev.Name+" hook additional context: "+c)
		}
	}
	res.Output = nil
	res.Stdout = strings.Join(paras, "\n\n") + "\n"
}

// renderCompactInstructions: PreCompact's instructions reach Claude Code only as a
// hook's plain stdout of exit 0 (it reads no JSON field for them), so they are printed
// when nothing else must be said: a block (compaction does not happen) or an answer that
// needs JSON (continue:false, terminalSequence) wins, and the instructions are then not
// forwarded — a rare mix Claude Code itself reads differently (it would add the JSON
// hook's raw text to the instructions). Claude Code cuts what hookc prints at 10,000
// characters again, as one hook's output: several hooks' instructions longer than that
// together are cut there, where without hookd each had its own 10,000.
func renderCompactInstructions(ev *Event, res *protocol.Result) {
	if ev.Name != "PreCompact" || res.CompactInstructions == "" || res.Block != nil || len(res.Output) > 0 {
		return
	}
	res.Stdout = res.CompactInstructions + "\n"
}

// plainLabel is the label of a later plain-stdout context. SessionStart's hook name
// carries the session source ("SessionStart:startup"), which a Result does not record;
// startup is the one a new session has.
func plainLabel(ev *Event, res *protocol.Result) string {
	if ev.Name == "SessionStart" {
		return "SessionStart:startup hook success: "
	}
	return ev.Name + " hook success: "
}

// renderStopExit2: a Stop or SubagentStop block that came from one hook's exit 2 is
// answered with exit 2 and that hook's stderr, not JSON. Claude Code then shows only
// "Stop hook feedback:\n[<hookc command>]: <stderr>" — what it shows without hookd but
// for the command named — where a JSON block would add a second message, "Stop hook
// blocking error from command: …" (probes stop-2, stop-2b).
func renderStopExit2(ev *Event, res *protocol.Result) {
	if ev.Name != "Stop" && ev.Name != "SubagentStop" {
		return
	}
	b := res.Block
	if b == nil || b.Via != ViaExit2 || b.Hook == nil || b.Hook.Command == "" || res.PreventContinuation ||
		len(res.AdditionalContext) > 0 || len(res.SystemMessages) > 0 || len(res.Specific) > 0 {
		return
	}
	blocked := 0
	for _, h := range res.Hooks {
		if h.Outcome == protocol.OutcomeBlocked {
			blocked++
		}
	}
	prefix := "[" + b.Hook.Command + "]: "
	if blocked != 1 || !strings.HasPrefix(b.Reason, prefix) {
		return
	}
	stderr := strings.TrimPrefix(b.Reason, prefix)
	if stderr == "No stderr output" {
		stderr = ""
	}
	res.Output, res.Stdout, res.ExitCode, res.Stderr = nil, "", 2, stderr
}

// renderUniversal writes the fields every event shares (spec §4.3). Merge only kept the
// ones the event honours.
func renderUniversal(res *protocol.Result) (top jsonobj.Object) {
	if res.PreventContinuation {
		top = top.Set("continue", false)
		if res.StopReason != "" {
			top = top.Set("stopReason", res.StopReason)
		}
	}
	if len(res.SystemMessages) > 0 {
		top = top.Set("systemMessage", strings.Join(res.SystemMessages, "\n"))
	}
	if raw, ok := res.Specific["terminalSequence"]; ok {
		top = top.SetRaw("terminalSequence", jsonobj.Compact(raw))
	}
	return top
}

// renderPreToolUse: the final permission (after rules) with its reason; updatedInput
// unless the decision is deny or defer (defer ignores it, spec §4.4); all contexts as one
// block — Claude Code 2.1.330 itself delivers two hooks' contexts as "ctx-A\nctx-B"
// (spec §12). An exit-2 deny's reason is already "[<command>]: <stderr>", so Claude reads
// "PreToolUse:Bash hook error: [<command>]: <stderr>" exactly as without hookd.
func renderPreToolUse(res *protocol.Result) (hso jsonobj.Object) {
	decision, reason := "", ""
	if p := res.Permission; p != nil {
		decision, reason = p.Decision, p.Reason
	}
	if res.Block != nil && decision != "deny" {
		// Interpret never blocks PreToolUse outside Permission; a caller that sets Block
		// (events.FailClosed does) means deny.
		decision, reason = "deny", res.Block.Reason
	}
	if decision != "" {
		hso = hso.Set("permissionDecision", decision)
		if reason != "" {
			hso = hso.Set("permissionDecisionReason", reason)
		}
	}
	if len(res.UpdatedInput) > 0 && (decision == "" || decision == "allow" || decision == "ask") {
		hso = hso.SetRaw("updatedInput", jsonobj.Compact(res.UpdatedInput))
	}
	return renderContext(res, hso)
}

// renderPermissionRequest: decision.behavior allow (updatedInput, updatedPermissions) or
// deny (message = the reason, interrupt). ask/defer have no PermissionRequest form: the
// prompt is shown as usual. Exit 2 is not honoured there, so a deny is always JSON.
func renderPermissionRequest(res *protocol.Result) jsonobj.Object {
	p := res.Permission
	if p == nil && res.Block != nil {
		p = &protocol.Permission{Decision: "deny", Reason: res.Block.Reason}
	}
	if p == nil {
		return nil
	}
	var d jsonobj.Object
	switch p.Decision {
	case "allow":
		d = d.Set("behavior", "allow")
		if len(res.UpdatedInput) > 0 {
			d = d.SetRaw("updatedInput", jsonobj.Compact(res.UpdatedInput))
		}
		if raw, ok := res.Specific["updatedPermissions"]; ok {
			d = d.SetRaw("updatedPermissions", jsonobj.Compact(raw))
		}
	case "deny":
		d = d.Set("behavior", "deny")
		if p.Reason != "" {
			d = d.Set("message", p.Reason)
		}
		if raw, ok := res.Specific["interrupt"]; ok {
			d = d.SetRaw("interrupt", jsonobj.Compact(raw))
		}
	default:
		return nil
	}
	return jsonobj.Object{}.SetRaw("decision", d.JSON())
}

// renderEventFields covers every other event: a block as top-level decision:"block" +
// reason where the event has that form (exit-2 reasons already read "[<command>]:
// <stderr>", which is what Claude Code shows for an exit 2 on Stop, UserPromptSubmit and
// PostToolUse: probes stop-2, ups-4, post-3), then hookSpecificOutput.additionalContext
// and the event's own fields in name order.
func renderEventFields(ev *Event, res *protocol.Result, top jsonobj.Object) (_, hso jsonobj.Object) {
	if res.Block != nil && ev.Honoured(FDecision) && !blockByExit2Only(ev) {
		top = top.Set("decision", "block")
		top = top.Set("reason", res.Block.Reason)
	}
	hso = renderContext(res, hso)
	for _, k := range sortedKeys(res.Specific) {
		switch k {
		case "terminalSequence", "worktreePath", "updatedPermissions", "interrupt":
			continue // top-level, plain stdout, PermissionRequest's decision
		}
		hso = hso.SetRaw(k, jsonobj.Compact(res.Specific[k]))
	}
	return top, hso
}

// blockByExit2Only: events whose blocks hookd says with exit 2 although the event reads
// decision:"block" too. Elicitation and ElicitationResult honour decision:"block" only
// since Claude Code 2.1.284; exit 2 declines on every version, so hookd keeps answering
// that way (a hook's own decision:"block" is still read, see Honours).
func blockByExit2Only(ev *Event) bool {
	return ev.Name == "Elicitation" || ev.Name == "ElicitationResult"
}

// renderContext writes every context, plain-stdout ones included, as one
// hookSpecificOutput.additionalContext. Claude then labels plain ones "hook additional
// context" rather than "hook success" (probe ups-3-both); one output cannot carry both
// forms, and the text is the same.
func renderContext(res *protocol.Result, hso jsonobj.Object) jsonobj.Object {
	if len(res.AdditionalContext) > 0 {
		hso = hso.Set("additionalContext", strings.Join(res.AdditionalContext, "\n"))
	}
	return hso
}

// renderExitCode picks the exit code.
//
// Blocks on events that have no JSON block (TeammateIdle, TaskCompleted, Elicitation,
// ElicitationResult: spec §4.4) can only be said with exit 2, stderr = the reasons; the
// JSON, if any, stays on stdout (read on exit 2 too, spec §4.1). continue:false outranks
// the block (spec §3.5), so then hookd answers with exit 0 and the JSON only.
//
// On events that cannot block, Claude Code shows an exit-2 hook's stderr to the user or
// Claude (spec §1.1 "Exit 2 effect"). hookd reproduces that with exit 2 + those stderr
// texts only when the answer has nothing else to say: what exit 2 does to stdout there
// is not established (SessionStart dropped plain stdout, probe ss-4-exit2), so contexts,
// titles and other JSON are never put at risk for a notice. Otherwise the notices stay in
// res.Hooks only.
func renderExitCode(ev *Event, res *protocol.Result) {
	switch {
	case ev.Name == "PreToolUse" || ev.Name == "PreModelSwitch" || ev.Name == SkillShell || ev.Name == "PermissionRequest" || ev.ExitCodeIgnored:
		return
	case ev.CanBlock && (!ev.Honoured(FDecision) || blockByExit2Only(ev)):
		if res.Block != nil && !res.PreventContinuation {
			res.ExitCode, res.Stderr = 2, withNewline(res.Block.Reason)
		}
	case !blocksOnExit2(ev) && len(res.Output) == 0 && res.Stdout == "":
		var notes []string
		for _, h := range res.Hooks {
			if h.Outcome == protocol.OutcomeError && h.ExitCode != nil && *h.ExitCode == 2 {
				notes = append(notes, h.Error)
			}
		}
		if len(notes) > 0 {
			res.ExitCode, res.Stderr = 2, withNewline(strings.Join(notes, "\n"))
		}
	}
}

// renderWorktreeCreate: Claude Code reads the path from a command hook's stdout (last
// non-empty line) and fails creation on any non-zero exit (spec §4.4). Any hook's failure
// fails the creation; otherwise the first path in configuration order is printed.
func renderWorktreeCreate(res *protocol.Result) {
	if res.Block != nil {
		res.ExitCode, res.Stderr = 1, withNewline(res.Block.Reason)
		return
	}
	var path string
	if raw, ok := res.Specific["worktreePath"]; ok {
		_ = json.Unmarshal(raw, &path)
	}
	switch {
	case path != "":
		res.Stdout = path + "\n"
	case len(res.Hooks) > 0:
		res.ExitCode, res.Stderr = 1, "hookd: no WorktreeCreate hook returned a worktree path\n"
	}
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
