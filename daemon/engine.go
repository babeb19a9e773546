package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs"
	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/daemon/store"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/rules"
)

// Version is the daemon's version, set by the build (-ldflags -X).
var Version = "dev"

// Auditor durably records decisions. Append must return only once the record is as
// durable as the configured policy requires: the engine sends the final result after it.
type Auditor interface {
	Append(ctx context.Context, d *Decision) error
}

// Decision is everything the engine knows about one answered event: the audit log's
// input.
type Decision struct {
	ID         string
	Time       time.Time
	Event      string
	Header     Header
	Payload    json.RawMessage
	ProjectDir string
	Caller     Caller
	Snapshot   *settings.Snapshot
	Parts      []events.Interpretation
	NotRun     []*settings.Handler
	// FromClaudeCode: Claude Code sent the event and runs its managed hooks itself
	// (settings.Query.FromClaudeCode).
	FromClaudeCode bool
	Handlers       []*settings.Handler // the handlers that ran, parallel to Parts
	Resolution     *rules.Resolution
	Result         *protocol.Result
	// Harness, HarnessVersion and NativeEvent say which agent sent the event and what it
	// called the event (package events/harness).
	Harness, HarnessVersion, NativeEvent string
	// NotDelivered is set when the request's context ended before the hooks did: the
	// caller went away (audit.Record.NotDelivered "caller_disconnected") or hookd's
	// grace period ran out ("shutdown").
	NotDelivered string
}

// Causes a server gives the context of a request it abandons (context.Cause).
var (
	// ErrShutdown: hookd is stopping and the --grace period ended with hooks running.
	ErrShutdown = errors.New("hookd stopped before the hooks finished (the shutdown grace period ended)")
	// ErrCallerGone: the caller closed its connection before the answer.
	ErrCallerGone = errors.New("the caller disconnected before the answer")
)

// Caller identifies who sent an event (from SO_PEERCRED; zero for in-process runs).
type Caller struct {
	UID, PID int
	Client   string
	// Fallback is set when a client answers in-process because it could not reach the
	// daemon (`hookd run --fallback REASON`, run by hookc): why. It reaches the audit
	// record (audit.Record.Fallback).
	Fallback string
}

// EngineOptions configure an Engine (New fills them from Options).
type EngineOptions struct {
	Logger  *zap.Logger
	Config  *configs.DaemonConfig
	Sources settings.Sources // ManagedDir, UserDir, Home, Extra; the project is per event
	Runner  runner.Runner
	Audit   Auditor
	// StateDir holds per-session files hookd creates (CLAUDE_ENV_FILE when the caller
	// did not provide one).
	StateDir string
	// SyncForwarders: after every reload, rewrite the forwarders `hookd install` put
	// into Claude Code's settings files when hookd's own files beside them changed
	// (forwarders.go). A serving daemon sets it; `hookd run` writes nothing.
	SyncForwarders bool
	// SessionEnvs: keep each Claude Code session's environment, as hookc sends it, for
	// the session's events that arrive over the HTTP forwarder (sessionenv.go). In
	// StateDir when set, else in memory only.
	SessionEnvs bool
	// HTTP is the daemon's http forwarder endpoint, for rewriting http forwarders
	// (forwarders.go); nil without one.
	HTTP *install.HTTPEndpoint
}

// Engine answers events: match, run, interpret, merge, resolve against permission rules,
// record, answer. One Engine serves every connection of a daemon, and `hookd run` uses
// the same Engine in-process.
type Engine struct {
	log    *zap.Logger
	cfg    *configs.DaemonConfig
	store  *store.Store
	runner runner.Runner
	audit  Auditor
	state  string
	home   string
	start  time.Time

	counters counters
	// sessions maps project → the last session_id seen there (ConfigChange payloads).
	sessions sync.Map
	// pending maps session_id → *asyncQueue: finished async hooks' texts for the next turn.
	pending sync.Map
	// versions caches harness versions by transcript path; nativeCache the harnesses' own
	// hook files by path (daemon/harness.go).
	versions    versionCache
	nativeCache sync.Map
	// envs holds sessions' environments for the HTTP forwarder; nil without one.
	envs   *sessionEnvs
	httpEP *install.HTTPEndpoint
}

