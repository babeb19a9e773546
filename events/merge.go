package events

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/hookd/hookd/protocol"
)

// permissionRank orders permission decisions for the merge: deny > ask > defer > allow.
//
// The spec (§3.5) says deny > defer > ask > allow, and Claude Code ranks them so, but it
// keeps every hook's ask beside the winning defer: when it cannot honour the defer (an
// interactive session, "defer is print-mode only"; a batch of several tool calls, "defer
// is solo-only"; a served call) it ignores the defer and the ask decides — the 2.1.321
// fix "a PreToolUse hook's ask being lost when another hook's defer finished first and
// could not be honored". Through hookd Claude Code sees one hook, so a merged defer would
// hide the ask: when the defer is ignored nothing asks, and a permission rule or mode may
// let the call run. hookd cannot know whether the defer will be honoured (the payload
// says neither the session kind nor the batch size), so it fails closed: an ask beats a
// defer. The daemon restores the spec's order with HonourDefer when the hook environment
// says the session is unattended (-p, SDK), where Claude Code honours the defer.
var permissionRank = map[string]int{"allow": 1, "defer": 2, "ask": 3, "deny": 4}

// Merge combines the interpretations of hooks that ran in parallel for one event into one
// Outcome (the parallel rule). parts must be in configuration order (managed, user,
// project, local, extra files; within a file, group then hook order), never in finish
// order: every "first" below means first in configuration order, so the answer does not
// depend on which hook finished first. The Outcome is not yet an answer: Render makes it
// one, once, after permission rules and other contributions are in.
func Merge(ev *Event, parts []Interpretation) *Outcome {
	res := &Outcome{Event: ev.Name}
	for i := range parts {
		p := &parts[i]
		res.Hooks = append(res.Hooks, protocol.HookOutcome{Hook: p.Hook, Outcome: p.Outcome,
			ExitCode: p.ExitCode, DurationMS: durationMS(p.Duration), Error: p.Error, Via: p.Via})
		for _, w := range p.Warnings {
			res.Warnings = append(res.Warnings, hookName(p.Hook)+": "+w)
		}
		if p.AdditionalContext != "" {
			if p.PlainContext && res.PlainContext == nil {
				res.PlainContext = make([]bool, len(res.AdditionalContext))
			}
			res.AdditionalContext = append(res.AdditionalContext, p.AdditionalContext)
			if res.PlainContext != nil {
				res.PlainContext = append(res.PlainContext, p.PlainContext)
			}
		}
		if p.SystemMessage != "" {
			res.SystemMessages = append(res.SystemMessages, p.SystemMessage)
		}
		if p.CompactInstructions != "" {
			// Claude Code joins the hooks' pieces with a blank line, in its hook order
			// (configuration order: it collects results in the order it matched them).
			if res.CompactInstructions != "" {
				res.CompactInstructions += "\n\n"
			}
			res.CompactInstructions += p.CompactInstructions
		}
		if p.Continue != nil && !*p.Continue {
			// continue:false wins over every event decision (spec §3.5, §4.3).
			res.PreventContinuation = true
			if res.StopReason == "" {
				res.StopReason = p.StopReason
			}
		}
	}
	mergePermission(res, parts)
	mergeUpdatedInput(res, parts)
	mergeBlock(res, parts)
	mergeSpecific(res, parts)
	return res
}

// Batch is the interpretations of hooks that ran together, in configuration order: in
// parallel, or as a sequential pipeline in which each hook saw the previous hook's
// updatedInput.
type Batch struct {
	Parts      []Interpretation
	Sequential bool
}

// MergeBatches merges each batch by its own rule, then the batches by the parallel rule,
// in batch order. The rules differ in one place, the rewrite: a sequential batch's is its
// last hook's (each rewrite was already the next hook's input; the parallel rule — first
// in configuration order — would undo the later hooks' work), and that rewrite then
// competes with the other batches' as one hook's would: the first wins and a different
// one is reported. So a batch that ran apart never changes which rewrite of another
// batch wins (issue 24, defect 1).
func MergeBatches(ev *Event, batches []Batch) *Outcome {
	var parts []Interpretation
	for _, b := range batches {
		if b.Sequential {
			parts = append(parts, pipelineParts(b.Parts)...)
		} else {
			parts = append(parts, b.Parts...)
		}
	}
	return Merge(ev, parts)
}

