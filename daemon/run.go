package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/rules"
)

// run starts the plan's async hooks in the background, then runs its batches one after
// another within the plan's budget. The parts and the handlers that ran are the record's.
func (e *engine) run(x *event) error {
	p := &x.plan
	var hc hookContext
	if p.spawns() { // nothing to spawn: skip the environment copy and the stats
		hc.env, hc.dir = e.hookEnv(x.env, x.ev, x.h, x.project), e.hookDir(x.h.Cwd, x.project)
	}
	hc.match, hc.snap = x.h.MatchValue, x.snap
	for _, ah := range p.Async {
		hc.payload = x.hr.canon
		x.asyncOutcomes = append(x.asyncOutcomes, e.startAsync(x.ev, ah, hc, x.h.SessionID, x.emit))
	}
	ctx := x.ctx
	if p.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Budget)
		defer cancel()
	}
	for _, b := range p.Batches {
		if len(b.Handlers) == 0 {
			continue
		}
		hc.payload, hc.translate, hc.family = b.Payload, b.Translate, b.family
		var parts []events.Interpretation
		ran := b.Handlers
		if b.Sequential {
			parts, ran = e.runSequential(ctx, x.ev, b.Handlers, hc, x.snap, b.Call, x.emit)
		} else {
			parts = e.runParallel(ctx, x.ev, b.Handlers, hc, x.emit)
		}
		if b.after != nil {
			b.after(ran, parts)
		}
		x.batches = append(x.batches, events.Batch{Parts: parts, Sequential: b.Sequential})
		x.d.Parts, x.d.Handlers = append(x.d.Parts, parts...), append(x.d.Handlers, ran...)
	}
	return nil
}

func (e *engine) runParallel(ctx context.Context, ev *events.Event, hs []*settings.Handler, hc hookContext, emit func(*protocol.Frame)) []events.Interpretation {
	parts := make([]events.Interpretation, len(hs))
	if len(hs) == 1 { // the common case: no goroutine
		parts[0] = e.runOne(ctx, ev, hs[0], hc, emit)
		return parts
	}
	var wg sync.WaitGroup
	for i, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i] = e.runOne(ctx, ev, h, hc, emit)
		}()
	}
	wg.Wait()
	return parts
}

// runSequential is the opt-in pipeline: hooks run in configured order, each sees the
// previous hook's updatedInput, and the first deny — from a hook or, on PreToolUse, from a
// permission rule judging the input so far — stops the rest. It returns the parts and
// the handlers that actually ran.
func (e *engine) runSequential(ctx context.Context, ev *events.Event, hs []*settings.Handler, hc hookContext, snap *settings.Snapshot, call *rules.Call, emit func(*protocol.Frame)) ([]events.Interpretation, []*settings.Handler) {
	var parts []events.Interpretation
	for i, h := range hs {
		in := e.runOne(ctx, ev, h, hc, emit)
		parts = append(parts, in)
		stop := in.Permission == string(rules.DecisionDeny) || in.Block || (in.Continue != nil && !*in.Continue)
		if len(in.UpdatedInput) > 0 && in.Permission != string(rules.DecisionDeny) {
			if p, err := events.ReplaceTopLevel(hc.payload, "tool_input", in.UpdatedInput); err == nil {
				hc.payload = p
				if call != nil {
					var m map[string]any
					if json.Unmarshal(in.UpdatedInput, &m) == nil {
						c := *call
						c.Input = m
						call = &c
					}
				}
			}
		}
		if !stop && call != nil && ev.Name == "PreToolUse" && snap.Rules != nil {
			if m := snap.Rules.Evaluate(*call); m.Decision == rules.DecisionDeny {
				stop = true
			}
		}
		if stop {
			for _, rest := range hs[i+1:] {
				ref := rest.Ref()
				emit(&protocol.Frame{Type: protocol.FrameMessage, Kind: protocol.MsgNotRun, Hook: &ref, Text: "sequential pipeline stopped by an earlier hook or rule"})
			}
			return parts, hs[:i+1]
		}
	}
	return parts, hs
}

