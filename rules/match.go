package rules

import (
	"encoding/json"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hookd/hookd/rules/shell"
)

// evalCtx caches what rules need to know about one call, so a command is
// parsed and a URL split at most once per Evaluate however many rules look.
type evalCtx struct {
	c         *Call
	cwd, home string // cleaned; "" when not absolute

	bash *shell.Analysis
	ps   *psAnalysis
	hit  bashHit // what the last matching Bash rule matched

	pathDone bool
	file     string
	fileOK   bool

	hostDone bool
	host     string
	hostOK   bool
	hasURL   bool
}

func newEvalCtx(c *Call) *evalCtx {
	return &evalCtx{c: c, cwd: cleanDir(c.Cwd), home: cleanDir(c.Home)}
}

func cleanDir(d string) string {
	d = filepath.ToSlash(d)
	if !strings.HasPrefix(d, "/") {
		return ""
	}
	return path.Clean(d)
}

// str returns a string field of tool_input.
func (x *evalCtx) str(field string) (string, bool) {
	v, ok := x.c.Input[field].(string)
	return v, ok
}

func (x *evalCtx) bashA() *shell.Analysis {
	if x.bash == nil {
		cmd, ok := x.str("command")
		if !ok {
			return nil
		}
		x.bash = shell.Analyze(cmd)
	}
	return x.bash
}

// filePath returns the cleaned absolute path the call operates on.
func (x *evalCtx) filePath() (string, bool) {
	if !x.pathDone {
		x.pathDone = true
		var p string
		var ok bool
		switch x.c.Tool {
		case "NotebookEdit", "NotebookRead":
			p, ok = x.str("notebook_path")
		case "Glob", "Grep", "LS":
			p, ok = x.str("path")
			if !ok || p == "" {
				p, ok = x.cwd, x.cwd != "" // these tools default to the cwd
			}
		default:
			p, ok = x.str("file_path")
		}
		if ok {
			x.file, x.fileOK = cleanCallPath(p, x.cwd, x.home)
		}
	}
	return x.file, x.fileOK
}

// urlHost returns the WebFetch URL's host. present is false when there is
// no url field at all.
func (x *evalCtx) urlHost() (host string, ok, present bool) {
	if !x.hostDone {
		x.hostDone = true
		var u string
		u, x.hasURL = x.str("url")
		if x.hasURL {
			x.host, x.hostOK = hostOf(u)
		}
	}
	return x.host, x.hostOK, x.hasURL
}

func isTool(tool string, set []string) bool { return slices.Contains(set, tool) }

// match reports whether r matches the call for list l (Deny, Ask, Allow or
// ifList). failClosed is set when it matched only because the input could
// not be analysed.
func (r *Rule) match(x *evalCtx, l List) (matched, failClosed bool) {
	tool := x.c.Tool
	if !r.tool.match(tool) {
		if r.spec != specPath || (l != Deny && l != Ask) {
			return false, false
		}
		// spec §8 (2.1.208/2.1.228): a Read deny rule also blocks Edit/Write
		// on that path.
		if l == Deny && r.family == famRead && isTool(tool, editTools) {
			return r.matchPath(x), false
		}
		// spec §8: Bash redirect targets are checked as Edit. Deny/ask Edit
		// rules (and Read deny rules, as above) meet `echo x > .env`.
		if tool == "Bash" && (r.family == famEdit || l == Deny) {
			if a := x.bashA(); a != nil {
				for _, w := range a.Writes {
					if p, ok := cleanCallPath(w, x.cwd, x.home); ok && r.path.match(p, x.cwd, x.home) {
						return true, false
					}
				}
			}
		}
		return false, false
	}

	switch r.spec {
	case specNone:
		return true, false

	case specBash:
		a := x.bashA()
		if a == nil {
			return false, false
		}
		if l == Allow {
			return matchAllow(a, r.glob), false
		}
		if a.Err != nil {
			// Deny/ask fail closed; `if` fails open (spec §2.1). Both: match.
			x.hit = bashHit{command: a.Full, unresolved: "the command does not parse: " + a.Err.Error()}
			return true, l != ifList
		}
		if l == ifList && r.namesMore && a.Expands {
			return true, false // spec §2.1: can't tell, so run the hook
		}
		ok, hit := matchAny(a, r.glob)
		x.hit = hit
		return ok, ok && hit.unresolved != "" && l != ifList

	case specPowerShell:
		if x.ps == nil {
			cmd, ok := x.str("command")
			if !ok {
				return false, false
			}
			x.ps = analyzePowerShell(cmd)
		}
		if l == Allow {
			return x.ps.simple && r.glob.match(x.ps.full), false
		}
		return x.ps.matchAny(r.glob), false

	case specPath:
		return r.matchPath(x), false

	case specDomain:
		host, ok, present := x.urlHost()
		if !present {
			return false, false
		}
		if !ok {
			if l == Allow {
				return false, false
			}
			return true, l != ifList
		}
		return r.domain.match(host), false

	case specParam:
		v, ok := paramString(x.c.Input[r.param])
		return ok && r.glob.match(v), false

	case specAgent:
		v, _ := x.str("subagent_type")
		return r.glob.match(v), false

	case specSkill:
		name, ok := x.str("skill")
		if !ok {
			return false, false
		}
		if r.glob.match(name) {
			return true, false
		}
		if args, _ := x.str("args"); args != "" {
			return r.glob.match(name + " " + args), false
		}
		return false, false

	case specGeneric:
		for _, f := range r.fields {
			if v, ok := x.str(f); ok {
				return r.glob.match(v), false
			}
		}
		return false, false
	}
	return false, false
}

