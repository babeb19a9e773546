package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs"
	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/internal/clients"
	"github.com/hookd/hookd/daemon/internal/sessionenv"
	"github.com/hookd/hookd/daemon/internal/skills"
	"github.com/hookd/hookd/daemon/internal/transcript"
	"github.com/hookd/hookd/daemon/internal/warmed"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/daemon/store"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/rules"
)

// Version is the daemon's version, set by the build (-ldflags -X).
var Version = "dev"

// auditor durably records decisions. Append must return only once the record is as
// durable as the configured policy requires: the engine sends the final result after it.
type auditor interface {
	Append(ctx context.Context, d *decision) error
}

// decision is everything the engine knows about one answered event: the audit log's
// input.
type decision struct {
	ID         string
	Time       time.Time
	Event      string
	Header     header
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

// engineOptions configure an engine (New fills them from Options).
type engineOptions struct {
	Logger  *zap.Logger
	Config  *configs.DaemonConfig
	Sources settings.Sources // ManagedDir, UserDir, Home, Extra; the project is per event
	Runner  runner.Runner
	Audit   auditor
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
	// SessionEnvWait bounds an http event's wait for its session's environment (0:
	// sessionenv.Wait).
	SessionEnvWait time.Duration
	// HTTP is the daemon's http forwarder endpoint, for rewriting http forwarders
	// (forwarders.go); nil without one.
	HTTP *install.HTTPEndpoint
}

// engine answers events: one event goes through a fixed list of named stages (stages,
// below). One engine serves every connection of a daemon, and `hookd run` uses the same
// engine in-process.
type engine struct {
	log    *zap.Logger
	cfg    *configs.DaemonConfig
	store  *store.Store
	runner runner.Runner
	audit  auditor
	state  string
	home   string
	start  time.Time

	counters counters
	clients  clients.Tracker // who sent requests, at which version (hookd status)
	// sessions maps project → the last session_id seen there (ConfigChange payloads).
	sessions sync.Map
	// pending maps session_id → *asyncQueue: finished async hooks' texts for the next turn.
	pending sync.Map
	// versions caches harness versions by transcript path (daemon/harness.go).
	versions transcript.Versions
	// codexHome is where the snapshot reads Codex's own hooks (settings.Sources).
	codexHome string
	// envs holds sessions' environments for the HTTP forwarder; nil without one.
	envs    *sessionenv.Store
	envWait time.Duration
	httpEP  *install.HTTPEndpoint

	// skills are the skills each session invoked (skills.go).
	skills skills.Tracker
	// warmed are the sessions whose hooks were prewarmed (warm_session.go).
	warmed warmed.Sessions

	// observers watch every event; contributors add to its answer (stages.go).
	observers    []observer
	contributors []contributor
}

type counters struct {
	events, errors, hooksRun, hookErrors, timeouts, overrides, auditFailures atomic.Uint64
	perEvent                                                                 sync.Map // event name → *atomic.Uint64
}

// newEngine builds an engine.
func newEngine(o engineOptions) *engine {
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
	if o.Sources.CodexHome == "" && o.Sources.Home != "" {
		o.Sources.CodexHome = filepath.Join(o.Sources.Home, ".codex")
	}
	e := &engine{
		codexHome: filepath.Clean(o.Sources.CodexHome),
		log:       o.Logger, cfg: o.Config, runner: o.Runner, audit: o.Audit,
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
		e.envs = sessionenv.New(o.StateDir, o.Logger.Named("session-env"))
		e.envWait = o.SessionEnvWait
		if e.envWait <= 0 {
			e.envWait = sessionenv.Wait
		}
	}
	if o.StateDir != "" { // skills' session state survives a restart (daemon/internal/skills)
		e.skills.Dir = filepath.Join(o.StateDir, "skills")
		e.skills.Prune(7 * 24 * time.Hour)
	}
	e.store = store.NewStore(so)
	// The features that watch events and those that add to answers, in the order they act.
	e.observers = []observer{noteSession, keepSessionEnv, warmSession, noteSkills}
	e.contributors = []contributor{pendingAsyncContext}
	return e
}

// Store returns the engine's settings store.
func (e *engine) Store() *store.Store { return e.store }

func (e *engine) countEvent(name string) {
	v, _ := e.counters.perEvent.LoadOrStore(name, new(atomic.Uint64))
	v.(*atomic.Uint64).Add(1)
}
