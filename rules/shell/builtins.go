package shell

import (
	"github.com/hookd/hookd/rules/shell/bash"
	"strings"
)

// This file models the builtins that change how the rest of a script is
// read or what its names mean — the ones the contract in docs/rules.md
// lists. Each either has an exact model here or makes the analysis fail
// closed (lw.failAll: the command is unresolved and may be anything; or
// facts.setPoison: every command of the script is).

// builtins maps a builtin's name to its model. The walker applies it
// whatever wraps the builtin (builtin, command, time, …): a program of the
// same name run by env or sudo cannot change this shell, so applying it
// there only over-approximates.
var builtins map[string]func(lw *layerWalk, ws []*cword)

func init() {
	builtins = map[string]func(lw *layerWalk, ws []*cword){
		"alias":     (*layerWalk).alias,
		"hash":      (*layerWalk).hash,
		"enable":    (*layerWalk).enable,
		"shopt":     (*layerWalk).shopt,
		"set":       (*layerWalk).set,
		"read":      (*layerWalk).read,
		"mapfile":   (*layerWalk).mapfile,
		"readarray": (*layerWalk).mapfile,
		"printf":    (*layerWalk).printf,
		"getopts":   (*layerWalk).getopts,
		"wait":      (*layerWalk).wait,
		"cd":        (*layerWalk).cd,
		"pushd":     (*layerWalk).cd,
		"popd":      (*layerWalk).cd,
		"unset":     (*layerWalk).unset,
		"export":    (*layerWalk).declare,
		"declare":   (*layerWalk).declare,
		"typeset":   (*layerWalk).declare,
		"local":     (*layerWalk).declare,
		"readonly":  (*layerWalk).declare,
		"let":       (*layerWalk).let,
		"test":      (*layerWalk).test,
		"[":         (*layerWalk).test,
		"compgen":   (*layerWalk).compgen,
		"fc":        (*layerWalk).fc,
		"shift":     func(lw *layerWalk, _ []*cword) { lw.w.setPositional() },
	}
}

// alias NAME=VALUE…: a later command named NAME may run anything (bash
// expands aliases before parsing, and a value ending in a blank makes the
// next word an alias too), so such commands fail closed; the value itself
// is analysed as a script.
func (lw *layerWalk) alias(ws []*cword) {
	w := lw.w
	for _, x := range ws[1:] {
		v, ok := x.single()
		if !ok {
			w.facts.setPoison("`alias " + x.src + "`: an alias whose name is not a literal may replace any command")
			w.inner(innerScript{label: "alias", word: x}, lw.c, false)
			continue
		}
		name, val, isDef := strings.Cut(v, "=")
		if !isDef || v == "-p" {
			continue
		}
		if bash.ReservedWords[name] || strings.ContainsAny(name, " \t\n\"'`$\\;&|<>()") {
			w.facts.setPoison("`alias " + clip(v) + "`: an alias named like a keyword changes how bash parses the script")
		}
		w.facts.addAlias(name)
		w.inner(innerScript{label: "alias", text: val, known: true}, lw.c, false)
	}
}

// hash -p PATH NAME…: NAME runs PATH from then on.
func (lw *layerWalk) hash(ws []*cword) {
	f := lw.w.facts
	for i := 1; i < len(ws); i++ {
		v, ok := ws[i].single()
		if !ok {
			f.setPoison("`hash " + ws[i].src + "`: a hashed name that is not a literal may run any program")
			return
		}
		if v != "-p" {
			continue
		}
		if i+2 >= len(ws) {
			return
		}
		p, _ := ws[i+1].single()
		for _, n := range ws[i+2:] {
			name, ok := n.single()
			if !ok {
				f.setPoison("`hash -p " + ws[i+1].src + " " + n.src + "`: a hashed name that is not a literal may run any program")
				return
			}
			f.addHash(name, p)
		}
		return
	}
}

// enable -f FILE NAME loads builtins from a shared object: code the
// analysis cannot read, run now and whenever NAME is used.
func (lw *layerWalk) enable(ws []*cword) {
	for _, x := range ws[1:] {
		v, ok := x.single()
		if !ok || strings.HasPrefix(v, "-") && strings.ContainsAny(v, "fd") {
			why := "`enable " + x.src + "` loads builtins from a file: any command may run other code"
			lw.failAll(why)
			lw.w.facts.setPoison(why)
			return
		}
	}
}

func (lw *layerWalk) shopt(ws []*cword) {
	f := lw.w.facts
	setting, dashO := false, false
	for _, x := range ws[1:] {
		v, ok := x.single()
		if !ok {
			f.setPoison("`shopt " + x.src + "`: an option that is not a literal may change how bash reads the script")
			return
		}
		if strings.HasPrefix(v, "-") {
			setting = setting || strings.ContainsAny(v, "su")
			dashO = dashO || strings.Contains(v, "o")
			continue
		}
		if !setting {
			continue // printing or querying
		}
		if dashO && !bash.SetHarmless[v] || !dashO && !bash.ShoptHarmless[v] {
			f.setPoison("`shopt " + v + "` changes how bash reads the script")
			return
		}
	}
}

