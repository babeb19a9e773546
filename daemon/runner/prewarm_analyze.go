package runner

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/hookd/hookd/daemon/runner/lookup"
	"github.com/hookd/hookd/daemon/runner/osproc"
)

// Which hooks are prewarmed by default ("safe by construction"; docs/performance.md).
//
// A prewarmed process runs whatever the hook does before reading stdin early — possibly
// minutes before the event, possibly for an event that never comes (the process is
// discarded on a settings change, an idle timeout, or shutdown). So by default hookd only
// prewarms a command that is, as written,
//
//  1. one simple command — no ; & | < > ( ) ` $( ), no globs, no comments, no newlines;
//     words may be quoted and may use $VAR / ${VAR} from the hook's environment and ~/,
//     and $(npm root -g) (or --global), a lookup of npm's global package directory, as
//     exactly that and nothing more (prewarm_subst.go). Its one side effect is npm's: each
//     run writes a debug log of ~600 bytes to ~/.npm/_logs (npm 11; npm prunes them to
//     logs-max, 10, but asynchronously, and a command this short exits first, so they
//     accumulate until a longer npm command runs). A prewarmed process runs it as Claude
//     Code's shell would at the event, so a spare that is never used leaves one such log
//     more than running natively; the analysis's own (cached) run leaves none;
//  2. an interpreter from interpreterFamilies (Python, Node, Bun, Ruby) running a script
//     file — not -c/-m/-p code or a script on stdin, nor -e code except node's below — or
//     a path to a script whose #! line names such an interpreter (directly or through env);
//  3. whose script file exists, is at most 1 MiB, and visibly reads stdin (stdinPatterns):
//     a script that never reads stdin would run to completion before its event. For Node,
//     a module the script requires or imports by a literal relative path counts as the
//     script (a package's bin is often a launcher of the module that reads stdin).
//
// The one exception to "a script file": `node -e CODE` (or nodejs; --eval) whose CODE, as
// written in the command, visibly reads stdin by the same rule 3 — its literal relative
// requires, resolved from the working directory, count as the code — with no option or
// NODE_OPTIONS that preloads code before it (prewarm_nodeeval.go). The code is part of the
// command, so an edit of it is a new hook revision and a new prewarm key.
//
// Shells (sh, bash, zsh) are deliberately not on the list: shell hooks commonly log, call
// git or date before `cat`, and a shell's start-up is only a few milliseconds, so
// prewarming them gains little for the risk. Set "prewarm": true on such a hook in
// hookd's configuration to prewarm it anyway.
//
// The analysis also names the file whose changes invalidate prewarmed processes: the
// script, or the program itself when it is a path, or (for command lines the analysis
// does not accept) the first word that names an existing file.

// interpreterFamilies maps an interpreter's base name to its family.
var interpreterFamilies = map[string]string{
	"python": "python", "python3": "python", "pypy3": "python",
	"node": "node", "nodejs": "node", "bun": "node",
	"ruby": "ruby",
}

// shells run scripts too, but are not prewarmed by default (see above); the script they
// run is still the file whose changes invalidate prewarmed processes.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true}

var pythonVersioned = regexp.MustCompile(`^python3\.\d+$`)

func interpreterFamily(name string) string {
	name = filepath.Base(name)
	if f, ok := interpreterFamilies[name]; ok {
		return f
	}
	if pythonVersioned.MatchString(name) {
		return "python"
	}
	return ""
}

// stdinPatterns recognise a script that reads its standard input.
var stdinPatterns = map[string]*regexp.Regexp{
	"python": regexp.MustCompile(`\bstdin\b|\binput\s*\(|\bfileinput\b|\bopen\(\s*0\s*[,)]`),
	"node":   regexp.MustCompile(`\bstdin\b|readFileSync\(\s*0\s*[,)]|readSync\(\s*0\s*,`),
	"ruby":   regexp.MustCompile(`\bstdin\b|\bSTDIN\b|\bARGF\b|\bgets\b`),
}

