package rules

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
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

// bashSub is one simple command (or one thing that could not be resolved)
// and the strings it is matched as.
//
// Allow rules are matched against few, conservative views: the command as
// written, and the command with safe VAR=value prefixes and Claude Code's
// wrappers removed under their exact grammar. Deny/ask rules (and `if`
// filters) see every program the command runs — each wrapper layer, by
// path and by base name, after quote removal and with known variables
// substituted — because a deny rule that matches too much fails safe while
// one that matches too little does not. Views may contain holes (text that
// is unknown until run time); a hole matches anything.
type bashSub struct {
	text  string     // the simple command as hookd resolved it (SplitCommand)
	allow []string   // an allow rule must match one of these, for every subcommand
	deny  []denyView // a deny/ask rule matches if it matches any of these, for any subcommand
	// denyOnly marks commands of a literal inner script (`sh -c '…'`,
	// `eval '…'`): deny/ask rules see them, allow rules need not cover them
	// (the outer command already had to be allowed).
	denyOnly bool
	// why is set when part of the command could not be resolved: the deny
	// views then contain holes, and no allow rule covers the command.
	why string
}

// denyView is one string a deny/ask rule may match, and the command as
// written that it stands for (for the audit log).
type denyView struct {
	v   string
	src string
}

// maxInnerScripts bounds recursion into sh -c / eval scripts; deeper
// scripts fail closed.
const maxInnerScripts = 8

// maxLayers bounds wrapper peeling (nohup nice timeout … rm).
const maxLayers = 32

// maxSubs bounds the work one command can cause; beyond it the analysis
// fails closed.
const maxSubs = 4096

// SplitCommand lists the simple commands a Bash command line runs, as
// hookd's Bash rules see them: every command of every list, pipeline,
// subshell, group, conditional, loop, function body, command and process
// substitution, with VAR=value prefixes and wrapper commands (sudo, env,
// timeout, xargs, find -exec, …) looked through, and the commands of
// literal inner scripts (bash -c '…', eval, here-documents fed to a shell)
// after the command that runs them. A command that could not be resolved
// is listed as the reason ("command name is not a literal: `$x`"). An error
// means the command does not parse; deny/ask rules then fail closed.
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
	a := &bashAnalysis{full: strings.TrimSpace(cmd), subs: make([]bashSub, 0, 8+len(cmd)/64)}
	f, err := parseBash(cmd)
	if err != nil {
		a.err = err
		return a
	}
	w := &walker{a: a, env: newVarEnv()}
	w.ev = wordEval{src: cmd, env: w.env, expand: &a.expand}
	w.stmts(f.Stmts, ctx{definite: true})
	a.merge()
	if len(a.subs) > maxSubs {
		a.subs = a.subs[:maxSubs]
		a.unresolved("the command runs too many commands to analyse")
	}
	return a
}

// merge folds repeated subcommands (loop bodies are walked twice) into one,
// keeping every deny view.
func (a *bashAnalysis) merge() {
	if len(a.subs) < 2 {
		return
	}
	type key struct {
		text, why, allow string
		denyOnly         bool
	}
	seen := make(map[key]int, len(a.subs))
	out := a.subs[:0]
	for _, s := range a.subs {
		k := key{s.text, s.why, strings.Join(s.allow, "\x00"), s.denyOnly}
		if i, ok := seen[k]; ok {
			for _, v := range s.deny {
				if !containsView(out[i].deny, v) {
					out[i].deny = append(out[i].deny, v)
				}
			}
			continue
		}
		seen[k] = len(out)
		out = append(out, s)
	}
	a.subs = out
}

func containsView(vs []denyView, v denyView) bool {
	for _, x := range vs {
		if x.v == v.v {
			return true
		}
	}
	return false
}

// unresolved adds a subcommand hookd could not resolve: it matches every
// deny and ask Bash(…) rule and no allow rule.
func (a *bashAnalysis) unresolved(why string) {
	a.subs = append(a.subs, bashSub{text: why, deny: []denyView{{v: holeStr, src: why}}, why: why})
}

