package daemon

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/rules"
)

// The Monitor tool (Claude Code 2.1.314+) starts a shell command and streams its output.
// Claude Code 2.1.330 treats that command as a Bash command for hooks and permission
// rules; read from the binary and observed with it (test/testdata/payloads, README):
//
//   - A PreToolUse or PermissionRequest hook whose matcher fits "Monitor" gets the call as
//     sent (tool_name "Monitor"). A hook whose matcher does not fit "Monitor" but fits
//     "Bash" runs too, on a Bash-shaped payload: tool_name "Bash", tool_input {command,
//     description} (the Monitor input's own two fields). A matcher with a negative
//     lookahead or a negated class ((?!, (?<!, [^) fits that way only if it names Bash.
//   - Such a hook can deny, ask or defer; its allow and updatedInput are ignored
//     (events.NoApprove). So is the allow of a hook of either kind whose `if` names Bash.
//   - `if: "Monitor(tail *)"` matches the Monitor command as `Bash(tail *)` matches
//     Bash's; a hook that met the call only through Bash and whose `if` names Monitor is
//     skipped ("its if condition names Monitor, and its matcher met the call only
//     through Bash").
//   - Bash permission rules judge the Monitor command: a `Bash(tail *)` deny rule refuses
//     "Monitor tail -f log" ("Permission to use Bash with command … has been denied"), an
//     allow rule allows it.
//
// Only a Monitor call with a non-empty string command is treated so (a websocket
// Monitor has none: Claude Code then has no Bash name for it either).

// monitorTool is the Monitor tool's name.
const monitorTool = "Monitor"

// monitorCommand returns the shell command of a Monitor call and the Bash-shaped input
// Claude Code gives Bash hooks, or ok=false when the call is not a Monitor shell command.
func monitorCommand(ev *events.Event, tool string, input json.RawMessage) (bashInput map[string]any, ok bool) {
	if tool != monitorTool || (ev.Name != "PreToolUse" && ev.Name != "PermissionRequest") {
		return nil, false
	}
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return nil, false
	}
	cmd, _ := in["command"].(string)
	if cmd == "" {
		return nil, false
	}
	bashInput = map[string]any{"command": cmd}
	if d, ok := in["description"].(string); ok {
		bashInput["description"] = d
	}
	return bashInput, true
}

// bashShaped is the payload Claude Code sends a Bash hook for a Monitor command: the
// Monitor payload with tool_name "Bash" and tool_input {command, description}, every
// other byte kept (nil if the payload cannot be spliced: those hooks then get the
// Monitor payload).
func bashShaped(payload []byte, bashInput map[string]any) []byte {
	raw, err := json.Marshal(bashInput) // keys sorted: command, description, as Claude Code writes them
	if err != nil {
		return nil
	}
	p, err := events.ReplaceTopLevel(payload, "tool_name", json.RawMessage(`"Bash"`))
	if err != nil {
		return nil
	}
	if p, err = events.ReplaceTopLevel(p, "tool_input", raw); err != nil {
		return nil
	}
	return p
}

// familyRun says, per handler, which payload it gets and whether its approvals count.
type familyRun struct {
	payload   map[*settings.Handler][]byte // the Bash-shaped payload, for hooks met through Bash
	noApprove map[*settings.Handler]bool
}

// ifTool is the tool an `if` rule names ("Bash" in "Bash(git *)") and its content.
func ifTool(text string) (tool, content string, hasContent bool) {
	text = strings.TrimSpace(text)
	i := strings.IndexByte(text, '(')
	if i < 0 || !strings.HasSuffix(text, ")") {
		return text, "", false
	}
	return strings.TrimSpace(text[:i]), text[i+1 : len(text)-1], true
}

// ifMatches evaluates h's `if` against the Monitor call, Claude Code's way: a rule that
// names Monitor is the same rule for Bash, judged on the Bash-shaped call. An `if` that
// cannot be compiled again runs the hook (Claude Code's fail-open `if`).
func ifMatches(h *settings.Handler, monitorCall, bashCall rules.Call) bool {
	if h.If == nil {
		return true
	}
	tool, content, has := ifTool(h.IfText)
	switch tool {
	case monitorTool:
		text := "Bash"
		if has {
			text += "(" + content + ")"
		}
		f, err := rules.ParseIf(text, rules.Origin{})
		if err != nil {
			return true
		}
		return f.Matches(bashCall)
	case "Bash":
		return h.If.Matches(bashCall)
	}
	return h.If.Matches(monitorCall)
}

// monitorFamily picks the handlers that run for a Monitor shell command and how (see the
// comment at the top of this file). run and notRun come back in configuration order.
func monitorFamily(snap *settings.Snapshot, ev *events.Event, payload []byte, monitorCall rules.Call, bashInput map[string]any, fromClaudeCode bool) (run, notRun []*settings.Handler, fam *familyRun) {
	bashCall := monitorCall
	bashCall.Tool, bashCall.Input = "Bash", bashInput
	bashPayload := bashShaped(payload, bashInput)
	fam = &familyRun{payload: map[*settings.Handler][]byte{}, noApprove: map[*settings.Handler]bool{}}
	// Matchers only (no tool: `if` is judged here).
	direct, directNot := snap.Match(settings.Query{Event: ev, MatchValue: monitorTool, FromClaudeCode: fromClaudeCode})
	viaBash, viaBashNot := snap.Match(settings.Query{Event: ev, MatchValue: "Bash", FromClaudeCode: fromClaudeCode})
	isDirect := map[*settings.Handler]bool{}
	seen := map[string]bool{}
	add := func(h *settings.Handler, list *[]*settings.Handler) bool {
		if seen[h.Key] {
			return false // one handler runs once per call, as in one Match
		}
		seen[h.Key] = true
		*list = append(*list, h)
		return true
	}
	for _, h := range direct {
		isDirect[h] = true
		if !ifMatches(h, monitorCall, bashCall) {
			continue
		}
		if add(h, &run) {
			if tool, _, _ := ifTool(h.IfText); h.If != nil && tool == "Bash" {
				fam.noApprove[h] = true
			}
		}
	}
	for _, h := range viaBash {
		if isDirect[h] || !familyFits(h) {
			continue
		}
		if tool, _, _ := ifTool(h.IfText); h.If != nil && tool == monitorTool {
			continue // names Monitor, met the call only through Bash: skipped
		}
		if h.If != nil && !h.If.Matches(bashCall) {
			continue
		}
		if add(h, &run) {
			fam.noApprove[h] = true
			if bashPayload != nil {
				fam.payload[h] = bashPayload
			}
		}
	}
	for _, h := range directNot {
		isDirect[h] = true
		add(h, &notRun)
	}
	for _, h := range viaBashNot {
		if !isDirect[h] && familyFits(h) {
			add(h, &notRun)
		}
	}
	order := map[*settings.Handler]int{}
	for i, h := range snap.HandlersFor(ev.Name) {
		order[h] = i
	}
	byOrder := func(hs []*settings.Handler) {
		sort.SliceStable(hs, func(i, j int) bool { return order[hs[i]] < order[hs[j]] })
	}
	byOrder(run)
	byOrder(notRun)
	return run, notRun, fam
}

// familyFits: Claude Code does not let a matcher with a negative lookahead or a negated
// character class fit a tool through another name unless it spells that name.
func familyFits(h *settings.Handler) bool {
	m := h.Matcher.String()
	if strings.Contains(m, "(?!") || strings.Contains(m, "(?<!") || strings.Contains(m, "[^") {
		return strings.Contains(m, "Bash")
	}
	return true
}