// Options that run code instead of a script file, and options that take a separate value.
var (
	evalOptions = map[string][]string{
		"python": {"-c", "-m", "-", "-i"},
		"node":   {"-e", "--eval", "-p", "--print", "-", "-i", "--interactive", "-c", "--check", "--test"},
		"ruby":   {"-e", "-", "-n", "-p"},
		"shell":  {"-c", "-s", "-i", "-"},
	}
	valueOptions = map[string][]string{
		"python": {"-W", "-X", "--check-hash-based-pycs"},
		"node":   {"-r", "--require", "--import", "--loader", "--experimental-loader", "--title", "--input-type", "--conditions", "-C"},
		"ruby":   {"-I", "-r", "-C", "-E", "--encoding"},
		"shell":  {"-o", "+o", "-O", "+O"},
	}
)

const (
	maxAnalyzeBytes = 1 << 20
	maxHashBytes    = 64 << 10
)

// scriptInfo is the analysis of one hook command.
type scriptInfo struct {
	script string // the file whose change invalidates prewarmed processes; "" if none
	fp     fileFP // script's fingerprint when analysed
	safe   bool   // prewarm under PrewarmAuto
	reason string // why not safe (or the interpreter family when safe)
	ahead  bool   // safe, and run by node itself: its start-up (requiring modules) writes nothing
	// pending: a lookup the command needs is still running (analyzeFor without wait); the
	// analysis is to be done again, not kept.
	pending bool
}

// fresh reports whether the script is unchanged since the analysis; without full, by
// stat alone.
func (i *scriptInfo) fresh(full bool) bool {
	if i.script == "" {
		return true
	}
	if full {
		return fingerprint(i.script) == i.fp
	}
	return statFP(i.script).SameStat(i.fp)
}

// warmAhead reports whether a safe hook is prewarmed before its first event (Pool.Warm).
func (i *scriptInfo) warmAhead() bool { return i.safe && i.ahead }

func (i *scriptInfo) same(o *scriptInfo) bool { return i.script == o.script && i.fp == o.fp }

func (i *scriptInfo) matches(fp fileFP) bool { return i.script == "" || fp == i.fp }

// fileFP identifies one version of a file (osproc.FileFP).
type fileFP = osproc.FileFP

func fingerprint(path string) fileFP { return osproc.Fingerprint(path, maxHashBytes) }

func statFP(path string) fileFP { return osproc.StatFP(path) }

// AnalyzeCommand reports whether hookd would prewarm spec by default, why not, and the
// file whose changes invalidate its prewarmed processes.
func AnalyzeCommand(spec ProcSpec) (safe bool, reason, script string) {
	i := analyze(spec)
	return i.safe, i.reason, i.script
}

func analyze(spec ProcSpec) *scriptInfo { return analyzeFor(spec, true) }

// analyzeFor is analyze; without wait, a lookup whose answer is not known yet makes the
// analysis pending (scriptInfo.pending) instead of waiting for it.
func analyzeFor(spec ProcSpec, wait bool) *scriptInfo {
	info := &scriptInfo{}
	var words []string
	if spec.Args != nil {
		words = append([]string{spec.Command}, spec.Args...)
	} else {
		var ok bool
		var lookupErr string
		lookup := func(cmd string) (string, bool) {
			v, err := lookup.Cached(cmd, spec.Env, spec.Dir, wait)
			info.pending = info.pending || errors.Is(err, lookup.ErrPending)
			if err != nil {
				lookupErr = "$(" + cmd + ") gave no usable path: " + err.Error()
			}
			return v, err == nil
		}
		words, ok = shellWords(spec.Command, spec.Env, lookup)
		if !ok {
			info.reason = "not a simple command (shell operators, substitutions, globs or comments)"
			if lookupErr != "" {
				info.reason = lookupErr
			}
			if info.script = looseScript(spec); info.script != "" {
				info.fp = fingerprint(info.script)
			}
			return info
		}
		for len(words) > 0 && isAssignment(words[0]) {
			words = words[1:]
		}
	}
	if len(words) == 0 || words[0] == "" {
		info.reason = "empty command"
		return info
	}
	info.script, info.safe, info.reason = classify(words, spec)
	info.ahead = info.safe && runByNode(words[0], info.script)
	if info.script != "" {
		info.fp = fingerprint(info.script)
	}
	return info
}

