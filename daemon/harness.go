package daemon

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

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
		hr.version = e.transcriptVersion(name, req.Event)
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

// transcriptVersion reads the harness's version from the session's transcript, once per
// transcript, since neither Codex nor Claude Code passes one in the payload or the hook's
// environment: Codex's first line is session_meta with payload.cli_version; Claude Code's
// message lines carry "version". Only the first 64 KiB are read, and only a found version
// is cached (at SessionStart the transcript may not exist yet).
func (e *engine) transcriptVersion(harnessName string, payload []byte) string {
	var p struct {
		Transcript string `json:"transcript_path"`
	}
	if json.Unmarshal(payload, &p) != nil || p.Transcript == "" || !filepath.IsAbs(p.Transcript) {
		return ""
	}
	key := harnessName + "\x00" + p.Transcript
	if v, ok := e.versions.get(key); ok {
		return v
	}
	f, err := os.Open(p.Transcript)
	if err != nil {
		return ""
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: 64 << 10}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 16<<10), 64<<10)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Version string `json:"version"`
			Payload struct {
				CLIVersion string `json:"cli_version"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		v := line.Version
		if harnessName == protocol.HarnessCodex {
			v = line.Payload.CLIVersion
		}
		if v != "" && len(v) < 64 {
			e.versions.put(key, v)
			return v
		}
	}
	if lr.N == 0 { // the whole window was read without a version: later reads won't find one
		e.versions.put(key, "")
	}
	return ""
}

// versionCache maps transcript paths to versions, bounded: it is emptied when full.
type versionCache struct {
	mu sync.Mutex
	m  map[string]string
}

const versionCacheMax = 4096

func (c *versionCache) get(k string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *versionCache) put(k, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= versionCacheMax {
		c.m = make(map[string]string)
	}
	c.m[k] = v
}
