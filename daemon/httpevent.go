package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

// ClientHTTP is the caller's client name (audit records, logs) for events that arrived
// over the HTTP forwarder (package httpfwd).
const ClientHTTP = "http"

// HandleHTTP answers one event that arrived over the HTTP forwarder. The hooks run with
// the environment the session's hookc events sent (sessionenv.go), plus CLAUDE_EFFORT from
// the payload's effort.level, which Claude Code sets for tool events and Stop but not for
// SessionStart. An event whose session has no stored environment yet waits for it (up to
// sessionEnvWait: the SessionStart forwarder may be async). A session with none is never
// run with hookd's own: the
// event gets the fail-closed answer (events.FailClosed: a deny or block where the event
// can block) with a reason, and the audit log records it. ev is nil with an error.
func (e *Engine) HandleHTTP(ctx context.Context, payload []byte) (*protocol.Result, *events.Event, error) {
	h, ev, err := ParseHeader(payload)
	if err != nil {
		e.counters.errors.Add(1)
		return nil, nil, err
	}
	caller := Caller{UID: os.Getuid(), Client: ClientHTTP}
	var se *sessionEnv
	ok := false
	if e.envs != nil {
		// The session's async SessionStart forwarder may still be on its way.
		se, ok = e.envs.wait(ctx, h.SessionID, sessionEnvWait)
	}
	if !ok {
		return e.refuseHTTP(ctx, payload, h, ev, caller,
			fmt.Sprintf("hookd: no environment known for session %q (its SessionStart did not reach hookd through hookc); the %s hooks were not run", h.SessionID, ev.Name)), ev, nil
	}
	env := slices.Clone(se.Env)
	var eff struct {
		Effort struct {
			Level string `json:"level"`
		} `json:"effort"`
	}
	if json.Unmarshal(payload, &eff) == nil && eff.Effort.Level != "" && !strings.ContainsRune(eff.Effort.Level, 0) {
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "CLAUDE_EFFORT=") })
		env = append(env, "CLAUDE_EFFORT="+eff.Effort.Level)
	}
	req := &protocol.Request{V: protocol.Version, Event: payload, Env: env, ProjectDir: se.ProjectDir,
		Harness: protocol.HarnessClaudeCode, Options: protocol.Options{Client: ClientHTTP, ResultOnly: true}}
	res, err := e.Handle(ctx, req, caller, nil)
	return res, ev, err
}

// refuseHTTP records and returns the fail-closed answer for an event hookd would not run.
func (e *Engine) refuseHTTP(ctx context.Context, payload []byte, h Header, ev *events.Event, caller Caller, reason string) *protocol.Result {
	e.counters.events.Add(1)
	e.countEvent(ev.Name)
	d := &Decision{ID: NewDecisionID(), Time: time.Now(), Event: ev.Name, Header: h, Payload: payload,
		Caller: caller, Harness: protocol.HarnessClaudeCode, FromClaudeCode: true}
	res := events.FailClosed(ev.Name, reason)
	res.DecisionID = d.ID
	d.Result = res
	e.log.Warn("http event not run: no environment for its session", zap.String("event", ev.Name),
		zap.String("session_id", h.SessionID), zap.String("decision_id", d.ID), zap.Bool("fail_closed", ev.CanBlock))
	if e.audit != nil {
		if err := e.audit.Append(ctx, d); err != nil {
			e.counters.auditFailures.Add(1)
			e.log.Error("audit record not written", zap.Error(err))
		}
	}
	return res
}