type counters struct {
	events, errors, hooksRun, hookErrors, timeouts, overrides, auditFailures atomic.Uint64
	perEvent                                                                 sync.Map // event name → *atomic.Uint64
}

// NewEngine builds an engine.
func NewEngine(o EngineOptions) *Engine {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Config == nil {
		o.Config = configs.DefaultDaemonConfig()
	}
	if o.Runner == nil {
		o.Runner = runner.ExecRunner{}
	}
	if o.Sources.Home == "" {
		o.Sources.Home, _ = os.UserHomeDir()
	}
	e := &Engine{
		log: o.Logger, cfg: o.Config, runner: o.Runner, audit: o.Audit,
		state: o.StateDir, home: o.Sources.Home, start: time.Now(), httpEP: o.HTTP,
	}
	so := store.StoreOptions{
		Logger: o.Logger.Named("settings"), Sources: o.Sources, Veto: e.vetoConfigChange,
		MaxProjects: o.Config.Limits.MaxLiveProjects, IdleTimeout: time.Duration(o.Config.Limits.ProjectIdleTimeoutMS) * time.Millisecond,
		OnEvict: func(projects []string) {
			for _, p := range projects {
				e.sessions.Delete(p)
			}
		},
	}
	if o.SyncForwarders {
		so.OnReload = e.forwardersFollow
	}
	if o.SessionEnvs {
		e.envs = newSessionEnvs(o.StateDir, o.Logger.Named("session-env"))
	}
	e.store = store.NewStore(so)
	return e
}

// Store returns the engine's settings store.
func (e *Engine) Store() *store.Store { return e.store }

// Header is the part of an event payload the engine reads. The payload itself is passed
// to hooks untouched.
type Header struct {
	Event      string
	SessionID  string
	Cwd        string
	ToolName   string
	ToolInput  json.RawMessage
	ToolUseID  string
	MatchValue string
}

// ParseHeader reads the fields the engine needs from a payload.
func ParseHeader(payload []byte) (Header, *events.Event, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(payload, &top); err != nil {
		return Header{}, nil, &protocol.Error{Code: protocol.CodeBadRequest, Field: "event", Message: "event payload is not a JSON object: " + err.Error()}
	}
	str := func(k string) (string, error) {
		raw, ok := top[k]
		if !ok || string(raw) == "null" {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", &protocol.Error{Code: protocol.CodeBadRequest, Field: "event." + k, Message: "event field " + strconv.Quote(k) + " must be a string"}
		}
		return s, nil
	}
	var h Header
	var err error
	if h.Event, err = str("hook_event_name"); err != nil {
		return h, nil, err
	}
	if h.Event == "" {
		return h, nil, &protocol.Error{Code: protocol.CodeBadRequest, Field: "event.hook_event_name", Message: "event payload has no hook_event_name"}
	}
	ev, ok := events.Lookup(h.Event)
	if !ok {
		return h, nil, &protocol.Error{Code: protocol.CodeUnknownEvent, Event: h.Event, Field: "event.hook_event_name",
			Message: fmt.Sprintf("unknown hook event %q (hookd knows %d events: see `hookd events`)", h.Event, len(events.Names()))}
	}
	for _, f := range []struct {
		k string
		p *string
	}{{"session_id", &h.SessionID}, {"cwd", &h.Cwd}, {"tool_name", &h.ToolName}, {"tool_use_id", &h.ToolUseID}} {
		if *f.p, err = str(f.k); err != nil {
			return h, ev, err
		}
	}
	h.ToolInput = top["tool_input"]
	if ev.MatcherField != "" {
		if h.MatchValue, err = str(ev.MatcherField); err != nil {
			return h, ev, err
		}
		if ev.MatchBasename {
			h.MatchValue = filepath.Base(h.MatchValue)
		}
		if ev.ModelMatch {
			h.MatchValue = events.ModelMatchValue(h.MatchValue)
		}
	}
	return h, ev, nil
}