// ctx is where in the script a statement sits.
type ctx struct {
	definite  bool // runs, in this shell, before what follows (assignments replace)
	stdinPipe bool // standard input may be a pipe
}

func (c ctx) may() ctx { c.definite = false; return c }

// walker visits every statement of a script in order, tracking what is
// known about variables.
type walker struct {
	a        *bashAnalysis
	env      *varEnv
	ev       wordEval
	depth    int  // inner-script depth
	denyOnly bool // inside a literal inner script
	inFn     int  // inside a function or trap body: assignments make names unknown for good
}

func (w *walker) stmts(list []*syntax.Stmt, c ctx) {
	for _, s := range list {
		w.stmt(s, c)
	}
}

// stdinSrc is where a command's standard input comes from.
type stdinSrc struct {
	r *syntax.Redirect // the last input redirection, nil for none
}

func (w *walker) stmt(s *syntax.Stmt, c ctx) {
	if len(w.a.subs) > maxSubs {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		c = c.may()
	}
	var in stdinSrc
	for _, r := range s.Redirs {
		if r.N != nil && strings.HasPrefix(r.N.Value, "{") { // exec {fd}>file assigns fd
			w.forget(strings.Trim(r.N.Value, "{}"))
		}
		switch r.Op {
		case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.RdrInOut, syntax.DplIn:
			if r.N == nil || r.N.Value == "0" {
				in.r = r
			}
		}
		w.collectWrite(r)
	}
	if s.Cmd != nil {
		w.command(s.Cmd, c, in, s.Redirs)
	}
	if _, isCall := s.Cmd.(*syntax.CallExpr); !isCall {
		// Output redirections of a compound command, or alone ("> file"
		// truncates it), are part of what allow rules must cover.
		var outs []*syntax.Redirect
		for _, r := range s.Redirs {
			if isOutput(r.Op) {
				outs = append(outs, r)
			}
		}
		if t := w.renderRedirs(outs, true); t != "" {
			w.a.subs = append(w.a.subs, bashSub{text: t, allow: []string{t}, deny: []denyView{{v: t, src: t}}, denyOnly: w.denyOnly})
		}
	}
	for _, r := range s.Redirs {
		w.nested(r.Word, c)
		if r.Hdoc != nil {
			w.nested(r.Hdoc, c)
		}
	}
}

func (w *walker) command(cmd syntax.Command, c ctx, in stdinSrc, redirs []*syntax.Redirect) {
	switch t := cmd.(type) {
	case *syntax.CallExpr:
		w.call(t, c, in, redirs)
	case *syntax.Block:
		w.stmts(t.Stmts, c)
	case *syntax.Subshell:
		w.stmts(t.Stmts, c.may())
	case *syntax.BinaryCmd:
		switch t.Op {
		case syntax.Pipe, syntax.PipeAll:
			w.stmt(t.X, c.may())
			cy := c.may()
			cy.stdinPipe = true
			w.stmt(t.Y, cy)
		default: // && ||: the left side always runs
			w.stmt(t.X, c)
			w.stmt(t.Y, c.may())
		}
	case *syntax.IfClause:
		w.stmts(t.Cond, c)
		w.stmts(t.Then, c.may())
		for e := t.Else; e != nil; e = e.Else {
			w.stmts(e.Cond, c.may())
			w.stmts(e.Then, c.may())
		}
	case *syntax.WhileClause:
		// Twice when the body changes variables: the second pass sees what
		// the first iteration assigned.
		w.loop(func() {
			w.stmts(t.Cond, c.may())
			w.stmts(t.Do, c.may())
		})
	case *syntax.ForClause:
		switch l := t.Loop.(type) {
		case *syntax.WordIter:
			for _, x := range l.Items {
				w.nested(x, c)
			}
			w.forget(l.Name.Value)
		case *syntax.CStyleLoop:
			w.nested(l.Init, c)
			w.nested(l.Cond, c)
			w.nested(l.Post, c)
		}
		w.loop(func() { w.stmts(t.Do, c.may()) })
	case *syntax.CaseClause:
		w.nested(t.Word, c)
		for _, it := range t.Items {
			for _, p := range it.Patterns {
				w.nested(p, c)
			}
			w.stmts(it.Stmts, c.may())
		}
	case *syntax.FuncDecl:
		w.body(func() { w.stmt(t.Body, ctx{}) })
	case *syntax.ArithmCmd:
		w.nested(t.X, c)
	case *syntax.LetClause:
		for _, x := range t.Exprs {
			w.nested(x, c)
		}
	case *syntax.TestClause:
		w.nested(t.X, c)
		w.forget("BASH_REMATCH")
	case *syntax.DeclClause:
		w.decl(t, c)
	case *syntax.TimeClause:
		if t.Stmt != nil {
			w.stmt(t.Stmt, c)
		}
	case *syntax.CoprocClause:
		if t.Name != nil {
			w.nested(t.Name, c)
			if n := t.Name.Lit(); n != "" {
				w.forget(n)
			}
		}
		w.stmt(t.Stmt, c.may())
	case *syntax.TestDecl:
		w.body(func() { w.stmt(t.Body, ctx{}) })
	default:
		w.a.unresolved(fmt.Sprintf("unsupported shell construct %T", cmd))
	}
}

