package harness

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/jsonobj"
	"github.com/hookd/hookd/protocol"
)

// Translate reads the output of a hook written for the harness (configured under its own
// event name native) as the equivalent Claude Code hook output, so that events.Interpret
// and one merge decide for every hook of an event. toolName and toolInput are the tool
// call as the harness sent it (Gemini's tool_input rewrites are merged over it).
//
// Codex hooks already speak Claude Code's format (same fields, exit 2 blocks): unchanged.
//
// Gemini CLI (hookRunner/HookOutput in its bundle): JSON is read from stdout, else from
// stderr, and may be a JSON string holding the object; decision allow|deny|block|ask;
// reason; continue/stopReason; systemMessage; hookSpecificOutput.additionalContext and,
// on BeforeTool, tool_input (merged over the call's input). Plain text: exit 0 is a
// message, exit 1 a warning, any other exit a deny with the text as reason. One
// difference on purpose: Gemini turns plain text on exit 0 into decision "allow"; hookd
// keeps it a message with no decision, so a chatty hook never counts as an approval.
func (a *Adapter) Translate(native, toolName string, toolInput json.RawMessage, out events.RawOutput) events.RawOutput {
	if a.Name != protocol.HarnessGemini || out.StartErr != nil || out.TimedOut || out.Cancelled || out.Kind == events.HTTP {
		return out
	}
	text := bytes.TrimSpace(out.Stdout)
	if len(text) == 0 {
		text = bytes.TrimSpace(out.Stderr)
	}
	g, isJSON := parseGeminiOutput(text)
	res := out
	res.Stdout, res.Stderr = nil, nil
	if !isJSON {
		switch {
		case len(text) == 0:
			if out.ExitCode >= 2 {
				res.ExitCode, res.Stderr = 2, []byte("hook exited with status "+itoa(out.ExitCode))
			}
		case out.ExitCode == 0:
			res.Stdout = jsonObject("systemMessage", string(text))
		case out.ExitCode == 1:
			res.Stderr = text
		default:
			res.ExitCode, res.Stderr = 2, text
		}
		return res
	}
	canon, _, _ := a.Event(native)
	var o, h jsonobj.Object
	for _, k := range []string{"continue", "stopReason", "systemMessage", "suppressOutput"} {
		if v := g.Get(k); v != nil {
			o = o.SetRaw(k, v)
		}
	}
	var decision, reason string
	_ = json.Unmarshal(g.Get("decision"), &decision)
	_ = json.Unmarshal(g.Get("reason"), &reason)
	if decision == "" && out.ExitCode >= 2 { // JSON without a decision on a failing exit
		decision = "deny"
		if reason == "" {
			reason = strings.TrimSpace(string(out.Stderr))
		}
	}
	var gh jsonobj.Object
	if raw := g.Get("hookSpecificOutput"); raw != nil {
		gh, _ = jsonobj.Parse(raw) // not an object: nothing in it counts
	}
	if native == "BeforeTool" {
		switch decision {
		case "allow", "deny", "ask":
			h = h.Set("permissionDecision", decision)
		case "block":
			h = h.Set("permissionDecision", "deny")
		}
		if h.Has("permissionDecision") && reason != "" {
			h = h.Set("permissionDecisionReason", reason)
		}
		if ti := gh.Get("tool_input"); ti != nil {
			merged := mergeShallow(toolInput, ti)
			if t, ok := a.Tools[toolName]; ok && len(t.Fields) > 0 {
				merged, _ = renameMembers(merged, t.Fields)
			}
			h = h.SetRaw("updatedInput", merged)
		}
	} else if decision == "deny" || decision == "block" {
		o = o.Set("decision", "block")
		if reason == "" {
			reason = "blocked by hook"
		}
		o = o.Set("reason", reason)
	}
	if ac := gh.Get("additionalContext"); ac != nil {
		h = h.SetRaw("additionalContext", ac)
	}
	if len(h) > 0 && canon != nil {
		full := jsonobj.Object{}.Set("hookEventName", canon.Name).Merge(h)
		o = o.SetRaw("hookSpecificOutput", full.JSON())
	}
	res.ExitCode = 0
	if out.ExitCode == 1 {
		res.ExitCode = 1 // a warning; Claude Code shows stderr for it too
		res.Stderr = bytes.TrimSpace(out.Stderr)
	}
	res.Stdout = o.JSON()
	return res
}

// parseGeminiOutput parses text as Gemini's runner does: a JSON object, or a JSON string
// holding one.
func parseGeminiOutput(text []byte) (jsonobj.Object, bool) {
	if len(text) == 0 {
		return nil, false
	}
	if text[0] == '"' {
		var s string
		if json.Unmarshal(text, &s) != nil {
			return nil, false
		}
		text = []byte(s)
	}
	if !json.Valid(text) {
		return nil, false
	}
	o, err := jsonobj.Parse(text)
	if err != nil {
		return nil, false
	}
	return o, true
}

// mergeShallow is {...base, ...over} for two JSON objects (Gemini's tool_input merge).
func mergeShallow(base, over json.RawMessage) json.RawMessage {
	b, err := jsonobj.Parse(base)
	if err != nil {
		return over
	}
	o, err := jsonobj.Parse(over)
	if err != nil {
		return base
	}
	return b.Merge(o).JSON()
}

func jsonObject(k, v string) []byte {
	return jsonobj.Object{}.Set(k, v).JSON()
}

func itoa(i int) string { return string(mustJSON(i)) }
