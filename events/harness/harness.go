// Package harness adapts agents other than Claude Code — Codex CLI and Gemini CLI — to
// hookd's event catalogue, which is Claude Code's.
//
// An Adapter is mostly data: which of the harness's event names is which catalogue event
// (Gemini "BeforeTool" is "PreToolUse"), which tool name is which Claude Code tool
// ("run_shell_command" is "Bash") and how their input fields are called, and which output
// fields the harness accepts per event. Code is where data cannot say it: Canonical
// rewrites a payload into Claude Code's shape so that permission rules, `if` filters and
// matchers written for Claude Code apply, and hooks configured in Claude Code's settings
// receive the payload they were written for; Render turns the merged answer into the
// harness's own output format and exit-code contract; Translate reads the output of a
// hook written for the harness (configured under the harness's own event names) as a
// Claude Code hook output, so one merge decides.
//
// An adapter never changes what the rules decide: it only renames.
//
// Facts come from the shipped binaries: Codex 0.171.0's embedded JSON Schemas
// (*.command.input/output, copied to testdata/codex-0.171.0 and used by the tests as an
// outside oracle) and Gemini CLI 0.61.0's bundle (hookRunner, hookAggregator, HookOutput).
package harness

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/jsonobj"
	"github.com/hookd/hookd/protocol"
)

// Tool maps one harness tool onto a Claude Code tool.
type Tool struct {
	// Name is the Claude Code tool name.
	Name string
	// Fields renames tool_input members: harness name → Claude Code name. Members not
	// listed keep their name.
	Fields map[string]string
}

// Adapter describes one harness.
type Adapter struct {
	// Name is the protocol.Harness* name.
	Name string
	// Events maps the harness's event names onto catalogue events. An event missing here
	// and in Local is unknown to hookd for this harness.
	Events map[string]string
	// Local are harness-only events hookd answers itself (Codex's Interrupt): no Claude
	// Code hooks exist for them, only the harness's own.
	Local map[string]*events.Event
	// Tools maps the harness's tool names onto Claude Code's.
	Tools map[string]Tool
	// Fields renames top-level payload members per catalogue event: harness → Claude Code.
	Fields map[string]map[string]string
	// Forward lists the harness events the installer forwards to hookd, in the order it
	// writes them. Events left out stay with the harness (Gemini's model events carry
	// whole LLM requests that hookd's merge cannot express).
	Forward []string
	// TimeoutUnit is the unit of a hook's "timeout" in the harness's settings.
	TimeoutUnit time.Duration
}

// For returns the adapter for a harness name; "" and unknown names are Claude Code.
func For(name string) *Adapter {
	switch name {
	case protocol.HarnessCodex:
		return codex
	case protocol.HarnessGemini:
		return gemini
	}
	return claudeCode
}

// Valid reports whether name is a harness hookd knows ("" counts: detect).
func Valid(name string) bool {
	switch name {
	case "", protocol.HarnessClaudeCode, protocol.HarnessCodex, protocol.HarnessGemini:
		return true
	}
	return false
}

// Names lists the harnesses hookd knows.
func Names() []string {
	return []string{protocol.HarnessClaudeCode, protocol.HarnessCodex, protocol.HarnessGemini}
}

// Native reports whether the adapter is Claude Code itself (nothing to translate).
func (a *Adapter) Native() bool { return a.Name == protocol.HarnessClaudeCode }

// Event returns the catalogue event for the harness's event name native, and whether it
// is a harness-only event (Local).
func (a *Adapter) Event(native string) (ev *events.Event, local bool, ok bool) {
	if a.Native() {
		ev, ok = events.Lookup(native)
		return ev, false, ok
	}
	if ev, ok := a.Local[native]; ok {
		return ev, true, true
	}
	name, ok := a.Events[native]
	if !ok {
		return nil, false, false
	}
	ev, ok = events.Lookup(name)
	return ev, false, ok
}

// NativeEvent is the inverse of Event: the harness's name for catalogue event name ("" if
// it has none).
func (a *Adapter) NativeEvent(name string) string {
	if a.Native() {
		return name
	}
	if _, ok := a.Local[name]; ok {
		return name
	}
	for n, c := range a.Events {
		if c == name {
			return n
		}
	}
	return ""
}

// ToolName maps a harness tool name onto Claude Code's (unchanged when unmapped).
func (a *Adapter) ToolName(native string) string {
	if t, ok := a.Tools[native]; ok {
		return t.Name
	}
	return native
}

// Canonical returns payload in Claude Code's shape: hook_event_name the catalogue name,
// tool_name and tool_input's members renamed, top-level members renamed. Everything else
// stays as the harness wrote it. For Claude Code and for payloads already in that shape
// (Codex) it returns payload itself, byte for byte.
func (a *Adapter) Canonical(payload []byte) ([]byte, error) {
	if a.Native() {
		return payload, nil
	}
	var top struct {
		Event     string          `json:"hook_event_name"`
		ToolName  *string         `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	if err := json.Unmarshal(payload, &top); err != nil {
		return nil, err
	}
	name, ok := a.Events[top.Event]
	if !ok {
		return payload, nil // a local event, or unknown: the caller reports it
	}
	out := payload
	set := func(k string, v json.RawMessage) error {
		var err error
		out, err = events.ReplaceTopLevel(out, k, v)
		return err
	}
	if name != top.Event {
		if err := set("hook_event_name", mustJSON(name)); err != nil {
			return nil, err
		}
	}
	if top.ToolName != nil {
		if t, ok := a.Tools[*top.ToolName]; ok {
			if err := set("tool_name", mustJSON(t.Name)); err != nil {
				return nil, err
			}
			if len(t.Fields) > 0 && len(top.ToolInput) > 0 {
				if in, changed := renameMembers(top.ToolInput, t.Fields); changed {
					if err := set("tool_input", in); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if renames := a.Fields[name]; len(renames) > 0 {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(out, &m)
		keys := make([]string, 0, len(renames))
		for k := range renames {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, from := range keys {
			v, ok := m[from]
			if !ok {
				continue
			}
			if _, exists := m[renames[from]]; exists {
				continue
			}
			if err := set(renames[from], v); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// NativeInput renames a Claude Code tool input back into the harness's member names, for
// rendering an updatedInput.
func (a *Adapter) NativeInput(nativeTool string, in json.RawMessage) json.RawMessage {
	t, ok := a.Tools[nativeTool]
	if !ok || len(t.Fields) == 0 {
		return in
	}
	back := make(map[string]string, len(t.Fields))
	for n, c := range t.Fields {
		back[c] = n
	}
	out, _ := renameMembers(in, back)
	return out
}

// renameMembers renames the members of a JSON object (order kept). A non-object is
// returned unchanged.
func renameMembers(obj json.RawMessage, renames map[string]string) (json.RawMessage, bool) {
	o, err := jsonobj.Parse(obj)
	if err != nil {
		return obj, false
	}
	changed := false
	for i := 0; i < len(o); i++ {
		n, ok := renames[o[i].Key]
		if !ok || n == o[i].Key {
			continue
		}
		// A member already called n is one the harness does not act on (it reads the
		// member being renamed): drop it, so rules judge the value the tool will use.
		for j := 0; j < len(o); j++ {
			if j != i && o[j].Key == n {
				o = append(o[:j], o[j+1:]...)
				if j < i {
					i--
				}
				j--
			}
		}
		o[i].Key = n
		changed = true
	}
	if !changed {
		return obj, false
	}
	return o.JSON(), true
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func joinLines(ts []string) string { return strings.Join(ts, "\n") }
