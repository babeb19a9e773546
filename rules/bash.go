package rules

import (
	"fmt"
	"path"
	"strings"
)

// bashAnalysis is what Evaluate needs to know about one Bash command. It is
// computed at most once per call, however many rules look at it.
type bashAnalysis struct {
	full   string // the command, trimmed
	err    error  // non-nil when the command could not be parsed
	subs   []bashSub
	expand bool     // $…, `…` or $(…) anywhere (spec §2.1: `if` runs the hook anyway)
	writes []string // literal targets of output redirections (spec §8: checked as Edit)
}

// bashSub holds the strings one simple command is matched as.
//
// Allow rules are matched against few, conservative views: the command as
// written, and the command with safe VAR=value prefixes and wrappers removed
// under their exact grammar. Deny/ask rules (and `if` filters) additionally
// see looser views — every assignment and wrapper stripped, quotes removed,
// redirections dropped, /bin/rm shortened to rm — because a deny rule that
// matches too much fails safe while one that matches too little does not.
type bashSub struct {
	text  string   // the SplitCommand view
	allow []string // an allow rule must match one of these, for every subcommand
	deny  []string // a deny/ask rule matches if it matches any of these, for any subcommand
	// denyOnly marks commands found inside a literal `sh -c '…'` or `eval
	// '…'` argument: deny/ask rules see them, allow rules need not cover them
	// (the outer command already had to be allowed).
	denyOnly bool
}

// maxInnerScripts bounds recursion into sh -c / eval scripts.
const maxInnerScripts = 4

// SplitCommand splits a Bash command line into the simple commands it would
// run, as hookd's Bash rules see them: split on &&, ||, ;, |, |&, & and
// newlines (not inside quotes); commands inside $(…), backquotes, <(…) and
// (…) subshells listed after the command containing them; leading VAR=value
// assignments, wrapper commands (timeout, time, nice, nohup, stdbuf, command,
// builtin, noglob, xargs) and shell keywords (if, then, do, {, !, …) removed.
// Words keep their quotes; redirections are kept and moved after the words.
// An error means the command cannot be parsed (unbalanced quotes, an
// unterminated $( …); deny/ask rules then fail closed.
func SplitCommand(cmd string) (subcommands []string, err error) {
	a := analyzeBash(cmd)
	if a.err != nil {
		return nil, fmt.Errorf("rules: unparseable command: %w", a.err)
	}
	out := make([]string, 0, len(a.subs))
	for _, s := range a.subs {
		out = append(out, s.text)
	}
	return out, nil
}

// analyzeBash parses cmd and builds the views of every subcommand.
func analyzeBash(cmd string) *bashAnalysis {
	a := &bashAnalysis{full: strings.TrimSpace(cmd)}
	cmds, expand, err := parseShell(cmd)
	if err != nil {
		a.err = err
		return a
	}
	a.expand = expand
	a.add(cmds, false, 0)
	return a
}

// add appends the subcommands of cmds, then those of any literal sh -c /
// eval scripts they run (deny-only, see bashSub.denyOnly).
func (a *bashAnalysis) add(cmds []shCmd, denyOnly bool, depth int) {
	for i := range cmds {
		c := &cmds[i]
		a.collectWrites(c.redirs)
		sub, lenient, ok := buildSub(c)
		if !ok {
			continue
		}
		sub.denyOnly = denyOnly
		a.subs = append(a.subs, sub)
		if script, ok := innerScript(lenient); ok && depth < maxInnerScripts {
			// An inner script that does not parse would fail in the shell
			// too, so it is ignored rather than failing the whole command.
			if inner, expand, err := parseShell(script); err == nil {
				a.expand = a.expand || expand
				a.add(inner, true, depth+1)
			}
		}
	}
}

// innerScript returns the script run by `sh|bash|zsh|dash|ksh [opts] -c
// SCRIPT` or `eval WORDS` when it is literal (no expansions).
func innerScript(ws []shWord) (string, bool) {
	if len(ws) < 2 || ws[0].expand {
		return "", false
	}
	switch path.Base(unquoteWord(ws[0].raw)) {
	case "eval":
		parts := make([]string, 0, len(ws)-1)
		for _, w := range ws[1:] {
			if w.expand {
				return "", false
			}
			parts = append(parts, unquoteWord(w.raw))
		}
		return strings.Join(parts, " "), true
	case "sh", "bash", "zsh", "dash", "ksh":
		for i := 1; i < len(ws); i++ {
			o := unquoteWord(ws[i].raw)
			if !strings.HasPrefix(o, "-") || o == "-" || o == "--" {
				return "", false
			}
			if !strings.HasPrefix(o, "--") && strings.Contains(o, "c") {
				if i+1 < len(ws) && !ws[i+1].expand {
					return unquoteWord(ws[i+1].raw), true
				}
				return "", false
			}
		}
	}
	return "", false
}