func (lw *layerWalk) set(ws []*cword) {
	w := lw.w
	f := w.facts
	for i := 1; i < len(ws); i++ {
		v, ok := ws[i].single()
		if !ok {
			f.setPoison("`set " + ws[i].src + "`: an option that is not a literal may change how bash reads the script")
			return
		}
		switch {
		case v == "--" || v == "-":
			w.setPositional()
			return
		case v == "-o" || v == "+o":
			if i+1 < len(ws) {
				i++
				o, ok := ws[i].single()
				if !ok || !bash.SetHarmless[o] {
					f.setPoison("`set " + v + " " + ws[i].src + "` changes how bash reads the script")
					return
				}
			}
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			for _, c := range v[1:] {
				if c == 'o' {
					continue
				}
				if !strings.ContainsRune(bash.SetFlagsHarmless, c) {
					f.setPoison("`set " + v + "` changes how bash reads the script")
					return
				}
			}
		default:
			w.setPositional() // set a b c
			return
		}
	}
}

// assignName records an assignment by a builtin to the variable named by
// x (read NAME, printf -v NAME, …): the value is set at run time.
func (lw *layerWalk) assignName(builtin string, x *cword, k assignKind) {
	w := lw.w
	v, ok := x.single()
	if !ok {
		w.facts.setPoison("`" + builtin + " " + x.src + "` assigns a variable whose name is not a literal (IFS, PS4, … included)")
		return
	}
	name, why := w.nameArg(v)
	if why != "" {
		lw.codeFail(builtin+" "+x.src, why)
	}
	if name != "" {
		if w.facts.isInt(name) && k != assignInt {
			lw.failAll("`" + builtin + " " + x.src + "` gives run-time text to an integer variable (bash evaluates it as code)")
		}
		w.facts.assign(name, k)
		w.forget(name)
	}
}

// optsWithValue reads a builtin's options, where those in valued take a
// value; it returns the values by letter and the index of the first
// operand. ok is false for an option that is not a literal.
func optsWithValue(ws []*cword, valued string) (vals map[byte][]*cword, i int, ok bool) {
	vals = map[byte][]*cword{}
	for i = 1; i < len(ws); i++ {
		a, lit := ws[i].single()
		if !lit {
			return vals, i, !strings.HasPrefix(ws[i].src, "-") && !ws[i].split
		}
		if a == "--" {
			return vals, i + 1, true
		}
		if len(a) < 2 || a[0] != '-' {
			return vals, i, true
		}
		for j := 1; j < len(a); j++ {
			if strings.IndexByte(valued, a[j]) < 0 {
				continue
			}
			if j+1 < len(a) {
				vals[a[j]] = append(vals[a[j]], &cword{src: a[j+1:], vals: []string{a[j+1:]}})
			} else if i+1 < len(ws) {
				i++
				vals[a[j]] = append(vals[a[j]], ws[i])
			}
			break
		}
	}
	return vals, i, true
}

func (lw *layerWalk) read(ws []*cword) {
	vals, i, ok := optsWithValue(ws, "adinNptu")
	if !ok {
		lw.w.facts.setPoison("`read " + ws[i].src + "`: an option that is not a literal may name any variable")
		return
	}
	for _, a := range vals['a'] {
		lw.assignName("read -a", a, assignAny)
	}
	if i >= len(ws) && len(vals['a']) == 0 {
		lw.w.facts.assign("REPLY", assignAny)
	}
	for _, x := range ws[i:] {
		lw.assignName("read", x, assignAny)
	}
}

func (lw *layerWalk) mapfile(ws []*cword) {
	vals, i, ok := optsWithValue(ws, "dnOsuCc")
	if !ok {
		lw.w.facts.setPoison("`mapfile " + ws[i].src + "`: an option that is not a literal")
		return
	}
	for _, cb := range vals['C'] {
		// The callback is evaluated, with the index and the line appended.
		v, known := cb.single()
		lw.w.inner(innerScript{label: "mapfile -C", word: cb, text: v, known: known, current: true}, lw.c, false)
	}
	if i >= len(ws) {
		lw.w.facts.assign("MAPFILE", assignAny)
		return
	}
	for _, x := range ws[i:] {
		lw.assignName("mapfile", x, assignAny)
	}
}

func (lw *layerWalk) printf(ws []*cword) {
	vals, i, ok := optsWithValue(ws, "v")
	if !ok {
		lw.w.facts.setPoison("`printf " + ws[i].src + "`: an option that is not a literal may be -v NAME")
		return
	}
	for _, x := range vals['v'] {
		lw.assignName("printf -v", x, assignAny)
	}
}

