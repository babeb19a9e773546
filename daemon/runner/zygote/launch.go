package zygote

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/hookd/hookd/daemon/runner/osproc"
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
//   - the exec form (command + args, no shell) with the same rules;
//   - a bash or sh wrapper script whose only command is one of these (wrapperSpec).
//
// Everything else is an error wrapping ErrFallback and runs as it always did: pipes,
// lists, redirections, command substitution, globs, `uv run` (uvRun), wrapper scripts that
// do anything else.
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
	fields, assigns, err := commandOf(f.Stmts[0], expand.ListEnviron(withoutIFS(env)...), false)
	if err != nil {
		return Spec{}, err
	}
	childEnv := slices.Clone(env)
	for _, a := range assigns {
		childEnv = setEnv(childEnv, a[0], a[1])
	}
	if len(fields) > 0 && fields[0] == "exec" && len(assigns) == 0 {
		fields = fields[1:]
	}
	if len(fields) == 0 {
		return Spec{}, fallback("no command")
	}
	childEnv = dashPWD(childEnv, dir)
	return fromArgv(fields[0], fields[1:], env, dir, childEnv)
}

// commandOf checks that st is one simple command of the modelled forms (FromCommand) and
// expands it with env: its fields and its leading assignments (name, value). With
// positional, $0, $1…$9 and $@ are allowed (a wrapper script's own arguments, from env).
func commandOf(st *syntax.Stmt, env expand.Environ, positional bool) ([]string, [][2]string, error) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Args) == 0 {
		return nil, nil, fallback("not a single simple command")
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
			} else if n.Param != nil && !isName(n.Param.Value) && !(positional && (n.Param.Value == "@" || len(n.Param.Value) == 1 && n.Param.Value[0] >= '0' && n.Param.Value[0] <= '9')) {
				bad = fallback("special parameter $%s", n.Param.Value)
			}
		default:
			bad = fallback("%T not modelled", n)
		}
		return true
	})
	if bad != nil {
		return nil, nil, bad
	}
	// Unquoted glob characters make the shell read the directory.
	for _, w := range call.Args {
		for _, p := range w.Parts {
			if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "*?[") {
				return nil, nil, fallback("glob in command")
			}
		}
	}
	cfg := &expand.Config{Env: env, NoUnset: false}
	var assigns [][2]string
	for _, a := range call.Assigns {
		v := ""
		if a.Value != nil {
			var err error
			if v, err = expand.Literal(cfg, a.Value); err != nil {
				return nil, nil, fallback("assignment: %v", err)
			}
		}
		assigns = append(assigns, [2]string{a.Name.Value, v})
	}
	fields, err := expand.Fields(cfg, call.Args...)
	if err != nil {
		return nil, nil, fallback("expansion: %v", err)
	}
	for _, f := range fields {
		if strings.ContainsAny(f, "*?[") {
			return nil, nil, fallback("expanded word has glob characters")
		}
	}
	return fields, assigns, nil
}

// fromArgv resolves name (looked up on lookupEnv's PATH like execvp) run with args.
func fromArgv(name string, args []string, lookupEnv []string, dir string, childEnv []string) (Spec, error) {
	return fromArgvIn(name, args, lookupEnv, dir, childEnv, true)
}

