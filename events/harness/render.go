package harness

import (
	"encoding/json"
	"strings"

	"github.com/hookd/hookd/events/jsonobj"
	"github.com/hookd/hookd/protocol"
)

// codexSchema is the shape one Codex event's output may take: the members its
// *.command.output JSON Schema allows (additionalProperties:false at every level), and the
// enums of its decision fields. Codex treats an output with any other member as a failed
// hook — and a failed PreToolUse hook lets the tool run — so Render drops what is not here.
type codexSchema struct {
	top, hso []string
	// decision enum at top level ("" entries: none allowed).
	decisions []string
	// permissionDecision enum (PreToolUse).
	permission []string
}

// codexSchemas: Codex 0.171.0, one per *.command.output schema in the binary
// (testdata/codex-0.171.0). SessionEnd has no output schema: Codex reads nothing.
var codexSchemas = map[string]codexSchema{
	"PreToolUse": {top: []string{"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage", "hookSpecificOutput"},
		hso: []string{"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason", "updatedInput"}, decisions: []string{"approve", "block"},
		permission: []string{"allow", "deny", "ask"}},
	"PostToolUse": {top: []string{"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage", "hookSpecificOutput"},
		hso: []string{"hookEventName", "additionalContext", "updatedMCPToolOutput"}, decisions: []string{"block"}},
	"PermissionRequest": {top: []string{"continue", "stopReason", "suppressOutput", "systemMessage", "hookSpecificOutput"},
		hso: []string{"hookEventName", "decision"}},
	"SessionStart":  {top: []string{"continue", "stopReason", "suppressOutput", "systemMessage", "hookSpecificOutput"}, hso: []string{"hookEventName", "additionalContext"}},
	"SubagentStart": {top: []string{"continue", "stopReason", "suppressOutput", "systemMessage", "hookSpecificOutput"}, hso: []string{"hookEventName", "additionalContext"}},
	"UserPromptSubmit": {top: []string{"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage", "hookSpecificOutput"},
		hso: []string{"hookEventName", "additionalContext"}, decisions: []string{"block"}},
	"Stop":         {top: []string{"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage"}, decisions: []string{"block"}},
	"SubagentStop": {top: []string{"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage"}, decisions: []string{"block"}},
	"PreCompact":   {top: []string{"continue", "stopReason", "suppressOutput", "systemMessage"}},
	"PostCompact":  {top: []string{"continue", "stopReason", "suppressOutput", "systemMessage"}},
	"Interrupt":    {top: []string{"systemMessage"}},
}

// Render rewrites res.Output, res.Stdout, res.Stderr and res.ExitCode — which
// events.Render filled as a Claude Code answer — into the harness's format. native is the
// harness's event name, nativeTool the tool name the harness sent (for renaming an
// updatedInput back). Claude Code answers are left as they are.
func (a *Adapter) Render(native, nativeTool string, res *protocol.Result) {
	switch a.Name {
	case protocol.HarnessCodex:
		renderCodex(native, res)
	case protocol.HarnessGemini:
		a.renderGemini(native, nativeTool, res)
	}
}

// renderCodex filters the Claude Code answer down to what Codex's schema for the event
// accepts. Values Claude Code's renderer produces already have Codex's types; only
// members and enum values differ. What cannot be expressed is reported in res.Warnings,
// and where dropping it would weaken a decision the answer fails closed instead.
func renderCodex(native string, res *protocol.Result) {
	sc, ok := codexSchemas[native]
	if !ok { // SessionEnd: Codex reads no output; keep only the exit code's stderr
		res.Output, res.Stdout = nil, ""
		return
	}
	var o jsonobj.Object
	if len(res.Output) > 0 {
		o, _ = jsonobj.Parse(res.Output) // an error leaves o empty
	}
	// Plain-stdout context (Claude Code's SessionStart/UserPromptSubmit label trick) has
	// no meaning for Codex: carry it as JSON additionalContext where the schema has one.
	if res.Stdout != "" && len(res.Output) == 0 {
		if contains(sc.hso, "additionalContext") && len(res.AdditionalContext) > 0 {
			h := jsonobj.Object{}.Set("hookEventName", native).Set("additionalContext", strings.Join(res.AdditionalContext, "\n\n"))
			o = o.SetRaw("hookSpecificOutput", h.JSON())
		}
		res.Stdout = ""
	}
	var dropped []string
	if raw := o.Get("hookSpecificOutput"); raw != nil {
		h, err := jsonobj.Parse(raw)
		if err != nil || !contains(sc.top, "hookSpecificOutput") {
			o = o.Without("hookSpecificOutput")
			dropped = append(dropped, "hookSpecificOutput")
		} else {
			h = h.Set("hookEventName", native)
			for _, k := range h.Keys() {
				if !contains(sc.hso, k) {
					h = h.Without(k)
					dropped = append(dropped, "hookSpecificOutput."+k)
				}
			}
			if pd := h.Get("permissionDecision"); pd != nil {
				var s string
				_ = json.Unmarshal(pd, &s)
				if !contains(sc.permission, s) { // "defer": no decision for Codex
					h = h.Without("permissionDecision").Without("permissionDecisionReason")
					dropped = append(dropped, "permissionDecision "+s)
				}
			}
			if native == "PermissionRequest" {
				h = codexPermissionRequest(h, &dropped)
			}
			if len(h) <= 1 { // hookEventName alone says nothing
				o = o.Without("hookSpecificOutput")
			} else {
				o = o.SetRaw("hookSpecificOutput", h.JSON())
			}
		}
	}
	for _, k := range o.Keys() {
		if !contains(sc.top, k) {
			o = o.Without(k)
			dropped = append(dropped, k)
		}
	}
	if d := o.Get("decision"); d != nil {
		var s string
		_ = json.Unmarshal(d, &s)
		if !contains(sc.decisions, s) {
			o = o.Without("decision").Without("reason")
			dropped = append(dropped, "decision "+s)
		}
	}
	if len(dropped) > 0 {
		res.Warnings = append(res.Warnings, "codex: dropped output Codex's "+native+" schema rejects: "+strings.Join(dropped, ", "))
	}
	if len(o) == 0 {
		res.Output = nil
	} else {
		res.Output = o.JSON()
	}
}