// loop walks a loop body, and again if it changed what is known about
// variables.
func (w *walker) loop(f func()) {
	gen := w.env.gen
	f()
	if w.env.gen != gen {
		f()
	}
}

// body walks a function or trap body: it may run at any later time, so the
// variables it reads are unknown and the ones it assigns become unknown for
// good.
func (w *walker) body(f func()) {
	saved := w.ev.noVars
	w.inFn++
	w.ev.noVars = true
	f()
	w.inFn--
	w.ev.noVars = saved
}

func (w *walker) assign(name string, vals []string, definite bool) {
	if w.inFn > 0 {
		w.env.taint(name)
		return
	}
	w.env.set(name, vals, definite)
}

func (w *walker) forget(name string) {
	if w.inFn > 0 {
		w.env.taint(name)
		return
	}
	w.env.forget(name)
}

// nested visits what runs inside a word or expression: command and process
// substitutions, and assignments hidden in ${x:=…} and arithmetic.
func (w *walker) nested(n syntax.Node, c ctx) {
	if n == nil {
		return
	}
	switch n := n.(type) {
	case *syntax.Word:
		if n == nil || plainWord(n) {
			return // nothing runs inside, nothing is assigned
		}
	case syntax.ArithmExpr:
		if n == nil {
			return
		}
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			*w.ev.expand = true
			w.stmts(n.Stmts, c.may())
			return false
		case *syntax.ProcSubst:
			*w.ev.expand = true
			cc := c.may()
			if n.Op == syntax.CmdOut {
				cc.stdinPipe = true // >(cmd) reads what the command writes
			}
			w.stmts(n.Stmts, cc)
			return false
		case *syntax.ParamExp:
			*w.ev.expand = true
			if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) && n.Param != nil {
				w.forget(n.Param.Value)
			}
		case *syntax.ArithmExp:
			*w.ev.expand = true
		case *syntax.BinaryArithm:
			switch n.Op {
			case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
				syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn,
				syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
				w.arithTarget(n.X)
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				w.arithTarget(n.X)
			}
		}
		return true
	})
}

// plainWord reports whether a word is made of literals and single quotes
// only (the common case, which needs no walk).
func plainWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			return false
		}
	}
	return true
}

// arithTarget forgets the variable an arithmetic assignment writes.
func (w *walker) arithTarget(x syntax.ArithmExpr) {
	if wd, ok := x.(*syntax.Word); ok {
		if l := wd.Lit(); isName(l) {
			w.forget(l)
			return
		}
		if len(wd.Parts) == 1 {
			if p, ok := wd.Parts[0].(*syntax.ParamExp); ok && p.Param != nil {
				w.forget(p.Param.Value)
				return
			}
		}
	}
	w.env.kill()
}

