package shell

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Analysis is what a static reading of one Bash command line found. It is
// computed once per command, however many patterns are then matched
// against it, and is not modified afterwards.
type Analysis struct {
	Full string // the command, trimmed
	// Err is non-nil when the command could not be parsed (a syntax error,
	// or over the size and nesting limits). Commands is then empty; the
	// caller decides whether that fails closed or open.
	Err      error
	Commands []Command
	Expands  bool     // $…, `…` or $(…) anywhere: arguments may differ at run time
	Writes   []string // literal targets of output redirections, after quote removal
}

// Command is one simple command the line runs (or one thing that could not
// be resolved) and the strings it may be matched as.
//
// Strict holds few, conservative views: the command as written, and the
// command with harmless VAR=value prefixes and Claude Code's wrappers
// (timeout, nice, nohup, …: the allow entries of the wrappers table)
// removed under their exact grammar. A pattern that grants must match one
// of them, for every command. Views holds every program the command runs —
// each wrapper layer, by path and by base name, after quote removal and
// with known variables substituted, with and without redirections —
// because a pattern that refuses and sees too much fails safe, while one
// that sees too little does not. Views may contain Hole (text unknown until
// run time), which stands for any text.
type Command struct {
	Text   string   // the simple command as resolved (what Split lists)
	Strict []string // conservative views; empty when Unresolved is set
	Views  []View   // every view; never empty
	// Inner marks commands of a literal inner script (`sh -c '…'`,
	// `eval '…'`): the command that runs the script is listed too, so a
	// pattern that grants need not cover these.
	Inner bool
	// Unresolved says what could not be resolved ("command name is not a
	// literal: `$x`"); Views then contain holes and Strict is empty.
	Unresolved string
}

// View is one string a command may be matched as, and the command as
// written that it stands for (for audit records).
type View struct {
	Text   string // may contain Hole
	Source string
}

// maxInnerScripts bounds recursion into sh -c / eval scripts; deeper
// scripts fail closed.
const maxInnerScripts = 8

// maxLayers bounds wrapper peeling (nohup nice timeout … rm).
const maxLayers = 32

// maxSubs bounds the work one command can cause; beyond it the analysis
// fails closed.
const maxSubs = 4096

// Split lists the simple commands a Bash command line runs: every command
// of every list, pipeline, subshell, group, conditional, loop, function
// body, command and process substitution, with VAR=value prefixes and
// wrapper commands (sudo, env, timeout, xargs, find -exec, …) looked
// through, and the commands of literal inner scripts (bash -c '…', eval,
// here-documents fed to a shell) after the command that runs them. A
// command that could not be resolved is listed as the reason ("command
// name is not a literal: `$x`"). An error means the command does not
// parse.
func Split(cmd string) (commands []string, err error) {
	a := Analyze(cmd)
	if a.Err != nil {
		return nil, fmt.Errorf("shell: unparseable command: %w", a.Err)
	}
	out := make([]string, 0, len(a.Commands))
	for _, s := range a.Commands {
		out = append(out, s.Text)
	}
	return out, nil
}

// Analyze parses cmd as Bash (mvdan.cc/sh/v3/syntax) and builds the views
// of every simple command it runs. It reads no files, never panics and
// bounds its work (1 MiB, nesting 256, 4096 commands, inner scripts 8
// deep); past those bounds the rest is unresolved, or Err is set.
func Analyze(cmd string) *Analysis {
	a := &Analysis{Full: strings.TrimSpace(cmd), Commands: make([]Command, 0, 8+len(cmd)/64)}
	f, err := parseBash(cmd)
	if err != nil {
		a.Err = err
		return a
	}
	w := &walker{a: a, env: newVarEnv()}
	w.ev = wordEval{src: cmd, env: w.env, expand: &a.Expands}
	w.stmts(f.Stmts, ctx{definite: true})
	a.merge()
	if len(a.Commands) > maxSubs {
		a.Commands = a.Commands[:maxSubs]
		a.unresolved("the command runs too many commands to analyse")
	}
	return a
}

// merge folds repeated subcommands (loop bodies are walked twice) into one,
// keeping every view.
func (a *Analysis) merge() {
	if len(a.Commands) < 2 {
		return
	}
	type key struct {
		text, why, allow string
		inner            bool
	}
	seen := make(map[key]int, len(a.Commands))
	out := a.Commands[:0]
	for _, s := range a.Commands {
		k := key{s.Text, s.Unresolved, strings.Join(s.Strict, "\x00"), s.Inner}
		if i, ok := seen[k]; ok {
			for _, v := range s.Views {
				if !containsView(out[i].Views, v) {
					out[i].Views = append(out[i].Views, v)
				}
			}
			continue
		}
		seen[k] = len(out)
		out = append(out, s)
	}
	a.Commands = out
}

func containsView(vs []View, v View) bool {
	for _, x := range vs {
		if x.Text == v.Text {
			return true
		}
	}
	return false
}

