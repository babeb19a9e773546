package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/hookd/hookd/daemon/internal/sessionenv"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

// clientHTTP is the caller's client name (audit records, logs) for events that arrived
// over the HTTP forwarder (package httpfwd).
const clientHTTP = "http"

// HandleHTTP answers one event that arrived over the HTTP forwarder: decode with the
// session's stored environment, then the same stages as every event. The hooks run with
// the environment the session's hookc events sent (sessionenv.go), plus CLAUDE_EFFORT from
// the payload's effort.level, which Claude Code sets for tool events and Stop but not for
// SessionStart. An event whose session has no stored environment yet waits for it (up to
// Options.SessionEnvWait, by default sessionenv.Wait: the SessionStart forwarder may be
// async). A session with none is never run with hookd's own: the event gets the fail-closed answer (events.FailClosed: a deny
// or block where the event can block) with a reason, and the audit log records it. ev is
// nil with an error.
func (e *engine) HandleHTTP(ctx context.Context, payload []byte) (*protocol.Result, *events.Event, error) {
	req := &protocol.Request{V: protocol.Version, Event: payload, Harness: protocol.HarnessClaudeCode,
		Options: protocol.Options{Client: clientHTTP, ResultOnly: true}}
	x, err := e.handle(&event{ctx: ctx, req: req, caller: Caller{UID: os.Getuid(), Client: clientHTTP}, http: true})
	if err != nil {
		return nil, nil, err
	}
	return x.res, x.ev, nil
}

// withStoredEnv gives an HTTP event its session's stored environment and project, or
// refuses it (x.failure) when there is none: the event then runs no hooks and fails
// closed.
func (e *engine) withStoredEnv(x *event) {
	var se *sessionenv.Env
	ok := false
	if e.envs != nil {
		// The session's async SessionStart forwarder may still be on its way.
		se, ok = e.envs.Wait(x.ctx, x.h.SessionID, e.envWait)
	}
	if !ok {
		x.req.Env = []string{} // never hookd's own environment, not even to find the project
		x.failure = fmt.Sprintf("hookd: no environment known for session %q (its SessionStart did not reach hookd through hookc); the %s hooks were not run", x.h.SessionID, x.ev.Name)
		e.log.Warn("http event not run: no environment for its session", zap.String("event", x.ev.Name),
			zap.String("session_id", x.h.SessionID), zap.Bool("fail_closed", x.ev.CanBlock))
		return
	}
	env := slices.Clone(se.Env)
	var eff struct {
		Effort struct {
			Level string `json:"level"`
		} `json:"effort"`
	}
	if json.Unmarshal(x.req.Event, &eff) == nil && eff.Effort.Level != "" && !strings.ContainsRune(eff.Effort.Level, 0) {
		// At its native place, so that a spare warmed for the session (warm_session.go)
		// has the very environment the event brings.
		env = e.warmed.PlaceEffort(env, eff.Effort.Level)
	}
	x.req.Env, x.req.ProjectDir = env, se.ProjectDir
}

// keepSessionEnv is an observer: a Claude Code hook's own environment (hookc's) is what
// the session's HTTP events will run with (sessionenv.go).
func keepSessionEnv(e *engine, x *event) {
	if e.envs != nil && x.caller.Client != clientHTTP && x.req.Env != nil && x.hr.ad.Native() &&
		runner.LookupEnv(x.req.Env, "CLAUDECODE") == "1" {
		e.envs.Put(x.h.SessionID, x.project, x.req.Env)
	}
}