// decl handles declare, local, export, readonly, typeset and nameref.
func (w *walker) decl(d *syntax.DeclClause, c ctx) {
	variant := d.Variant.Value
	opts := ""
	for _, a := range d.Args {
		w.nested(a.Value, c)
		w.nested(a.Index, c)
		if a.Array != nil {
			for _, el := range a.Array.Elems {
				w.nested(el.Value, c)
				w.nested(el.Index, c)
			}
		}
		if a.Naked && a.Name == nil && a.Value != nil {
			v, ok := w.ev.word(a.Value).single()
			if !ok {
				w.env.kill() // declare "$x": any name, any attribute
				continue
			}
			opts += v
		}
	}
	if strings.Contains(opts, "n") || variant == "nameref" {
		w.env.kill() // a name reference: assignments to it write another variable
	}
	if variant == "readonly" || strings.Contains(opts, "r") {
		w.env.noReplace = true
	}
	attrs := strings.ContainsAny(opts, "aAilucI") || strings.HasPrefix(opts, "+")
	var words []string
	words = append(words, variant)
	for _, a := range d.Args {
		words = append(words, w.ev.srcOf(a))
		if a.Name == nil {
			continue
		}
		switch {
		case a.Naked:
		case a.Array != nil || a.Index != nil || attrs || variant == "local":
			w.forget(a.Name.Value)
		case a.Append:
			w.forget(a.Name.Value)
		default:
			vals := []string{""}
			if a.Value != nil {
				vals = w.ev.word(a.Value).vals
			}
			w.assign(a.Name.Value, vals, c.definite)
		}
	}
	t := strings.Join(words, " ")
	w.a.subs = append(w.a.subs, bashSub{text: t, allow: []string{t}, deny: []denyView{{v: t, src: t}}, denyOnly: w.denyOnly})
}

// call handles one simple command.
func (w *walker) call(ce *syntax.CallExpr, c ctx, in stdinSrc, redirs []*syntax.Redirect) {
	// The command is listed before the commands nested in it.
	slot := len(w.a.subs)
	w.a.subs = append(w.a.subs, bashSub{})
	put := func(s bashSub) { w.a.subs[slot] = s }
	drop := func() { w.a.subs = append(w.a.subs[:slot], w.a.subs[slot+1:]...) }
	for _, a := range ce.Assigns {
		w.nested(a.Value, c)
		w.nested(a.Index, c)
		if a.Array != nil {
			for _, el := range a.Array.Elems {
				w.nested(el.Value, c)
				w.nested(el.Index, c)
			}
		}
	}
	for _, x := range ce.Args {
		w.nested(x, c)
	}

	var written []string // assignments and words as written
	unsafe := false
	for _, a := range ce.Assigns {
		written = append(written, w.ev.srcOf(a))
		if a.Name != nil && dangerousEnv(a.Name.Value) {
			unsafe = true
		}
	}
	ws := w.ev.words(ce.Args)
	for _, x := range ws {
		if x.src != "" {
			written = append(written, x.src)
		}
	}

	if len(ws) == 0 {
		// Assignments alone change the shell's variables.
		for _, a := range ce.Assigns {
			if a.Name == nil {
				continue
			}
			name := a.Name.Value
			switch {
			case a.Array != nil || a.Index != nil:
				w.forget(name)
			case a.Append:
				old, ok := w.env.get(name)
				if !ok {
					w.forget(name)
					continue
				}
				add := []string{""}
				if a.Value != nil {
					add = w.ev.word(a.Value).vals
				}
				w.assign(name, appendVals(append([]string(nil), old...), add), c.definite)
			default:
				vals := []string{""}
				if a.Value != nil {
					vals = w.ev.word(a.Value).vals
				}
				w.assign(name, vals, c.definite)
			}
		}
		t := joinNonEmpty(strings.Join(written, " "), w.renderRedirs(redirs, true))
		if t != "" {
			put(bashSub{text: t, allow: []string{t}, deny: []denyView{{v: t, src: t}}, denyOnly: w.denyOnly})
		} else {
			drop()
		}
		return
	}
	// Prefix assignments go to the command's environment; before special
	// builtins and in POSIX mode they stay in the shell, so count them as
	// possible values.
	for _, a := range ce.Assigns {
		if a.Name != nil {
			if a.Value != nil && a.Index == nil && a.Array == nil && !a.Append {
				w.assign(a.Name.Value, w.ev.word(a.Value).vals, false)
			} else {
				w.forget(a.Name.Value)
			}
		}
	}

	sub := bashSub{denyOnly: w.denyOnly}
	notHarmless := w.renderRedirs(redirs, true)
	allRedirs := w.renderRedirs(redirs, false)
	lw := &layerWalk{w: w, sub: &sub, c: c, in: in, allRedirs: allRedirs}
	strict := ws
	if unsafe {
		strict = nil
	}
	lw.strict = strict
	lw.run(ws, 0)

	if sub.why == "" && !lw.noAllow {
		sub.allow = append(sub.allow, joinNonEmpty(strings.Join(written, " "), notHarmless))
		if len(lw.strict) > 0 {
			var s []string
			for _, x := range lw.strict {
				if x.src != "" {
					s = append(s, x.src)
				}
			}
			v := joinNonEmpty(strings.Join(s, " "), notHarmless)
			if !containsStr(sub.allow, v) {
				sub.allow = append(sub.allow, v)
			}
		}
	}
	if sub.text == "" {
		sub.text = joinNonEmpty(strings.Join(written, " "), allRedirs)
	}
	// The command as written, whole, is a view too (Bash(FOO=1 make)).
	wv := joinNonEmpty(strings.Join(written, " "), allRedirs)
	if !containsView(sub.deny, denyView{v: wv}) {
		sub.deny = append(sub.deny, denyView{v: wv, src: wv})
	}
	if lw.unknownRest {
		sub.deny = append(sub.deny, denyView{v: holeStr, src: wv})
	}
	put(sub)
}

