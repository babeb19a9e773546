package daemon

import (
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/rules"
)

// refusedHook is the answer for a handler of a managed file that failed the trust check
// (settings.CheckManaged; issue 28 item 5): the hook is never started. Where the event
// can block, it fails closed — a deny (PreToolUse, PermissionRequest, PreModelSwitch) or
// a block — because the file may be the administrator's guard with a wrong owner or
// mode, and running nothing would let the action through unguarded; elsewhere it is an
// error outcome. Either way the reason names the file and what is wrong with it.
func refusedHook(ev *events.Event, h *settings.Handler, emit func(*protocol.Frame)) events.Interpretation {
	ref := h.Ref()
	reason := "hookd did not run this managed hook: " + h.Refused
	in := events.Interpretation{Hook: ref, Outcome: protocol.OutcomeError, Error: reason}
	if ev.CanBlock {
		in.Outcome, in.Via = protocol.OutcomeBlocked, events.ViaUntrusted
		switch ev.Name {
		case "PreToolUse", "PermissionRequest", "PreModelSwitch":
			in.Permission, in.PermissionReason = string(rules.DecisionDeny), reason
		default:
			in.Block, in.BlockReason, in.BlockVia = true, reason, events.ViaUntrusted
		}
	}
	for _, f := range in.Frames() {
		f := f
		emit(&f)
	}
	return in
}