// runByNode reports whether prog (or, when prog is the script, its #! interpreter) is Node
// itself — not Bun, whose runtime caches the transpiled output of large files on disk.
func runByNode(prog, script string) bool {
	if interpreterFamily(prog) == "" && script != "" {
		prog = shebang(script)
	}
	switch filepath.Base(prog) {
	case "node", "nodejs":
		return true
	}
	return false
}

// classify applies rules 2 and 3 to a command's words.
func classify(words []string, spec ProcSpec) (script string, safe bool, reason string) {
	prog, args := words[0], words[1:]
	fam := interpreterFamily(prog)
	if shells[filepath.Base(prog)] {
		arg, ok := scriptArg("shell", args)
		if !ok {
			return looseWords(args, spec), false, "a shell command string (shells are not prewarmed by default)"
		}
		if path := resolve(arg, spec.Dir); isRegular(path) {
			return path, false, "a shell script (shells are not prewarmed by default)"
		}
		return "", false, "script file not found"
	}
	if fam == "" {
		// The program itself may be the script.
		path := prog
		if strings.Contains(prog, "/") {
			path = resolve(prog, spec.Dir)
		} else if p, err := lookPath(prog, spec.Env); err == nil {
			path = p
		} else {
			return "", false, "program not found"
		}
		if !isRegular(path) {
			return "", false, "program not found"
		}
		interp := shebang(path)
		if fam = interpreterFamily(interp); fam == "" {
			why := "not a script for a recognised interpreter (python, node, bun, ruby)"
			if interp != "" {
				why = "a " + filepath.Base(interp) + " script (shells are not prewarmed by default)"
			}
			return path, false, why
		}
		return path, readsStdin(fam, path), fam
	}
	arg, ok := scriptArg(fam, args)
	if !ok {
		if fam == "node" {
			if handled, script, safe, why := classifyNodeEval(prog, args, spec); handled {
				return script, safe, why
			}
		}
		return looseWords(words[1:], spec), false, "interpreter runs code from an option or stdin, not a script file"
	}
	path := resolve(arg, spec.Dir)
	if !isRegular(path) {
		return "", false, "script file not found"
	}
	return path, readsStdin(fam, path), fam
}

// readsStdin is rule 3. It is a textual check: a false positive costs at most one early
// run (a prewarmed process that exits 0 while waiting disables prewarming for its key).
// A Node script that does not read stdin itself may be a launcher of a module that does
// (a package's bin: `require('./hook.js')` after some set-up): the modules it requires or
// imports by a literal relative path are read too, one level deep (localModules).
func readsStdin(fam, path string) bool {
	b, ok := readAnalyzable(path)
	if !ok {
		return false
	}
	if stdinPatterns[fam].Match(b) {
		return true
	}
	if fam != "node" {
		return false
	}
	dir := filepath.Dir(path)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		dir = filepath.Dir(real) // Node resolves a relative require from the script's real path (an npm bin is a symlink)
	}
	return anyReadsStdin(fam, localModules(b, dir))
}

// anyReadsStdin reports whether one of files visibly reads stdin (rule 3's pattern).
func anyReadsStdin(fam string, files []string) bool {
	for _, m := range files {
		if b, ok := readAnalyzable(m); ok && stdinPatterns[fam].Match(b) {
			return true
		}
	}
	return false
}