// codexPermissionRequest: Codex's decision object takes behavior and message; updatedInput,
// updatedPermissions and interrupt are reserved and make the hook fail closed. An allow
// that rewrites the input cannot be expressed — allowing the unrewritten input is not what
// the hook approved — so it becomes a deny that says why.
func codexPermissionRequest(h jsonobj.Object, dropped *[]string) jsonobj.Object {
	raw := h.Get("decision")
	if raw == nil {
		return h
	}
	d, err := jsonobj.Parse(raw)
	if err != nil {
		return h.Without("decision")
	}
	var behavior string
	_ = json.Unmarshal(d.Get("behavior"), &behavior)
	if behavior == "allow" && d.Has("updatedInput") {
		d = jsonobj.Object{}.Set("behavior", "deny").
			Set("message", "hookd: a hook allowed this request with a rewritten input, which Codex cannot apply (updatedInput is reserved in PermissionRequest); denied")
		*dropped = append(*dropped, "decision.updatedInput (allow turned into deny)")
	}
	for _, k := range d.Keys() {
		if k != "behavior" && k != "message" {
			d = d.Without(k)
			*dropped = append(*dropped, "decision."+k)
		}
	}
	return h.SetRaw("decision", d.JSON())
}

// renderGemini builds Gemini CLI's answer from the merged result: a top-level decision
// (allow | deny | block | ask) and reason, continue/stopReason, systemMessage, and
// hookSpecificOutput {additionalContext, tool_input}. Always JSON on stdout with exit 0:
// Gemini reads the decision from the JSON, and exit codes other than 0 and 1 only for
// plain-text answers (which FailClosed's exit 2 is: Gemini reads it as deny).
func (a *Adapter) renderGemini(native, nativeTool string, res *protocol.Result) {
	var o jsonobj.Object
	if res.PreventContinuation {
		o = o.Set("continue", false)
		if res.StopReason != "" {
			o = o.Set("stopReason", res.StopReason)
		}
	}
	var h jsonobj.Object
	switch native {
	case "BeforeTool":
		if p := res.Permission; p != nil {
			switch p.Decision {
			case "allow", "deny", "ask":
				o = o.Set("decision", p.Decision)
				if p.Reason != "" {
					o = o.Set("reason", p.Reason)
				}
			}
		}
		if res.Block != nil && !o.Has("decision") {
			o = o.Set("decision", "deny")
			o = o.Set("reason", res.Block.Reason)
		}
		if len(res.UpdatedInput) > 0 && (res.Permission == nil || res.Permission.Decision != "deny") {
			h = h.SetRaw("tool_input", a.NativeInput(nativeTool, res.UpdatedInput))
		}
	case "AfterTool", "BeforeAgent", "AfterAgent":
		if res.Block != nil {
			o = o.Set("decision", "block")
			o = o.Set("reason", res.Block.Reason)
		}
	}
	switch native {
	case "BeforeTool", "AfterTool", "BeforeAgent", "SessionStart":
		if len(res.AdditionalContext) > 0 {
			h = h.Set("additionalContext", strings.Join(res.AdditionalContext, "\n\n"))
		}
	}
	if len(res.SystemMessages) > 0 {
		o = o.Set("systemMessage", joinLines(res.SystemMessages))
	}
	if len(h) > 0 {
		full := jsonobj.Object{}.Set("hookEventName", native).Merge(h)
		o = o.SetRaw("hookSpecificOutput", full.JSON())
	}
	res.Output, res.Stdout, res.Stderr, res.ExitCode = nil, "", "", 0
	if len(o) > 0 {
		res.Output = o.JSON()
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