// Handle answers one event request. emit receives the variant frames as hooks finish
// (it may be nil); the returned result is complete and already recorded.
func (e *Engine) Handle(ctx context.Context, req *protocol.Request, caller Caller, emit func(*protocol.Frame)) (*protocol.Result, error) {
	e.counters.events.Add(1)
	if emit == nil {
		emit = func(*protocol.Frame) {}
	}
	hr, err := e.harnessOf(req)
	if err != nil {
		e.counters.errors.Add(1)
		return nil, err
	}
	var h Header
	var ev *events.Event
	if hr.local {
		h, ev, err = localHeader(hr)
	} else {
		h, ev, err = ParseHeader(hr.canon)
	}
	if err != nil {
		e.counters.errors.Add(1)
		return nil, err
	}
	e.countEvent(ev.Name)
	env := req.Env
	if env == nil {
		env = os.Environ()
	}
	project := req.ProjectDir
	if project == "" {
		project = runner.LookupEnv(env, "CLAUDE_PROJECT_DIR")
	}
	if project == "" && h.Cwd != "" {
		var stopped string
		project, stopped = settings.ProjectDirForOwner(h.Cwd, e.home, os.Geteuid())
		if stopped != "" {
			e.log.Warn("project discovery stopped at a directory owned by another user; its settings (and those above it) are not loaded",
				zap.String("directory", stopped), zap.String("cwd", h.Cwd), zap.String("project", project))
		}
	}
	if project != "" {
		project = filepath.Clean(project)
	}
	snap := e.store.Snapshot(project)
	e.noteSession(project, h.SessionID)
	if e.envs != nil && caller.Client != ClientHTTP && req.Env != nil && hr.ad.Name == protocol.HarnessClaudeCode &&
		runner.LookupEnv(req.Env, "CLAUDECODE") == "1" {
		// A Claude Code hook's own environment (hookc's): what the session's http events
		// will run with (sessionenv.go).
		e.envs.put(h.SessionID, project, req.Env)
	}

	d := &Decision{ID: NewDecisionID(), Time: time.Now(), Event: ev.Name, Header: h, Payload: req.Event,
		ProjectDir: project, Caller: caller, Snapshot: snap,
		Harness: hr.ad.Name, HarnessVersion: hr.version}
	if hr.native != ev.Name {
		d.NativeEvent = hr.native
	}
	// The per-event logger carries the ids that join the operational and audit logs; it is
	// built only when something is logged (most events log nothing).
	log := func() *zap.Logger {
		return e.log.With(zap.String("event", ev.Name), zap.String("session_id", h.SessionID), zap.String("decision_id", d.ID))
	}

	var call *rules.Call
	if ev.ToolEvent {
		c := rules.Call{Tool: h.ToolName, Cwd: h.Cwd, Home: e.home}
		if len(h.ToolInput) > 0 {
			_ = json.Unmarshal(h.ToolInput, &c.Input) // a non-object input simply matches no path/command rule
		}
		call = &c
	}
	// Claude Code sent this event when the harness is Claude Code and the request comes
	// from a process Claude Code started (CLAUDECODE=1 in the hook's environment, spec §6:
	// hookc, or hookc's in-process fallback). Claude Code then runs the hooks of its
	// managed files itself; hookd must not run them a second time. Only the request's own
	// environment counts, never the daemon's (a daemon started from inside a Claude Code
	// session inherits CLAUDECODE=1). A raw client with a Claude Code payload, Codex and
	// Gemini CLI have no one else running those hooks: hookd runs them.
	d.FromClaudeCode = hr.ad.Name == protocol.HarnessClaudeCode && runner.LookupEnv(req.Env, "CLAUDECODE") == "1"
	var run, notRun []*settings.Handler
	var fam *familyRun
	ruleCall := call // the call permission rules judge
	if !hr.local {
		if bashInput, ok := monitorCommand(ev, h.ToolName, h.ToolInput); ok && call != nil {
			// A Monitor shell command: Bash hooks and Bash rules apply to it (monitor.go).
			run, notRun, fam = monitorFamily(snap, ev, hr.canon, *call, bashInput, d.FromClaudeCode)
			rc := *call
			rc.Tool = "Bash"
			ruleCall = &rc
		} else {
			run, notRun = snap.Match(settings.Query{Event: ev, MatchValue: h.MatchValue, Tool: call, FromClaudeCode: d.FromClaudeCode})
		}
	}
	run, async := splitAsync(run)
	// The harness's own hooks (configured under its own event names) run beside Claude
	// Code's, on the payload as the harness sent it, their output read in its format.
	var native []*settings.Handler
	var nativeSeq bool
	var nativeWarnings []string
	if !hr.ad.Native() {
		mv := h.MatchValue
		if ev.ToolEvent {
			mv = hr.nativeTool
		}
		native, nativeSeq, nativeWarnings = e.nativeHandlers(hr, ev, env, project, mv)
	}
	d.NotRun = notRun
	for _, nr := range notRun {
		ref := nr.Ref()
		emit(&protocol.Frame{Type: protocol.FrameMessage, Kind: protocol.MsgNotRun, Hook: &ref,
			Text: notRunReason(snap, nr, d.FromClaudeCode)})
	}

	hctx := hookContext{payload: hr.canon, match: h.MatchValue, family: fam}
	if len(run) > 0 || len(async) > 0 || len(native) > 0 || ev.Name == "SessionStart" { // nothing to spawn: skip the env copy and stats
		hctx.env, hctx.dir = e.hookEnv(env, ev, h, project), e.hookDir(h.Cwd, project)
	}
	nctx := hctx
	nctx.payload = hr.original
	nctx.translate = func(out events.RawOutput) events.RawOutput {
		return hr.ad.Translate(hr.native, hr.nativeTool, hr.nativeInput, out)
	}
	var asyncOutcomes []protocol.HookOutcome
	for _, ah := range async {
		asyncOutcomes = append(asyncOutcomes, e.startAsync(ev, ah, hctx, h.SessionID, emit))
	}
	hookCtx := ctx
	if ev.Name == "SessionStart" {
		e.warmSession(snap, env, h, project, hctx.dir, d.FromClaudeCode)
	}
	if ev.Name == "SessionEnd" {
		// The budget bounds the hooks only; the decision is still recorded after it.
		var cancel context.CancelFunc
		hookCtx, cancel = context.WithTimeout(ctx, sessionEndBudget(snap, env))
		defer cancel()
	}
	mode := e.cfg.Mode
	if mode == "" {
		mode = "parallel"
	}
	var parts []events.Interpretation
	var res *protocol.Result
	if mode == "sequential" {
		parts, run = e.runSequential(hookCtx, ev, run, hctx, snap, ruleCall, emit)
	} else {
		parts = e.runParallel(hookCtx, ev, run, hctx, emit)
	}
	if len(native) > 0 {
		var nparts []events.Interpretation
		if nativeSeq {
			nparts, native = e.runSequential(hookCtx, ev, native, nctx, snap, call, emit)
		} else {
			nparts = e.runParallel(hookCtx, ev, native, nctx, emit)
		}
		parts, run = append(parts, nparts...), append(run, native...)
	}
	if mode == "sequential" || nativeSeq {
		res = events.Merge(ev, pipelineParts(parts))
	} else {
		res = events.Merge(ev, parts)
	}
	if runner.LookupEnv(env, "CLAUDE_CODE_SESSION_ATTENDED") == "0" {
		// An unattended Claude Code session honours a defer; elsewhere an ask beats it
		// (events.permissionRank, Claude Code 2.1.321).
		events.HonourDefer(ev, res, parts)
	}
	res.Warnings = append(res.Warnings, nativeWarnings...)
	d.Parts, d.Handlers = parts, run

	res.DecisionID = d.ID
	res.Revision = snap.Revision
	res.Mode = mode
	for _, nr := range notRun {
		res.Hooks = append(res.Hooks, protocol.HookOutcome{Hook: nr.Ref(), Outcome: protocol.OutcomeNotRun, Error: notRunReason(snap, nr, d.FromClaudeCode)})
	}
	res.Hooks = append(res.Hooks, asyncOutcomes...)
	pendingCtx := false
	if ev.Honoured(events.FAdditionalContext) {
		if texts := e.takePending(h.SessionID); len(texts) > 0 {
			// Earlier async hooks' output comes first: it belongs to an earlier moment.
			res.AdditionalContext = append(texts, res.AdditionalContext...)
			if res.PlainContext != nil { // kept index for index with AdditionalContext
				res.PlainContext = append(make([]bool, len(texts)), res.PlainContext...)
			}
			pendingCtx = true
		}
	}
	rulesApply := hr.ad.Native() || e.cfg.Harnesses.For(hr.ad.Name).RulesApply()
	if call != nil && rulesApply {
		e.resolve(ev, res, snap, ruleCall, d, emit, log)
		if !hr.ad.Native() {
			enforceRuleAnswer(ev, res)
		}
	}
	if call != nil || pendingCtx {
		events.Finalize(ev, res) // the permission or the contexts changed; Merge finalized the rest
	}
	if ctx.Err() != nil {
		// The hooks were cut short: whatever they left is not an answer. The caller (if
		// still there) gets the fail-closed answer, and the record says why.
		cause := context.Cause(ctx)
		d.NotDelivered = "shutdown"
		if errors.Is(cause, ErrCallerGone) {
			d.NotDelivered = "caller_disconnected"
		}
		if ev.CanBlock {
			fc := events.FailClosed(ev.Name, "hookd: "+cause.Error())
			fc.DecisionID, fc.Revision, fc.Mode, fc.Hooks = d.ID, res.Revision, res.Mode, res.Hooks
			res = fc
		}
	}
	if !hr.ad.Native() {
		res.Harness, res.NativeEvent = hr.ad.Name, d.NativeEvent
		hr.ad.Render(hr.native, hr.nativeTool, res)
	}
	d.Result = res

	if e.audit != nil {
		if err := e.audit.Append(ctx, d); err != nil {
			e.counters.auditFailures.Add(1)
			log().Error("audit record not written", zap.Error(err))
			if ev.CanBlock {
				// A decision that cannot be recorded is not allowed (issue 5).
				fc := events.FailClosed(ev.Name, "hookd: decision could not be recorded in the audit log: "+err.Error())
				fc.DecisionID, fc.Revision, fc.Hooks = d.ID, res.Revision, res.Hooks
				return fc, nil
			}
		}
	}
	if ce := e.log.Check(zap.DebugLevel, "event answered"); ce != nil {
		ce.Write(zap.String("event", ev.Name), zap.String("decision_id", d.ID), zap.Int("hooks", len(parts)), zap.Int("exit_code", res.ExitCode))
	}
	return res, nil
}