func (lw *layerWalk) getopts(ws []*cword) {
	if len(ws) > 2 {
		lw.assignName("getopts", ws[2], assignAny)
	}
	lw.w.facts.assign("OPTARG", assignAny)
	lw.w.facts.assign("OPTIND", assignInt)
}

func (lw *layerWalk) wait(ws []*cword) {
	vals, _, _ := optsWithValue(ws, "p")
	for _, x := range vals['p'] {
		lw.assignName("wait -p", x, assignInt)
	}
}

func (lw *layerWalk) cd(ws []*cword) {
	for _, n := range []string{"PWD", "OLDPWD", "DIRSTACK"} {
		lw.w.facts.assign(n, assignAny)
		lw.w.forget(n)
	}
}

// unset NAME…: a subscript in NAME is evaluated.
func (lw *layerWalk) unset(ws []*cword) {
	for _, x := range ws[1:] {
		v, ok := x.single()
		if !ok {
			if strings.Contains(x.src, "[") {
				lw.codeFail("unset "+x.src, "`unset "+x.src+"`: a subscript that is not a literal is evaluated as code")
			}
			continue
		}
		if strings.HasPrefix(v, "-") {
			continue
		}
		if _, why := lw.w.nameArg(v); why != "" {
			lw.codeFail("unset "+x.src, why)
		}
	}
}

// declare and friends reached as words (builtin declare …, command
// export …); `declare` written plainly is a DeclClause (walker.decl).
func (lw *layerWalk) declare(ws []*cword) {
	var d declSpec
	d.variant = ws[0].text()
	for _, x := range ws[1:] {
		v, ok := x.single()
		if !ok {
			if strings.HasPrefix(x.src, "-") || strings.HasPrefix(x.src, "+") || !strings.Contains(x.src, "=") {
				d.unknown = x.src
				continue
			}
		}
		if ok && (strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+")) {
			d.opts += v
			continue
		}
		e := declEntry{src: x.src}
		if ok {
			name, val, hasVal := strings.Cut(v, "=")
			e.name, e.known = strings.TrimSuffix(name, "+"), true
			if hasVal {
				e.val = &cword{src: val, vals: []string{val}}
			}
		} else if name, _, _ := strings.Cut(x.src, "="); bash.IsName(strings.TrimSuffix(name, "+")) {
			e.name, e.known = strings.TrimSuffix(name, "+"), true
			e.val = &cword{src: x.src, vals: []string{holeStr}, dyn: x.dyn}
		}
		d.entries = append(d.entries, e)
	}
	lw.w.applyDecl(d, lw.c, lw)
}

// let EXPR…: each argument is an arithmetic expression.
func (lw *layerWalk) let(ws []*cword) {
	w := lw.w
	for _, x := range ws[1:] {
		v, ok := x.single()
		if !ok {
			if x.dyn {
				lw.codeFail("let "+x.src, "`let "+x.src+"` evaluates text set at run time as code")
			}
			w.facts.setPoison("`let " + x.src + "` may assign any variable")
			continue
		}
		if why := w.arithText(v, 0); why != "" {
			lw.codeFail("let "+x.src, why)
		}
		w.arithAssignsText(v)
	}
}

// test / [: -v NAME evaluates a subscript in NAME.
func (lw *layerWalk) test(ws []*cword) {
	for i := 1; i+1 < len(ws); i++ {
		if v, _ := ws[i].single(); v != "-v" && v != "-R" {
			continue
		}
		n, ok := ws[i+1].single()
		if !ok {
			lw.codeFail(ws[0].src+" -v "+ws[i+1].src, "`-v "+ws[i+1].src+"` names a variable that is not a literal (a subscript there is code)")
			continue
		}
		if _, why := lw.w.nameArg(n); why != "" {
			lw.codeFail(ws[0].src+" -v "+ws[i+1].src, why)
		}
	}
}

// compgen -C CMD runs a command; -W WORDS expands the words (command
// substitutions included).
func (lw *layerWalk) compgen(ws []*cword) {
	vals, _, ok := optsWithValue(ws, "ACFGPSWXo")
	if !ok {
		lw.failAll("`compgen` with an option that is not a literal")
		return
	}
	for _, c := range vals['C'] {
		v, known := c.single()
		lw.w.inner(innerScript{label: "compgen -C", word: c, text: v, known: known}, lw.c, false)
	}
	for _, c := range vals['W'] {
		v, known := c.single()
		lw.w.inner(innerScript{label: "compgen -W", word: c, text: ": " + v, known: known, current: true}, lw.c, false)
	}
}

// fc re-runs (and edits) commands from the history: what it runs is not in
// the command. fc -l only lists.
func (lw *layerWalk) fc(ws []*cword) {
	for _, x := range ws[1:] {
		if v, ok := x.single(); ok && strings.HasPrefix(v, "-") && strings.Contains(v, "l") {
			return
		}
	}
	lw.failAll("`fc` runs commands from the shell's history")
}