// runOne runs one hook and interprets its output; the frames of its result go to emit.
func (e *engine) runOne(ctx context.Context, ev *events.Event, h *settings.Handler, hc hookContext, emit func(*protocol.Frame)) events.Interpretation {
	if h.Refused != "" {
		return refusedHook(ev, h, emit) // its managed file is untrusted: never run it
	}
	ref := h.Ref()
	emit(&protocol.Frame{Type: protocol.FrameMessage, Kind: protocol.MsgStarted, Hook: &ref})
	e.counters.hooksRun.Add(1)
	if hc.family != nil {
		if p, ok := hc.family.payload[h]; ok {
			hc.payload = p
		}
	}
	var out events.RawOutput
	switch h.Type {
	case events.HTTP:
		out = runHTTP(ctx, h, hc, e.cfg.OutputCapBytes)
	default:
		if ex := hc.snap.Exec(h); ex.RunError != "" { // Claude Code refuses to start it
			out = events.RawOutput{Kind: events.Command, Command: h.Command, StartErr: errors.New("Failed to run: " + ex.RunError)}
			break
		}
		spec := e.procSpec(hc.snap, h, hc.dir, hc.env)
		spec.Stdin = hc.payload
		out = commandOutput(h, e.runner.Run(ctx, spec))
	}
	if hc.translate != nil {
		out = hc.translate(out)
	}
	out.FailClosed = h.FailsClosed()
	if ev.MatcherField != "" {
		// Claude Code names a hook "<Event>:<matcher value>" in some texts (the
		// PreModelSwitch timeout refusal).
		out.HookName = ev.Name + ":" + hc.match
	}
	e.logStartFailure(ev, h, ref, out)
	in := events.Interpret(ev, ref, out)
	if hc.family != nil && hc.family.noApprove[h] {
		events.NoApprove(&in, "the hook met the Monitor tool's command only as a Bash command (Claude Code 2.1.314: such hooks can block or ask, not approve or rewrite)")
	}
	if in.Outcome == protocol.OutcomeTimeout && ev.CanBlock && e.cfg.Override(h).OnTimeout == configs.OnTimeoutDeny {
		failClosedOnTimeout(ev, &in, h.EffectiveTimeout())
	}
	switch in.Outcome {
	case protocol.OutcomeError:
		e.counters.hookErrors.Add(1)
	case protocol.OutcomeTimeout:
		e.counters.timeouts.Add(1)
	}
	for _, f := range in.Frames() {
		emit(&f)
	}
	return in
}

// logStartFailure: never quiet (issue 29): a hook that cannot start is a guard that does
// not run; the result and the record say so per event, the log says so for the operator. A
// shell that cannot find the program exits 127 (POSIX), which is the same failure.
func (e *engine) logStartFailure(ev *events.Event, h *settings.Handler, ref protocol.HookRef, out events.RawOutput) {
	switch {
	case out.StartErr != nil:
		e.log.Warn("hook failed to start", zap.String("event", ev.Name), zap.String("hook", ref.ID),
			zap.String("command", ref.Command), zap.Error(out.StartErr))
	case out.Kind == events.Command && out.ExitCode == 127 && h.Args == nil:
		e.log.Warn("hook failed to start", zap.String("event", ev.Name), zap.String("hook", ref.ID),
			zap.String("command", ref.Command), zap.String("error", "exit 127 (the shell found no such command): "+firstLine(out.Stderr)))
	}
}

// firstLine is the first line of b, at most 200 bytes.
func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b[:min(len(b), 200)])
}

// failClosedOnTimeout turns a guard's timeout into a block, for hooks hookd's own
// configuration marks "on_timeout": "deny". Claude Code treats a timeout as no decision
// (spec §4.1), so a guard that stalls under load silently lets everything through;
// administrators who would rather stop than guess opt in per hook.
func failClosedOnTimeout(ev *events.Event, in *events.Interpretation, timeout time.Duration) {
	reason := fmt.Sprintf("hook %s timed out after %s and is configured to deny on timeout (hookd on_timeout: deny)", in.Hook.Command, timeout)
	switch ev.Name {
	case "PreToolUse", "PermissionRequest", "PreModelSwitch":
		in.Permission, in.PermissionReason = string(rules.DecisionDeny), reason
	default:
		in.Block, in.BlockReason, in.BlockVia = true, reason, events.ViaOnTimeout
	}
	in.Outcome, in.Error, in.Via = protocol.OutcomeBlocked, reason, events.ViaOnTimeout
}

// commandOutput is what a command handler's process produced, for events.Interpret.
func commandOutput(h *settings.Handler, pr runner.ProcResult) events.RawOutput {
	return events.RawOutput{Kind: events.Command, Command: h.Command, ExitCode: pr.ExitCode,
		Stdout: pr.Stdout, Stderr: pr.Stderr, StdoutTruncated: pr.StdoutTruncated,
		StartErr: pr.StartErr, TimedOut: pr.TimedOut, Cancelled: pr.Cancelled, Duration: pr.Duration}
}
