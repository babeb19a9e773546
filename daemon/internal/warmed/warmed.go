// Package warmed is the daemon's memory for prewarming a session's hooks before their
// first event (daemon/warm_session.go): which sessions were warmed, and the environment
// variable Claude Code adds to some events only (CLAUDE_EFFORT), so that a process started
// at the session's start has the very environment its event will bring.
package warmed

import (
	"slices"
	"strings"
	"sync"
)

// EffortEvents are the events whose hooks Claude Code runs with CLAUDE_EFFORT (the turn's
// effort level; its payload's effort.level) on a model with effort levels: the tool events
// and Stop as captured from 2.1.330 (hookd's test/e2e/FINDINGS.md), and SubagentStop (spec §2).
// SessionStart and UserPromptSubmit have none.
var EffortEvents = map[string]bool{
	"PreToolUse": true, "PermissionRequest": true, "PostToolUse": true, "PostToolUseFailure": true,
	"PostToolBatch": true, "Stop": true, "SubagentStop": true,
}

// What a warm guesses before hookd has seen any tool event: Claude Code's default level,
// as every captured payload shows it, at the place Claude Code 2.1.332 puts the variable
// in a hook's environment — right before CLAUDE_PROJECT_DIR, its last (read from the
// environment hookc received in exec form, 2026-11-28; a shell hook's `env` shows the
// shell's reordering instead). The place matters: a prewarmed process serves only an
// event whose environment is the same in order.
const (
	guessEffort = "medium"
	guessAnchor = "CLAUDE_PROJECT_DIR"
)

// Sessions remembers which sessions were warmed, and the CLAUDE_EFFORT of the latest tool
// event: its level and where in the environment it stood. The zero value is ready to
// use; it is safe for concurrent use.
type Sessions struct {
	mu     sync.Mutex
	seen   map[string]bool
	known  bool   // a tool event was seen
	effort string // its level; "": it had no CLAUDE_EFFORT
	anchor string // the variable right after CLAUDE_EFFORT in its environment; "": the last
}

// maxSessions bounds Sessions.seen; when full it starts over, which costs at most
// one more warm per live session.
const maxSessions = 4096

// First reports whether session is to be warmed now: on its SessionStart (again on every
// resume or clear), else on its first event.
func (w *Sessions) First(session string, start bool) bool {
	if session == "" {
		return start
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil || len(w.seen) >= maxSessions {
		w.seen = map[string]bool{}
	}
	if w.seen[session] && !start {
		return false
	}
	w.seen[session] = true
	return true
}

// NoteEffort records the CLAUDE_EFFORT of a tool event's environment.
func (w *Sessions) NoteEffort(env []string) {
	level, anchor := "", ""
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, effortVar+"="); ok {
			level = v
			if i+1 < len(env) {
				anchor, _, _ = strings.Cut(env[i+1], "=")
			}
		}
	}
	w.mu.Lock()
	w.known, w.effort, w.anchor = true, level, anchor
	w.mu.Unlock()
}

// WithEffort returns base (an environment without CLAUDE_EFFORT) with the CLAUDE_EFFORT
// an event of EffortEvents will bring: the latest tool event's level at its place, or
// the guess before any; base itself when the latest had none.
func (w *Sessions) WithEffort(base []string) []string {
	w.mu.Lock()
	level, anchor := w.effort, w.anchor
	if !w.known {
		level, anchor = guessEffort, guessAnchor
	}
	w.mu.Unlock()
	if level == "" {
		return base
	}
	return insertEffort(base, level, anchor)
}

// PlaceEffort returns env with CLAUDE_EFFORT=level where Claude Code puts it: at the place
// the latest tool event had it, or the guess's before any (an HTTP event's environment is
// rebuilt from its session's, and its level comes from its payload).
func (w *Sessions) PlaceEffort(env []string, level string) []string {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, effortVar+"=") })
	w.mu.Lock()
	anchor := w.anchor
	if !w.known || w.effort == "" {
		anchor = guessAnchor
	}
	w.mu.Unlock()
	return insertEffort(env, level, anchor)
}

// insertEffort puts CLAUDE_EFFORT=level right before the variable anchor in base, or last.
func insertEffort(base []string, level, anchor string) []string {
	at := len(base)
	for i, kv := range base {
		if name, _, _ := strings.Cut(kv, "="); anchor != "" && name == anchor {
			at = i
			break
		}
	}
	return slices.Insert(slices.Clip(base), at, effortVar+"="+level)
}

const effortVar = "CLAUDE_EFFORT"