// pipelineParts is a sequential batch as the parallel rule must see it: only the last
// rewrite of a hook that did not deny is kept.
func pipelineParts(parts []Interpretation) []Interpretation {
	last := -1
	for i, p := range parts {
		if len(p.UpdatedInput) > 0 && p.Permission != "deny" {
			last = i
		}
	}
	if last < 0 {
		return parts
	}
	out := append([]Interpretation(nil), parts...)
	for i := range out {
		if i != last {
			out[i].UpdatedInput = nil
		}
	}
	return out
}

// mergePermission: the most restrictive decision wins; its reason is the reasons of every
// hook that gave that decision, in configuration order.
func mergePermission(res *Outcome, parts []Interpretation) {
	best, first := "", -1
	for i := range parts {
		if d := parts[i].Permission; permissionRank[d] > permissionRank[best] {
			best, first = d, i
		}
	}
	if first < 0 {
		return
	}
	var reasons []string
	for i := range parts {
		if parts[i].Permission == best && parts[i].PermissionReason != "" {
			reasons = append(reasons, parts[i].PermissionReason)
		}
	}
	ref := parts[first].Hook
	res.HookPermission = &protocol.Permission{Decision: best, Reason: joinTexts(reasons), Source: "hook", Hook: &ref,
		Via: parts[first].Via}
	perm := *res.HookPermission
	res.Permission = &perm
}

// mergeUpdatedInput makes the rewrite deterministic. Claude Code applies the updatedInput
// of whichever hook finishes last (spec §3.5; issue #15897 — a later hook without one even
// erases it). hookd takes the first rewrite in configuration order, so the most
// authoritative source (managed before user before project before local) wins, and reports
// every different rewrite it ignores. Only hooks that did not deny or defer may rewrite
// (Claude Code applies no rewrite from either), and a winning deny leaves no rewrite.
func mergeUpdatedInput(res *Outcome, parts []Interpretation) {
	if res.HookPermission != nil && res.HookPermission.Decision == "deny" {
		return
	}
	win := -1
	for i := range parts {
		p := &parts[i]
		if len(p.UpdatedInput) == 0 || p.Permission == "deny" || p.Permission == "defer" {
			continue
		}
		if win < 0 {
			win = i
			res.UpdatedInput = p.UpdatedInput
			continue
		}
		if !sameJSON(p.UpdatedInput, res.UpdatedInput) {
			res.Warnings = append(res.Warnings, "conflicting updatedInput from "+hookName(p.Hook)+
				" ignored: "+hookName(parts[win].Hook)+" comes first in configuration order")
		}
	}
}

// mergeBlock joins every blocking reason in configuration order. Via is "exit2" (or
// "exit") only when all blocks came that way: the renderer needs to know whether JSON
// alone can say it.
func mergeBlock(res *Outcome, parts []Interpretation) {
	var reasons []string
	via, first := "", -1
	for i := range parts {
		p := &parts[i]
		if !p.Block {
			continue
		}
		if first < 0 {
			first, via = i, p.BlockVia
		} else if p.BlockVia != via {
			via = ViaJSON
		}
		if p.BlockReason != "" {
			reasons = append(reasons, p.BlockReason)
		}
	}
	if first < 0 {
		return
	}
	ref := parts[first].Hook
	res.Block = &protocol.Block{Reason: joinTexts(reasons), Hook: &ref, Via: via}
}