// collectWrites records literal output-redirection targets.
func (a *bashAnalysis) collectWrites(rs []shRedir) {
	for _, r := range rs {
		switch r.op {
		case ">", ">>", ">|", "&>", "&>>", "<>", ">&":
		default:
			continue
		}
		if r.target.expand || isFDDup(r) {
			continue
		}
		t := unquoteWord(r.target.raw)
		switch t {
		case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
			continue
		}
		a.writes = append(a.writes, t)
	}
}

// isFDDup reports whether r duplicates or closes a file descriptor (2>&1, >&-).
func isFDDup(r shRedir) bool {
	return (r.op == ">&" || r.op == "<&") && (isDigits(r.target.raw) || r.target.raw == "-")
}

// harmless reports whether a redirection can be ignored by allow rules:
// fd duplication and /dev/null. Other redirections stay in the allow view so
// that `Bash(npm test)` does not allow `npm test > ~/.bashrc`.
func harmless(r shRedir) bool {
	if isFDDup(r) {
		return true
	}
	return !r.target.expand && unquoteWord(r.target.raw) == "/dev/null" && r.op != "<<" && r.op != "<<-" && r.op != "<<<"
}

// shellKeywords are reserved words that may start a simple command in our
// flat view of the line; they are syntax, not commands, so they are removed.
var shellKeywords = map[string]bool{
	"!": true, "{": true, "}": true, "if": true, "then": true, "elif": true, "else": true,
	"fi": true, "do": true, "done": true, "while": true, "until": true, "esac": true,
}

// buildSub turns one simple command into its views, and returns its words
// with assignments and wrappers leniently stripped. ok is false for commands
// that run nothing (a bare "fi", a function header, a for-loop header —
// their substitutions are separate subcommands).
func buildSub(c *shCmd) (sub bashSub, lenientWords []shWord, ok bool) {
	words := c.words
	if c.funcDef {
		words = nil
	}
	for len(words) > 0 && !words[0].quoted {
		w := words[0].raw
		if shellKeywords[w] {
			words = words[1:]
			continue
		}
		if w == "function" { // function NAME { …
			words = words[min(2, len(words)):]
			continue
		}
		if w == "for" || w == "select" || w == "case" {
			words = nil // loop/case headers only expand words
		}
		break
	}
	if len(words) == 0 {
		// Nothing runs; only output redirections ("> file" truncates) matter.
		keep := false
		for _, r := range c.redirs {
			if !harmless(r) && r.op != "<" && r.op != "<<" && r.op != "<<-" && r.op != "<<<" {
				keep = true
			}
		}
		if !keep {
			return bashSub{}, nil, false
		}
	}

	// Leading assignments. Deny views strip all of them; allow views strip
	// only the ones that cannot change what the command does (spec §8 "safe
	// env assignments stripped").
	nAssign, unsafe := 0, false
	for nAssign < len(words) && isAssignment(words[nAssign]) {
		if dangerousEnv(assignmentName(words[nAssign].raw)) {
			unsafe = true
		}
		nAssign++
	}
	rest := words[nAssign:]
	strict := stripWrappers(rest, false)
	lenient := stripWrappers(rest, true)

	var s bashSub
	add := func(list *[]string, v string) {
		if v == "" {
			return
		}
		for _, x := range *list {
			if x == v {
				return
			}
		}
		*list = append(*list, v)
	}

	if !unsafe && len(strict) > 0 {
		add(&s.allow, render(strict, c.redirs, redirNotHarmless, false))
	}
	add(&s.allow, render(words, c.redirs, redirNotHarmless, false))

	for _, v := range s.allow {
		add(&s.deny, v)
	}
	add(&s.deny, render(words, c.redirs, redirAll, false))
	add(&s.deny, render(lenient, c.redirs, redirAll, false))
	add(&s.deny, render(lenient, c.redirs, redirNone, false))
	add(&s.deny, render(lenient, c.redirs, redirNotHarmless, false))
	add(&s.deny, render(lenient, c.redirs, redirNone, true))
	add(&s.deny, render(lenient, c.redirs, redirNotHarmless, true))
	// {rm,-rf,x} → rm -rf x (brace expansion in command position).
	if len(lenient) > 0 {
		if exp, ok := braceWords(lenient[0]); ok {
			add(&s.deny, render(append(exp, lenient[1:]...), c.redirs, redirNone, true))
		}
	}
	// /bin/rm -rf x → rm -rf x, so that Bash(rm *) still matches.
	if len(lenient) > 0 && !lenient[0].expand && strings.Contains(lenient[0].raw, "/") {
		base := path.Base(unquoteWord(lenient[0].raw))
		if base != "" && base != "/" && base != "." {
			short := append([]shWord{{raw: base}}, lenient[1:]...)
			add(&s.deny, render(short, c.redirs, redirNone, true))
			add(&s.deny, render(short, c.redirs, redirAll, false))
		}
	}

	s.text = render(lenient, c.redirs, redirAll, false)
	if len(lenient) == 0 {
		s.text = render(words, c.redirs, redirAll, false)
	}
	if s.text == "" {
		return bashSub{}, nil, false
	}
	return s, lenient, true
}