// readAnalyzable reads a regular file of at most maxAnalyzeBytes.
func readAnalyzable(path string) ([]byte, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxAnalyzeBytes {
		return nil, false
	}
	b, err := os.ReadFile(path)
	return b, err == nil
}

// nodeLocalImport finds require('./x'), import … from './x', import './x' and import('./x')
// with a literal relative path.
var nodeLocalImport = regexp.MustCompile(`(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s*|\bimport\s+)['"](\.\.?/[^'"\n]+)['"]`)

// maxLocalModules bounds how many required modules one script's analysis reads.
const maxLocalModules = 8

// localModules are the files a Node script's literal relative requires and imports name,
// resolved as Node resolves a relative specifier (the path, then .js, .cjs, .mjs, then the
// directory's index.js), at most maxLocalModules.
func localModules(src []byte, dir string) []string {
	var out []string
	for _, m := range nodeLocalImport.FindAllSubmatch(src, -1) {
		base := filepath.Join(dir, string(m[1]))
		for _, cand := range []string{base, base + ".js", base + ".cjs", base + ".mjs", filepath.Join(base, "index.js")} {
			if isRegular(cand) {
				out = append(out, cand)
				break
			}
		}
		if len(out) == maxLocalModules {
			break
		}
	}
	return out
}

// scriptArg returns the script operand of an interpreter invocation.
func scriptArg(fam string, args []string) (string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return "", false
		}
		if !strings.HasPrefix(a, "-") {
			return a, true
		}
		name, _, hasValue := strings.Cut(a, "=")
		for _, e := range evalOptions[fam] {
			if name == e {
				return "", false
			}
		}
		if fam == "python" && !strings.HasPrefix(a, "--") && !strings.ContainsAny(a[1:2], "WX") && strings.ContainsAny(a[1:], "cmi") {
			return "", false // a cluster such as -Bc
		}
		if !hasValue {
			for _, v := range valueOptions[fam] {
				if name == v {
					i++
					break
				}
			}
		}
	}
	return "", false
}

// shebang returns the interpreter a script's #! line runs, looking through env.
func shebang(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
	if err != nil && err != io.EOF {
		return ""
	}
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) != "env" {
		return fields[0]
	}
	for _, f := range fields[1:] {
		if strings.HasPrefix(f, "-") || isAssignment(f) {
			continue
		}
		return f
	}
	return ""
}

func resolve(p, dir string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

func isRegular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && isName(name)
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

// looseScript finds, in a command line the analysis does not accept, the first word
// after the program (or the program, if it is a path) that names an existing file.
func looseScript(spec ProcSpec) string {
	raw := strings.FieldsFunc(spec.Command, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || strings.ContainsRune(";&|<>()`", r)
	})
	var words []string
	for _, w := range raw {
		w = strings.NewReplacer(`"`, "", `'`, "").Replace(w)
		w = os.Expand(w, func(k string) string { return LookupEnv(spec.Env, k) })
		if rest, ok := strings.CutPrefix(w, "~/"); ok {
			w = filepath.Join(LookupEnv(spec.Env, "HOME"), rest)
		}
		words = append(words, w)
	}
	if len(words) > 0 && strings.Contains(words[0], "/") {
		if p := resolve(words[0], spec.Dir); isRegular(p) {
			return p
		}
	}
	if len(words) > 0 {
		return looseWords(words[1:], spec)
	}
	return ""
}

func looseWords(words []string, spec ProcSpec) string {
	for _, w := range words {
		if w == "" || strings.HasPrefix(w, "-") {
			continue
		}
		if p := resolve(w, spec.Dir); isRegular(p) {
			return p
		}
	}
	return ""
}

