package zygote

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Recognising the launchers people write (issue 14, item 2). FromCommand reads a hook's
// command as the shell would, with mvdan.cc/sh's parser and expander rather than
// hand-rolled splitting, and answers the `python [options] SCRIPT ARGS` it amounts to,
// with the environment that Python would see. What it recognises:
//
//   - `python3 …`, `python …`, `python3.N …`, `pypy3` excluded (a different runtime), by
//     name on PATH or by any path, words using $VAR / ${VAR} / ~ from the hook's
//     environment, quoted or not; leading `VAR=value` assignments; a leading `exec`;
//   - a script file started directly whose #! line names a Python interpreter, directly
//     (`#!/usr/bin/python3 -u`) or through `#!/usr/bin/env python3`;
//   - the exec form (command + args, no shell) with the same rules.
//
// Everything else is an error wrapping ErrFallback and runs as it always did: pipes,
// lists, redirections, command substitution, globs, `uv run` (uv resolves and may create
// an environment per script; hookd does not model that), shell wrapper scripts (`bash
// x.sh`: a shell sits between hookd and Python and changes the environment).
//
// The shell form runs under /bin/sh; FromCommand models dash (Debian's and Ubuntu's
// /bin/sh), which exports PWD (kept from the environment when it names the working
// directory, else the physical working directory) and otherwise passes the environment
// through. With another /bin/sh the shell form falls back.

// FromCommand returns the Spec that command (shell form, args == nil) or command + args
// (exec form) amounts to, run in dir with env.
func FromCommand(command string, args []string, env []string, dir string) (Spec, error) {
	if args != nil {
		return fromArgv(command, args, env, dir, env)
	}
	if !shIsDash() {
		return Spec{}, fallback("/bin/sh is not dash; its environment handling is not modelled")
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(command), "")
	if err != nil {
		return Spec{}, fallback("command does not parse: %v", err)
	}
	if len(f.Stmts) != 1 {
		return Spec{}, fallback("not a single command")
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Args) == 0 {
		return Spec{}, fallback("not a single simple command")
	}
	var bad error
	syntax.Walk(st, func(n syntax.Node) bool {
		if bad != nil {
			return false
		}
		switch n := n.(type) {
		case nil, *syntax.Stmt, *syntax.CallExpr, *syntax.Word, *syntax.SglQuoted, *syntax.DblQuoted:
		case *syntax.Assign:
			if n.Append || n.Array != nil || n.Index != nil || n.Naked || n.Value == nil && n.Name == nil {
				bad = fallback("assignment form not modelled")
			} else if n.Name != nil && (n.Name.Value == "PATH" || n.Name.Value == "IFS") {
				bad = fallback("a command-local %s is not modelled", n.Name.Value)
			}
		case *syntax.Lit:
		case *syntax.ParamExp:
			if n.Excl || n.Length || n.Width || n.Index != nil || n.Slice != nil || n.Repl != nil || n.Names != 0 || n.Exp != nil {
				bad = fallback("parameter expansion form not modelled")
			} else if n.Param != nil && !isName(n.Param.Value) {
				bad = fallback("special parameter $%s", n.Param.Value)
			}
		default:
			bad = fallback("%T not modelled", n)
		}
		return true
	})
	if bad != nil {
		return Spec{}, bad
	}
	// Unquoted glob characters make the shell read the directory.
	for _, w := range call.Args {
		for _, p := range w.Parts {
			if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "*?[") {
				return Spec{}, fallback("glob in command")
			}
		}
	}
	cfg := &expand.Config{Env: expand.ListEnviron(withoutIFS(env)...), NoUnset: false}
	childEnv := slices.Clone(env)
	for _, a := range call.Assigns {
		v := ""
		if a.Value != nil {
			if v, err = expand.Literal(cfg, a.Value); err != nil {
				return Spec{}, fallback("assignment: %v", err)
			}
		}
		childEnv = setEnv(childEnv, a.Name.Value, v)
	}
	fields, err := expand.Fields(cfg, call.Args...)
	if err != nil {
		return Spec{}, fallback("expansion: %v", err)
	}
	for _, f := range fields {
		if strings.ContainsAny(f, "*?[") {
			return Spec{}, fallback("expanded word has glob characters")
		}
	}
	if len(fields) > 0 && fields[0] == "exec" && len(call.Assigns) == 0 {
		fields = fields[1:]
	}
	if len(fields) == 0 {
		return Spec{}, fallback("no command")
	}
	childEnv = dashPWD(childEnv, dir)
	return fromArgv(fields[0], fields[1:], env, dir, childEnv)
}

