package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// hookJSON is one hook's stdout JSON object after validation: the top-level members as
// raw JSON, and hookSpecificOutput's members (nil when absent).
type hookJSON struct {
	top map[string]json.RawMessage
	hso map[string]json.RawMessage
	// shape is hookSpecificOutput.hookEventName: the event's own name, or on
	// PreSkillShellCommand also "PreToolUse" or "PermissionRequest" (skillShellShapes).
	shape string
}

// check is a type check for one output field; it returns "" when raw is acceptable, else
// the complaint in Claude Code's message shape ("expected boolean, received string").
type check func(raw json.RawMessage) string

// Universal top-level fields (spec §4.3). They are type-checked on every event, also where
// the event discards them afterwards: Claude Code validates the whole object against one
// schema first and only then picks what the event acts on.
var topChecks = []struct {
	name string
	c    check
}{
	{"continue", isBool},
	{"suppressOutput", isBool},
	{"stopReason", isString},
	{"decision", oneOf("approve", "block")},
	{"reason", isString},
	{"systemMessage", isString},
	{"terminalSequence", isString},
	{"async", isBool},
	{"asyncTimeout", isNumber},
}

// hsoField is a hookSpecificOutput member: its type check and the catalogue Field that
// must be honoured for the event's schema to contain it. Members outside the event's
// schema are unknown keys, ignored without a type check (an unknown key is not an error
// for Claude Code 2.1.330: probe pre-n2-unknown-hso-field).
type hsoField struct {
	name   string
	honour Field
	only   string // event name when the member belongs to a single event
	c      check
}

var hsoFields = []hsoField{
	{"additionalContext", FAdditionalContext, "", isString},
	{"permissionDecision", FPermissionDecision, "PreToolUse", oneOf("allow", "deny", "ask", "defer")},
	{"permissionDecisionReason", FPermissionDecision, "PreToolUse", isString},
	{"updatedInput", FUpdatedInput, "PreToolUse", isObject},
	// PreModelSwitch: PreToolUse's contract without defer (the 2.1.330 schema:
	// permissionDecision: "allow" | "deny" | "ask").
	{"permissionDecision", FPermissionDecision, "PreModelSwitch", oneOf("allow", "deny", "ask")},
	{"permissionDecisionReason", FPermissionDecision, "PreModelSwitch", isString},
	// PreSkillShellCommand (Claude Code 2.1.332): PreToolUse's fields; updatedInput is
	// any object and always blocks there (skillshell.go).
	{"permissionDecision", FPermissionDecision, SkillShell, oneOf("allow", "deny", "ask", "defer")},
	{"permissionDecisionReason", FPermissionDecision, SkillShell, isString},
	{"updatedInput", FUpdatedInput, SkillShell, isObject},
	{"decision", FPermissionRequest, "PermissionRequest", isPermissionRequestDecision},
	{"retry", FRetry, "", isBool},
	{"updatedToolOutput", FUpdatedToolOutput, "", notNull},
	{"updatedMCPToolOutput", FUpdatedToolOutput, "", notNull},
	{"classifierContext", FClassifierContext, "", isString},
	{"sessionTitle", FSessionTitle, "", isString},
	{"watchPaths", FWatchPaths, "", isStringArray},
	{"initialUserMessage", FInitialUserMessage, "", isString},
	{"reloadSkills", FReloadSkills, "", isBool},
	{"displayContent", FDisplayContent, "", isString},
	{"worktreePath", FWorktreePath, "", isString},
	{"action", FElicitationAction, "", oneOf("accept", "decline", "cancel")},
	{"content", FElicitationAction, "", isObject},
	{"suppressOriginalPrompt", FSuppressPrompt, "", isBool},
}

// inSchema reports whether hookSpecificOutput member f belongs to ev's schema.
func (f *hsoField) inSchema(ev *Event) bool {
	return ev.Honoured(f.honour) && (f.only == "" || f.only == ev.Name)
}

// schemaError is a validation failure of a hook's JSON output.
type schemaError struct{ msg string }

func (e *schemaError) Error() string { return "hook JSON output validation failed: " + e.msg }

