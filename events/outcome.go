package events

import (
	"encoding/json"

	"github.com/hookd/hookd/protocol"
)

// Outcome is the merged answer to one event as hookd decided it, before it is written
// for anyone: what the hooks decided (Merge), what permission rules made of it, what
// earlier async hooks contributed. It becomes a wire answer exactly once, with Render, so
// nothing can change a decision after the bytes that carry it were produced.
type Outcome struct {
	// Event is the catalogue name of the event.
	Event string
	// Permission is the final permission decision after permission rules (tool events
	// only); HookPermission is what the hooks alone decided; RuleAnswer the permission
	// rules' own answer (reported, and rendered only where no hook decided and the
	// harness does not enforce the rules itself).
	Permission, HookPermission, RuleAnswer *protocol.Permission

	UpdatedInput        json.RawMessage
	PreventContinuation bool
	StopReason          string
	// Block is set when a hook blocked the action this event guards.
	Block *protocol.Block
	// AdditionalContext are the contexts for the model in configuration order;
	// PlainContext marks, index for index, those that came from plain stdout (nil when
	// none did; see protocol.Result.PlainContext).
	AdditionalContext []string
	PlainContext      []bool
	SystemMessages    []string
	// CompactInstructions is PreCompact's plain-text output, joined (rendered as stdout).
	CompactInstructions string
	// Specific holds the other merged event-specific fields, by their Claude Code name.
	Specific map[string]json.RawMessage

	// Hooks are the outcomes of the hooks that ran, then of those reported as not run or
	// started in the background.
	Hooks    []protocol.HookOutcome
	Warnings []string
}

// AddContext puts texts before the outcome's own contexts (as JSON context: the texts of
// finished async hooks, which belong to an earlier moment).
func (o *Outcome) AddContext(texts []string) {
	if len(texts) == 0 {
		return
	}
	o.AdditionalContext = append(append([]string(nil), texts...), o.AdditionalContext...)
	if o.PlainContext != nil { // kept index for index with AdditionalContext
		o.PlainContext = append(make([]bool, len(texts)), o.PlainContext...)
	}
}

// Render writes the outcome as a Claude Code hook answer: the wire Result with the
// outcome's fields and Output, Stdout, Stderr and ExitCode — what hookc prints (see
// finalize for how each event family is written). It does not change o; its bytes depend
// only on ev and o.
func Render(ev *Event, o *Outcome) *protocol.Result {
	res := &protocol.Result{
		Event: o.Event, Permission: o.Permission, HookPermission: o.HookPermission, RuleAnswer: o.RuleAnswer,
		UpdatedInput: o.UpdatedInput, PreventContinuation: o.PreventContinuation, StopReason: o.StopReason,
		Block: o.Block, AdditionalContext: o.AdditionalContext, PlainContext: o.PlainContext,
		SystemMessages: o.SystemMessages, CompactInstructions: o.CompactInstructions, Specific: o.Specific,
		Hooks: o.Hooks, Warnings: o.Warnings,
	}
	finalize(ev, res)
	return res
}
