package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

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
	if p := f.Settings.Permissions; p != nil {
		for _, l := range []struct {
			key   string
			texts []string
		}{{"deny", p.Deny}, {"ask", p.Ask}, {"allow", p.Allow}} {
			for i, text := range l.texts {
				d.toolFinding(fmt.Sprintf("permissions.%s[%d]", l.key, i), ruleTool(text))
			}
		}
	}
	project := lintProject(f.Ref)
	seenGroup := map[string]bool{}
	for _, h := range f.Handlers {
		field := handlerField(h)
		group, _, _ := strings.Cut(field, ".hooks[")
		if h.Event.MatcherField == "tool_name" && h.Matcher != nil && !h.Matcher.IsRegex() && !seenGroup[group] {
			seenGroup[group] = true
			for _, name := range h.Matcher.Names() {
				d.toolFinding(group+".matcher", name)
			}
		}
		if h.IfText != "" {
			d.toolFinding(field+".if", ruleTool(h.IfText))
		}
		if h.Type == events.Command {
			msg := lintCommand(h, project, "")
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

// lintProject is the project directory of a project or local settings file at its
// place, <project>/.claude/settings*.json (or hookd's file beside it), made absolute:
// what $CLAUDE_PROJECT_DIR and a relative script path mean there. "" for any other file,
// whose hooks run in whatever project the session has.
func lintProject(ref FileRef) string {
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
	msg, isErr := toolProblem(name)
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

// shellPrefixes run the command named by their next word (after options and, for env,
// assignments).
var shellPrefixes = map[string]bool{"exec": true, "command": true, "env": true, "nohup": true, "nice": true, "time": true}

// shellBuiltins are commands a shell runs without an executable file.
var shellBuiltins = map[string]bool{
	":": true, ".": true, "[": true, "alias": true, "bg": true, "break": true, "cd": true, "continue": true,
	"echo": true, "eval": true, "exit": true, "export": true, "false": true, "fg": true, "getopts": true,
	"hash": true, "jobs": true, "kill": true, "printf": true, "pwd": true, "read": true, "readonly": true,
	"return": true, "set": true, "shift": true, "source": true, "test": true, "times": true, "trap": true,
	"true": true, "type": true, "ulimit": true, "umask": true, "unalias": true, "unset": true, "wait": true,
	"builtin": true, "declare": true, "local": true, "let": true, "shopt": true, "[[": true,
}

// interpreters run a script file named by their first operand.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "python": true, "python3": true,
	"node": true, "bun": true, "deno": true, "ruby": true, "perl": true, "php": true, "uv": false,
}

// lintCommand says what is missing for a command handler to start: its program (a path
// that does not exist or is not executable; with path != "", also a bare name not on
// that PATH), or the script file an interpreter is given. "" when nothing is, or when
// the command is not one whose words can be known without running a shell (a variable
// other than $CLAUDE_PROJECT_DIR and $HOME, a substitution, a glob…). project resolves
// $CLAUDE_PROJECT_DIR and relative script paths (Claude Code runs hooks in the project
// directory); "" leaves both unchecked.
func lintCommand(h *Handler, project, path string) string {
	var words []string
	if h.Args != nil {
		// Exec form: Claude Code substitutes the placeholders itself; no shell.
		words = append([]string{h.Command}, h.Args...)
		for i, w := range words {
			if strings.Contains(w, "${CLAUDE_PROJECT_DIR}") {
				if project == "" {
					return ""
				}
				words[i] = strings.ReplaceAll(w, "${CLAUDE_PROJECT_DIR}", project)
			}
		}
	} else {
		var ok bool
		if words, ok = firstCommandWords(h.Command, project); !ok {
			return ""
		}
	}
	for len(words) > 0 && shellPrefixes[words[0]] {
		prefix := words[0]
		words = words[1:]
		for len(words) > 0 && (strings.HasPrefix(words[0], "-") || prefix == "env" && strings.Contains(words[0], "=")) {
			words = words[1:]
		}
	}
	if len(words) == 0 || words[0] == "" || shellBuiltins[words[0]] {
		return ""
	}
	prog := words[0]
	if strings.Contains(prog, "/") {
		if msg := missingFile(prog, project, true); msg != "" {
			return "program " + msg
		}
	} else if path != "" {
		if _, ok := lookPath(prog, path); !ok {
			msg := fmt.Sprintf("program %q is not on PATH (%s)", prog, path)
			if s := suggest.Closest(prog, commandsOnPath(path)); s != "" {
				msg += "; did you mean " + s + "?"
			}
			return msg
		}
	}
	base := filepath.Base(prog)
	if interpreters[base] || strings.HasPrefix(base, "python3.") {
		for _, a := range words[1:] {
			if a == "-" || strings.HasPrefix(a, "-c") || a == "-m" || a == "-e" || a == "--eval" || a == "-p" {
				return "" // code from an option or stdin, not a file
			}
			if strings.HasPrefix(a, "-") {
				continue
			}
			if msg := missingFile(a, project, false); msg != "" {
				return "script " + msg + " (" + base + " is given it to run)"
			}
			break
		}
	}
	return ""
}

// missingFile describes what is wrong with the file p names ("" when it exists, or when
// it cannot be checked: relative with no project to resolve it against).
func missingFile(p, project string, executable bool) string {
	if !filepath.IsAbs(p) {
		if project == "" {
			return ""
		}
		p = filepath.Join(project, p)
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return p + " does not exist"
	case fi.IsDir():
		return p + " is a directory"
	case executable && fi.Mode()&0o111 == 0:
		return p + " is not executable"
	}
	return ""
}

// commandsOnPath lists the executables in path's directories (for "did you mean").
func commandsOnPath(path string) []string {
	var out []string
	for _, dir := range filepath.SplitList(path) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			out = append(out, e.Name())
		}
	}
	return out
}

