package runner

import (
	"cmp"
	"path/filepath"
	"strings"
)

// Inline Node code (`node -e '<code>'`, rule 2's one exception; prewarm_analyze.go).
//
// Node runs -e's code as it runs a script's: the code is the command's text, so rule 3's
// textual check (stdinPatterns) applies to it as it applies to a script file, and the
// modules it requires or imports by a literal relative path — which Node resolves from the
// working directory, spec.Dir — count as the code, one level deep (localModules). What
// Node does before the code must be visible too, so an invocation is accepted only when
//   - it is node or nodejs (bun reads ./bunfig.toml, whose preload runs modules first);
//   - its options before the first operand (Node reads options up to there, after -e's
//     code too) include exactly one -e CODE, --eval CODE or --eval=CODE and no option that
//     runs or loads other code first: -r/--require, --import, --loader, --env-file (its
//     NODE_OPTIONS applies), or prints or reads code elsewhere: -p/--print (its output is
//     the value of the code, not what the code writes), -i, -c, --test, -; no other
//     single-dash option but -C (a cluster such as -pe, an attached -r./x);
//   - no operand looks like an option, unless after --: after an option the analysis does
//     not know to take a value (--redirect-warnings x), Node reads the next one as an
//     option (Node never takes a word starting with - as an option's value: it exits 9);
//   - the command does not set NODE_OPTIONS, and the hook's environment's NODE_OPTIONS
//     preloads nothing.
//
// Operands after the code are process.argv, not run. --input-type=module is accepted: the
// code's static imports run before it, and localModules reads those with a literal path.

// nodePreloadOptions run, or make Node run, other code before -e's.
var nodePreloadOptions = map[string]bool{
	"-r": true, "--require": true, "--import": true, "--loader": true, "--experimental-loader": true,
	"--env-file": true, "--env-file-if-exists": true,
}

// classifyNodeEval is classify for a node-family interpreter whose arguments run no script
// file: handled reports whether args are an -e invocation at all; script is the file whose
// change invalidates prewarmed processes (the first literal local module, else the first
// operand naming a file); reason says why not safe, or is "node" when safe.
func classifyNodeEval(prog string, args []string, spec ProcSpec) (handled bool, script string, safe bool, reason string) {
	code, operands, why := nodeEvalCode(args)
	if code == "" && why == "" {
		return false, "", false, ""
	}
	script = looseWords(operands, spec)
	if why != "" {
		return true, script, false, why
	}
	if filepath.Base(prog) == "bun" {
		return true, script, false, "bun -e code (bun may preload modules from ./bunfig.toml)"
	}
	if why = nodeOptionsPreload(spec); why != "" {
		return true, script, false, why
	}
	mods := localModules([]byte(code), spec.Dir)
	if len(mods) > 0 {
		script = mods[0]
	}
	if stdinPatterns["node"].MatchString(code) || anyReadsStdin("node", mods) {
		return true, script, true, "node"
	}
	return true, script, false, "-e code that does not visibly read stdin"
}

// nodeEvalCode reads a node invocation's options: the -e code, the operands after the
// options, and why the invocation is not accepted ("" if it is). code and why are both ""
// when there is no -e at all. As Node does, it takes the word after an option that needs
// a value as the value, unless it starts with - (Node then exits 9).
func nodeEvalCode(args []string) (code string, operands []string, why string) {
	seen := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			operands = args[i+1:]
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			operands = args[i:]
			for _, o := range operands {
				if strings.HasPrefix(o, "-") {
					why = cmp.Or(why, "operand "+o+" looks like an option (Node reads it as one if an option before took a value)")
				}
			}
			break
		}
		name, value, hasValue := strings.Cut(a, "=")
		eval := name == "-e" && !hasValue || name == "--eval"
		if !hasValue && (eval || nodePreloadOptions[name] || nodeValueOptions[name]) {
			if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
				return "", nil, name + " without a value"
			}
			i++
			value = args[i]
		}
		switch {
		case eval && seen:
			return "", nil, "more than one -e"
		case eval:
			code, seen = value, true
		case nodePreloadOptions[name]:
			why = cmp.Or(why, name+" runs or loads code before -e's")
		case nodeValueOptions[name]:
		case isNodeEvalOption(name):
			why = cmp.Or(why, name+" (code to print, from stdin or a REPL; not -e)")
		case !strings.HasPrefix(a, "--"):
			why = cmp.Or(why, "unrecognised short option "+a)
		}
	}
	switch {
	case !seen:
		return "", nil, ""
	case why != "":
		return "", nil, why
	case code == "":
		return "", nil, "empty -e code"
	}
	return code, operands, ""
}

// nodeValueOptions take a value and run nothing.
var nodeValueOptions = map[string]bool{"--input-type": true, "--title": true, "--conditions": true, "-C": true}

// isNodeEvalOption reports an option of evalOptions["node"] other than -e/--eval.
func isNodeEvalOption(name string) bool {
	for _, e := range evalOptions["node"] {
		if name == e && name != "-e" && name != "--eval" {
			return true
		}
	}
	return false
}

// nodeOptionsPreload says why NODE_OPTIONS makes an -e invocation not safe: set on the
// command line (the analysis does not see the value), or naming a preload option in the
// hook's environment. "" if neither.
func nodeOptionsPreload(spec ProcSpec) string {
	if strings.Contains(spec.Command, "NODE_OPTIONS") {
		return "NODE_OPTIONS set by the command"
	}
	for _, f := range strings.Fields(LookupEnv(spec.Env, "NODE_OPTIONS")) {
		name, _, _ := strings.Cut(f, "=")
		if nodePreloadOptions[name] || strings.HasPrefix(name, "-r") {
			return "NODE_OPTIONS " + name + " runs or loads code before -e's"
		}
	}
	return ""
}
