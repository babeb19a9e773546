package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/rules"
)

// merge combines the batches' interpretations (each batch by its own rule, then across
// batches by the parallel rule) and adds the hooks that did not run, and the async
// ones, to the outcome.
func (e *engine) merge(x *event) error {
	x.out = events.MergeBatches(x.ev, x.batches)
	if runner.LookupEnv(x.env, "CLAUDE_CODE_SESSION_ATTENDED") == "0" {
		// An unattended Claude Code session honours a defer; elsewhere an ask beats it
		// (events.permissionRank, Claude Code 2.1.321).
		events.HonourDefer(x.ev, x.out, x.d.Parts)
	}
	x.out.Warnings = append(x.out.Warnings, x.plan.Warnings...)
	for _, nr := range x.plan.NotRun {
		x.out.Hooks = append(x.out.Hooks, protocol.HookOutcome{Hook: nr.Ref(), Outcome: protocol.OutcomeNotRun, Error: notRunReason(x.snap, nr, x.d.FromClaudeCode)})
	}
	x.out.Hooks = append(x.out.Hooks, x.asyncOutcomes...)
	return nil
}

// resolveStage applies permission rules to a tool event's outcome (resolve), where they
// apply: always for Claude Code; for other harnesses unless hookd's configuration opts
// out, and then their deny or ask is the answer (enforceRuleAnswer).
func (e *engine) resolveStage(x *event) error {
	native := x.hr.ad.Native()
	if x.call == nil || !(native || e.cfg.Harnesses.For(x.hr.ad.Name).RulesApply()) {
		return nil
	}
	e.resolve(x)
	if !native {
		enforceRuleAnswer(x.ev, x.out, x.d.Resolution)
	}
	return nil
}

// resolve applies permission rules to a tool event's merged hook decision (issue 3):
// a hook allow never bypasses a deny or ask rule.
func (e *engine) resolve(x *event) {
	o := x.out
	c := *x.ruleCall
	if len(o.UpdatedInput) > 0 {
		// Rules judge what will actually run: the rewritten input.
		var in map[string]any
		if json.Unmarshal(o.UpdatedInput, &in) == nil {
			c.Input = in
		}
	}
	var hook rules.Decision
	if o.HookPermission != nil {
		hook = rules.Decision(o.HookPermission.Decision)
	}
	switch x.ev.Name {
	case "PreToolUse":
	case "PermissionRequest":
		// Only an allow that rewrites the input is re-checked (spec §8 item 6); a plain
		// allow answers the prompt on the user's behalf.
		if hook != rules.DecisionAllow || len(o.UpdatedInput) == 0 {
			return
		}
	default:
		return
	}
	r := rules.Resolve(hook, x.snap.Rules, c)
	x.d.Resolution = &r
	if r.Rules.Decision != rules.None {
		o.RuleAnswer = &protocol.Permission{Decision: string(r.Rules.Decision), Source: "rule",
			OverriddenBy: ruleRef(r.Rules.Rule)}
	}
	if hook == rules.None {
		return // the harness keeps the final say; the rules' answer is reported only
	}
	perm := *o.HookPermission
	perm.Decision, perm.Source = string(r.Final), r.Source
	if r.OverriddenBy != nil {
		e.counters.overrides.Add(1)
		perm.OverriddenBy, perm.Via = ruleRef(r.OverriddenBy), ""
		perm.Reason = overrideReason(r)
		x.log(e.log).Warn("hook decision overridden by permission rule",
			zap.String("hook_decision", string(hook)), zap.String("final", string(r.Final)),
			zap.String("rule", r.OverriddenBy.Text), zap.String("rule_list", string(r.OverriddenBy.List)),
			zap.String("rule_file", r.OverriddenBy.Origin.File),
			zap.String("command", r.Rules.Command), zap.String("unresolved", r.Rules.Unresolved))
		x.emit(&protocol.Frame{Type: protocol.FramePermission, Decision: perm.Decision, Reason: perm.Reason,
			Source: perm.Source, OverriddenBy: perm.OverriddenBy, Hook: perm.Hook})
	}
	o.Permission = &perm
}

func overrideReason(r rules.Resolution) string {
	src := r.OverriddenBy.Origin.File
	if src == "" {
		src = r.OverriddenBy.Origin.Source
	}
	reason := fmt.Sprintf("hook decision %q overridden: permission rule %s(%s) in %s %s this call",
		r.HookDecision, r.OverriddenBy.List, r.OverriddenBy.Text, src, map[rules.Decision]string{
			rules.DecisionDeny: "denies", rules.DecisionAsk: "requires asking for",
		}[r.Final])
	if r.Rules.Rule == r.OverriddenBy {
		reason += matchNote(r.Rules)
	}
	return reason
}