// resolve applies permission rules to a tool event's merged hook decision (issue 3):
// a hook allow never bypasses a deny or ask rule.
func (e *Engine) resolve(ev *events.Event, res *protocol.Result, snap *settings.Snapshot, call *rules.Call, d *Decision, emit func(*protocol.Frame), log func() *zap.Logger) {
	c := *call
	if len(res.UpdatedInput) > 0 {
		// Rules judge what will actually run: the rewritten input.
		var in map[string]any
		if json.Unmarshal(res.UpdatedInput, &in) == nil {
			c.Input = in
		}
	}
	var hook rules.Decision
	if res.HookPermission != nil {
		hook = rules.Decision(res.HookPermission.Decision)
	}
	switch ev.Name {
	case "PreToolUse":
	case "PermissionRequest":
		// Only an allow that rewrites the input is re-checked (spec §8 item 6); a plain
		// allow answers the prompt on the user's behalf.
		if hook != rules.DecisionAllow || len(res.UpdatedInput) == 0 {
			return
		}
	default:
		return
	}
	r := rules.Resolve(hook, snap.Rules, c)
	d.Resolution = &r
	if r.Rules.Decision != rules.None {
		res.RuleAnswer = &protocol.Permission{Decision: string(r.Rules.Decision), Source: "rule",
			OverriddenBy: ruleRef(r.Rules.Rule)}
	}
	if hook == rules.None {
		return // the harness keeps the final say; the rules' answer is reported only
	}
	perm := *res.HookPermission
	perm.Decision, perm.Source = string(r.Final), r.Source
	if r.OverriddenBy != nil {
		e.counters.overrides.Add(1)
		perm.OverriddenBy, perm.Via = ruleRef(r.OverriddenBy), ""
		perm.Reason = overrideReason(r)
		log().Warn("hook decision overridden by permission rule",
			zap.String("hook_decision", string(hook)), zap.String("final", string(r.Final)),
			zap.String("rule", r.OverriddenBy.Text), zap.String("rule_list", string(r.OverriddenBy.List)),
			zap.String("rule_file", r.OverriddenBy.Origin.File),
			zap.String("command", r.Rules.Command), zap.String("unresolved", r.Rules.Unresolved))
		emit(&protocol.Frame{Type: protocol.FramePermission, Decision: perm.Decision, Reason: perm.Reason,
			Source: perm.Source, OverriddenBy: perm.OverriddenBy, Hook: perm.Hook})
	}
	res.Permission = &perm
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
	// Name the simple command that matched, and for a fail-closed match what
	// could not be resolved: "x=rm; $x f" is denied as "rm f", "$(…) f" as
	// "command name is not a literal".
	if m := r.Rules; m.Rule == r.OverriddenBy && m.Command != "" {
		switch {
		case m.Unresolved == m.Command: // a script or stdin hookd could not see
			reason += fmt.Sprintf(" (failing closed: %s)", m.Unresolved)
		case m.Unresolved != "":
			reason += fmt.Sprintf(" (failing closed on `%s`: %s)", m.Command, m.Unresolved)
		default:
			reason += fmt.Sprintf(" (matched `%s`)", m.Command)
		}
	}
	return reason
}

