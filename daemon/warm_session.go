package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/internal/warmed"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/events"
)

// warmer is a Runner that can start a hook's process ahead of its first event.
type warmer interface {
	// Warm makes sure one process for spec (Stdin unused) is ready or starting. It
	// returns at once; it does nothing for specs it would not prewarm.
	Warm(spec runner.ProcSpec)
}

// procSpec is the process a command handler runs in dir with env, with hookd's own
// configuration for it (prewarm, worker); the caller adds Stdin.
func (e *engine) procSpec(snap *settings.Snapshot, h *settings.Handler, dir string, env []string) runner.ProcSpec {
	ov := e.cfg.Override(h)
	ex := snap.Exec(h) // a plugin's or a skill's hook: its substitutions and variables
	command, args := ex.Command, ex.Args
	env = ex.Environ(env)
	if args != nil {
		command, args = substituteExecForm(command, args, env)
	}
	return runner.ProcSpec{
		Command: command, Args: args, Dir: dir, Env: env,
		Timeout: h.EffectiveTimeout(), OutputCap: e.cfg.OutputCapBytes,
		Shell: h.Shell, HookID: h.ID, HookRev: handlerRev(h),
		Prewarm: runner.PrewarmPolicyFor(e.cfg.Prewarm, ov.Prewarm), Worker: ov.Worker != nil && *ov.Worker,
		KeepGroup: e.cfg.KeepsProcessGroup(ov),
	}
}

// handlerRev identifies a handler's definition: its file, place and JSON as written. Any
// settings edit that touches the hook changes it.
func handlerRev(h *settings.Handler) string {
	sum := sha256.New()
	for _, s := range []string{h.File, h.ID, h.MatcherText, string(h.Raw)} {
		sum.Write([]byte(s))
		sum.Write([]byte{0})
	}
	return hex.EncodeToString(sum.Sum(nil)[:16])
}

// warmEvents are the events that come many times per session; their hooks are prewarmed
// when the session starts, so even a session's first tool call finds them warm.
var warmEvents = map[string]bool{
	"UserPromptSubmit": true, "PreToolUse": true, "PermissionRequest": true, "PermissionDenied": true,
	"PostToolUse": true, "PostToolUseFailure": true, "PostToolBatch": true, "Notification": true,
	"SubagentStart": true, "SubagentStop": true, "Stop": true,
}

// StartsWarm reports whether hookd prepares a hook of event with command and args
// (Claude Code's exec form; nil for the shell form) ahead of the session's first event,
// analysed from dir ("" when unknown) with hookd's environment: install.Options.StartsWarm.
func StartsWarm(event, command string, args []string, dir string) bool {
	env := os.Environ()
	if dir != "" {
		env = append(env, "CLAUDE_PROJECT_DIR="+dir)
	}
	return warmEvents[event] && runner.StartsWarm(runner.ProcSpec{Command: command, Args: args, Dir: dir, Env: env})
}

// warmSession is an observer: a session's hooks are prewarmed (warm) on its SessionStart,
// or on the first event hookd sees of it when no SessionStart reached hookd (an
// installation with no SessionStart hook, a daemon restarted mid-session). Every event
// ties the session's spares to the caller's harness process; SessionEnd ends them.
func warmSession(e *engine, x *event) {
	if s, ok := e.runner.(interface{ Session(string, int, bool) }); ok { // runner.Pool.Session
		s.Session(x.h.SessionID, x.caller.PID, x.ev.Name == "SessionEnd")
	}
	if warmed.EffortEvents[x.ev.Name] {
		e.warmed.NoteEffort(x.env)
	}
	x.warm = x.ev.Name != "SessionEnd" && e.warmed.First(x.h.SessionID, x.ev.Name == "SessionStart")
}

// warm prewarms the command hooks of the session's frequent events with the directory
// and environment their events will most likely bring: the caller's environment without
// CLAUDE_ENV_FILE (Claude Code sets it only for SessionStart, Setup, CwdChanged and
// FileChanged; spec §6) and with CLAUDE_EFFORT where the event has it (warmed.Sessions.WithEffort), plus
// hookd's fill-ins. A wrong guess costs one idle process, which ends with the session: a
// process is only ever used for an event whose key matches exactly.
func (e *engine) warm(snap *settings.Snapshot, env []string, h header, project, dir string, fromClaudeCode bool) {
	w, ok := e.runner.(warmer)
	if !ok {
		return
	}
	base := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CLAUDE_ENV_FILE=") && !strings.HasPrefix(kv, "CLAUDE_EFFORT=") {
			base = append(base, kv)
		}
	}
	withEffort := e.warmed.WithEffort(base)
	seen := map[string]bool{} // identical handlers run once, as the first of them (Match)
	for _, hd := range snap.Handlers() {
		if hd.Type != events.Command || !hd.Runnable || hd.Refused != "" || hd.Event == nil || !warmEvents[hd.Event.Name] || snap.ReasonFor(hd, fromClaudeCode) != "" {
			continue
		}
		if k := hd.Event.Name + "\x00" + hd.Key; seen[k] {
			continue
		} else {
			seen[k] = true
		}
		evEnv := base
		if warmed.EffortEvents[hd.Event.Name] {
			evEnv = withEffort
		}
		w.Warm(e.procSpec(snap, hd, dir, e.hookEnv(evEnv, hd.Event, h, project)))
	}
}

// execPlaceholders are the variables Claude Code substitutes into an exec-form hook's
// command and args itself, since no shell expands them there (spec §3.2, 2.1.139).
var execPlaceholders = []string{"CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA"}

// substituteExecForm replaces ${CLAUDE_PROJECT_DIR}, ${CLAUDE_PLUGIN_ROOT} and
// ${CLAUDE_PLUGIN_DATA} with their values from the hook's environment, literally: a value
// with spaces stays one argument and is not expanded further. Other text, including any
// other $VAR, is passed through untouched.
func substituteExecForm(command string, args []string, env []string) (string, []string) {
	var pairs []string
	for _, name := range execPlaceholders {
		if v := runner.LookupEnv(env, name); v != "" {
			pairs = append(pairs, "${"+name+"}", v)
		}
	}
	if len(pairs) == 0 {
		return command, args
	}
	r := strings.NewReplacer(pairs...)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return r.Replace(command), out
}