// matchNote names the simple command a rule matched, and for a fail-closed match what
// could not be resolved: "x=rm; $x f" is denied as "rm f", "$(…) f" as "command name is
// not a literal".
func matchNote(m rules.Match) string {
	switch {
	case m.Command == "":
		return ""
	case m.Unresolved == m.Command: // a script or stdin hookd could not see
		return fmt.Sprintf(" (failing closed: %s)", m.Unresolved)
	case m.Unresolved != "":
		return fmt.Sprintf(" (failing closed on `%s`: %s)", m.Command, m.Unresolved)
	}
	return fmt.Sprintf(" (matched `%s`)", m.Command)
}

func ruleRef(r *rules.Rule) *protocol.RuleRef {
	if r == nil {
		return nil
	}
	return &protocol.RuleRef{Rule: r.Text, List: string(r.List), File: r.Origin.File, Source: r.Origin.Source}
}

// enforceRuleAnswer: Claude Code enforces its own permission rules after the hooks, so for
// it hookd only reports the rules' answer when no hook decided. Codex and Gemini CLI do
// not read those rules: for them the rules' deny or ask becomes the answer (one policy for
// every harness). A rules allow is not rendered — the harness's own approval flow keeps
// its say, as Claude Code's does.
func enforceRuleAnswer(ev *events.Event, o *events.Outcome, res *rules.Resolution) {
	if ev.Name != "PreToolUse" || o.Permission != nil || o.RuleAnswer == nil {
		return
	}
	switch o.RuleAnswer.Decision {
	case "deny", "ask":
		p := *o.RuleAnswer
		if r := p.OverriddenBy; r != nil {
			src := r.File
			if src == "" {
				src = r.Source
			}
			verb := map[string]string{"deny": "denies", "ask": "requires asking for"}[p.Decision]
			p.Reason = fmt.Sprintf("permission rule %s(%s) in %s %s this call", r.List, r.Rule, src, verb)
			if res != nil { // the harness's only check: say what matched, as for Claude Code
				p.Reason += matchNote(res.Rules)
			}
		}
		o.Permission = &p
	}
}

// finish makes the answer, in the one place answers are made: the fail-closed answer
// when the event has a failure (an event that can block, whose hooks were cut short, or
// whose decision could not be recorded; an event refused before its hooks), else the
// outcome rendered — then stamped with the decision's ids and written in the harness's
// format. The record stage sends an audit failure back through here.
func (e *engine) finish(x *event) error {
	if x.failure == "" && x.ctx.Err() != nil {
		// The hooks were cut short: whatever they left is not an answer. The caller (if
		// still there) gets the fail-closed answer, and the record says why.
		cause := context.Cause(x.ctx)
		x.d.NotDelivered = "shutdown"
		if errors.Is(cause, ErrCallerGone) {
			x.d.NotDelivered = "caller_disconnected"
		}
		if x.ev.CanBlock {
			x.failure = "hookd: " + cause.Error()
		}
	}
	var res *protocol.Result
	if x.failure != "" {
		res = events.FailClosed(x.ev.Name, x.failure)
		res.Hooks = x.out.Hooks
	} else {
		res = events.Render(x.ev, x.out)
	}
	res.DecisionID, res.Revision, res.Mode = x.d.ID, x.snap.Revision, x.mode
	if !x.hr.ad.Native() {
		res.Harness, res.NativeEvent = x.hr.ad.Name, x.d.NativeEvent
		x.hr.ad.Render(x.hr.native, x.hr.nativeTool, res)
	}
	x.res, x.d.Result = res, res
	return nil
}

// record appends the decision to the audit log. A decision that cannot be recorded is
// not allowed (issue 5): an event that can block fails closed, through finish.
func (e *engine) record(x *event) error {
	if e.audit == nil {
		return nil
	}
	err := e.audit.Append(x.ctx, x.d)
	if err == nil {
		return nil
	}
	e.counters.auditFailures.Add(1)
	x.log(e.log).Error("audit record not written", zap.Error(err))
	if !x.ev.CanBlock {
		return nil
	}
	x.failure = "hookd: decision could not be recorded in the audit log: " + err.Error()
	return e.finish(x)
}