func ruleRef(r *rules.Rule) *protocol.RuleRef {
	if r == nil {
		return nil
	}
	return &protocol.RuleRef{Rule: r.Text, List: string(r.List), File: r.Origin.File, Source: r.Origin.Source}
}

type hookContext struct {
	env     []string
	dir     string
	payload []byte
	// translate reads a harness's own hook output as a Claude Code hook output (nil:
	// the hook is a Claude Code hook).
	translate func(events.RawOutput) events.RawOutput
	match     string // the matcher field's value (Header.MatchValue)
	// family: for a Monitor shell command, the hooks that met it only through Bash get
	// a Bash-shaped payload and cannot approve (monitor.go); nil otherwise.
	family *familyRun
}

func (e *Engine) runParallel(ctx context.Context, ev *events.Event, hs []*settings.Handler, hc hookContext, emit func(*protocol.Frame)) []events.Interpretation {
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
func (e *Engine) runSequential(ctx context.Context, ev *events.Event, hs []*settings.Handler, hc hookContext, snap *settings.Snapshot, call *rules.Call, emit func(*protocol.Frame)) ([]events.Interpretation, []*settings.Handler) {
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

// pipelineParts prepares a sequential run for Merge: each hook's updatedInput was already
// the next hook's input, so only the last rewrite is the pipeline's result (the parallel
// merge rule — first in configuration order — would undo the later hooks' work).
func pipelineParts(parts []events.Interpretation) []events.Interpretation {
	last := -1
	for i, p := range parts {
		if len(p.UpdatedInput) > 0 && p.Permission != string(rules.DecisionDeny) {
			last = i
		}
	}
	if last < 0 {
		return parts
	}
	out := append([]events.Interpretation(nil), parts...)
	for i := range out {
		if i != last {
			out[i].UpdatedInput = nil
		}
	}
	return out
}

func (e *Engine) runOne(ctx context.Context, ev *events.Event, h *settings.Handler, hc hookContext, emit func(*protocol.Frame)) events.Interpretation {
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
		spec := e.procSpec(h, hc.dir, hc.env)
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
	switch {
	// Never quiet (issue 29): a hook that cannot start is a guard that does not run; the
	// result and the record say so per event, the log says so for the operator. A shell
	// that cannot find the program exits 127 (POSIX), which is the same failure.
	case out.StartErr != nil:
		e.log.Warn("hook failed to start", zap.String("event", ev.Name), zap.String("hook", ref.ID),
			zap.String("command", ref.Command), zap.Error(out.StartErr))
	case out.Kind == events.Command && out.ExitCode == 127 && h.Args == nil:
		e.log.Warn("hook failed to start", zap.String("event", ev.Name), zap.String("hook", ref.ID),
			zap.String("command", ref.Command), zap.String("error", "exit 127 (the shell found no such command): "+firstLine(out.Stderr)))
	}
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
		f := f
		emit(&f)
	}
	return in
}

func notRunReason(snap *settings.Snapshot, h *settings.Handler, fromClaudeCode bool) string {
	if fromClaudeCode && snap.ClaudeCodeRuns(h) {
		return snap.ReasonFor(h, true)
	}
	if !h.Runnable {
		return fmt.Sprintf("%s hooks need the harness (hookd runs command and http hooks); not run", h.Type)
	}
	return "not run"
}

// hookEnv is the caller's environment plus the variables Claude Code sets for every hook
// (spec §6), filled in only when the caller did not send them.
func (e *Engine) hookEnv(env []string, ev *events.Event, h Header, project string) []string {
	out := make([]string, len(env), len(env)+4)
	copy(out, env)
	fill := func(k, v string) {
		if v != "" && runner.LookupEnv(env, k) == "" {
			out = append(out, k+"="+v)
		}
	}
	fill("CLAUDE_PROJECT_DIR", project)
	fill("CLAUDE_CODE_SESSION_ID", h.SessionID)
	fill("CLAUDECODE", "1")
	if ev.EnvFile {
		fill("CLAUDE_ENV_FILE", e.envFile(h.SessionID))
	}
	return out
}

// envFile returns (creating its directory) the per-session file hooks append `export`
// lines to, for callers that did not pass CLAUDE_ENV_FILE.
func (e *Engine) envFile(session string) string {
	if e.state == "" || session == "" {
		return ""
	}
	dir := filepath.Join(e.state, "env")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	return filepath.Join(dir, sanitize(session)+".sh")
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, s)
}

// hookDir is the hook's working directory: the event's cwd; if that is gone, the project
// root, else home (Claude Code 2.1.239).
func (e *Engine) hookDir(cwd, project string) string {
	for _, d := range []string{cwd, project, e.home} {
		if d == "" {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return ""
}

// sessionEndBudget is SessionEnd's shared budget (spec §3.2): 1.5 s, raised to the
// largest per-hook timeout in settings up to 60 s; CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS
// from the caller overrides it.
func sessionEndBudget(snap *settings.Snapshot, env []string) time.Duration {
	if v := runner.LookupEnv(env, "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS"); v != "" {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
	}
	budget := events.SessionEndBudget
	for _, h := range snap.HandlersFor("SessionEnd") {
		if h.Timeout > budget {
			budget = h.Timeout
		}
	}
	return min(budget, events.SessionEndBudgetMax)
}

func (e *Engine) countEvent(name string) {
	v, _ := e.counters.perEvent.LoadOrStore(name, new(atomic.Uint64))
	v.(*atomic.Uint64).Add(1)
}

// firstLine is the first line of b, at most 200 bytes.
func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b[:min(len(b), 200)])
}
