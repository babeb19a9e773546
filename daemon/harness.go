package daemon

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/harness"
	"github.com/hookd/hookd/protocol"
)

// harnessReq is what the engine knows about the agent that sent one event.
type harnessReq struct {
	ad      *harness.Adapter
	version string
	// native is the harness's event name, nativeTool/nativeInput the tool call as sent.
	native      string
	nativeTool  string
	nativeInput json.RawMessage
	// local: a harness-only event (Codex Interrupt) with no catalogue counterpart.
	local    bool
	localEv  *events.Event
	canon    []byte // the payload in Claude Code's shape
	original []byte // the payload as the harness sent it
}

// harnessOf identifies the harness (Request.Harness, else harness.Detect) and
// puts the payload into Claude Code's shape.
func (e *engine) harnessOf(req *protocol.Request) (*harnessReq, error) {
	name := req.Harness
	if name == "" {
		name = harness.Detect(req.Event)
	}
	if !harness.Valid(name) {
		return nil, &protocol.Error{Code: protocol.CodeBadRequest, Field: "harness",
			Message: fmt.Sprintf("unknown harness %q (hookd knows %s)", name, strings.Join(harness.Names(), ", "))}
	}
	hr := &harnessReq{ad: harness.For(name), version: req.HarnessVersion, canon: req.Event, original: req.Event}
	if hr.version == "" && name != protocol.HarnessGemini { // Gemini's transcript names no version
		hr.version = e.versions.Version(name, req.Event)
	}
	if hr.ad.Native() {
		return hr, nil
	}
	var top struct {
		Event     string          `json:"hook_event_name"`
		Tool      string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	if err := json.Unmarshal(req.Event, &top); err != nil {
		return hr, nil // parseHeader reports it
	}
	hr.native, hr.nativeTool, hr.nativeInput = top.Event, top.Tool, top.ToolInput
	ev, local, ok := hr.ad.Event(top.Event)
	if !ok {
		return nil, &protocol.Error{Code: protocol.CodeUnknownEvent, Event: top.Event, Field: "event.hook_event_name",
			Message: fmt.Sprintf("unknown %s hook event %q", name, top.Event)}
	}
	if local {
		hr.local, hr.localEv = true, ev
		return hr, nil
	}
	canon, err := hr.ad.Canonical(req.Event)
	if err != nil {
		return nil, &protocol.Error{Code: protocol.CodeBadRequest, Field: "event", Message: "event payload: " + err.Error()}
	}
	hr.canon = canon
	return hr, nil
}

// localHeader reads the header of a harness-only event (no catalogue lookup).
func localHeader(hr *harnessReq) (header, *events.Event, error) {
	var top struct {
		SessionID string `json:"session_id"`
		Cwd       string `json:"cwd"`
	}
	if err := json.Unmarshal(hr.original, &top); err != nil {
		return header{}, nil, &protocol.Error{Code: protocol.CodeBadRequest, Field: "event", Message: "event payload is not a JSON object: " + err.Error()}
	}
	return header{Event: hr.native, SessionID: top.SessionID, Cwd: top.Cwd}, hr.localEv, nil
}
