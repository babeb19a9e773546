package shell

import (
	"strings"

	"github.com/hookd/hookd/rules/shell/bash"
)

// facts are what a script does anywhere that changes how the rest of it
// is read: variables assigned at run time, IFS, aliases, hashed names,
// integer attributes, start-up files, options bash would parse by
// differently. They are flow-insensitive — a fact learnt at the end of a
// script applies to its first line too, because functions, traps, loops
// and aliases move code in time — and they only ever grow. The walker
// records every question it asked that a fact answered "no"; when a later
// statement turns that answer into "yes", the script is walked again with
// what is now known (Analyze; at most maxWalks times).
type facts struct {
	assigned map[string]assignKind
	// anyVar: something may have assigned any variable (a sourced file, a
	// command whose name is not known): every variable is a run-time value.
	anyVar bool
	// positional: set -- or shift changed $1, $2, … at the top level.
	positional bool
	ifs        bool // IFS may differ from space, tab, newline
	home       bool // HOME was assigned: ~ is not the user's home
	locale     bool // TEXTDOMAIN, TEXTDOMAINDIR or the locale were assigned: $"…" may be translated
	startup    string
	aliases    map[string]bool
	hashed     map[string][]string // name → paths `hash -p` gave it; nil entry: unknown path
	intAttr    map[string]bool     // declare -i: assignments are arithmetic
	intAny     bool
	caseAttr   map[string]bool // declare -l/-u/-c: assignments are case-converted
	feeds      []innerScript   // here-documents and here-strings left open on descriptors (exec 3<<<…)
	// poison makes every command of the script unresolved (see Analysis):
	// the script did something after which bash reads it differently from
	// the analysis (shopt -s compat31, a name reference to an expression,
	// an assignment to a variable whose name is not a literal, …).
	poison string

	neg   map[negKey]struct{} // questions answered "no" so far
	dirty bool                // a "no" became a "yes": walk again
}

// negKey is a question: a kind ("var", "alias", …) and a name.
type negKey struct{ kind, name string }

type assignKind uint8

const (
	assignInt assignKind = 1 + iota // only ever given integers ((( )), let, $(( )))
	assignAny
)

// newFacts returns empty facts; their maps are made on first write (most
// commands never write them).
func newFacts() *facts { return &facts{} }

// asked records a question answered "no".
func (f *facts) asked(kind, name string) {
	if f.neg == nil {
		f.neg = map[negKey]struct{}{}
	}
	f.neg[negKey{kind, name}] = struct{}{}
}

// learnt records that the answer to a question is now "yes".
func (f *facts) learnt(kind, name string) {
	k := negKey{kind, name}
	if _, ok := f.neg[k]; ok {
		f.dirty = true
		delete(f.neg, k)
	}
}

// flag reads a boolean fact, remembering a "no".
func (f *facts) flag(key string, v bool) bool {
	if !v {
		f.asked(key, "")
	}
	return v
}

func (f *facts) setFlag(key string, p *bool) {
	if !*p {
		*p = true
		f.learnt(key, "")
	}
}

// varKind says what an unknown variable may hold when read.
type varKind uint8

const (
	// kindEnv: set by the harness's environment (or bash itself) before the
	// command started: data the command did not write.
	kindEnv varKind = iota
	// kindInt: assigned by the script, only ever to integers.
	kindInt
	// kindRun: assigned by the script at run time (a command's output,
	// read, a loop over words, a glob, …): text the command chose.
	kindRun
)

// kind says what variable name holds when the walker does not know its
// value.
func (f *facts) kind(name string, posRun bool) varKind {
	switch {
	case name == "_" || name == "BASH_COMMAND" || name == "BASH_REMATCH" || name == "REPLY" || name == "MAPFILE" ||
		name == "OPTARG" || name == "PWD" || name == "OLDPWD" || name == "DIRSTACK" || name == "BASH_ARGV" ||
		name == "COPROC" || name == "FUNCNAME" || name == "BASH_SOURCE":
		return kindRun
	case name == "@" || name == "*" || bash.IsDigits(name):
		if posRun || f.flag("positional", f.positional) {
			return kindRun
		}
		return kindEnv
	case name == "#" || name == "?" || name == "$" || name == "!" || name == "-":
		return kindEnv
	}
	if f.flag("anyVar", f.anyVar) {
		return kindRun
	}
	switch f.assigned[name] {
	case assignInt:
		return kindInt
	case assignAny:
		return kindRun
	}
	f.asked("var", name)
	return kindEnv
}