// layerWalk peels the wrappers of one simple command.
type layerWalk struct {
	w         *walker
	sub       *bashSub
	c         ctx
	in        stdinSrc
	allRedirs string
	strict    []*cword // the allow view's words; nil once a layer is not strictly strippable
	noAllow   bool
	// unknownRest: what a wrapper runs could not be read at all (an unknown
	// option): any deny/ask rule may match.
	unknownRest bool
	n           int
}

// view adds a deny view once.
func (lw *layerWalk) view(v, src string) {
	d := denyView{v: v, src: src}
	if !containsView(lw.sub.deny, d) {
		lw.sub.deny = append(lw.sub.deny, d)
	}
}

// fail records what could not be resolved; deny/ask rules fail closed on
// this command and no allow rule covers it.
func (lw *layerWalk) fail(why string) {
	if lw.sub.why == "" {
		lw.sub.why = why
	}
	lw.noAllow = true
}

// run adds the views of the command ws and of everything it wraps.
func (lw *layerWalk) run(ws []*cword, depth int) {
	lw.n++
	if len(ws) == 0 || depth > maxLayers || lw.n > 4*maxLayers {
		if depth > maxLayers || lw.n > 4*maxLayers {
			lw.fail("wrappers nested too deeply")
			lw.unknownRest = true
		}
		return
	}
	name := ws[0]
	args := make([]string, 0, len(ws)-1)
	for _, x := range ws[1:] {
		args = append(args, x.text())
	}
	argText := strings.Join(args, " ")
	src := make([]string, 0, len(ws))
	for _, x := range ws {
		if x.src != "" {
			src = append(src, x.src)
		}
	}
	srcText := strings.Join(src, " ")
	lw.view(srcText, srcText)
	if lw.allRedirs != "" {
		lw.view(srcText+" "+lw.allRedirs, srcText)
	}

	// Views of this layer: by the name as written after quote removal, and
	// by its base name.
	add := func(n string) {
		v := n
		if argText != "" {
			if strings.HasSuffix(n, holeStr) {
				v = n + argText // an unquoted expansion may take the space too
			} else {
				v = n + " " + argText
			}
		}
		lw.view(v, srcText)
		if lw.allRedirs != "" {
			lw.view(v+" "+lw.allRedirs, srcText)
		}
	}
	lw.sub.text = joinNonEmpty(srcText, lw.allRedirs)
	for _, n := range name.vals {
		b := baseName(n)
		if !strings.ContainsRune(b, hole) {
			if b != n && !strings.ContainsRune(n, hole) {
				add(n)
			}
			add(b)
			continue
		}
		add(n)
		if b != n {
			add(b)
		}
		lw.fail("command name is not a literal: `" + name.src + "`")
	}
	if !name.known() {
		// It might be read, eval or source: nothing about variables is
		// known after it.
		lw.w.env.kill()
		return
	}
	if len(name.vals) > 1 {
		lw.strict = nil
		lw.noAllow = true // a name from a variable is not a literal
		for _, n := range name.vals {
			one := *name
			one.vals = []string{n}
			lw.layer(n, append([]*cword{&one}, ws[1:]...), depth)
		}
		return
	}
	if name.expand {
		lw.noAllow = true
		lw.strict = nil
	}
	lw.layer(name.vals[0], ws, depth)
}

