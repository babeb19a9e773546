// Package warmed is the daemon's memory for prewarming a session's hooks before their
// first event (daemon/warm_session.go): which sessions were warmed, and the environment
// variable Claude Code adds to some events only (CLAUDE_EFFORT), so that a process started
// at the session's start has the very environment its event will bring.
package warmed

import "sync"

// EffortEvents are the events whose hooks Claude Code runs with CLAUDE_EFFORT (the turn's
// effort level; its payload's effort.level) on a model with effort levels: the tool events
// and Stop as captured from 2.1.330 (hookd's test/e2e/FINDINGS.md), and SubagentStop (spec §2).
// SessionStart and UserPromptSubmit have none.
var EffortEvents = map[string]bool{
	"PreToolUse": true, "PermissionRequest": true, "PostToolUse": true, "PostToolUseFailure": true,
	"PostToolBatch": true, "Stop": true, "SubagentStop": true,
}

// guessEffort is the effort level a warm guesses before hookd has seen any tool event:
// Claude Code's default, as every captured payload shows it.
const guessEffort = "medium"

// Sessions remembers which sessions were warmed, and the effort level of the latest tool
// event. The zero value is ready to use; it is safe for concurrent use.
type Sessions struct {
	mu     sync.Mutex
	seen   map[string]bool
	effort *string // nil: no tool event seen yet; "": the last one had no CLAUDE_EFFORT
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

// NoteEffort records the CLAUDE_EFFORT of a tool event ("" when it had none).
func (w *Sessions) NoteEffort(level string) {
	w.mu.Lock()
	if w.effort == nil || *w.effort != level {
		w.effort = &level
	}
	w.mu.Unlock()
}

// EffortEnv is the CLAUDE_EFFORT a warm adds for an event of EffortEvents: the level of
// the latest tool event, or guessEffort before any; none when the latest had none.
func (w *Sessions) EffortEnv() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.effort == nil:
		return []string{"CLAUDE_EFFORT=" + guessEffort}
	case *w.effort == "":
		return nil
	}
	return []string{"CLAUDE_EFFORT=" + *w.effort}
}