// fromArgv resolves name (looked up on lookupEnv's PATH like execvp) run with args.
func fromArgv(name string, args []string, lookupEnv []string, dir string, childEnv []string) (Spec, error) {
	if filepath.Base(name) == "uv" && len(args) > 0 && args[0] == "run" {
		return Spec{}, uvRun(name, lookupEnv, dir)
	}
	path, err := lookPath(name, lookupEnv, dir)
	if err != nil {
		return Spec{}, fallback("%v", err)
	}
	if isPython(name) {
		return pythonSpec(name, path, args, dir, childEnv)
	}
	// A script run directly: the kernel reads its #! line; argv[0] of the script is the
	// path exec was given.
	interp, arg, err := shebang(path)
	if err != nil {
		return Spec{}, err
	}
	scriptArg := name
	if !strings.Contains(name, "/") {
		scriptArg = path // found on PATH: the shell passes dir/name
	}
	rest := append([]string{scriptArg}, args...)
	if filepath.Base(interp) == "env" {
		if arg == "" || strings.ContainsAny(arg, " \t") || strings.HasPrefix(arg, "-") || strings.Contains(arg, "=") || !isPython(arg) {
			return Spec{}, fallback("#! through env with %q not modelled", arg)
		}
		p, err := lookPath(arg, childEnv, dir)
		if err != nil {
			return Spec{}, fallback("%v", err)
		}
		return pythonSpec(arg, p, rest, dir, childEnv)
	}
	if !isPython(interp) {
		return Spec{}, fallback("not a Python launcher")
	}
	if arg != "" {
		rest = append([]string{arg}, rest...)
	}
	return pythonSpec(interp, interp, rest, dir, childEnv)
}

func pythonSpec(python, path string, args []string, dir string, env []string) (Spec, error) {
	var opts []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if !ModelledOptions[args[0]] {
			return Spec{}, fallback("interpreter option %q is not modelled", args[0])
		}
		opts = append(opts, args[0])
		args = args[1:]
	}
	if len(args) == 0 {
		return Spec{}, fallback("no script file")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	s := Spec{Python: python, Path: path, Options: opts, Script: args[0], Args: slices.Clone(args[1:]), Dir: dir, Env: env}
	return s, Check(s)
}

// uvRun is why `uv run [--script] FILE …` is not forked. Without uv the command fails
// exactly as it does without hookd ("uv: not found", exit 127): hookd runs it as it is.
// With uv, forking would need the interpreter uv resolves for the script (its inline
// metadata, the project's lock file, an environment uv may create) and the environment uv
// gives it (VIRTUAL_ENV, PATH, uv's own variables); that is not implemented, because uv is
// not installed where hookd is built and tested, and an untested model of it would be a
// guess. Such hooks run cold, exactly as without hookd (docs/zygote.md).
func uvRun(name string, env []string, dir string) error {
	if _, err := lookPath(name, env, dir); err != nil {
		return fallback("uv run: uv is not installed (%v); the command runs as it would without hookd", err)
	}
	return fallback("uv run: uv resolves the script's environment; not modelled, the command runs as it would without hookd")
}

// isPython reports whether a command name or path names a CPython interpreter.
func isPython(name string) bool {
	b := filepath.Base(name)
	if b == "python" || b == "python3" {
		return true
	}
	if v, ok := strings.CutPrefix(b, "python3."); ok && v != "" {
		return strings.Trim(v, "0123456789") == ""
	}
	return false
}

// shebang reads path's #! line as Linux does: the interpreter, then everything after it
// (trimmed) as one optional argument.
func shebang(path string) (string, string, error) {
	if syscall.Access(path, 0x1 /* X_OK */) != nil {
		return "", "", fallback("%s is not executable", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", fallback("%v", err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return "", "", fallback("cannot read %s", path)
	}
	rest, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "#!")
	if !ok {
		return "", "", fallback("%s has no #! line", path)
	}
	rest = strings.Trim(rest, " \t")
	interp, arg, _ := strings.Cut(rest, " ")
	if i := strings.IndexByte(rest, '\t'); i >= 0 && (i < len(interp)) {
		interp, arg = rest[:i], rest[i+1:]
	}
	if !filepath.IsAbs(interp) {
		return "", "", fallback("relative #! interpreter")
	}
	return interp, strings.Trim(arg, " \t"), nil
}

// lookPath finds name as execvp does with env's PATH (relative entries from dir).
func lookPath(name string, env []string, dir string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return "", errors.New(name + ": not found")
		}
		return p, nil
	}
	pathVar, ok := "", false
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "PATH="); found {
			pathVar, ok = v, true
		}
	}
	if !ok {
		return "", errors.New("no PATH")
	}
	for _, d := range filepath.SplitList(pathVar) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && syscall.Access(p, 0x1) == nil {
			return p, nil
		}
	}
	return "", errors.New(name + ": not found on PATH")
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func withoutIFS(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "IFS=") {
			out = append(out, kv)
		}
	}
	return out
}

// setEnv sets name=value in env, in place of an existing entry or at the end.
func setEnv(env []string, name, value string) []string {
	for i, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == name {
			env[i] = name + "=" + value
			return env
		}
	}
	return append(env, name+"="+value)
}

// dashPWD is what dash does to PWD at start-up: keep it when it is absolute and names the
// working directory, else set it to the physical working directory; either way exported.
func dashPWD(env []string, dir string) []string {
	if v, ok := lookup(env, "PWD"); ok && filepath.IsAbs(v) {
		var a, b syscall.Stat_t
		if syscall.Stat(v, &a) == nil && syscall.Stat(dir, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino {
			return env
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	return setEnv(env, "PWD", real)
}

func lookup(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

var shDash = sync.OnceValue(func() bool {
	p, err := filepath.EvalSymlinks("/bin/sh")
	return err == nil && filepath.Base(p) == "dash"
})

func shIsDash() bool { return shDash() }