// layer looks at what the command named n (ws[0]) runs.
func (lw *layerWalk) layer(n string, ws []*cword, depth int) {
	w := lw.w
	base := baseName(n)
	if wr := wrappers[base]; wr != nil {
		u := wr.peel(base, ws)
		if u.bad != "" {
			lw.fail(u.bad)
			lw.unknownRest = true
			return
		}
		if len(lw.strict) > 0 && lw.strict[0] == ws[0] {
			if u.strict && len(u.cmds) == 1 && len(u.scripts) == 0 {
				lw.strict = u.cmds[0]
			} else if len(u.cmds) > 0 || len(u.scripts) > 0 {
				lw.strict = nil
			}
		}
		for _, s := range u.scripts {
			if s.trap {
				w.body(func() { w.inner(s, lw.c, false) })
				continue
			}
			w.inner(s, lw.c, false)
		}
		for _, cmd := range u.cmds {
			if u.replace != "" {
				cmd = fillIn(cmd, u.replace)
			}
			lw.run(cmd, depth+1)
		}
		if base == "xargs" && len(u.cmds) == 0 {
			lw.sub.deny = append(lw.sub.deny, denyView{v: "echo", src: "xargs"})
		}
		return
	}
	switch {
	case shells[base]:
		lw.shell(base, ws)
	case base == "eval":
		s := innerScript{label: "eval", current: true, known: true}
		var parts []string
		for _, x := range ws[1:] {
			v, ok := x.single()
			if !ok {
				s.known = false
				s.word = x
			}
			parts = append(parts, v)
		}
		s.text = strings.Join(parts, " ")
		if len(ws) > 1 {
			w.inner(s, lw.c, false)
		}
	case base == "source" || base == ".":
		if len(ws) < 2 {
			return
		}
		lw.fromFile(base, ws[1], true)
	case base == "alias":
		for _, x := range ws[1:] {
			v, ok := x.single()
			if !ok {
				lw.w.inner(innerScript{label: "alias", word: x}, lw.c, false)
				continue
			}
			if _, val, ok := strings.Cut(v, "="); ok {
				lw.w.inner(innerScript{label: "alias", text: val, known: true}, lw.c, false)
			}
		}
	case binders[base]:
		for _, x := range ws[1:] {
			v, ok := x.single()
			if !ok {
				w.env.kill()
				break
			}
			if i := strings.IndexAny(v, "=["); i >= 0 {
				v = v[:i]
			}
			if isName(v) {
				w.forget(v)
			}
		}
		for _, v := range []string{"REPLY", "MAPFILE", "OPTARG", "OPTIND", "PWD", "OLDPWD", "DIRSTACK"} {
			w.forget(v)
		}
	}
}

// binders are builtins that assign variables named by their arguments.
var binders = map[string]bool{"read": true, "mapfile": true, "readarray": true, "getopts": true, "printf": true,
	"unset": true, "wait": true, "let": true, "export": true, "declare": true, "typeset": true, "local": true,
	"readonly": true, "cd": true, "pushd": true, "popd": true, "select": true, "shopt": true, "set": true}

