package protocol

import (
	"encoding/json"
	"io"

	"github.com/hookd/hookd/protocol/lite"
)

// Render writes r as a Claude Code command hook would answer: Output (a JSON object) or
// Stdout (plain text) on stdout, Stderr on stderr, and returns the exit code to use. It is
// lite.Result.Render, the one hookc links, so the daemon-side clients and hookc render alike.
func (r *Result) Render(stdout, stderr io.Writer) int {
	lr := lite.Result{Output: r.Output, Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode}
	return lr.Render(stdout, stderr)
}

// FailClosed is the answer a client gives when neither the daemon nor an in-process
// engine could evaluate the event: it blocks. Exit code 2 is the one signal every Claude
// Code event understands — it blocks the events that can block, and on the others it
// only shows the reason to the user. PermissionRequest ignores exit 2 (spec §4.4), so it
// gets an explicit JSON deny.
func FailClosed(event, reason string) *Result {
	r := &Result{Event: event, ExitCode: 2, Stderr: reason + "\n", Block: &Block{Reason: reason}}
	switch event {
	case "PreToolUse", "PermissionRequest":
		// A permission event's answer carries its decision; without it a consumer of the
		// result (and the decision log) sees "permission": null — no decision at all.
		r.Permission = &Permission{Decision: "deny", Reason: reason, Source: "hookd"}
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