// bashAllow applies the allow list to a Bash call. Claude Code allows a
// compound command when every subcommand is allowed by some allow rule (spec
// §8), not necessarily the same one: Bash(npm test) and Bash(npm run lint)
// together allow "npm test && npm run lint". A rule that covers the whole
// call (bare Bash, a wildcard-free rule equal to the whole line) allows it
// outright. The rule reported is the first one, in list order, that covered
// any part of the command.
func bashAllow(x *evalCtx, allow []*Rule) *Rule {
	if len(allow) == 0 {
		return nil
	}
	a := x.bashA()
	var covered []bool
	left := 0
	if a != nil && a.Err == nil {
		covered = make([]bool, len(a.Commands))
		for i := range a.Commands {
			if a.Commands[i].Inner {
				covered[i] = true // allow rules need not cover sh -c / eval scripts
			} else {
				left++
			}
		}
	}
	var first *Rule
	for _, r := range allow {
		if !r.tool.match("Bash") {
			continue
		}
		if r.spec != specBash || a == nil || a.Err != nil || left == 0 ||
			(!r.glob.hasStar() && r.glob.bare == nil && r.glob.literal() == a.Full) {
			if ok, _ := r.match(x, Allow); ok {
				if first == nil {
					first = r
				}
				return first
			}
			continue
		}
		for i := range a.Commands {
			if !covered[i] && allowedBy(&a.Commands[i], r.glob) {
				covered[i] = true
				left--
				if first == nil {
					first = r
				}
			}
		}
		if left == 0 {
			return first
		}
	}
	return nil
}

// matchAllow reports whether one allow pattern covers the whole command on
// its own: every subcommand matches one of its Strict views. (Set.Evaluate
// lets different rules cover different subcommands; see bashAllow.) A
// wildcard-free rule also matches when it equals the whole command (so
// `Bash(make && make install)` allows exactly that line), but a glob is
// never applied to the whole line: `Bash(echo *)` must not allow
// `echo x && rm -rf ~`. A subcommand hookd could not resolve is never
// covered.
func matchAllow(a *shell.Analysis, g *starGlob) bool {
	if !g.hasStar() && g.bare == nil && g.literal() == a.Full {
		return true
	}
	if a.Err != nil || len(a.Commands) == 0 {
		return false
	}
	for i := range a.Commands {
		if !a.Commands[i].Inner && !allowedBy(&a.Commands[i], g) {
			return false
		}
	}
	return true
}

// allowedBy reports whether g matches one of the command's Strict views.
func allowedBy(s *shell.Command, g *starGlob) bool {
	if s.Unresolved != "" {
		return false
	}
	for _, v := range s.Strict {
		if g.match(v) {
			return true
		}
	}
	return false
}

// bashHit says which part of a command a deny/ask rule or `if` filter
// matched.
type bashHit struct {
	command    string // the simple command (as resolved, or as written when it holds unknowns)
	unresolved string // set when the match depends on something hookd could not resolve
}

// matchAny reports whether a deny/ask rule or an `if` filter matches: any
// subcommand view, or the whole line. A view with holes matches when some
// value of the holes would make it match: that is how unresolved command
// names and scripts fail closed. The caller handles a.Err.
func matchAny(a *shell.Analysis, g *starGlob) (bool, bashHit) {
	if g.match(a.Full) {
		return true, bashHit{command: a.Full}
	}
	for i := range a.Commands {
		for _, v := range a.Commands[i].Views {
			if strings.IndexByte(v.Text, shell.Hole) < 0 && g.match(v.Text) {
				return true, bashHit{command: v.Text}
			}
		}
	}
	for i := range a.Commands {
		s := &a.Commands[i]
		for _, v := range s.Views {
			if strings.IndexByte(v.Text, shell.Hole) >= 0 && g.matchHoles(v.Text) {
				return true, bashHit{command: v.Source, unresolved: s.Unresolved}
			}
		}
	}
	return false, bashHit{}
}

func (r *Rule) matchPath(x *evalCtx) bool {
	p, ok := x.filePath()
	return ok && r.path.match(p, x.cwd, x.home)
}

// paramString is the string form of a tool_input value for param rules:
// strings as is, booleans and numbers as fmt would print them (5, not 5e+00).
// Objects, arrays and null never match.
func paramString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case bool:
		return strconv.FormatBool(t), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(t), 'f', -1, 32), true
	case int:
		return strconv.Itoa(t), true
	case int64:
		return strconv.FormatInt(t, 10), true
	case int32:
		return strconv.FormatInt(int64(t), 10), true
	case uint64:
		return strconv.FormatUint(t, 10), true
	case json.Number:
		return t.String(), true
	}
	return "", false
}

// psAnalysis is the (deliberately shallow) view of a PowerShell command:
// hookd does not parse PowerShell. Deny/ask rules match the whole command or
// any piece split naively on ; | & and newlines; allow rules match only
// commands with none of those characters (nor backticks or $( ), so a glob
// can never allow a chained command. Case-insensitive (spec §8).
type psAnalysis struct {
	full   string
	pieces []string
	simple bool
}

func analyzePowerShell(cmd string) *psAnalysis {
	a := &psAnalysis{full: strings.ToLower(strings.TrimSpace(cmd))}
	a.simple = !strings.ContainsAny(a.full, ";|&\n\r`") && !strings.Contains(a.full, "$(")
	for _, p := range strings.FieldsFunc(a.full, func(r rune) bool {
		return r == ';' || r == '|' || r == '&' || r == '\n' || r == '\r'
	}) {
		if p = strings.TrimSpace(p); p != "" {
			a.pieces = append(a.pieces, p)
		}
	}
	return a
}

func (a *psAnalysis) matchAny(g *starGlob) bool {
	if g.match(a.full) {
		return true
	}
	for _, p := range a.pieces {
		if g.match(p) {
			return true
		}
	}
	return false
}