// fromArgvIn is fromArgv; wrappers says whether a shell wrapper script may be read (not
// inside one: one level only).
func fromArgvIn(name string, args []string, lookupEnv []string, dir string, childEnv []string, wrappers bool) (Spec, error) {
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
	if sh := shellKind(path); sh != "" {
		// `bash x.sh ARGS`, `sh x.sh ARGS`: the shell reads the script file.
		if !wrappers || len(args) == 0 || strings.HasPrefix(args[0], "-") || strings.HasPrefix(args[0], "+") {
			return Spec{}, fallback("%s with options, -c or no script file is not modelled", sh)
		}
		return wrapperSpec(sh, args[0], args[1:], dir, childEnv)
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
		if arg == "" || strings.ContainsAny(arg, " \t") || strings.HasPrefix(arg, "-") || strings.Contains(arg, "=") {
			return Spec{}, fallback("#! through env with %q not modelled", arg)
		}
		p, err := lookPath(arg, childEnv, dir)
		if err != nil {
			return Spec{}, fallback("%v", err)
		}
		if sh := shellKind(p); sh != "" && wrappers {
			return wrapperSpec(sh, scriptArg, args, dir, childEnv)
		}
		if !isPython(arg) {
			return Spec{}, fallback("#! through env with %q not modelled", arg)
		}
		return pythonSpec(arg, p, rest, dir, childEnv)
	}
	if sh := shellKind(interp); sh != "" && wrappers && arg == "" {
		return wrapperSpec(sh, scriptArg, args, dir, childEnv)
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
		if !modelledOptions[args[0]] {
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
	return s, check(s)
}

// A shell wrapper script — `bash run.sh`, `sh run.sh`, or `./run.sh` with a #!/bin/bash,
// #!/bin/sh or #!/usr/bin/env bash line — whose only command is `[exec] python3 …`
// (words may use the script's arguments $0…$9 and "$@", and the environment) is forked
// as that Python command, with the environment the shell would give it. Read with
// mvdan.cc/sh's parser (bash or POSIX grammar), expanded with its expander. What the
// shells do to the environment, as checked against bash 5.2 and dash 0.5 by the tests:
//
//   - both: PWD kept when it names the working directory, else set to the physical one;
//   - bash: SHLVL incremented at start (unset or empty → 1), decremented again by
//     `exec`; OLDPWD dropped unless it names a directory; without `exec`, `_` set to the
//     command's path. bash run with BASH_ENV, exported functions (BASH_FUNC_*),
//     SHELLOPTS, BASHOPTS or POSIXLY_CORRECT in the environment, or a SHLVL that is not a
//     number from 0 to 997, is not modelled (it would run code, trace, warn or reset).
//
// Anything else in the script — a second command, `set -e`, `cd`, a redirection, `$(…)`
// — and it runs as it always did.
func wrapperSpec(shell, arg0 string, args []string, dir string, env []string) (Spec, error) {
	file := arg0
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	data, err := osproc.ReadRegular(file, 64<<10+1) // never waits on a FIFO
	if err != nil || len(data) > 64<<10 {
		return Spec{}, fallback("wrapper script %s: not a readable small file", arg0)
	}
	lang := syntax.LangPOSIX
	shellEnv := dashPWD(slices.Clone(env), dir)
	level := 0
	if shell == "bash" {
		lang = syntax.LangBash
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			switch {
			case k == "BASH_ENV" && v != "", strings.HasPrefix(k, "BASH_FUNC_"), k == "SHELLOPTS", k == "BASHOPTS", k == "POSIXLY_CORRECT":
				return Spec{}, fallback("bash with %s in the environment is not modelled", k)
			}
		}
		if v, ok := lookup(env, "SHLVL"); ok && v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 997 || strconv.Itoa(n) != v {
				return Spec{}, fallback("bash with SHLVL=%q is not modelled", v)
			}
			level = n
		}
		shellEnv = setEnv(shellEnv, "SHLVL", strconv.Itoa(level+1))
		if v, ok := lookup(shellEnv, "OLDPWD"); ok {
			if st, err := os.Stat(v); err != nil || !st.IsDir() {
				shellEnv = unsetEnv(shellEnv, "OLDPWD")
			}
		}
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(bytes.NewReader(data), arg0)
	if err != nil {
		return Spec{}, fallback("wrapper script does not parse: %v", err)
	}
	if len(f.Stmts) != 1 {
		return Spec{}, fallback("wrapper script does more than run one command")
	}
	fields, assigns, err := commandOf(f.Stmts[0], positionalEnv{expand.ListEnviron(withoutIFS(shellEnv)...), arg0, args}, true)
	if err != nil {
		return Spec{}, err
	}
	execd := false
	if len(fields) > 0 && fields[0] == "exec" && len(assigns) == 0 {
		fields, execd = fields[1:], true
	}
	if len(fields) == 0 {
		return Spec{}, fallback("no command")
	}
	childEnv := slices.Clone(shellEnv)
	for _, a := range assigns {
		childEnv = setEnv(childEnv, a[0], a[1])
	}
	if shell == "bash" {
		if execd {
			childEnv = setEnv(childEnv, "SHLVL", strconv.Itoa(level))
		} else {
			p, err := lookPath(fields[0], shellEnv, dir)
			if err != nil {
				return Spec{}, fallback("%v", err)
			}
			if strings.Contains(fields[0], "/") {
				p = fields[0]
			}
			childEnv = setEnv(childEnv, "_", p)
		}
	}
	return fromArgvIn(fields[0], fields[1:], shellEnv, dir, childEnv, false)
}

// shellKind is "bash" or "dash" when path is (a link to) one of those shells, else "".
func shellKind(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	switch filepath.Base(real) {
	case "bash", "dash":
		return filepath.Base(real)
	}
	return ""
}

// positionalEnv answers a wrapper script's $0, $1…$9 and $@ from its arguments.
type positionalEnv struct {
	expand.Environ
	zero string
	args []string
}

func (e positionalEnv) Get(name string) expand.Variable {
	switch {
	case name == "0":
		return expand.Variable{Set: true, Kind: expand.String, Str: e.zero}
	case name == "@" || name == "*":
		return expand.Variable{Set: true, Kind: expand.Indexed, List: e.args}
	case len(name) == 1 && name[0] >= '1' && name[0] <= '9':
		if i := int(name[0] - '1'); i < len(e.args) {
			return expand.Variable{Set: true, Kind: expand.String, Str: e.args[i]}
		}
		return expand.Variable{}
	}
	return e.Environ.Get(name)
}

func unsetEnv(env []string, name string) []string {
	return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
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
	f, err := osproc.OpenRegular(path) // never waits on a FIFO
	if err != nil {
		return "", "", fallback("%v", err)
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
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
