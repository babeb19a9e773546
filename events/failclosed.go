package events

import (
	"encoding/json"

	"github.com/hookd/hookd/protocol"
)

// FailClosed is the answer given when the event could not be evaluated — no daemon and
// no in-process engine (`hookd run`), a cut-short evaluation, a decision that could not
// be recorded: it blocks. Exit code 2 is the one signal every Claude
// Code event understands — it blocks the events that can block, and on the others it
// only shows the reason to the user. PermissionRequest ignores exit 2 (spec §4.4), so it
// gets an explicit JSON deny.
func FailClosed(event, reason string) *protocol.Result {
	r := &protocol.Result{Event: event, ExitCode: 2, Stderr: reason + "\n", Block: &protocol.Block{Reason: reason}}
	switch event {
	case "PreToolUse", "PermissionRequest", SkillShell:
		// A permission event's answer carries its decision; without it a consumer of the
		// result (and the decision log) sees "permission": null — no decision at all.
		r.Permission = &protocol.Permission{Decision: "deny", Reason: reason, Source: "hookd"}
	}
	if event == "PermissionRequest" {
		out := map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PermissionRequest",
			"decision":      map[string]any{"behavior": "deny", "message": reason},
		}}
		r.Output, _ = json.Marshal(out)
		r.ExitCode = 0
		r.Stderr = ""
	}
	return r
}