// mergeSpecific: for each event-specific field the first value in configuration order
// wins and a different later value is reported, except watchPaths (union, first-seen
// order: every hook's files get watched) and classifierContext (concatenated; the 2,000
// character budget is per tool call across all hooks, spec §4.7). WorktreeCreate's path
// goes here as "worktreePath".
func mergeSpecific(res *Outcome, parts []Interpretation) {
	spec := map[string]json.RawMessage{}
	from := map[string]int{}
	var watch []string
	seenWatch := map[string]bool{}
	var classifier []string
	for i := range parts {
		p := &parts[i]
		if p.WorktreePath != "" {
			raw, _ := json.Marshal(p.WorktreePath)
			setFirst(res, spec, from, parts, i, "worktreePath", raw)
		}
		for _, k := range sortedKeys(p.Specific) {
			raw := p.Specific[k]
			switch k {
			case "watchPaths":
				var ps []string
				_ = json.Unmarshal(raw, &ps)
				for _, s := range ps {
					if !seenWatch[s] {
						seenWatch[s] = true
						watch = append(watch, s)
					}
				}
			case "classifierContext":
				var s string
				if json.Unmarshal(raw, &s) == nil && s != "" {
					classifier = append(classifier, s)
				}
			default:
				setFirst(res, spec, from, parts, i, k, raw)
			}
		}
	}
	if watch != nil {
		spec["watchPaths"], _ = json.Marshal(watch)
	}
	if classifier != nil {
		spec["classifierContext"], _ = json.Marshal(capRunes(strings.Join(classifier, "\n"), classifierContextMax))
	}
	if len(spec) > 0 {
		res.Specific = spec
	}
}

func setFirst(res *Outcome, spec map[string]json.RawMessage, from map[string]int, parts []Interpretation, i int, k string, raw json.RawMessage) {
	prev, ok := spec[k]
	if !ok {
		spec[k], from[k] = raw, i
		return
	}
	if !sameJSON(prev, raw) {
		res.Warnings = append(res.Warnings, "conflicting "+k+" from "+hookName(parts[i].Hook)+
			" ignored: "+hookName(parts[from[k]].Hook)+" comes first in configuration order")
	}
}

// sameJSON compares two JSON values by meaning (key order and spacing aside; numbers
// compared as written).
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// joinTexts joins texts with "\n". A text's own trailing newlines are dropped before the
// separator, but the last text stays verbatim, so a single reason reaches Claude byte
// for byte as Claude Code would have quoted it.
func joinTexts(ts []string) string {
	switch len(ts) {
	case 0:
		return ""
	case 1:
		return ts[0]
	}
	var b strings.Builder
	for i, t := range ts {
		if i < len(ts)-1 {
			b.WriteString(strings.TrimRight(t, "\r\n"))
			b.WriteByte('\n')
		} else {
			b.WriteString(t)
		}
	}
	return b.String()
}

func hookName(r protocol.HookRef) string {
	if r.ID != "" {
		return r.ID
	}
	if r.Command != "" {
		return r.Command
	}
	return "hook"
}

// HonourDefer re-ranks a PreToolUse merge the spec's way (deny > defer > ask > allow)
// for a caller whose session Claude Code says is unattended — the hook environment's
// CLAUDE_CODE_SESSION_ATTENDED=0, which Claude Code 2.1.330 sets in -p and SDK sessions,
// where it honours a defer (observed: a -p batch of two calls with one hook asking and
// one deferring ends "tool_deferred", e2e ask-beside-defer-print). There the defer must
// reach Claude Code. It returns whether it changed res.
func HonourDefer(ev *Event, res *Outcome, parts []Interpretation) bool {
	if ev.Name != "PreToolUse" || res.HookPermission == nil || res.HookPermission.Decision != "ask" {
		return false
	}
	first := -1
	for i := range parts {
		if parts[i].Permission == "defer" {
			first = i
			break
		}
	}
	if first < 0 {
		return false
	}
	var reasons []string
	for i := range parts {
		if parts[i].Permission == "defer" && parts[i].PermissionReason != "" {
			reasons = append(reasons, parts[i].PermissionReason)
		}
	}
	ref := parts[first].Hook
	res.HookPermission = &protocol.Permission{Decision: "defer", Reason: joinTexts(reasons), Source: "hook", Hook: &ref, Via: parts[first].Via}
	perm := *res.HookPermission
	res.Permission = &perm
	return true
}
