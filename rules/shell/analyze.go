package shell

import (
	"fmt"
	"github.com/hookd/hookd/rules/shell/bash"
	"github.com/hookd/hookd/rules/shell/wrap"
	"path"
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

// maxSubs bounds the simple commands one analysis lists, counted before
// repeated ones are merged; beyond it the analysis fails closed.
const maxSubs = 4096

// maxWalks bounds how often a script is read again because a fact learnt
// late changes an earlier answer (see facts).
const maxWalks = 4

// Inner scripts are parsed once per analysis; these bound their number
// and total size.
const (
	maxParses      = 512
	maxParsedBytes = 4 << 20
)

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

// walkState is shared by the walkers of one reading of a script (the
// outer one and those of its inner scripts).
type walkState struct {
	count     int  // commands listed, before merging
	truncated bool // count passed maxSubs: the rest was not read
	parses    map[string]parseResult
	parsed    int // bytes of inner scripts parsed
}

type parseResult struct {
	s   *bash.Script
	err error
}

// Analyze parses cmd as Bash (mvdan.cc/sh/v3/syntax) and builds the views
// of every simple command it runs. It reads no files, never panics and
// bounds its work (1 MiB, the parser's recursion, 4096 commands, inner
// scripts 8 deep); past those bounds the rest is unresolved, or Err is set.
func Analyze(cmd string) *Analysis {
	a := &Analysis{Full: strings.TrimSpace(cmd)}
	s, err := bash.Parse(cmd)
	if err != nil {
		a.Err = err
		return a
	}
	f := newFacts()
	var parses map[string]parseResult
	for walk := 1; ; walk++ {
		a.Commands, a.Writes, a.Expands = make([]Command, 0, 8+len(cmd)/64), nil, false
		st := &walkState{parses: parses}
		w := &walker{a: a, st: st, facts: f, env: newVarEnv()}
		w.ev = wordEval{src: cmd, env: w.env, facts: f, cr: s.CR, expand: &a.Expands}
		w.stmts(s.File.Stmts, ctx{definite: true})
		parses = st.parses
		if st.truncated {
			a.unresolved("the command runs more than " + fmt.Sprint(maxSubs) + " commands: the rest was not analysed")
		}
		if !f.dirty {
			break
		}
		if walk == maxWalks {
			f.setPoison("what the script does kept changing how it reads after " + fmt.Sprint(maxWalks) + " readings")
			break
		}
		f.dirty = false
		clear(f.neg)
	}
	for _, n := range s.Notes {
		a.unresolved(n)
	}
	a.merge()
	if f.poison != "" {
		a.poisonAll(f.poison)
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

// poisonAll makes every command unresolved: the script did something after
// which bash reads it differently from the analysis.
func (a *Analysis) poisonAll(why string) {
	if len(a.Commands) == 0 {
		a.unresolved(why)
		return
	}
	for i := range a.Commands {
		c := &a.Commands[i]
		if c.Unresolved == "" {
			c.Unresolved = why
		}
		c.Strict = nil
		if !containsView(c.Views, View{Text: holeStr}) {
			c.Views = append(c.Views, View{Text: holeStr, Source: c.Text})
		}
	}
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
	st       *walkState
	facts    *facts
	env      *varEnv
	ev       wordEval
	depth    int  // inner-script depth
	inScript bool // inside a literal inner script
	inFn     int  // inside a function or trap body: assignments make names unknown for good
}

// add lists a command, counting it against maxSubs.
func (w *walker) add(c Command) {
	w.st.count++
	w.a.Commands = append(w.a.Commands, c)
}

// code lists what a context where bash evaluates text as code could not
// be resolved (why != "").
func (w *walker) code(why string) {
	if why != "" {
		w.st.count++
		w.a.unresolved(why)
	}
}

func (w *walker) full() bool {
	if w.st.count > maxSubs {
		w.st.truncated = true
		return true
	}
	return false
}

func (w *walker) stmts(list []*syntax.Stmt, c ctx) {
	for _, s := range list {
		if w.full() {
			return
		}
		w.stmt(s, c)
	}
}

// known returns a variable's values when an assignment earlier in the
// script makes them known.
func (w *walker) known(name string) ([]string, bool) { return w.ev.known(name) }

// varKind says what an unknown variable holds.
func (w *walker) varKind(name string) varKind { return w.facts.kind(name, w.ev.posRun) }

func (w *walker) setPositional() {
	if w.inFn == 0 && !w.inScript {
		w.facts.setFlag("positional", &w.facts.positional)
	}
}

// stdinSrc is where a command's standard input comes from.
type stdinSrc struct {
	r *syntax.Redirect // the last input redirection, nil for none
}

func (w *walker) stmt(s *syntax.Stmt, c ctx) {
	if w.full() {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		c = c.may()
	}
	var in stdinSrc
	for _, r := range s.Redirs {
		if r.N != nil && strings.HasPrefix(r.N.Value, "{") { // exec {fd}>file assigns fd
			name := strings.Trim(r.N.Value, "{}")
			w.facts.assign(name, assignInt)
			w.forget(name)
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
			w.add(Command{Text: t, Strict: []string{t}, Views: []View{{Text: t, Source: t}}, Inner: w.inScript})
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
			intVar := w.facts.isInt(l.Name.Value)
			for _, x := range l.Items {
				w.nested(x, c)
				if intVar {
					w.code(w.operand(x, 0)) // each value is evaluated as arithmetic
				}
			}
			w.facts.assign(l.Name.Value, assignAny)
			w.forget(l.Name.Value)
			if t.Select {
				w.facts.assign("REPLY", assignAny)
			}
		case *syntax.CStyleLoop:
			for _, x := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
				w.nested(x, c)
				w.code(w.arith(x, 0))
			}
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
		w.code(w.arith(t.X, 0))
	case *syntax.LetClause:
		for _, x := range t.Exprs {
			w.nested(x, c)
			w.code(w.arith(x, 0))
		}
	case *syntax.TestClause:
		w.nested(t.X, c)
		w.code(w.testCode(t.X))
		w.facts.assign("BASH_REMATCH", assignAny)
		w.forget("BASH_REMATCH")
	case *syntax.DeclClause:
		w.decl(t, c)
	case *syntax.TimeClause:
		if t.Stmt != nil {
			w.stmt(t.Stmt, c)
		}
	case *syntax.CoprocClause:
		name := "COPROC"
		if t.Name != nil {
			w.nested(t.Name, c)
			name = t.Name.Lit()
		}
		if name != "" {
			w.facts.assign(name, assignInt)
			w.facts.assign(name+"_PID", assignInt)
			w.forget(name)
		} else {
			w.facts.setPoison("`coproc` named by an expansion assigns a variable whose name is not a literal")
		}
		cc := c.may()
		cc.stdinPipe = true // the coprocess reads what later commands write to ${COPROC[1]}
		w.stmt(t.Stmt, cc)
	case *syntax.TestDecl:
		w.body(func() { w.stmt(t.Body, ctx{}) })
	default:
		w.code(fmt.Sprintf("unsupported shell construct %T", cmd))
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
// good; its positional parameters are the caller's arguments.
func (w *walker) body(f func()) {
	saved, savedPos := w.ev.noVars, w.ev.posRun
	w.inFn++
	w.ev.noVars, w.ev.posRun = true, true
	f()
	w.inFn--
	w.ev.noVars, w.ev.posRun = saved, savedPos
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

// nested visits what runs inside a word or expression — command and
// process substitutions, assignments hidden in ${x:=…} and arithmetic —
// and checks the contexts in it where bash evaluates text as code.
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
			w.paramEffects(n)
		case *syntax.ArithmExp:
			*w.ev.expand = true
			w.code(w.arith(n.X, 0))
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

// paramEffects applies what a parameter expansion does besides producing
// a value: ${x:=w} assigns, and ${!x}, ${x@P}, subscripts and slices are
// contexts where bash evaluates text as code.
func (w *walker) paramEffects(p *syntax.ParamExp) {
	if p.Exp != nil && p.Param != nil {
		switch p.Exp.Op {
		case syntax.AssignUnset, syntax.AssignUnsetOrNull:
			w.facts.assign(p.Param.Value, assignAny)
			w.forget(p.Param.Value)
			if w.facts.isInt(p.Param.Value) && p.Exp.Word != nil {
				w.code(w.operand(p.Exp.Word, 0))
			}
		case syntax.OtherParamOps:
			if p.Exp.Word != nil && strings.HasPrefix(p.Exp.Word.Lit(), "P") {
				w.code(w.promptCode(p))
			}
		}
	}
	if p.Excl && p.Names == 0 && p.Index == nil {
		w.code(w.indirectCode(p))
	}
	if p.Index != nil {
		w.code(w.arith(p.Index, 0))
	}
	if p.Slice != nil {
		w.code(w.arith(p.Slice.Offset, 0))
		w.code(w.arith(p.Slice.Length, 0))
	}
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

// arithTarget records the variable an arithmetic assignment writes: it
// now holds an integer the analysis does not know.
func (w *walker) arithTarget(x syntax.ArithmExpr) {
	if wd, ok := x.(*syntax.Word); ok {
		if l := wd.Lit(); bash.IsName(l) {
			w.facts.assign(l, assignInt)
			w.forget(l)
			return
		}
		if len(wd.Parts) == 1 {
			if p, ok := wd.Parts[0].(*syntax.ParamExp); ok && p.Param != nil {
				w.facts.assign(p.Param.Value, assignInt)
				w.forget(p.Param.Value)
				return
			}
		}
	}
	w.env.kill()
}

// arithAssignsText records the assignments in an arithmetic expression
// given as text (let 'x = 1').
func (w *walker) arithAssignsText(s string) {
	if len(s) > 4096 {
		w.env.kill()
		return
	}
	if c, _ := bash.Cost(s); c > 1024 {
		w.env.kill()
		return
	}
	x, ok := parseArith(s)
	if !ok {
		w.env.kill() // what it assigns is unknown (arithText fails closed on it)
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryArithm:
			if n.Op >= syntax.Assgn && n.Op <= syntax.XorBoolAssgn || n.Op == syntax.PowAssgn {
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

// declEntry is one NAME or NAME=VALUE of declare, local, export, readonly
// or typeset.
type declEntry struct {
	src          string
	name         string // the variable (a subscript already checked)
	known        bool
	val          *cword // nil: no value
	word         *syntax.Word
	index, array bool
	appnd        bool
	elems        []*syntax.Word // the values of an array assignment
}

// declSpec is one declare-like command.
type declSpec struct {
	variant string
	opts    string // every option word, concatenated ("-n-x")
	unknown string // an option or name that is not a literal
	entries []declEntry
}

// has reports whether option letter l is set (with '-'), as in "-ix".
func (d *declSpec) has(l byte) bool {
	on := false
	for i := 0; i < len(d.opts); i++ {
		switch c := d.opts[i]; {
		case c == '-':
			on = true
		case c == '+':
			on = false
		case c == l && on:
			return true
		}
	}
	return false
}

// decl handles declare, local, export, readonly, typeset and nameref
// written plainly (mvdan parses them as a DeclClause).
func (w *walker) decl(d *syntax.DeclClause, c ctx) {
	spec := declSpec{variant: d.Variant.Value}
	var words []string
	words = append(words, spec.variant)
	for _, a := range d.Args {
		words = append(words, w.ev.srcOf(a))
		w.nested(a.Value, c)
		w.nested(a.Index, c)
		if a.Array != nil {
			for _, el := range a.Array.Elems {
				w.nested(el.Value, c)
				w.nested(el.Index, c)
				w.code(w.arith(el.Index, 0))
			}
		}
		if a.Naked && a.Name == nil && a.Value != nil {
			cw := w.ev.word(a.Value)
			v, ok := cw.single()
			switch {
			case !ok && (strings.HasPrefix(w.ev.srcOf(a.Value), "-") || strings.HasPrefix(w.ev.srcOf(a.Value), "+") ||
				!strings.Contains(w.ev.srcOf(a.Value), "=")):
				spec.unknown = w.ev.srcOf(a.Value)
			case ok && (strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+")):
				spec.opts += v
			default:
				// 'NAME=VALUE' quoted: bash splits it at the first '='.
				e := declEntry{src: w.ev.srcOf(a.Value)}
				if ok {
					name, val, hasVal := strings.Cut(v, "=")
					name = strings.TrimSuffix(name, "+")
					base, why := w.nameArg(name)
					w.code(why)
					e.name, e.known, e.index = base, base != "", base != name
					if hasVal {
						e.val = &cword{src: val, vals: []string{val}}
					}
				} else {
					e.val = &cword{src: e.src, vals: []string{holeStr}, dyn: cw.dyn}
					if name, _, _ := strings.Cut(e.src, "="); bash.IsName(strings.TrimSuffix(name, "+")) {
						e.name, e.known = strings.TrimSuffix(name, "+"), true
					} else {
						spec.unknown = e.src
					}
				}
				spec.entries = append(spec.entries, e)
			}
			continue
		}
		if a.Name == nil {
			continue
		}
		e := declEntry{src: w.ev.srcOf(a), name: a.Name.Value, known: true, index: a.Index != nil,
			array: a.Array != nil, appnd: a.Append, word: a.Value}
		if a.Array != nil {
			for _, el := range a.Array.Elems {
				if el.Value != nil {
					e.elems = append(e.elems, el.Value)
				}
			}
		}
		if a.Index != nil {
			w.code(w.arith(a.Index, 0))
		}
		if !a.Naked {
			if a.Value != nil {
				e.val = w.ev.word(a.Value)
			} else if a.Array == nil {
				e.val = &cword{vals: []string{""}}
			}
		}
		spec.entries = append(spec.entries, e)
	}
	w.applyDecl(spec, c, nil)
	t := strings.Join(words, " ")
	w.add(Command{Text: t, Strict: []string{t}, Views: []View{{Text: t, Source: t}}, Inner: w.inScript})
}

// applyDecl applies a declare-like command: assignments, attributes,
// name references. lw is the command's layer walk when it was reached as
// words (builtin declare …), nil for a DeclClause.
func (w *walker) applyDecl(d declSpec, c ctx, lw *layerWalk) {
	fail := func(why string) {
		if lw != nil {
			lw.failAll(why)
		} else {
			w.code(why)
		}
	}
	f := w.facts
	if d.unknown != "" {
		f.setPoison("`" + d.variant + " " + d.unknown + "`: an option or name that is not a literal may set any variable or attribute (IFS, -n, …)")
	}
	if d.has('f') || d.has('F') || d.has('p') {
		return // functions, or printing
	}
	nameref := d.has('n') || d.variant == "nameref"
	if d.variant == "readonly" || d.has('r') {
		w.env.noReplace = true
	}
	for _, e := range d.entries {
		if !e.known || e.name == "" {
			continue
		}
		switch {
		case nameref:
			target, ok := "", false
			if e.val != nil {
				target, ok = e.val.single()
			}
			if !ok {
				f.setPoison("`" + d.variant + " -n " + e.src + "`: a name reference whose target is not a literal (its subscript would be code)")
				continue
			}
			base, why := w.nameArg(target)
			if why != "" {
				fail(why)
			}
			f.assign(e.name, assignAny)
			if base != "" {
				f.assign(base, assignAny)
			}
			w.env.kill() // assignments through the reference write another variable
			// …which may have the integer attribute: every assignment is
			// then checked as arithmetic.
			f.setFlag("intAny", &f.intAny)
			continue
		case d.has('l') || d.has('u') || d.has('c'):
			f.addCase(e.name)
		}
		switch {
		case d.has('i') || f.isInt(e.name):
			if d.has('i') {
				f.addInt(e.name)
			}
			if e.val != nil {
				fail(w.intValue(e))
			}
			for _, el := range e.elems {
				fail(w.operand(el, 0))
			}
			f.assign(e.name, assignInt)
			w.forget(e.name)
			continue
		}
		if e.val == nil && !e.array {
			if d.variant == "local" {
				w.forget(e.name)
			}
			continue
		}
		k := w.assignKindOf(e.word)
		if e.word == nil && e.val != nil && isIntVals(e.val.vals) {
			k = assignInt
		}
		f.assign(e.name, k)
		switch {
		case e.array || e.index || e.appnd || d.variant == "local" || d.has('a') || d.has('A') ||
			d.has('l') || d.has('u') || d.has('c') || f.isCase(e.name):
			w.forget(e.name)
		default:
			w.assign(e.name, e.val.vals, c.definite)
		}
	}
}

// assignKindOf says what an assignment of value gives the variable: an
// integer when the value is $((…)) or a literal number, else any text.
func (w *walker) assignKindOf(value *syntax.Word) assignKind {
	if value == nil {
		return assignInt // empty
	}
	if len(value.Parts) == 1 {
		if _, ok := value.Parts[0].(*syntax.ArithmExp); ok {
			return assignInt
		}
	}
	if isIntVals(w.ev.word(value).vals) {
		return assignInt
	}
	return assignAny
}

func isIntVals(vals []string) bool {
	for _, v := range vals {
		if v != "" && !bash.IsArithNumber(v) {
			return false
		}
	}
	return len(vals) > 0
}

// intValue checks a value assigned to an integer variable: bash evaluates
// it as an arithmetic expression.
func (w *walker) intValue(e declEntry) string {
	if e.word != nil {
		return w.operand(e.word, 0)
	}
	if v, ok := e.val.single(); ok {
		return w.arithText(v, 0)
	}
	if e.val.dyn {
		return "`" + e.src + "` assigns text set at run time to an integer variable (bash evaluates it as code)"
	}
	return ""
}

// call handles one simple command.
func (w *walker) call(ce *syntax.CallExpr, c ctx, in stdinSrc, redirs []*syntax.Redirect) {
	// The command is listed before the commands nested in it.
	slot := len(w.a.Commands)
	w.add(Command{})
	put := func(s Command) { w.a.Commands[slot] = s }
	drop := func() { w.a.Commands = append(w.a.Commands[:slot], w.a.Commands[slot+1:]...) }
	for _, a := range ce.Assigns {
		w.nested(a.Value, c)
		w.nested(a.Index, c)
		if a.Index != nil {
			w.code(w.arith(a.Index, 0))
		}
		if a.Array != nil {
			intVar := a.Name != nil && w.facts.isInt(a.Name.Value)
			for _, el := range a.Array.Elems {
				w.nested(el.Value, c)
				w.nested(el.Index, c)
				w.code(w.arith(el.Index, 0))
				if intVar && el.Value != nil {
					w.code(w.operand(el.Value, 0))
				}
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
		if a.Name == nil {
			continue
		}
		if dangerousEnv(a.Name.Value) {
			unsafe = true
		}
		k := w.assignKindOf(a.Value)
		if a.Array != nil || a.Index != nil || a.Append {
			k = assignAny
		}
		if w.facts.isInt(a.Name.Value) && a.Value != nil {
			w.code(w.operand(a.Value, 0))
			k = assignInt
		}
		w.facts.assign(a.Name.Value, k)
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
			case a.Array != nil || a.Index != nil || w.facts.isInt(name) || w.facts.isCase(name):
				w.forget(name) // an integer or a case-converted value: not the text written
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
			if a.Value != nil && a.Index == nil && a.Array == nil && !a.Append && !w.facts.isCase(a.Name.Value) {
				w.assign(a.Name.Value, w.ev.word(a.Value).vals, false)
			} else {
				w.forget(a.Name.Value)
			}
		}
	}

	sub := Command{Inner: w.inScript}
	notHarmless := w.renderRedirs(redirs, true)
	allRedirs := w.renderRedirs(redirs, false)
	lw := &layerWalk{w: w, sub: &sub, c: c, in: in, allRedirs: allRedirs, redirs: redirs}
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
	redirs    []*syntax.Redirect
	strict    []*cword // the allow view's words; nil once a layer is not strictly strippable
	noAllow   bool
	// unknownRest: what the command runs could not be read at all (an
	// unknown option, a program whose name the command computes): a hole
	// stands for the rest.
	unknownRest bool
	n           int
	envRuns     int // programs named by the environment read as wrappers, eval and shells
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

// failAll records that what the command runs is unknown altogether: a
// hole stands for all of it, so every refusing pattern could match.
func (lw *layerWalk) failAll(why string) {
	lw.fail(why)
	lw.unknownRest = true
}

// codeFail records a context of the command where bash evaluates text as
// code that could not be resolved.
func (lw *layerWalk) codeFail(_, why string) {
	if why != "" {
		lw.failAll(why)
	}
}

// run adds the views of the command ws and of everything it wraps.
func (lw *layerWalk) run(ws []*cword, depth int) {
	lw.n++
	if len(ws) == 0 || depth > maxLayers || lw.n > 4*maxLayers {
		if depth > maxLayers || lw.n > 4*maxLayers {
			lw.failAll("wrappers nested too deeply")
		}
		return
	}
	w := lw.w
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
	if srcText == "" {
		srcText = lw.sub.Text // words a wrapper reads at run time (xargs): the command as written
	}
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
		b := bash.BaseName(n)
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
		switch {
		case name.src == "":
			lw.failAll("the command takes its program from its input (xargs)")
		case name.dyn || !envOnly(name.nodes):
			// A name the command computes, or writes partly itself
			// (eval$x), may be any program — eval, a shell, a wrapper — so
			// what runs is unknown altogether.
			lw.failAll("command name is not a literal: `" + name.src + "`")
		default:
			// A variable from the harness's environment ($EDITOR, $SHELL):
			// data the command did not write. It may still name a wrapper,
			// eval or a shell ($SHELL -c '…'), so the arguments are read the
			// ways those would read them; what follows is matched as written.
			lw.fail("command name is not a literal: `" + name.src + "`")
			lw.envProgram(ws)
		}
	}
	if depth == 0 && !name.quoted && !name.expand {
		// Bash expands aliases before it parses: a command named like an
		// alias the script defines may be anything.
		if v, ok := name.single(); ok && w.facts.isAlias(v) {
			lw.failAll("`" + v + "` may be an alias the command defines (bash expands it before parsing)")
		}
	}
	if !name.known() {
		// It might be read, eval or source: nothing about variables is
		// known after it.
		w.env.kill()
		if name.dyn {
			w.facts.setFlag("anyVar", &w.facts.anyVar)
		}
		// A path whose last part is literal still names that program
		// ("$VENV/bin/env" is env, /proc/$$/exe the shell): look through it.
		for _, n := range name.vals {
			if strings.ContainsRune(bash.BaseName(n), Hole) {
				return
			}
		}
	}
	// hash -p PATH NAME: NAME runs PATH.
	var hashed []string
	for _, n := range name.vals {
		if strings.Contains(n, "/") {
			continue
		}
		paths, known, ok := w.facts.hash(n)
		if !ok {
			continue
		}
		if !known {
			lw.failAll("`" + n + "` was given a path by `hash -p` that is not a literal")
			return
		}
		for _, p := range paths {
			add(p)
			add(bash.BaseName(p))
			hashed = append(hashed, p)
		}
	}
	if len(name.vals) > 1 || len(hashed) > 0 {
		lw.strict = nil
		lw.noAllow = true // a name from a variable is not a literal
		for _, n := range append(append([]string(nil), name.vals...), hashed...) {
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

// envProgram reads the arguments of a program named by the environment as
// every program that runs its arguments would: as a command (a wrapper),
// joined as a script (eval), and as a shell's options and script (bash -c).
// Arguments the command computes at run time fail closed.
func (lw *layerWalk) envProgram(ws []*cword) {
	if lw.envRuns >= 4 || len(ws) < 2 {
		return
	}
	lw.envRuns++
	parts := make([]string, 0, len(ws)-1)
	for _, x := range ws[1:] {
		if x.dyn {
			lw.failAll("arguments computed at run time given to a program named by the environment: `" + x.src + "`")
			return
		}
		v, ok := x.single()
		if !ok {
			return // the environment's data: matched as written
		}
		parts = append(parts, v)
	}
	w := lw.w
	lw.run(ws[1:], 1)
	w.inner(innerScript{label: ws[0].src + " (as eval)", text: strings.Join(parts, " "), known: true}, lw.c, false)
	sh := append([]*cword{{src: "sh", vals: []string{"sh"}}}, ws[1:]...)
	if sc := wrap.ParseShellCall("sh", sh); sc.DashC && sc.Bad == "" {
		v, ok := sc.Script.single()
		w.inner(innerScript{label: ws[0].src + " -c", word: sc.Script, text: v, known: ok, args: sc.Args}, lw.c, false)
	}
}

// layer looks at what the command named n (ws[0]) runs.
func (lw *layerWalk) layer(n string, ws []*cword, depth int) {
	w := lw.w
	base := bash.BaseName(n)
	switch procProgram(n) {
	case "shell":
		base = "bash" // /proc/self/exe: the shell running the command
	case "fd":
		lw.failAll("`" + n + "` runs a program from an open descriptor")
		return
	}
	if wr := wrap.Lookup(base); wr != nil {
		u := wrap.Peel(wr, base, ws)
		for _, a := range u.Assigns {
			// env NAME=VALUE, sudo NAME=VALUE: the program's environment.
			if name, _, ok := strings.Cut(a, "="); ok {
				if eff, ok := interpreted(name); ok {
					eff(w.facts, name)
				}
			}
		}
		if u.Bad != "" {
			lw.failAll(u.Bad)
			return
		}
		if u.Shell {
			// No command: the wrapper starts a shell, which reads standard input.
			if why := w.facts.startupReason(); why != "" {
				lw.failAll(why)
				return
			}
			lw.stdin(base, false)
			return
		}
		cmds := make([][]*cword, 0, len(u.Cmds))
		for _, c := range u.Cmds {
			cmd := c.Words
			if c.Prepend != "" {
				cmd = append([]*cword{{src: c.Prepend, vals: []string{c.Prepend}}}, cmd...)
			}
			if c.AppendInput {
				cmd = append(append([]*cword(nil), cmd...), &cword{vals: []string{holeStr}, expand: true, dyn: true})
			}
			if u.Replace != "" {
				cmd = fillIn(cmd, u.Replace)
			}
			cmds = append(cmds, cmd)
		}
		if len(lw.strict) > 0 && lw.strict[0] == ws[0] {
			if u.Strict && len(cmds) == 1 && len(u.Scripts) == 0 {
				lw.strict = cmds[0]
			} else if len(cmds) > 0 || len(u.Scripts) > 0 {
				lw.strict = nil
			}
		}
		for _, sc := range u.Scripts {
			s := innerScript{label: sc.Label, text: sc.Text, known: sc.Known, current: sc.Current, args: sc.Args, bad: sc.Bad}
			if sc.HasWord {
				s.word = sc.Word
			}
			if sc.Trap {
				w.body(func() { w.inner(s, lw.c, false) })
				continue
			}
			w.inner(s, lw.c, false)
		}
		for _, cmd := range cmds {
			lw.run(cmd, depth+1)
		}
		switch {
		case base == "xargs" && len(cmds) == 0:
			lw.sub.Views = append(lw.sub.Views, View{Text: "echo", Source: "xargs"})
		case base == "exec" && len(cmds) == 0:
			lw.execFeeds()
		}
		return
	}
	if b := builtins[base]; b != nil {
		b(lw, ws)
		return
	}
	switch {
	case wrap.Shells[base]:
		lw.shell(base, ws)
	case base == "eval":
		s := innerScript{label: "eval", current: true, known: true}
		var parts []string
		args := ws[1:]
		if len(args) > 0 {
			if v, ok := args[0].single(); ok && v == "--" {
				args = args[1:]
			}
		}
		for _, x := range args {
			v, ok := x.single()
			if !ok {
				s.known = false
				s.word = x
			}
			parts = append(parts, v)
		}
		s.text = strings.Join(parts, " ")
		if len(args) > 0 {
			w.inner(s, lw.c, false)
		}
	case base == "source" || base == ".":
		i := 1
		if i < len(ws) {
			if v, ok := ws[i].single(); ok && v == "--" {
				i++
			} else if ok && strings.HasPrefix(v, "-") && v != "-" {
				return // bash 5.2: an invalid option; nothing is read
			}
		}
		if i >= len(ws) {
			return
		}
		if len(ws) > i+1 {
			w.setPositional()
		}
		lw.fromFile(base, ws[i], true)
	}
}

// procProgram says what a program path under /proc or /dev/fd runs:
// "shell" for a process's executable (/proc/self/exe: the shell itself),
// "fd" for an open descriptor (/dev/fd/3 after exec 3</bin/rm), "" else.
func procProgram(p string) string {
	q := path.Clean(p)
	switch {
	case strings.HasPrefix(q, "/dev/fd/") || q == "/dev/stdin" || strings.HasPrefix(q, "/proc/") && strings.Contains(q, "/fd/"):
		return "fd"
	case strings.HasPrefix(q, "/proc/") && strings.HasSuffix(q, "/exe") && strings.Count(q, "/") == 3:
		return "shell"
	}
	return ""
}

// envOnly reports whether a command word is one parameter expansion, bare
// or in double quotes ($EDITOR, "$CC"), with no text of the command's own.
func envOnly(w *syntax.Word) bool {
	if w == nil || len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.ParamExp:
		return true
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 {
			_, ok := p.Parts[0].(*syntax.ParamExp)
			return ok
		}
	}
	return false
}

// innerScript is a shell script a command runs.
type innerScript struct {
	label   string // "bash -c", "su -c", "eval", …
	word    *cword // the word holding it, nil when text is set
	text    string
	known   bool
	current bool // runs in the current shell (eval, source): its assignments count
	args    bool // run with arguments ($1, … are text the command chose)
	bad     string
}

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
			cp.dyn = true
			out[i] = &cp
		}
	}
	return out
}

// shell handles bash|sh|zsh|dash|ksh: a script from -c, standard input or a
// file.
func (lw *layerWalk) shell(name string, ws []*cword) {
	if why := lw.w.facts.startupReason(); why != "" {
		lw.failAll(why)
		return
	}
	sc := wrap.ParseShellCall(name, ws)
	switch {
	case sc.Bad != "":
		lw.failAll(sc.Bad)
	case sc.NoRun:
	case sc.DashC:
		v, ok := sc.Script.single()
		lw.w.inner(innerScript{label: name + " -c", word: sc.Script, text: v, known: ok, args: sc.Args}, lw.c, false)
	case sc.Stdin:
		lw.stdin(name, false)
	default:
		lw.fromFile(name, sc.Script, false)
	}
}

// fromFile handles a shell or source reading a script file operand.
// Files are not analysed (hookd reads no files); standard input and
// descriptors fed by the command are, because a file name (a link, a
// variable) may stand for them.
func (lw *layerWalk) fromFile(name string, f *cword, current bool) {
	v, ok := f.single()
	switch {
	case ok && bash.IsStdinPath(v):
		lw.stdin(name, current)
		return
	case ok && bash.IsFDPath(v), strings.HasPrefix(f.src, "<(") || strings.HasPrefix(f.src, "=("):
		lw.w.inner(innerScript{label: name, word: f, bad: "`" + name + "` runs a script produced by a command: `" + f.src + "`"}, lw.c, current)
		return
	}
	if current {
		lw.w.env.kill() // a sourced file may set any variable
		lw.w.facts.setFlag("anyVar", &lw.w.facts.anyVar)
	}
	// The file may be a link to standard input or to a descriptor the
	// command fills: read what the command feeds it as a script too.
	if lw.in.r != nil || lw.c.stdinPipe {
		lw.stdin(name, current)
	}
	lw.otherFeeds(name, current)
}

// otherFeeds analyses here-documents and here-strings on descriptors
// other than standard input, and those left open by exec, as scripts a
// shell reading a file might read.
func (lw *layerWalk) otherFeeds(name string, current bool) {
	w := lw.w
	for _, r := range lw.redirs {
		if r.N == nil || r.N.Value == "0" {
			continue
		}
		if s, ok := w.feed(name, r); ok {
			w.inner(s, lw.c, current)
		}
	}
	for _, s := range w.facts.feeds {
		w.inner(s, lw.c, current)
	}
}

// execFeeds records the here-documents and here-strings `exec` leaves open
// on descriptors, for shells that later read a file or standard input.
func (lw *layerWalk) execFeeds() {
	w := lw.w
	for _, r := range lw.redirs {
		if s, ok := w.feed("exec", r); ok && len(w.facts.feeds) < 16 {
			w.facts.feeds = append(w.facts.feeds, s)
		}
	}
}

// feed reads a redirection that gives a descriptor content from the
// command: a here-document, a here-string or a process substitution.
func (w *walker) feed(name string, r *syntax.Redirect) (innerScript, bool) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		return w.heredocScript(name, r), true
	case syntax.WordHdoc:
		cw := w.ev.word(r.Word)
		v, ok := cw.single()
		return innerScript{label: name + " <<<", word: cw, text: v, known: ok}, true
	case syntax.RdrIn, syntax.RdrInOut:
		if strings.HasPrefix(w.ev.srcOf(r.Word), "<(") {
			return innerScript{label: name, bad: "`" + name + "` may read its script from `" + w.ev.srcOf(r.Word) + "`"}, true
		}
	}
	return innerScript{}, false
}

// stdin handles a shell or source reading its script from standard input.
func (lw *layerWalk) stdin(name string, current bool) {
	r := lw.in.r
	w := lw.w
	if r == nil {
		if lw.c.stdinPipe {
			w.inner(innerScript{label: name, bad: "`" + name + "` reads its script from a pipe"}, lw.c, current)
			return
		}
		for _, s := range w.facts.feeds {
			w.inner(s, lw.c, current)
		}
		return
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		s, _ := w.feed(name, r)
		w.inner(s, lw.c, current)
	case syntax.RdrIn, syntax.RdrInOut:
		cw := w.ev.word(r.Word)
		cw.src = w.ev.srcOf(r.Word)
		v, ok := cw.single()
		switch {
		case ok && bash.IsStdinPath(v):
		case ok && bash.IsFDPath(v), strings.HasPrefix(cw.src, "<(") || strings.HasPrefix(cw.src, "=("):
			w.inner(innerScript{label: name, word: cw, bad: "`" + name + "` runs a script produced by a command: `" + cw.src + "`"}, lw.c, current)
		case current:
			w.env.kill()
		}
	default: // <&N: another descriptor
		w.inner(innerScript{label: name, bad: "`" + name + "` reads its script from a duplicated descriptor"}, lw.c, current)
	}
}

// heredocScript reads a here-document as the script a shell would run.
func (w *walker) heredocScript(name string, r *syntax.Redirect) innerScript {
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
				s.text += w.ev.lit(l.Value)
			} else {
				s.text += bash.UnescapeHeredoc(w.ev.lit(l.Value))
			}
		}
	}
	return s
}

// inner analyses a script run by a command: in a child shell (bash -c, a
// shell reading a here-document), or in this shell (eval, source:
// current). A script that is not a literal or does not parse fails closed.
func (w *walker) inner(s innerScript, c ctx, _ bool) {
	if s.bad != "" {
		w.code(s.bad)
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
		w.code("script of `" + s.label + "` is not a literal: `" + src + "`")
		if s.current {
			w.env.kill()
		}
		return
	}
	if w.depth >= maxInnerScripts {
		w.code("scripts nested more than " + fmt.Sprint(maxInnerScripts) + " deep")
		return
	}
	p, err := w.parseInner(s.text)
	if err != nil {
		w.code("script of `" + s.label + "` does not parse: " + err.Error())
		if s.current {
			w.env.kill()
		}
		return
	}
	child := &walker{a: w.a, st: w.st, facts: w.facts, depth: w.depth + 1, inScript: true, inFn: w.inFn}
	child.ev = wordEval{src: s.text, expand: w.ev.expand, noVars: w.ev.noVars, facts: w.facts, cr: p.CR,
		posRun: w.ev.posRun || s.args}
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
	for _, n := range p.Notes {
		child.code(n)
	}
	child.stmts(p.File.Stmts, cc)
}

// parseInner parses an inner script once per analysis, within the
// analysis's budget.
func (w *walker) parseInner(text string) (*bash.Script, error) {
	if r, ok := w.st.parses[text]; ok {
		return r.s, r.err
	}
	if len(w.st.parses) >= maxParses || w.st.parsed+len(text) > maxParsedBytes {
		return nil, bash.ErrTooDeep
	}
	w.st.parsed += len(text)
	s, err := bash.Parse(text)
	if w.st.parses == nil {
		w.st.parses = map[string]parseResult{}
	}
	w.st.parses[text] = parseResult{s, err}
	return s, err
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
	return bash.IsDigits(t) || t == "-"
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