// braceWords expands a plain, unnested brace list "{a,b,c}" into words, as
// bash does before running it. Empty items disappear.
func braceWords(w shWord) ([]shWord, bool) {
	r := w.raw
	if w.expand || w.quoted || len(r) < 3 || r[0] != '{' || r[len(r)-1] != '}' || !strings.Contains(r, ",") ||
		strings.ContainsAny(r[1:len(r)-1], "{}") {
		return nil, false
	}
	var out []shWord
	for _, item := range strings.Split(r[1:len(r)-1], ",") {
		if item != "" {
			out = append(out, shWord{raw: item})
		}
	}
	return out, len(out) > 0
}

type redirMode int

const (
	redirAll redirMode = iota
	redirNone
	redirNotHarmless
)

// render joins words with single spaces and appends the selected
// redirections in source order ("2>&1", "> out.txt"). unquote applies quote
// removal to words without expansions.
func render(words []shWord, redirs []shRedir, mode redirMode, unquote bool) string {
	var b strings.Builder
	for _, w := range words {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if unquote && !w.expand {
			b.WriteString(unquoteWord(w.raw))
		} else {
			b.WriteString(w.raw)
		}
	}
	if mode == redirNone {
		return b.String()
	}
	for _, r := range redirs {
		if mode == redirNotHarmless && harmless(r) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r.fd)
		b.WriteString(r.op)
		if !isFDDup(r) {
			b.WriteByte(' ')
		}
		b.WriteString(r.target.raw)
	}
	return b.String()
}

// isAssignment reports whether w is NAME=value, NAME+=value or NAME[i]=value
// (the name part unquoted, as the shell requires).
func isAssignment(w shWord) bool {
	eq := strings.IndexByte(w.raw, '=')
	if eq <= 0 {
		return false
	}
	name := strings.TrimSuffix(w.raw[:eq], "+")
	if i := strings.IndexByte(name, '['); i > 0 && strings.HasSuffix(name, "]") {
		name = name[:i]
	}
	return isName(name)
}

func assignmentName(raw string) string {
	eq := strings.IndexByte(raw, '=')
	name := strings.TrimSuffix(raw[:eq], "+")
	if i := strings.IndexByte(name, '['); i > 0 {
		name = name[:i]
	}
	return name
}