// unresolved adds a command hookd could not resolve: its only view is a
// hole, and it has no Strict view.
func (a *Analysis) unresolved(why string) {
	a.Commands = append(a.Commands, Command{Text: why, Views: []View{{Text: holeStr, Source: why}}, Unresolved: why})
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
	a        *Analysis
	env      *varEnv
	ev       wordEval
	depth    int  // inner-script depth
	inScript bool // inside a literal inner script
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
	if len(w.a.Commands) > maxSubs {
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
		// truncates it), are a command of their own: a pattern that grants
		// must cover them too.
		var outs []*syntax.Redirect
		for _, r := range s.Redirs {
			if isOutput(r.Op) {
				outs = append(outs, r)
			}
		}
		if t := w.renderRedirs(outs, true); t != "" {
			w.a.Commands = append(w.a.Commands, Command{Text: t, Strict: []string{t}, Views: []View{{Text: t, Source: t}}, Inner: w.inScript})
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
	w.a.Commands = append(w.a.Commands, Command{Text: t, Strict: []string{t}, Views: []View{{Text: t, Source: t}}, Inner: w.inScript})
}

// call handles one simple command.
func (w *walker) call(ce *syntax.CallExpr, c ctx, in stdinSrc, redirs []*syntax.Redirect) {
	// The command is listed before the commands nested in it.
	slot := len(w.a.Commands)
	w.a.Commands = append(w.a.Commands, Command{})
	put := func(s Command) { w.a.Commands[slot] = s }
	drop := func() { w.a.Commands = append(w.a.Commands[:slot], w.a.Commands[slot+1:]...) }
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
			put(Command{Text: t, Strict: []string{t}, Views: []View{{Text: t, Source: t}}, Inner: w.inScript})
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

	sub := Command{Inner: w.inScript}
	notHarmless := w.renderRedirs(redirs, true)
	allRedirs := w.renderRedirs(redirs, false)
	lw := &layerWalk{w: w, sub: &sub, c: c, in: in, allRedirs: allRedirs}
	strict := ws
	if unsafe {
		strict = nil
	}
	lw.strict = strict
	lw.run(ws, 0)

	if sub.Unresolved == "" && !lw.noAllow {
		sub.Strict = append(sub.Strict, joinNonEmpty(strings.Join(written, " "), notHarmless))
		if len(lw.strict) > 0 {
			var s []string
			for _, x := range lw.strict {
				if x.src != "" {
					s = append(s, x.src)
				}
			}
			v := joinNonEmpty(strings.Join(s, " "), notHarmless)
			if !containsStr(sub.Strict, v) {
				sub.Strict = append(sub.Strict, v)
			}
		}
	}
	if sub.Text == "" {
		sub.Text = joinNonEmpty(strings.Join(written, " "), allRedirs)
	}
	// The command as written, whole, is a view too (Bash(FOO=1 make)).
	wv := joinNonEmpty(strings.Join(written, " "), allRedirs)
	if !containsView(sub.Views, View{Text: wv}) {
		sub.Views = append(sub.Views, View{Text: wv, Source: wv})
	}
	if lw.unknownRest {
		sub.Views = append(sub.Views, View{Text: holeStr, Source: wv})
	}
	put(sub)
}

// layerWalk peels the wrappers of one simple command.
type layerWalk struct {
	w         *walker
	sub       *Command
	c         ctx
	in        stdinSrc
	allRedirs string
	strict    []*cword // the allow view's words; nil once a layer is not strictly strippable
	noAllow   bool
	// unknownRest: what a wrapper runs could not be read at all (an unknown
	// option): a hole stands for the rest.
	unknownRest bool
	n           int
}

// view adds a view once.
func (lw *layerWalk) view(v, src string) {
	d := View{Text: v, Source: src}
	if !containsView(lw.sub.Views, d) {
		lw.sub.Views = append(lw.sub.Views, d)
	}
}

// fail records what could not be resolved: the command gets Unresolved and
// no Strict view.
func (lw *layerWalk) fail(why string) {
	if lw.sub.Unresolved == "" {
		lw.sub.Unresolved = why
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
	lw.sub.Text = joinNonEmpty(srcText, lw.allRedirs)
	for _, n := range name.vals {
		b := baseName(n)
		if !strings.ContainsRune(b, Hole) {
			if b != n && !strings.ContainsRune(n, Hole) {
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
			lw.sub.Views = append(lw.sub.Views, View{Text: "echo", Source: "xargs"})
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
	child := &walker{a: w.a, depth: w.depth + 1, inScript: true, inFn: w.inFn}
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
// /dev/null, which Strict views leave out.
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

// harmless reports whether Strict views may leave a redirection out: fd
// duplication and /dev/null. Other redirections stay in them so that an
// allow rule `Bash(npm test)` does not allow `npm test > ~/.bashrc`.
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
	w.a.Writes = append(w.a.Writes, t)
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
// prefix is kept in the Strict views, so `PATH=/tmp/x ls` is not allowed by
// `Bash(ls *)`. Claude Code uses an allowlist of safe names instead; this
// list errs towards blocking the known ways to inject code (see "Deliberate
// differences" in package rules).
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