// fillIn marks the words a wrapper fills in at run time (xargs -I R, find
// {}) as unknown.
func fillIn(ws []*cword, token string) []*cword {
	out := make([]*cword, len(ws))
	for i, x := range ws {
		out[i] = x
		if strings.Contains(x.src, token) {
			cp := *x
			cp.vals = []string{holeStr}
			cp.expand = true
			out[i] = &cp
		}
	}
	return out
}

// shell handles bash|sh|zsh|dash|ksh: a script from -c, standard input or a
// file.
func (lw *layerWalk) shell(name string, ws []*cword) {
	sc := parseShellCall(name, ws)
	switch {
	case sc.bad != "":
		lw.fail(sc.bad)
		lw.unknownRest = true
	case sc.noRun:
	case sc.dashC:
		v, ok := sc.script.single()
		lw.w.inner(innerScript{label: name + " -c", word: sc.script, text: v, known: ok}, lw.c, false)
	case sc.stdin:
		lw.stdin(name, false)
	default:
		lw.fromFile(name, sc.script, false)
	}
}

// fromFile handles a shell or source reading a script file operand.
// Files are not analysed (hookd reads no files); standard input and
// descriptors fed by a command are.
func (lw *layerWalk) fromFile(name string, f *cword, current bool) {
	v, ok := f.single()
	switch {
	case ok && isStdinPath(v):
		lw.stdin(name, current)
	case ok && isFDPath(v), strings.HasPrefix(f.src, "<(") || strings.HasPrefix(f.src, "=("):
		lw.w.inner(innerScript{label: name, word: f, bad: "`" + name + "` runs a script produced by a command: `" + f.src + "`"}, lw.c, current)
	case current:
		lw.w.env.kill() // a sourced file may set any variable
	}
}

// stdin handles a shell or source reading its script from standard input.
func (lw *layerWalk) stdin(name string, current bool) {
	r := lw.in.r
	if r == nil {
		if lw.c.stdinPipe {
			lw.w.inner(innerScript{label: name, bad: "`" + name + "` reads its script from a pipe"}, lw.c, current)
		}
		return
	}
	w := lw.w
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		s := innerScript{label: name + " <<", known: true}
		quoted := false
		for _, p := range r.Word.Parts {
			if _, ok := p.(*syntax.Lit); !ok {
				quoted = true
			}
		}
		if strings.ContainsAny(w.ev.srcOf(r.Word), `\'"`) {
			quoted = true
		}
		if r.Hdoc != nil {
			for _, p := range r.Hdoc.Parts {
				l, ok := p.(*syntax.Lit)
				if !ok {
					s.known = false
					s.bad = "here-document fed to `" + name + "` is not a literal"
					break
				}
				if quoted {
					s.text += l.Value
				} else {
					s.text += unescapeHeredoc(l.Value)
				}
			}
		}
		w.inner(s, lw.c, current)
	case syntax.WordHdoc:
		cw := w.ev.word(r.Word)
		v, ok := cw.single()
		w.inner(innerScript{label: name + " <<<", word: cw, text: v, known: ok}, lw.c, current)
	case syntax.RdrIn, syntax.RdrInOut:
		cw := w.ev.word(r.Word)
		cw.src = w.ev.srcOf(r.Word)
		lw.fromFile(name, cw, current)
	default: // <&N: another descriptor
		w.inner(innerScript{label: name, bad: "`" + name + "` reads its script from a duplicated descriptor"}, lw.c, current)
	}
}

