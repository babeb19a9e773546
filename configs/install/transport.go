package install

import (
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/jsonobj"
)

// Transports: how the installed forwarders reach hookd.
const (
	// TransportHookc: command hooks running hookc, which forwards over the Unix socket
	// (the default; hookc falls back to an in-process run when hookd is down).
	TransportHookc = "hookc"
	// TransportHTTP: Claude Code's own http hooks post the events of HTTPEvents to hookd's
	// loopback HTTP forwarder (docs/http-forwarder.md); the other events stay on hookc.
	TransportHTTP = "http"
)

// HTTPEvents are the events `--transport http` forwards with an http handler: those
// where everything hookd can answer has a JSON form Claude Code reads from an http
// response just as from a command hook's stdout, no per-event environment matters, and
// which come often enough for the saved exec to count. Every other event keeps a hookc
// forwarder, for a reason docs/http-forwarder.md lists per event: SessionStart and Setup
// allow no http handler (spec §3.4), UserPromptSubmit, UserPromptExpansion and PreCompact
// read plain stdout, TeammateIdle, TaskCompleted, Elicitation and ElicitationResult block
// only by exit 2 (as hookd answers them), CwdChanged and FileChanged carry a per-event
// CLAUDE_ENV_FILE, WorktreeCreate reads its path from stdout, PostToolUseFailure and
// SubagentStart show an exit-2 hook's stderr to Claude, which JSON cannot, and the rest
// (SessionEnd, ConfigChange, ...) fire once or rarely, so hookc's fallback is worth more
// there than the exec it costs.
var HTTPEvents = map[string]bool{
	"PreToolUse": true, "PermissionRequest": true, "PermissionDenied": true,
	"PostToolUse": true, "PostToolBatch": true, "Stop": true, "SubagentStop": true,
	"Notification": true, "MessageDisplay": true,
}

// inTurnEvents are the http events that fire only inside a turn, so after the turn's
// UserPromptSubmit: PreToolUse … Stop. Notification and MessageDisplay are not among them
// (Claude Code may show a notification or a message before the first prompt).
var inTurnEvents = map[string]bool{
	"PreToolUse": true, "PermissionRequest": true, "PermissionDenied": true,
	"PostToolUse": true, "PostToolBatch": true, "Stop": true, "SubagentStop": true,
}

// envSessionStart reports whether an http installation whose hooks are on the events of
// moved needs the SessionStart forwarder that only carries the session's environment
// (docs/http-forwarder.md, "The hooks' environment"). It does not when the same file
// forwards UserPromptSubmit through hookc and every event it sends over http fires only
// inside a turn: Claude Code waits for the turn's UserPromptSubmit forwarder, whose
// environment hookd stores, before any of those events, so the SessionStart exec would
// only store the same environment once more. The verdict is per settings file: the
// forwarders that file holds must suffice on their own, whatever the other scopes hold.
func envSessionStart(moved map[string]bool) bool {
	if moved["SessionStart"] || !moved["UserPromptSubmit"] {
		return true
	}
	for ev := range moved {
		if HTTPEvents[ev] && !inTurnEvents[ev] {
			return true
		}
	}
	return false
}

// warmStart reports whether hooks, installed with the hookc transport, have a command hook
// that hookd prepares ahead of the session's first event (Options.StartsWarm) while no
// SessionStart hook brings hookd the session's start: forwarders then adds the env-only
// SessionStart forwarder. Hooks run in the session's directory, the project's for the
// project and local scopes; for the user scope it is unknown ("").
func (o Options) warmStart(hooks hooksValue) bool {
	if o.StartsWarm == nil || o.HTTP != nil {
		return false
	}
	dir := ""
	if o.Scope == settings.KindProject || o.Scope == settings.KindLocal {
		dir = filepath.Dir(filepath.Dir(o.Settings))
	}
	found := false
	eachHandler(hooks, func(event string, _ *string, hi handlerInfo) {
		if !found && hi.Type == "command" && !hi.Async && o.StartsWarm(event, hi.Command, hi.Args, dir) {
			found = true
		}
	})
	return found
}

// envSessionStartSources are the SessionStart sources the environment-only forwarder
// fires on: every source that can begin a session id hookd has not seen. Not "compact":
// compaction keeps the session, its process and so its environment, which hookd already
// holds (in memory and in its state directory), so that exec would store it again.
const envSessionStartSources = "startup|resume|clear|fork"

// envCarrier names the hookc forwarder that brings an http installation's session
// environment to hookd, for install's summary.
func envCarrier(fwd jsonobj.Object) string {
	for _, m := range fwd {
		if m.Key == "SessionStart" {
			return "SessionStart"
		}
	}
	return "UserPromptSubmit, before any event that goes over http"
}

// httpHandler is the http forwarder handler of ev: a POST to hookd's endpoint carrying
// the token. On events that can block it fails closed ("onFailure": "block", Claude Code
// 2.1.295+; a Claude Code key, not one of hookd's): hookd unreachable, an error status or
// a timeout then blocks the action instead of letting it through. (Claude Code ignores
// the field on Stop and SubagentStop; there an unreachable hookd lets the turn end.)
func httpHandler(ep *HTTPEndpoint, ev *events.Event, timeout time.Duration) jsonobj.Object {
	h := jsonobj.Object{}.Set("type", "http").Set("url", ep.URL())
	headers := jsonobj.Object{}.Set("Authorization", "Bearer "+ep.Token)
	h = h.SetRaw("headers", headers.JSON())
	h = append(h, jsonobj.Member{Key: "timeout", Value: seconds(timeout)})
	if ev.CanBlock {
		h = append(h, jsonobj.Member{Key: "onFailure", Value: json.RawMessage(`"block"`)})
	}
	return h
}