// dangerousEnv reports whether assigning name can change which program runs
// or what it executes (loader, interpreter, shell, git, editor hooks). Such a
// prefix is kept in the allow view, so `PATH=/tmp/x ls` is not allowed by
// `Bash(ls *)`. Claude Code uses an allowlist of safe names instead; this
// list errs towards blocking the known ways to inject code (see doc.go).
func dangerousEnv(name string) bool {
	switch name {
	case "PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND",
		"CDPATH", "GLOBIGNORE", "HOME", "ZDOTDIR", "TMPDIR",
		"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONUSERBASE",
		"NODE_OPTIONS", "NODE_PATH", "PERL5LIB", "PERL5OPT", "PERLLIB", "RUBYLIB", "RUBYOPT",
		"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
		"EDITOR", "VISUAL", "PAGER", "MANPAGER", "BROWSER", "LESSOPEN", "LESSCLOSE",
		"SSH_ASKPASS", "SUDO_ASKPASS", "GCONV_PATH", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
		"RUSTC_WRAPPER", "RUSTC", "CARGO_HOME", "GOFLAGS", "GOTOOLCHAIN", "CC", "CXX", "LD",
		"MAKEFLAGS", "MAKE", "SHELL", "BASH", "PROMPT", "PS1", "TERMINFO", "NPM_CONFIG_PREFIX":
		return true
	}
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "BASH_FUNC_", "NPM_CONFIG_", "npm_config_", "DOTNET_", "MALLOC_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// stripWrappers removes leading wrapper commands (spec §8: timeout, time,
// nice, nohup, stdbuf, command, builtin, noglob, bare xargs). Strict mode
// follows each wrapper's option grammar exactly and stops at anything else;
// lenient mode (deny/ask) also skips unknown options, xargs with options,
// and env, exec, sudo, doas and setsid, so that `timeout --weird 5 rm -rf /`
// and `sudo rm -rf /` still meet `Bash(rm *)`.
func stripWrappers(ws []shWord, lenient bool) []shWord {
	for n := 0; n < 16 && len(ws) > 1; n++ {
		if ws[0].expand {
			break
		}
		var next int
		switch unquoteWord(ws[0].raw) {
		case "timeout":
			next = timeoutArgs(ws, lenient)
		case "time":
			next = simpleOpts(ws, lenient, []string{"-p"}, []string{"-o", "-f", "--output", "--format"})
		case "nice":
			next = niceArgs(ws, lenient)
		case "nohup", "builtin", "noglob":
			next = simpleOpts(ws, lenient, nil, nil)
		case "stdbuf":
			next = stdbufArgs(ws, lenient)
		case "command":
			next = commandArgs(ws)
		case "xargs":
			next = xargsArgs(ws, lenient)
		case "env":
			if lenient {
				next = envArgs(ws)
			}
		case "exec":
			if lenient {
				next = simpleOpts(ws, true, []string{"-c", "-l"}, []string{"-a"})
			}
		case "sudo", "doas":
			if lenient {
				next = simpleOpts(ws, true, nil, []string{"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U",
					"--user", "--group", "--chdir", "--prompt", "--host"})
			}
		case "setsid":
			if lenient {
				next = simpleOpts(ws, true, nil, nil)
			}
		}
		if next <= 0 || next >= len(ws) {
			break
		}
		ws = ws[next:]
	}
	return ws
}

func arg(ws []shWord, i int) string {
	if i < len(ws) {
		return unquoteWord(ws[i].raw)
	}
	return ""
}

// simpleOpts handles wrappers whose options are flags (noArg) or flags with
// one argument (withArg; strict mode ignores withArg). It returns the index
// of the wrapped command or -1.
func simpleOpts(ws []shWord, lenient bool, noArg, withArg []string) int {
	i := 1
	for i < len(ws) {
		a := arg(ws, i)
		switch {
		case a == "--":
			return i + 1
		case contains(noArg, a):
			i++
		case lenient && contains(withArg, a):
			i += 2
		case lenient && strings.HasPrefix(a, "-") && len(a) > 1:
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			return -1
		default:
			return i
		}
	}
	return -1
}

func timeoutArgs(ws []shWord, lenient bool) int {
	i := 1
	for i < len(ws) {
		a := arg(ws, i)
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || len(a) == 1 {
			break
		}
		switch {
		case a == "--foreground" || a == "--preserve-status" || a == "-v" || a == "--verbose":
			i++
		case a == "-s" || a == "-k" || a == "--signal" || a == "--kill-after":
			i += 2
		case strings.HasPrefix(a, "--signal=") || strings.HasPrefix(a, "--kill-after="):
			i++
		case strings.HasPrefix(a, "-s") || strings.HasPrefix(a, "-k"):
			i++ // -sKILL, -k5
		case lenient:
			i++
		default:
			return -1
		}
	}
	if i >= len(ws) || (!lenient && !isDuration(arg(ws, i))) {
		return -1
	}
	return i + 1
}

// isDuration matches timeout(1) durations: 10, 2.5, 5s, 1m, 1h, 1d.
func isDuration(s string) bool {
	if n := len(s); n > 0 && strings.IndexByte("smhd", s[n-1]) >= 0 {
		s = s[:n-1]
	}
	if s == "" || s == "." || strings.Count(s, ".") > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return true
}

func niceArgs(ws []shWord, lenient bool) int {
	i := 1
	for i < len(ws) {
		a := arg(ws, i)
		switch {
		case a == "--":
			return i + 1
		case a == "-n" || a == "--adjustment":
			i += 2
		case strings.HasPrefix(a, "--adjustment=") || (strings.HasPrefix(a, "-n") && isSignedInt(a[2:])):
			i++
		case strings.HasPrefix(a, "-") && isSignedInt(a[1:]):
			i++ // nice -10
		case lenient && strings.HasPrefix(a, "-") && len(a) > 1:
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			return -1
		default:
			return i
		}
	}
	return -1
}

func isSignedInt(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	return isDigits(s)
}

func stdbufArgs(ws []shWord, lenient bool) int {
	i := 1
	for i < len(ws) {
		a := arg(ws, i)
		switch {
		case a == "--":
			return i + 1
		case a == "-i" || a == "-o" || a == "-e" || a == "--input" || a == "--output" || a == "--error":
			i += 2
		case len(a) > 2 && (strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "-o") || strings.HasPrefix(a, "-e")) && !strings.HasPrefix(a, "--"):
			i++ // -oL, -o0
		case strings.HasPrefix(a, "--input=") || strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "--error="):
			i++
		case lenient && strings.HasPrefix(a, "-") && len(a) > 1:
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			return -1
		default:
			return i
		}
	}
	return -1
}