// lookPath is exec.LookPath against path (a PATH value) without touching the process's.
func lookPath(name, path string) (string, bool) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// firstCommandWords are the words of the first simple command of a shell command line,
// with environment assignments dropped and quotes removed, when every one of them is
// known without running a shell: literals, and $CLAUDE_PROJECT_DIR (with project), $HOME
// and a leading ~ (with the user's home). ok is false otherwise, and for anything that
// does not parse as POSIX shell.
func firstCommandWords(cmd, project string) (words []string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) == 0 {
		return nil, false
	}
	var call *syntax.CallExpr
	syntax.Walk(f.Stmts[0], func(n syntax.Node) bool {
		if call != nil {
			return false
		}
		if c, is := n.(*syntax.CallExpr); is && len(c.Args) > 0 {
			call = c
			return false
		}
		return true
	})
	if call == nil {
		return nil, false
	}
	home, _ := os.UserHomeDir()
	for _, w := range call.Args {
		s, known := wordValue(w, project, home)
		if !known {
			if len(words) == 0 {
				return nil, false // the program itself is unknown
			}
			break // later words: keep what is known
		}
		words = append(words, s)
	}
	return words, true
}

// wordValue is a shell word's value when it is known statically.
func wordValue(w *syntax.Word, project, home string) (string, bool) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && (v == "~" || strings.HasPrefix(v, "~/")) {
				if home == "" {
					return "", false
				}
				v = home + v[1:]
			}
			b.WriteString(strings.ReplaceAll(v, `\`, ""))
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				switch x := dp.(type) {
				case *syntax.Lit:
					b.WriteString(x.Value)
				case *syntax.ParamExp:
					v, ok := paramValue(x, project, home)
					if !ok {
						return "", false
					}
					b.WriteString(v)
				default:
					return "", false
				}
			}
		case *syntax.ParamExp:
			v, ok := paramValue(p, project, home)
			if !ok {
				return "", false
			}
			b.WriteString(v)
		default:
			return "", false
		}
	}
	return b.String(), true
}

func paramValue(p *syntax.ParamExp, project, home string) (string, bool) {
	if p.Param == nil || p.Exp != nil || p.Repl != nil || p.Slice != nil || p.Index != nil || p.Length || p.Excl || p.Names != 0 || p.Width {
		return "", false
	}
	switch p.Param.Value {
	case "CLAUDE_PROJECT_DIR":
		return project, project != ""
	case "HOME":
		return home, home != ""
	}
	return "", false
}

// LintCommandsOnPath is the part of the linter only `hookd validate` runs: each command
// handler of files (and each forwarder) whose program is a bare name not found on path —
// the PATH of the shell validate runs in, which is what Claude Code, started from it,
// gives its hooks. The loader cannot know that PATH (hooks run with the session's
// environment), so status and the load log do not report these.
func LintCommandsOnPath(files []*File, path string) []Warning {
	var out []Warning
	for _, f := range files {
		project := lintProject(f.Ref)
		for _, eh := range f.Settings.Hooks {
			for gi, g := range eh.Groups {
				for hi, hs := range g.Hooks {
					if hs.Type != "command" {
						continue
					}
					words, ok := []string{hs.Command}, true
					if hs.Args == nil {
						words, ok = firstCommandWords(hs.Command, project)
					}
					if !ok || len(words) == 0 || strings.Contains(words[0], "/") {
						continue // paths are the loader's findings
					}
					h := &Handler{Type: events.Command, Command: hs.Command, Args: hs.Args}
					if msg := lintCommand(h, project, path); msg != "" && !slices.ContainsFunc(f.Warnings, func(w Warning) bool { return strings.Contains(w.Message, msg) }) {
						out = append(out, Warning{File: f.Ref.Path, Field: fmt.Sprintf("hooks.%s[%d].hooks[%d].command", eh.Event, gi, hi),
							Message: msg + ": the hook can never run (Claude Code reports exit 127, a non-blocking error: the guard is off)", Level: LevelError})
					}
				}
			}
		}
	}
	return out
}