// assign records that the script assigns name (anywhere, by any means).
func (f *facts) assign(name string, k assignKind) {
	if old := f.assigned[name]; old < k {
		if f.assigned == nil {
			f.assigned = map[string]assignKind{}
		}
		f.assigned[name] = k
		f.learnt("var", name)
	}
	if eff, ok := interpreted(name); ok {
		eff(f, name)
	}
}

func (f *facts) setPoison(why string) {
	if f.poison == "" {
		f.poison = why
	}
}

// has reads a fact about a name (kind names it in questions), remembering
// a "no".
func (f *facts) has(m map[string]bool, kind, name string) bool {
	if m[name] {
		return true
	}
	f.asked(kind, name)
	return false
}

// add learns a fact about a name; the map is made on first write.
func (f *facts) add(m *map[string]bool, kind, name string) {
	if (*m)[name] {
		return
	}
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[name] = true
	f.learnt(kind, name)
}

func (f *facts) isAlias(name string) bool { return f.has(f.aliases, "alias", name) }
func (f *facts) addAlias(name string)     { f.add(&f.aliases, "alias", name) }

// hash returns the paths `hash -p` gave name; ok is false when it has none
// and known false when one of them is not a literal.
func (f *facts) hash(name string) (paths []string, known, ok bool) {
	ps, ok := f.hashed[name]
	if !ok {
		f.asked("hash", name)
		return nil, true, false
	}
	f.asked("hashpaths", name) // a path added later changes this answer too
	for _, p := range ps {
		if p == "" {
			return ps, false, true
		}
	}
	return ps, true, true
}

func (f *facts) addHash(name, p string) {
	if !containsStr(f.hashed[name], p) {
		if f.hashed == nil {
			f.hashed = map[string][]string{}
		}
		_, had := f.hashed[name]
		f.hashed[name] = append(f.hashed[name], p)
		if !had {
			f.learnt("hash", name)
		} else {
			f.learnt("hashpaths", name)
		}
	}
}

func (f *facts) isInt(name string) bool {
	if f.intAttr[name] || f.intAny {
		return true
	}
	f.asked("int", name)
	f.asked("intAny", "")
	return false
}

func (f *facts) addInt(name string) { f.add(&f.intAttr, "int", name) }

// interpreted says what assigning a variable bash itself reads does to the
// analysis. Names not listed are data to bash (PATH, CDPATH, GLOBIGNORE,
// EXECIGNORE, … change which file a name or a glob finds, not how the
// command is read: names are matched by name, globs are holes).
func interpreted(name string) (func(f *facts, name string), bool) {
	switch name {
	case "IFS":
		return func(f *facts, _ string) { f.setFlag("ifs", &f.ifs) }, true
	case "HOME":
		return func(f *facts, _ string) { f.setFlag("home", &f.home) }, true
	case "TEXTDOMAIN", "TEXTDOMAINDIR", "LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES":
		return func(f *facts, _ string) { f.setFlag("locale", &f.locale) }, true
	case "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS":
		return func(f *facts, n string) { f.setStartup("`" + n + "` is set: a shell started later reads it") }, true
	case "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND":
		return func(f *facts, n string) {
			f.setPoison("`" + n + "` is assigned: bash expands it as code (set -x, prompts)")
		}, true
	case "BASH_COMPAT", "POSIXLY_CORRECT":
		return func(f *facts, n string) { f.setPoison("`" + n + "` is assigned: bash reads the script differently") }, true
	case "BASH_ALIASES":
		return func(f *facts, n string) { f.setPoison("`BASH_ALIASES` is assigned: any name may be an alias") }, true
	case "BASH_CMDS":
		return func(f *facts, n string) { f.setPoison("`BASH_CMDS` is assigned: any name may run another program") }, true
	}
	if strings.HasPrefix(name, "BASH_FUNC_") {
		return func(f *facts, n string) {
			f.setStartup("`" + n + "` is set: a shell started later defines a function from it")
		}, true
	}
	return nil, false
}

func (f *facts) setStartup(why string) {
	if f.startup == "" {
		f.startup = why
		f.learnt("startup", "")
	}
}

func (f *facts) startupReason() string {
	if f.startup == "" {
		f.asked("startup", "")
	}
	return f.startup
}

func (f *facts) isCase(name string) bool { return f.has(f.caseAttr, "case", name) }
func (f *facts) addCase(name string)     { f.add(&f.caseAttr, "case", name) }