// commandArgs: `command -p x` runs x; `command -v x` / `-V` only describe x.
func commandArgs(ws []shWord) int {
	i := 1
	for i < len(ws) {
		a := arg(ws, i)
		switch {
		case a == "--":
			return i + 1
		case a == "-p":
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			return -1
		default:
			return i
		}
	}
	return -1
}

// xargsArgs: strict mode strips only bare xargs (spec §8); lenient mode also
// skips GNU xargs options.
func xargsArgs(ws []shWord, lenient bool) int {
	if !lenient {
		if a := arg(ws, 1); strings.HasPrefix(a, "-") {
			return -1
		}
		return 1
	}
	i := 1
	for i < len(ws) {
		a := arg(ws, i)
		switch {
		case a == "--":
			return i + 1
		case contains([]string{"-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a",
			"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--eof",
			"--process-slot-var"}, a):
			i += 2
		case strings.HasPrefix(a, "-") && len(a) > 1:
			i++
		default:
			return i
		}
	}
	return -1
}

// envArgs (lenient only): env [-i] [-u NAME] [NAME=VALUE…] command.
func envArgs(ws []shWord) int {
	i := 1
	for i < len(ws) {
		a := arg(ws, i)
		switch {
		case a == "--":
			i++
		case a == "-u" || a == "--unset" || a == "-C" || a == "--chdir" || a == "-S" || a == "--split-string":
			i += 2
		case strings.HasPrefix(a, "-"):
			i++
		case isAssignment(ws[i]):
			i++
		default:
			return i
		}
	}
	return -1
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// matchAllow reports whether one allow pattern covers the whole command on
// its own: every subcommand matches one of its allow views. (Set.Evaluate
// lets different rules cover different subcommands; see bashAllow.) A
// wildcard-free rule also matches when it equals the whole command (so
// `Bash(make && make install)` allows exactly that line), but a glob is
// never applied to the whole line: `Bash(echo *)` must not allow
// `echo x && rm -rf ~`.
func (a *bashAnalysis) matchAllow(g *starGlob) bool {
	if !g.hasStar() && g.bare == nil && g.literal() == a.full {
		return true
	}
	if a.err != nil || len(a.subs) == 0 {
		return false
	}
	for i := range a.subs {
		if !a.subs[i].denyOnly && !a.subs[i].allowedBy(g) {
			return false
		}
	}
	return true
}

// allowedBy reports whether g matches one of the subcommand's allow views.
func (s *bashSub) allowedBy(g *starGlob) bool {
	for _, v := range s.allow {
		if g.match(v) {
			return true
		}
	}
	return false
}

// matchAny reports whether a deny/ask rule or an `if` filter matches: any
// subcommand view, or the whole line. The caller handles a.err.
func (a *bashAnalysis) matchAny(g *starGlob) bool {
	if g.match(a.full) {
		return true
	}
	for i := range a.subs {
		for _, v := range a.subs[i].deny {
			if g.match(v) {
				return true
			}
		}
	}
	return false
}
