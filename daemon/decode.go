package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/rules"
)

// header is the part of an event payload the engine reads. The payload itself is passed
// to hooks untouched.
type header struct {
	Event      string
	SessionID  string
	Cwd        string
	ToolName   string
	ToolInput  json.RawMessage
	ToolUseID  string
	MatchValue string
	// AgentID and AgentType name the subagent the event belongs to ("" on the main
	// thread): a subagent's frontmatter hooks see only its events, a skill's only the
	// main thread's.
	AgentID, AgentType string
}

// parseHeader reads the fields the engine needs from a payload.
func parseHeader(payload []byte) (header, *events.Event, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(payload, &top); err != nil {
		return header{}, nil, &protocol.Error{Code: protocol.CodeBadRequest, Field: "event", Message: "event payload is not a JSON object: " + err.Error()}
	}
	str := func(k string) (string, error) {
		raw, ok := top[k]
		if !ok || string(raw) == "null" {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", &protocol.Error{Code: protocol.CodeBadRequest, Field: "event." + k, Message: "event field " + strconv.Quote(k) + " must be a string"}
		}
		return s, nil
	}
	var h header
	var err error
	if h.Event, err = str("hook_event_name"); err != nil {
		return h, nil, err
	}
	if h.Event == "" {
		return h, nil, &protocol.Error{Code: protocol.CodeBadRequest, Field: "event.hook_event_name", Message: "event payload has no hook_event_name"}
	}
	ev, ok := events.Lookup(h.Event)
	if !ok {
		return h, nil, &protocol.Error{Code: protocol.CodeUnknownEvent, Event: h.Event, Field: "event.hook_event_name",
			Message: fmt.Sprintf("unknown hook event %q (hookd knows %d events: see `hookd events`)", h.Event, len(events.Names()))}
	}
	for _, f := range []struct {
		k string
		p *string
	}{{"session_id", &h.SessionID}, {"cwd", &h.Cwd}, {"tool_name", &h.ToolName}, {"tool_use_id", &h.ToolUseID}, {"agent_id", &h.AgentID}, {"agent_type", &h.AgentType}} {
		if *f.p, err = str(f.k); err != nil {
			return h, ev, err
		}
	}
	h.ToolInput = top["tool_input"]
	if ev.MatcherField != "" {
		if h.MatchValue, err = str(ev.MatcherField); err != nil {
			return h, ev, err
		}
		if ev.MatchBasename {
			h.MatchValue = filepath.Base(h.MatchValue)
		}
		if ev.ModelMatch {
			h.MatchValue = events.ModelMatchValue(h.MatchValue)
		}
	}
	return h, ev, nil
}

// decode identifies the harness, puts the payload into Claude Code's shape, reads its
// header and the tool call. An HTTP event first gets its session's stored environment
// (httpevent.go). It is the one stage that can refuse an event.
func (e *engine) decode(x *event) error {
	hr, err := e.harnessOf(x.req)
	if err == nil {
		x.hr = hr
		if hr.local {
			x.h, x.ev, err = localHeader(hr)
		} else {
			x.h, x.ev, err = parseHeader(hr.canon)
		}
	}
	if err != nil {
		e.counters.errors.Add(1)
		return err
	}
	e.countEvent(x.ev.Name)
	if x.http {
		e.withStoredEnv(x)
	}
	x.env = callerEnv(x.req)
	if x.ev.ToolEvent {
		c := rules.Call{Tool: x.h.ToolName, Cwd: x.h.Cwd, Home: e.home}
		if len(x.h.ToolInput) > 0 {
			_ = json.Unmarshal(x.h.ToolInput, &c.Input) // a non-object input simply matches no path/command rule
		}
		x.call, x.ruleCall = &c, &c
	}
	return nil
}

// locate finds the event's project and its snapshot, and starts the decision record.
//
// Claude Code sent the event when the harness is Claude Code and the request comes from a
// process Claude Code started (CLAUDECODE=1 in the hook's environment, spec §6: hookc, or
// hookc's in-process fallback). Claude Code then runs the hooks of its managed files
// itself; hookd must not run them a second time. Only the request's own environment
// counts, never the daemon's (a daemon started from inside a Claude Code session inherits
// CLAUDECODE=1). A raw client with a Claude Code payload, Codex and Gemini CLI have no one
// else running those hooks: hookd runs them.
func (e *engine) locate(x *event) error {
	x.project = e.projectOf(x)
	e.store.Notice(x.ctx, x.project, x.hr.ad.Name, x.ev.Name)
	x.snap = e.store.Snapshot(x.project)
	x.d = &decision{ID: audit.NewDecisionID(), Time: time.Now(), Event: x.ev.Name, Header: x.h, Payload: x.req.Event,
		ProjectDir: x.project, Caller: x.caller, Snapshot: x.snap,
		Harness: x.hr.ad.Name, HarnessVersion: x.hr.version,
		FromClaudeCode: x.hr.ad.Native() && runner.LookupEnv(x.req.Env, "CLAUDECODE") == "1"}
	if x.hr.native != x.ev.Name {
		x.d.NativeEvent = x.hr.native
	}
	x.mode = e.cfg.Mode
	if x.mode == "" {
		x.mode = "parallel"
	}
	return nil
}

// projectOf is the event's project root: the request's, else CLAUDE_PROJECT_DIR from its
// environment, else the one around its cwd (settings.ProjectDirForOwner).
func (e *engine) projectOf(x *event) string {
	project := x.req.ProjectDir
	if project == "" {
		project = runner.LookupEnv(x.env, "CLAUDE_PROJECT_DIR")
	}
	if project == "" && x.h.Cwd != "" {
		var stopped string
		project, stopped = settings.ProjectDirForOwner(x.h.Cwd, e.home, os.Geteuid())
		if stopped != "" {
			e.log.Warn("project discovery stopped at a directory owned by another user; its settings (and those above it) are not loaded",
				zap.String("directory", stopped), zap.String("cwd", x.h.Cwd), zap.String("project", project))
		}
	}
	if project != "" {
		project = filepath.Clean(project)
	}
	return project
}
