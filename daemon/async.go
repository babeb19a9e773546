package daemon

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

// Async command hooks (spec §5): started with the event's payload and environment, not
// waited for, never deciding anything. When one finishes, its additionalContext and
// systemMessage are kept for the session and delivered to the model with the session's
// next event that carries context — Claude Code's "on the next conversation turn".
//
// Not reproduced: asyncRewake's waking of an idle Claude (a hook runner behind hookc has
// no channel to the harness between events; such hooks run as plain async hooks), and the
// killing of still-running async hooks when a `-p` run ends (they run to their timeout).

// outcomeAsync marks a handler that was started in the background.
const outcomeAsync = "async"

type asyncQueue struct {
	mu       sync.Mutex
	contexts []string
}

// splitAsync separates async command hooks from the ones the event waits for.
func splitAsync(run []*settings.Handler) (wait, async []*settings.Handler) {
	for _, h := range run {
		if h.Async && h.Type == events.Command {
			async = append(async, h)
		} else {
			wait = append(wait, h)
		}
	}
	if async == nil {
		return run, nil
	}
	return wait, async
}

// startAsync runs h in the background. Its context is the daemon's, not the request's:
// the caller does not wait for it.
func (e *engine) startAsync(ev *events.Event, h *settings.Handler, hc hookContext, session string, emit func(*protocol.Frame)) protocol.HookOutcome {
	ref := h.Ref()
	emit(&protocol.Frame{Type: protocol.FrameMessage, Kind: protocol.MsgStarted, Hook: &ref, Text: "async: runs in the background; its context reaches the model with the session's next event"})
	e.counters.hooksRun.Add(1)
	spec := e.procSpec(hc.snap, h, hc.dir, hc.env)
	spec.Stdin = hc.payload
	go func() {
		pr := e.runner.Run(context.Background(), spec) // bounded by the hook's own timeout
		in := events.Interpret(ev, ref, commandOutput(h, pr))
		var texts []string
		if in.AdditionalContext != "" {
			texts = append(texts, in.AdditionalContext)
		}
		if in.SystemMessage != "" { // async systemMessage goes to Claude, not the user (spec §5)
			texts = append(texts, in.SystemMessage)
		}
		if len(texts) > 0 && session != "" {
			q, _ := e.pending.LoadOrStore(session, &asyncQueue{})
			aq := q.(*asyncQueue)
			aq.mu.Lock()
			aq.contexts = append(aq.contexts, texts...)
			aq.mu.Unlock()
		}
		e.log.Info("async hook finished", zap.String("hook", h.ID), zap.String("event", ev.Name),
			zap.String("session_id", session), zap.String("outcome", in.Outcome), zap.Duration("duration", pr.Duration),
			zap.Int("context_strings", len(texts)))
	}()
	return protocol.HookOutcome{Hook: ref, Outcome: outcomeAsync}
}

// pendingAsyncContext is a contributor: on an event that carries context, the texts of
// the session's async hooks that finished since its last such event come first (they
// belong to an earlier moment).
func pendingAsyncContext(e *engine, x *event) {
	if x.ev.Honoured(events.FAdditionalContext) {
		x.out.AddContext(e.takePending(x.h.SessionID))
	}
}

// takePending returns and clears the session's finished async hooks' texts.
func (e *engine) takePending(session string) []string {
	q, ok := e.pending.Load(session)
	if !ok {
		return nil
	}
	aq := q.(*asyncQueue)
	aq.mu.Lock()
	defer aq.mu.Unlock()
	out := aq.contexts
	aq.contexts = nil
	return out
}
