package settings

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hookd/hookd/configs/settings/cmdcheck"
	"github.com/hookd/hookd/configs/settings/tools"
	"github.com/hookd/hookd/configs/suggest"
	"github.com/hookd/hookd/events"
)

// The linter: mistakes that load without an error but leave a guard that never fires.
// Each is a finding in File.Warnings, so `hookd validate`, `hookd status` and the load log
// all show it; an error-level finding makes validate exit 1.
//
//   - an unknown hook event (hooks()): error, with the event meant when one is close;
//   - a tool name in a permission rule, an `if` filter or an exact matcher of a tool event
//     that no tool has: error when it is a near miss (edit distance, letter case, a
//     malformed mcp__ name), with the name meant; warning when it is merely unknown;
//   - a command hook whose program, or the script an interpreter runs, does not exist
//     (lintCommand). Paths only: a bare name is looked up on PATH by validate alone
//     (LintCommandsOnPath), since the PATH hooks run with is the session's, which hookd's
//     loader does not have.

// unknownEvent is the finding for a hook event hookd does not know.
func unknownEvent(name string) string {
	msg := fmt.Sprintf("unknown hook event (not one of the %d events hookd and Claude Code 2.1.332 know); its hooks never run", len(events.Names()))
	if s := suggest.Closest(name, events.Names()); s != "" {
		if strings.EqualFold(s, name) {
			return fmt.Sprintf("unknown hook event: event names are case-sensitive; did you mean %s? Its hooks never run", s)
		}
		return fmt.Sprintf("unknown hook event; did you mean %s? Its hooks never run", s)
	}
	return msg
}

// lint adds the linter's findings about f (decoded) to d's warnings.
func (d *decoder) lint(f *File) {
	var perms *Permissions
	if f.Settings != nil { // nil: a harness's own hook file (no rules; its commands are linted below)
		perms = f.Settings.Permissions
	}
	if p := perms; p != nil {
		for _, l := range []struct {
			key   string
			texts []string
		}{{"deny", p.Deny}, {"ask", p.Ask}, {"allow", p.Allow}} {
			for i, text := range l.texts {
				d.toolFinding(fmt.Sprintf("permissions.%s[%d]", l.key, i), tools.RuleTool(text))
			}
		}
	}
	project := LintProject(f.Ref)
	seenGroup := map[string]bool{}
	for _, h := range f.Handlers {
		field := handlerField(h)
		group, _, _ := strings.Cut(field, ".hooks[")
		// A harness's own hooks name the harness's tools (run_shell_command), not Claude Code's.
		if h.Harness == "" && h.Event.MatcherField == "tool_name" && h.Matcher != nil && !h.Matcher.IsRegex() && !seenGroup[group] {
			seenGroup[group] = true
			for _, name := range h.Matcher.Names() {
				d.toolFinding(group+".matcher", name)
			}
		}
		if h.IfText != "" {
			d.toolFinding(field+".if", tools.RuleTool(h.IfText))
		}
		if h.Type == events.Command {
			msg := cmdcheck.Missing(h.Command, h.Args, project, "")
			switch {
			case msg == "":
			case IsForwarder(h.Command, h.Args):
				d.finding(field+".command", "hookd's forwarder: %s: Claude Code cannot reach hookd (exit 127, a non-blocking error), so no event it forwards runs the hooks hookd holds", msg)
			default:
				d.finding(field+".command", "%s: the hook can never run (Claude Code reports exit 127, a non-blocking error: the guard is off)", msg)
			}
		}
	}
}

// LintProject is the project directory of a project or local settings file at its
// place, <project>/.claude/settings*.json (or hookd's file beside it), made absolute:
// what $CLAUDE_PROJECT_DIR and a relative script path mean there. "" for any other file,
// whose hooks run in whatever project the session has.
func LintProject(ref FileRef) string {
	if k := ref.Source(); k != KindProject && k != KindLocal || filepath.Base(filepath.Dir(ref.Path)) != ".claude" {
		return ""
	}
	p, err := filepath.Abs(ref.base())
	if err != nil {
		return ""
	}
	return p
}

func (d *decoder) toolFinding(field, name string) {
	msg, isErr := tools.Problem(name)
	switch {
	case msg == "":
	case isErr:
		d.finding(field, "%q: %s", name, msg)
	default:
		d.warn(field, "%q: %s", name, msg)
	}
}

// handlerField is the handler's place in its file, "hooks.PreToolUse[0].hooks[1]".
func handlerField(h *Handler) string {
	_, f, ok := strings.Cut(h.ID, "#")
	if !ok {
		return "hooks"
	}
	return "hooks." + f
}