// shellWords splits a POSIX sh command line into words the way sh would, for a simple
// command only: it reports false for anything whose meaning it cannot know statically
// (operators, redirections, command or arithmetic substitution, globs, special
// parameters, ${...} operators, an unquoted expansion that would be field-split, ~user,
// comments). The one command substitution it accepts is a lookup (prewarm_subst.go),
// whose value lookup gives; with a nil lookup it accepts none. The command is parsed
// with mvdan.cc/sh (POSIX dialect), the parser the permission rules and the zygote use,
// so the three agree on what a command is.
func shellWords(s string, env []string, lookup lookupFunc) ([]string, bool) {
	call, ok := simpleCall(s)
	if !ok {
		return nil, false
	}
	return callWords(call, env, lookup)
}

// simpleCall parses s and returns its one simple command: no operators, redirections or
// comments (shellWords).
func simpleCall(s string) (*syntax.CallExpr, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX), syntax.KeepComments(true)).Parse(strings.NewReader(s), "")
	if err != nil || len(f.Stmts) != 1 || len(f.Last) > 0 {
		return nil, false
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(st.Comments) > 0 {
		return nil, false
	}
	return call, true
}

// callWords is the words of a simple command, assignments first (shellWords).
func callWords(call *syntax.CallExpr, env []string, lookup lookupFunc) ([]string, bool) {
	var words []string
	var ok bool
	for _, a := range call.Assigns {
		if a.Append || a.Array != nil || a.Index != nil || a.Naked || a.Name == nil {
			return nil, false
		}
		v := ""
		if a.Value != nil {
			if v, ok = wordValue(a.Value, env, lookup); !ok {
				return nil, false
			}
		}
		words = append(words, a.Name.Value+"="+v)
	}
	for _, w := range call.Args {
		v, ok := wordValue(w, env, lookup)
		if !ok {
			return nil, false
		}
		words = append(words, v)
	}
	return words, true
}

// wordValue is one word after expansion, when it can be known statically (or, for an
// accepted lookup substitution, from lookup).
func wordValue(w *syntax.Word, env []string, lookup lookupFunc) (string, bool) {
	var b strings.Builder
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				if v != "~" && !strings.HasPrefix(v, "~/") {
					return "", false // ~user
				}
				b.WriteString(LookupEnv(env, "HOME"))
				v = v[1:]
			}
			for j := 0; j < len(v); j++ {
				switch {
				case v[j] == '\\' && j+1 < len(v):
					j++
				case strings.IndexByte("*?[{}$", v[j]) >= 0:
					return "", false // glob, brace expansion, or a $ sh may read as $'…'
				}
				b.WriteByte(v[j])
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					v := q.Value
					for j := 0; j < len(v); j++ {
						if v[j] == '\\' && j+1 < len(v) && strings.IndexByte("$`\"\\", v[j+1]) >= 0 {
							j++
						}
						b.WriteByte(v[j])
					}
				case *syntax.ParamExp:
					v, ok := paramValue(q, env)
					if !ok {
						return "", false
					}
					b.WriteString(v)
				case *syntax.CmdSubst:
					v, ok := substValue(q, lookup)
					if !ok {
						return "", false
					}
					b.WriteString(v)
				default:
					return "", false
				}
			}
		case *syntax.ParamExp:
			v, ok := paramValue(p, env)
			if !ok || strings.ContainsAny(v, " \t\n*?[") {
				return "", false // would be field-split or globbed
			}
			b.WriteString(v)
		case *syntax.CmdSubst:
			v, ok := substValue(p, lookup)
			if !ok || strings.ContainsAny(v, " \t\n*?[") {
				return "", false // would be field-split or globbed
			}
			b.WriteString(v)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// paramValue expands $name or ${name} from env.
func paramValue(p *syntax.ParamExp, env []string) (string, bool) {
	if p.Param == nil || !isName(p.Param.Value) || p.Excl || p.Length || p.Width || p.Index != nil ||
		p.Slice != nil || p.Repl != nil || p.Names != 0 || p.Exp != nil {
		return "", false
	}
	return LookupEnv(env, p.Param.Value), true
}
