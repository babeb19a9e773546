package daemon

import (
	"context"
	"os"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/rules"
)

// One event's trip through the engine is a fixed list of named stages over one value (an
// event). Each stage is a plain function that reads what the stages before it left in
// the event and adds its own part; a feature is a stage, an observer or a contributor,
// never an `if` in the loop (docs/architecture.md, "The engine").
//
//	decode      harness adapter → the payload in Claude Code's shape, its header, the
//	            tool call; an HTTP event gets its session's stored environment
//	locate      project and snapshot; the decision record is started
//	observe     observers watch the event (session environment, warming, sessions)
//	plan        which hooks run, in which batches, on which payload, read how (Plan)
//	run         the batches, one after another; async hooks start in the background
//	merge       each batch by its own rule, then across batches (events.MergeBatches)
//	contribute  contributors add to the outcome (finished async hooks' context)
//	resolve     permission rules judge the tool call (a hook allow never bypasses them)
//	finish      the one fail-closed builder and the one render, for the harness
//	record      the audit record; a failure goes back through finish, failing closed
//
// Only decode can refuse an event (a malformed request gets an error frame); every other
// stage always completes, so every event that decodes gets an answer and a record.
var stages = []struct {
	name string
	run  func(*engine, *event) error
}{
	{"decode", (*engine).decode},
	{"locate", (*engine).locate},
	{"observe", (*engine).observe},
	{"plan", (*engine).plan},
	{"run", (*engine).run},
	{"merge", (*engine).merge},
	{"contribute", (*engine).contribute},
	{"resolve", (*engine).resolveStage},
	{"finish", (*engine).finish},
	{"record", (*engine).record},
}

// observer watches an event after locate: it may keep state of its own (per session,
// per project) but never changes the event or its answer.
type observer func(*engine, *event)

// contributor adds to an event's outcome after the merge, before permission rules judge
// it.
type contributor func(*engine, *event)

// event is one event on its way through the stages. Only the goroutine handling it
// touches it.
type event struct {
	ctx    context.Context
	req    *protocol.Request
	caller Caller
	emit   func(*protocol.Frame) // never nil
	// http: the event came over the HTTP forwarder (HandleHTTP): decode gives it its
	// session's stored environment.
	http bool

	// decode
	hr  *harnessReq
	h   header
	ev  *events.Event
	env []string // the caller's environment (the daemon's when the request has none)
	// call is the tool call (nil for other events); ruleCall the call permission rules
	// judge (Bash for a Monitor shell command, else call).
	call, ruleCall *rules.Call

	// locate
	project string
	snap    *settings.Snapshot
	d       *decision
	mode    string // parallel | sequential (hookd's configuration)

	plan    hookPlan
	batches []events.Batch // run: each batch's interpretations, in plan order
	// asyncOutcomes are the async hooks run started (reported in the answer's hooks).
	asyncOutcomes []protocol.HookOutcome
	out           *events.Outcome // merge: the decision, before it is rendered

	// failure, when set, is why the answer fails closed (finish builds it): the hooks
	// were cut short, the decision could not be recorded, or the event was refused
	// before its hooks could run.
	failure string
	res     *protocol.Result // finish: the answer, rendered for the harness
	// warm: the session's hooks are to be prewarmed once the event is answered
	// (warmSession), so their start-ups do not compete with this event's own hooks.
	warm bool
}

// log is the per-event logger: it carries the ids that join the operational and audit
// logs. It is built only when something is logged (most events log nothing).
func (x *event) log(l *zap.Logger) *zap.Logger {
	return l.With(zap.String("event", x.ev.Name), zap.String("session_id", x.h.SessionID), zap.String("decision_id", x.d.ID))
}

// Handle answers one event request. emit receives the variant frames as hooks finish
// (it may be nil); the returned result is complete and already recorded.
func (e *engine) Handle(ctx context.Context, req *protocol.Request, caller Caller, emit func(*protocol.Frame)) (*protocol.Result, error) {
	x, err := e.handle(&event{ctx: ctx, req: req, caller: caller, emit: emit})
	if err != nil {
		return nil, err
	}
	return x.res, nil
}

// handle runs x through the stages.
func (e *engine) handle(x *event) (*event, error) {
	e.counters.events.Add(1)
	if x.emit == nil {
		x.emit = func(*protocol.Frame) {}
	}
	for _, s := range stages {
		if err := s.run(e, x); err != nil {
			return nil, err
		}
	}
	if x.warm {
		e.warm(x.snap, x.env, x.h, x.project, e.hookDir(x.h.Cwd, x.project), x.d.FromClaudeCode)
	}
	if ce := e.log.Check(zap.DebugLevel, "event answered"); ce != nil {
		ce.Write(zap.String("event", x.ev.Name), zap.String("decision_id", x.d.ID), zap.Int("hooks", len(x.d.Parts)), zap.Int("exit_code", x.res.ExitCode))
	}
	return x, nil
}

// callerEnv is the environment hooks run with: the request's, or the daemon's own for a
// request that sends none.
func callerEnv(req *protocol.Request) []string {
	if req.Env == nil {
		return os.Environ()
	}
	return req.Env
}

// observe lets every observer watch the event. An event refused before its hooks (an
// HTTP event without its session's environment) is not observed: nothing may start for
// it with hookd's own environment.
func (e *engine) observe(x *event) error {
	if x.failure != "" {
		return nil
	}
	for _, o := range e.observers {
		o(e, x)
	}
	return nil
}

// contribute lets every contributor add to the outcome.
func (e *engine) contribute(x *event) error {
	for _, c := range e.contributors {
		c(e, x)
	}
	return nil
}
