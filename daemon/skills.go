package daemon

import (
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/internal/skills"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

// noteSkills is the observer of skill invocations and of the SessionEnd that clears them
// (skills' hooks are session-scoped: daemon/internal/skills).
func noteSkills(e *engine, x *event) {
	if x.ev.Name == "SessionEnd" {
		e.skills.End(x.h.SessionID)
	} else if name, visible := skills.Invoked(x.ev.Name, x.h.ToolName, x.h.ToolInput, x.hr.canon); name != "" {
		if fm := x.snap.Skill(name); fm != nil {
			e.skills.Invoke(x.h.SessionID, fm.Name, x.d.ID, visible)
		}
	}
}

// skillBatch is the invoked skills' hooks that match the event, on the main thread's
// events only (skills.Tracker.Hooks says which).
func (e *engine) skillBatch(x *event, ran []*settings.Handler) batch {
	b := batch{Sequential: x.mode == "sequential", Payload: x.hr.canon, Call: x.ruleCall}
	if x.hr.local || x.h.AgentID != "" {
		return b
	}
	q := settings.Query{Event: x.ev, MatchValue: x.h.MatchValue, Tool: x.call, FromClaudeCode: x.d.FromClaudeCode}
	var notRun, async []*settings.Handler
	b.Handlers, notRun = e.skills.Hooks(x.snap, x.h.SessionID, x.d.ID, q, ran)
	b.Handlers, async = splitAsync(b.Handlers)
	x.plan.NotRun, x.plan.Async = append(x.plan.NotRun, notRun...), append(x.plan.Async, async...)
	b.after = func(hs []*settings.Handler, parts []events.Interpretation) {
		e.skills.Ran(x.h.SessionID, x.h.MatchValue, hs, func(i int) bool { return parts[i].Outcome == protocol.OutcomeOK })
	}
	return b
}