func unescapeHeredoc(s string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\$`\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// inner analyses a script run by a command: in a child shell (bash -c, a
// shell reading a here-document), or in this shell (eval, source:
// current). A script that is not a literal or does not parse fails closed.
func (w *walker) inner(s innerScript, c ctx, _ bool) {
	if s.bad != "" {
		w.a.unresolved(s.bad)
		if s.current {
			w.env.kill()
		}
		return
	}
	if !s.known {
		src := s.text
		if s.word != nil {
			src = s.word.src
		}
		w.a.unresolved("script of `" + s.label + "` is not a literal: `" + src + "`")
		if s.current {
			w.env.kill()
		}
		return
	}
	if w.depth >= maxInnerScripts {
		w.a.unresolved("scripts nested more than " + fmt.Sprint(maxInnerScripts) + " deep")
		return
	}
	f, err := parseBash(s.text)
	if err != nil {
		w.a.unresolved("script of `" + s.label + "` does not parse: " + err.Error())
		if s.current {
			w.env.kill()
		}
		return
	}
	child := &walker{a: w.a, depth: w.depth + 1, denyOnly: true, inFn: w.inFn}
	child.ev = wordEval{src: s.text, expand: w.ev.expand, noVars: w.ev.noVars}
	cc := ctx{definite: true}
	if s.current {
		child.env = w.env
		cc.definite = c.definite
	} else {
		child.env = newVarEnv() // a child shell sees only exported variables
		child.inFn = 0
		child.ev.noVars = false
	}
	child.ev.env = child.env
	child.stmts(f.Stmts, cc)
}

// renderRedirs renders a statement's redirections in source order
// ("2>&1", "> out.txt"); onlyNotHarmless leaves out fd duplication and
// /dev/null, which allow rules ignore.
func (w *walker) renderRedirs(rs []*syntax.Redirect, onlyNotHarmless bool) string {
	var parts []string
	for _, r := range rs {
		if onlyNotHarmless && w.harmless(r) {
			continue
		}
		var b strings.Builder
		if r.N != nil {
			b.WriteString(r.N.Value)
		}
		b.WriteString(r.Op.String())
		if !w.isFDDup(r) {
			b.WriteByte(' ')
		}
		b.WriteString(w.ev.srcOf(r.Word))
		parts = append(parts, b.String())
	}
	return strings.Join(parts, " ")
}

// isFDDup reports whether r duplicates or closes a file descriptor (2>&1, >&-).
func (w *walker) isFDDup(r *syntax.Redirect) bool {
	if r.Op != syntax.DplIn && r.Op != syntax.DplOut {
		return false
	}
	t := r.Word.Lit()
	return isDigits(t) || t == "-"
}

// harmless reports whether a redirection can be ignored by allow rules:
// fd duplication and /dev/null. Other redirections stay in the allow view so
// that `Bash(npm test)` does not allow `npm test > ~/.bashrc`.
func (w *walker) harmless(r *syntax.Redirect) bool {
	if w.isFDDup(r) {
		return true
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return false
	}
	v, ok := w.ev.word(r.Word).single()
	return ok && v == "/dev/null"
}

func isOutput(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut, syntax.DplOut:
		return true
	}
	return false
}

// collectWrite records a literal output-redirection target.
func (w *walker) collectWrite(r *syntax.Redirect) {
	if !isOutput(r.Op) {
		return
	}
	if w.isFDDup(r) {
		return
	}
	t, ok := w.ev.word(r.Word).single()
	if !ok {
		return
	}
	switch t {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return
	}
	w.a.writes = append(w.a.writes, t)
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
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

// matchAllow reports whether one allow pattern covers the whole command on
// its own: every subcommand matches one of its allow views. (Set.Evaluate
// lets different rules cover different subcommands; see bashAllow.) A
// wildcard-free rule also matches when it equals the whole command (so
// `Bash(make && make install)` allows exactly that line), but a glob is
// never applied to the whole line: `Bash(echo *)` must not allow
// `echo x && rm -rf ~`. A subcommand hookd could not resolve is never
// covered.
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
	if s.why != "" {
		return false
	}
	for _, v := range s.allow {
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
// names and scripts fail closed. The caller handles a.err.
func (a *bashAnalysis) matchAny(g *starGlob) (bool, bashHit) {
	if g.match(a.full) {
		return true, bashHit{command: a.full}
	}
	for i := range a.subs {
		for _, v := range a.subs[i].deny {
			if strings.IndexByte(v.v, hole) < 0 && g.match(v.v) {
				return true, bashHit{command: v.v}
			}
		}
	}
	for i := range a.subs {
		s := &a.subs[i]
		for _, v := range s.deny {
			if strings.IndexByte(v.v, hole) >= 0 && g.matchHoles(v.v) {
				return true, bashHit{command: v.src, unresolved: s.why}
			}
		}
	}
	return false, bashHit{}
}
