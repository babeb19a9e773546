package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs"

	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

// AuditPath returns the current decision log file for hookd's audit configuration:
// audit.path (a directory — an existing one, or a path ending in "/" — means
// audit.DefaultFile inside it), else <stateDir>/audit/decisions.jsonl.
func AuditPath(c configs.AuditConfig, stateDir string) string {
	p := c.Path
	if p == "" {
		return filepath.Join(stateDir, "audit", audit.DefaultFile)
	}
	if strings.HasSuffix(p, "/") {
		return filepath.Join(p, audit.DefaultFile)
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return filepath.Join(p, audit.DefaultFile)
	}
	return p
}

// auditOptions converts hookd's audit configuration into the decision log's own
// options (package audit knows nothing of configs).
func auditOptions(c configs.AuditConfig, stateDir string, log *zap.Logger) audit.Options {
	mask := make([]audit.MaskRule, len(c.Mask))
	for i, m := range c.Mask {
		mask[i] = audit.MaskRule{Path: m.Path, Action: m.Action}
	}
	return audit.Options{
		Path: AuditPath(c, stateDir), Fsync: c.Fsync, MaxBytes: int64(c.MaxSizeMB) << 20, Retain: c.Retain,
		Mask: mask, MaxFieldBytes: c.MaxFieldBytes, DaemonVersion: Version, Logger: log,
	}
}

// newAuditor returns the engine's Auditor writing decision records to l.
func newAuditor(l *audit.Log) auditor { return auditLog{l} }

type auditLog struct{ l *audit.Log }

func (a auditLog) Append(ctx context.Context, d *decision) error {
	return a.l.Append(ctx, auditRecord(d))
}

// auditRecord turns a decision into its audit record. Masking and size caps are the
// log's job (audit.Log.Append), so the record holds the payload as received.
func auditRecord(d *decision) *audit.Record {
	r := &audit.Record{
		Kind: audit.KindDecision, Time: d.Time, DecisionID: d.ID, DaemonVersion: Version,
		Event: d.Event, Harness: d.Harness, HarnessVersion: d.HarnessVersion, NativeEvent: d.NativeEvent, SessionID: d.Header.SessionID, ToolUseID: d.Header.ToolUseID, ToolName: d.Header.ToolName,
		Cwd: d.Header.Cwd, ProjectDir: d.ProjectDir,
		Caller:   &audit.Caller{UID: d.Caller.UID, PID: d.Caller.PID, Client: d.Caller.Client},
		Fallback: d.Caller.Fallback,
		Input:    d.Payload,
	}
	if s := d.Snapshot; s != nil {
		r.Revision = s.Revision
		for _, f := range s.Files {
			r.Sources = append(r.Sources, audit.Source{File: f.Ref.Path, Source: f.Ref.Label(), Hash: f.Hash})
		}
	}
	recordHooks(r, d)
	if d.Result != nil {
		recordAnswer(r, d)
	}
	return r
}

// recordHooks adds the hooks that ran, then those reported as not run.
func recordHooks(r *audit.Record, d *decision) {
	for _, p := range d.Parts {
		h := audit.Hook{
			ID: p.Hook.ID, Source: p.Hook.Source, File: p.Hook.File, Version: p.Hook.Version, Matcher: p.Hook.Matcher, Type: p.Hook.Type,
			Command: p.Hook.Command, Outcome: p.Outcome, ExitCode: p.ExitCode,
			DurationMS: float64(p.Duration.Microseconds()) / 1000, Error: p.Error,
			Stdout: &audit.Output{Bytes: p.StdoutBytes, SHA256: p.StdoutSHA256, Truncated: p.StdoutTruncated},
			Stderr: &audit.Output{Bytes: p.StderrBytes, SHA256: p.StderrSHA256},
			Via:    p.Via,
		}
		switch {
		case p.Permission != "":
			h.Decision = p.Permission
		case p.Block:
			h.Decision = audit.DecisionBlock
		case p.Continue != nil && !*p.Continue:
			h.Decision = audit.DecisionStop
		}
		r.Hooks = append(r.Hooks, h)
	}
	for _, nr := range d.NotRun {
		ref := nr.Ref()
		r.Hooks = append(r.Hooks, audit.Hook{ID: ref.ID, Source: ref.Source, File: ref.File, Version: ref.Version, Matcher: ref.Matcher,
			Type: ref.Type, Command: ref.Command, Outcome: protocol.OutcomeNotRun, Error: notRunReason(d.Snapshot, nr, d.FromClaudeCode)})
	}
}

// recordAnswer adds the answer: the decision, who made it, what rules said.
func recordAnswer(r *audit.Record, d *decision) {
	res := d.Result
	r.Mode, r.ExitCode = res.Mode, res.ExitCode
	r.NotDelivered = d.NotDelivered
	if res.HookPermission != nil {
		r.HookDecision = res.HookPermission.Decision
	}
	switch {
	case res.Permission != nil:
		r.Decision, r.DecisionSource, r.Reason = res.Permission.Decision, res.Permission.Source, res.Permission.Reason
		if p := res.Permission; p.Via != "" && p.Hook != nil {
			r.DecisionVia, r.DecisionHook = p.Via, p.Hook.ID
		}
	case res.Block != nil:
		r.Decision, r.DecisionSource, r.Reason = audit.DecisionBlock, "hook", res.Block.Reason
		if b := res.Block; (b.Via == events.ViaOnFailure || b.Via == events.ViaOnTimeout) && b.Hook != nil {
			r.DecisionVia, r.DecisionHook = b.Via, b.Hook.ID
		}
	case res.PreventContinuation:
		r.Decision, r.DecisionSource, r.Reason = audit.DecisionStop, "hook", res.StopReason
	default:
		r.Decision = audit.DecisionNone
	}
	if ra := res.RuleAnswer; ra != nil {
		r.RuleAnswer = &audit.Rule{Decision: ra.Decision}
		if ra.OverriddenBy != nil {
			r.RuleAnswer.Rule, r.RuleAnswer.List = ra.OverriddenBy.Rule, ra.OverriddenBy.List
			r.RuleAnswer.File, r.RuleAnswer.Source = ra.OverriddenBy.File, ra.OverriddenBy.Source
		}
		if rs := d.Resolution; rs != nil {
			r.RuleAnswer.Command, r.RuleAnswer.Unresolved = rs.Rules.Command, rs.Rules.Unresolved
		}
	}
	if rs := d.Resolution; rs != nil && rs.OverriddenBy != nil {
		o := rs.OverriddenBy
		r.Override = &audit.Override{HookDecision: string(rs.HookDecision), Final: string(rs.Final),
			Rule: o.Text, List: string(o.List), File: o.Origin.File, Source: o.Origin.Source,
			Command: rs.Rules.Command, Unresolved: rs.Rules.Unresolved}
	}
	r.UpdatedInput = res.UpdatedInput
	for _, c := range res.AdditionalContext {
		r.AdditionalContextBytes = append(r.AdditionalContextBytes, len(c))
	}
	r.SystemMessages = len(res.SystemMessages)
}
