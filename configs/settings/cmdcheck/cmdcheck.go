// Package cmdcheck checks a hook's command line without running it: whether the program
// it starts, or the script an interpreter is given, exists (Missing). It reads the line
// with the shell parser the permission rules use (mvdan.cc/sh) and resolves only what is
// known without a shell: literals, quotes, $CLAUDE_PROJECT_DIR (given the project),
// $HOME and a leading ~. It is the settings linter's (configs/settings, lint.go) and
// `hookd validate`'s, and imports no hookd package but configs/suggest.
package cmdcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/hookd/hookd/configs/suggest"
)

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

// Missing says what is missing for a command hook (command, and args in exec form) to start: its program (a path
// that does not exist or is not executable; with path != "", also a bare name not on
// that PATH), or the script file an interpreter is given. "" when nothing is, or when
// the command is not one whose words can be known without running a shell (a variable
// other than $CLAUDE_PROJECT_DIR and $HOME, a substitution, a glob…). project resolves
// $CLAUDE_PROJECT_DIR and relative script paths (Claude Code runs hooks in the project
// directory); "" leaves both unchecked.
func Missing(command string, args []string, project, path string) string {
	var words []string
	if args != nil {
		// Exec form: Claude Code substitutes the placeholders itself; no shell.
		words = append([]string{command}, args...)
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
		if words, ok = FirstWords(command, project); !ok {
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

// FirstWords are the words of the first simple command of a shell command line,
// with environment assignments dropped and quotes removed, when every one of them is
// known without running a shell: literals, and $CLAUDE_PROJECT_DIR (with project), $HOME
// and a leading ~ (with the user's home). ok is false otherwise, and for anything that
// does not parse as POSIX shell.
func FirstWords(cmd, project string) (words []string, ok bool) {
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

// Program is the program a command handler starts, as IsForwarder in configs/settings
// reads it: the first word of a shell-form command after any VAR=value assignments (simple
// quoting removed), or the command itself in exec form. Not a shell parser, on purpose:
// see nextWord.
func Program(command string, args []string) string {
	prog := strings.TrimSpace(command)
	if args == nil {
		rest := prog
		for {
			prog, rest = nextWord(rest)
			if !isAssignment(prog) {
				break
			}
		}
	}
	return prog
}

func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := w[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// nextWord splits the first word off a shell command, with simple quoting ('…', "…",
// \x) removed. Enough to name the program of the commands hookd writes; not a shell
// parser, on purpose: IsForwarder must say yes for anything whose first word is hookc,
// even "hookc; other" or a line a real parser rejects, because hookd running such a
// handler would forward the event to itself. A parser (mvdan.cc/sh, as in rules and
// daemon/runner) would call those compound or invalid and answer no — the unsafe way.
func nextWord(s string) (word, rest string) {
	s = strings.TrimLeft(s, " \t\n")
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			} else {
				b.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|':
			return b.String(), s[i:]
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ""
}
