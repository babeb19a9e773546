package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/rules"
)

// hookPlan is what will run for one event, decided before anything runs.
type hookPlan struct {
	// Batches run one after another, in order; their outcomes are merged per batch, then
	// across batches by the parallel rule (events.MergeBatches).
	Batches []batch
	// Async hooks start in the background and never decide (async.go).
	Async []*settings.Handler
	// NotRun matched but are not run by hookd (reported, with the reason).
	NotRun []*settings.Handler
	// Budget, when positive, bounds the hooks together (SessionEnd's shared budget); the
	// decision is still recorded after it.
	Budget time.Duration
	// Warnings are added to the answer (a source that could not be read).
	Warnings []string
}

// batch is hooks that run together.
type batch struct {
	Handlers []*settings.Handler
	// Sequential runs them as a pipeline: in order, each seeing the previous hook's
	// updatedInput, the first deny (a hook's, or on PreToolUse a permission rule's
	// judging Call with the input so far) stopping the rest.
	Sequential bool
	// Payload is what the hooks get on stdin.
	Payload []byte
	// Translate reads a hook's output (a harness's own hook's, in the harness's format)
	// as a Claude Code hook output; nil for Claude Code hooks.
	Translate func(events.RawOutput) events.RawOutput
	// Call is the tool call a sequential pipeline's rule check judges (nil: none).
	Call *rules.Call
	// family: for a Monitor shell command, the hooks that met it only through Bash get
	// a Bash-shaped payload and cannot approve (monitor.go); nil otherwise.
	family *familyRun
	// after, when set, sees the handlers that ran and their parts (skills' once hooks).
	after func([]*settings.Handler, []events.Interpretation)
}

// hookContext is what one batch's hooks run with.
type hookContext struct {
	env     []string
	dir     string
	payload []byte
	// translate reads a harness's own hook output as a Claude Code hook output (nil:
	// the hook is a Claude Code hook).
	translate func(events.RawOutput) events.RawOutput
	match     string // the matcher field's value (Header.MatchValue)
	family    *familyRun
	snap      *settings.Snapshot // Exec: how a plugin's or a skill's hook runs
}

// plan decides what runs: the hooks of the settings snapshot that match (as a Monitor
// family for a Monitor shell command), then the harness's own hooks (configured under its
// own event names; they run on the payload as the harness sent it, their output read in
// its format). It reports the matched hooks hookd does not run. An event refused before
// its hooks (x.failure set by decode) plans nothing.
func (e *engine) plan(x *event) error {
	if x.failure != "" {
		return nil
	}
	p := &x.plan
	claude := batch{Sequential: x.mode == "sequential", Payload: x.hr.canon, Call: x.ruleCall}
	if !x.hr.local {
		claude.Handlers, p.NotRun, claude.family = e.matchSettings(x)
	}
	claude.Handlers, p.Async = splitAsync(claude.Handlers)
	p.Batches = append(p.Batches, claude)
	if sk := e.skillBatch(x, claude.Handlers); len(sk.Handlers) > 0 {
		p.Batches = append(p.Batches, sk)
	}
	if !x.hr.ad.Native() {
		p.Batches = append(p.Batches, e.harnessBatch(x))
	}
	x.d.NotRun = p.NotRun
	for _, nr := range p.NotRun {
		ref := nr.Ref()
		x.emit(&protocol.Frame{Type: protocol.FrameMessage, Kind: protocol.MsgNotRun, Hook: &ref,
			Text: notRunReason(x.snap, nr, x.d.FromClaudeCode)})
	}
	if x.ev.Name == "SessionEnd" {
		p.Budget = sessionEndBudget(x.snap, x.env)
	}
	return nil
}

// matchSettings returns the snapshot's handlers for the event: those that run, those
// reported as not run, and for a Monitor shell command the family that says which get a
// Bash-shaped payload (monitor.go; Bash rules then judge the call).
func (e *engine) matchSettings(x *event) (run, notRun []*settings.Handler, fam *familyRun) {
	if bashInput, ok := monitorCommand(x.ev, x.h.ToolName, x.h.ToolInput); ok && x.call != nil {
		rc := *x.call
		rc.Tool = "Bash"
		x.ruleCall = &rc
		return monitorFamily(x.snap, x.ev, x.hr.canon, *x.call, bashInput, x.d.FromClaudeCode)
	}
	run, notRun = x.snap.Match(settings.Query{Event: x.ev, MatchValue: x.h.MatchValue, Tool: x.call, FromClaudeCode: x.d.FromClaudeCode, AgentType: x.h.AgentType})
	return run, notRun, nil
}

// harnessBatch is the harness's own hooks for the event (compiled into the snapshot from
// the harness's hook files), run on the payload as the harness sent it and read in its
// format.
func (e *engine) harnessBatch(x *event) batch {
	mv := x.h.MatchValue
	if x.ev.ToolEvent {
		mv = x.hr.nativeTool
	}
	hs, seq := x.snap.HarnessHooks(x.hr.ad.Name, x.hr.native, mv)
	if ch := runner.LookupEnv(x.env, "CODEX_HOME"); x.hr.ad.Name == protocol.HarnessCodex && ch != "" && filepath.Clean(ch) != e.codexHome {
		x.plan.Warnings = append(x.plan.Warnings, fmt.Sprintf("codex: the event's CODEX_HOME %s is not hookd's (%s): the hooks in %s are not run; start hookd with CODEX_HOME=%s",
			ch, e.codexHome, filepath.Join(ch, settings.HookdFile), ch))
	}
	hr := x.hr
	return batch{Handlers: hs, Sequential: seq, Payload: hr.original, Call: x.call,
		Translate: func(out events.RawOutput) events.RawOutput {
			return hr.ad.Translate(hr.native, hr.nativeTool, hr.nativeInput, out)
		}}
}

// spawns reports whether the plan starts any process.
func (p *hookPlan) spawns() bool {
	if len(p.Async) > 0 {
		return true
	}
	for _, b := range p.Batches {
		if len(b.Handlers) > 0 {
			return true
		}
	}
	return false
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
func (e *engine) hookEnv(env []string, ev *events.Event, h header, project string) []string {
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
func (e *engine) envFile(session string) string {
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
func (e *engine) hookDir(cwd, project string) string {
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