// parseHookJSON validates stdout that decoded as one JSON object against ev's output
// schema. Wrong types are errors (Claude Code reports "Hook JSON output validation failed"
// and acts on none of the object: probe pre-n3-bad-type); unknown members are ignored.
// null is a wrong type too: the schema's optional fields accept absence, not null.
func parseHookJSON(ev *Event, top map[string]json.RawMessage) (*hookJSON, error) {
	for _, t := range topChecks {
		if raw, ok := top[t.name]; ok {
			if want := t.c(raw); want != "" {
				return nil, &schemaError{t.name + ": " + want}
			}
		}
	}
	hj := &hookJSON{top: top}
	raw, ok := top["hookSpecificOutput"]
	if !ok {
		return hj, nil
	}
	if err := json.Unmarshal(raw, &hj.hso); err != nil || hj.hso == nil {
		return nil, &schemaError{"hookSpecificOutput: expected object, received " + kindOf(raw)}
	}
	name, ok := hj.hso["hookEventName"]
	if !ok {
		return nil, &schemaError{"hookSpecificOutput.hookEventName: required"}
	}
	var got string
	if json.Unmarshal(name, &got) != nil {
		return nil, &schemaError{"hookSpecificOutput.hookEventName: expected string, received " + kindOf(name)}
	}
	schema := ev
	if got != ev.Name {
		shape, ok := Lookup(got)
		if ev.Name != SkillShell || !skillShellShapes[got] || !ok {
			// Claude Code 2.1.330: "Hook returned incorrect event name: expected
			// 'PreToolUse' but got 'PostToolUse'" (probe pre-n4-wrong-event-name), and
			// nothing is honoured.
			return nil, &schemaError{fmt.Sprintf("hookSpecificOutput.hookEventName: expected %q but got %q", ev.Name, got)}
		}
		// PreSkillShellCommand reads a PreToolUse- or PermissionRequest-shaped answer
		// as that event's (Claude Code 2.1.332, probes pssc-4c, pssc-4d).
		schema = shape
	}
	hj.shape = got
	for i := range hsoFields {
		f := &hsoFields[i]
		raw, ok := hj.hso[f.name]
		if !ok || !f.inSchema(schema) {
			continue
		}
		if want := f.c(raw); want != "" {
			return nil, &schemaError{"hookSpecificOutput." + f.name + ": " + want}
		}
	}
	return hj, nil
}

// str returns the string member name of m ("" when absent; types are already checked).
func str(m map[string]json.RawMessage, name string) string {
	var s string
	if raw, ok := m[name]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// boolean returns the bool member name of m and whether it was present.
func boolean(m map[string]json.RawMessage, name string) (v, ok bool) {
	raw, ok := m[name]
	if !ok {
		return false, false
	}
	return bytes.Equal(bytes.TrimSpace(raw), []byte("true")), true
}

func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

func expected(what string, raw json.RawMessage) string {
	return "expected " + what + ", received " + kindOf(raw)
}

func kindIs(kind string) check {
	return func(raw json.RawMessage) string {
		if kindOf(raw) != kind {
			return expected(kind, raw)
		}
		return ""
	}
}

var (
	isBool   = kindIs("boolean")
	isString = kindIs("string")
	isNumber = kindIs("number")
	isObject = kindIs("object")
	isArray  = kindIs("array")
)

func notNull(raw json.RawMessage) string {
	if kindOf(raw) == "null" {
		return expected("a value", raw)
	}
	return ""
}

func isStringArray(raw json.RawMessage) string {
	var a []json.RawMessage
	if kindOf(raw) != "array" || json.Unmarshal(raw, &a) != nil {
		return expected("array of strings", raw)
	}
	for i, e := range a {
		if kindOf(e) != "string" {
			return fmt.Sprintf("expected array of strings, received %s at index %d", kindOf(e), i)
		}
	}
	return ""
}

func oneOf(vals ...string) check {
	var b bytes.Buffer
	for i, v := range vals {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(strconv.Quote(v))
	}
	want := b.String()
	return func(raw json.RawMessage) string {
		var s string
		if kindOf(raw) != "string" || json.Unmarshal(raw, &s) != nil {
			return expected(want, raw)
		}
		for _, v := range vals {
			if s == v {
				return ""
			}
		}
		return "expected " + want + ", received " + strconv.Quote(s)
	}
}

// isPermissionRequestDecision checks PermissionRequest's hookSpecificOutput.decision
// (spec §4.4): {behavior: allow|deny, updatedInput?: object, updatedPermissions?: array,
// message?: string, interrupt?: bool}.
func isPermissionRequestDecision(raw json.RawMessage) string {
	var d map[string]json.RawMessage
	if kindOf(raw) != "object" || json.Unmarshal(raw, &d) != nil {
		return expected("object", raw)
	}
	if _, ok := d["behavior"]; !ok {
		return "behavior: required"
	}
	for _, c := range []struct {
		name string
		c    check
	}{{"behavior", oneOf("allow", "deny")}, {"updatedInput", isObject}, {"message", isString},
		{"interrupt", isBool}, {"updatedPermissions", isArray}} {
		if raw, ok := d[c.name]; ok {
			if msg := c.c(raw); msg != "" {
				return c.name + ": " + msg
			}
		}
	}
	return ""
}
