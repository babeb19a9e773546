package shell

import (
	"github.com/hookd/hookd/rules/shell/bash"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file evaluates words statically: quote removal, $'…' decoding,
// brace expansion, and parameter expansion of variables whose value an
// assignment in the same script makes known. What cannot be known
// statically — a command substitution, a variable from the environment, a
// glob — becomes a hole: a placeholder that stands for any text. A hole is
// one of two kinds: text from the harness's environment (a variable the
// command never assigns, ~), which the command did not write, or text the
// command chose at run time (a command's output, a glob, a value read or
// built by the script), which may be anything. analyze.go builds the views
// that carry the holes; what a hole costs is the matcher's business
// (package rules fails closed on it).

// Hole stands, in a View, for text that cannot be known without running the
// shell. A NUL byte cannot occur in a shell word, so it never collides with
// real text.
const Hole = bash.Hole

const holeStr = string(Hole)

// maxCandidates bounds the values one word may take (x=a or x=b …); beyond
// it the word becomes a hole.
const maxCandidates = 8

// cword is one word of a simple command after static evaluation.
type cword struct {
	src    string   // as written (quotes and expansions included)
	vals   []string // the values it can take; holes (\x00) where unknown
	quoted bool     // contains quotes or escapes
	expand bool     // contains an expansion ($…, `…`, $(…), <(…), a glob)
	// dyn: a hole holds text the command chose at run time (a command's
	// output, a glob, a variable the script sets at run time), not data
	// from the environment.
	dyn bool
	// split: an unquoted part may become any number of words (an
	// expansion of text the command chose, a glob).
	split bool
	nodes *syntax.Word
}

// single returns the word's value when it is known and unique.
func (w *cword) single() (string, bool) {
	if len(w.vals) == 1 && !strings.ContainsRune(w.vals[0], Hole) {
		return w.vals[0], true
	}
	return "", false
}

// Single, Source and Known let package wrap read the word.
func (w *cword) Single() (string, bool) { return w.single() }
func (w *cword) Source() string         { return w.src }
func (w *cword) Known() bool            { return w.known() }
func (w *cword) MaySplit() bool         { return w.split }

// known reports whether every value of the word is hole-free.
func (w *cword) known() bool {
	for _, v := range w.vals {
		if strings.ContainsRune(v, Hole) {
			return false
		}
	}
	return len(w.vals) > 0
}

// text is the word for display and for argument views: its value when
// known and unique, else as written (a hole when it was never written:
// the words xargs appends).
func (w *cword) text() string {
	if v, ok := w.single(); ok {
		return v
	}
	if w.src == "" {
		return holeStr
	}
	return w.src
}

// varEnv is what an analysis knows about shell variables at one point of a
// script. A name is known only after a literal assignment in the same
// script; everything else (the environment, read, for, $(…)) is unknown.
// Knowledge is only ever lost in ways that over-approximate: an assignment
// that may or may not run adds a candidate instead of replacing the value.
type varEnv struct {
	vals      map[string][]string
	perm      map[string]bool // unknown for good (assigned by a function or trap body)
	dead      bool            // everything unknown for good (source, eval "$x", declare -n, …)
	noReplace bool            // a readonly variable exists: later assignments may fail
	gen       int             // bumped on every change
}

func newVarEnv() *varEnv { return &varEnv{vals: map[string][]string{}, perm: map[string]bool{}} }

func (e *varEnv) get(name string) ([]string, bool) {
	if e.dead {
		return nil, false
	}
	v, ok := e.vals[name]
	return v, ok
}

// set records an assignment. definite says it certainly runs, in this
// shell, before what follows; otherwise the value is only added as a
// candidate (and an unknown variable stays unknown).
func (e *varEnv) set(name string, vals []string, definite bool) {
	if e.dead || e.perm[name] {
		return
	}
	e.gen++
	known := len(vals) > 0
	for _, v := range vals {
		if strings.ContainsRune(v, Hole) {
			known = false
		}
	}
	if !known {
		delete(e.vals, name)
		return
	}
	if definite && !e.noReplace {
		e.vals[name] = vals
		return
	}
	cur, ok := e.vals[name]
	if !ok {
		return
	}
	merged := append([]string(nil), cur...)
	for _, v := range vals {
		if !containsStr(merged, v) {
			merged = append(merged, v)
		}
	}
	if len(merged) > maxCandidates {
		delete(e.vals, name)
		return
	}
	e.vals[name] = merged
}

func (e *varEnv) forget(name string) {
	if _, ok := e.vals[name]; ok {
		e.gen++
		delete(e.vals, name)
	}
}

func (e *varEnv) taint(name string) {
	if !e.perm[name] {
		e.gen++
	}
	delete(e.vals, name)
	e.perm[name] = true
}

func (e *varEnv) kill() {
	if !e.dead {
		e.gen++
	}
	e.dead = true
	clear(e.vals)
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// wordEval evaluates words against an environment.
type wordEval struct {
	src    string
	env    *varEnv
	facts  *facts
	noVars bool // inside a function or trap body: variables are unknown
	posRun bool // $1, $@, …: arguments the command chose (function bodies, scripts run with arguments)
	cr     byte // the placeholder mvdan read for each carriage return (see parse.go)
	expand *bool
}

// lit maps the carriage-return placeholder in a literal back.
func (ev *wordEval) lit(s string) string {
	if ev.cr != 0 && strings.IndexByte(s, ev.cr) >= 0 {
		return strings.ReplaceAll(s, string(ev.cr), "\r")
	}
	return s
}

// known returns a variable's values when an earlier literal assignment
// makes them known.
func (ev *wordEval) known(name string) ([]string, bool) {
	if ev.noVars || ev.env == nil {
		return nil, false
	}
	return ev.env.get(name)
}

func (ev *wordEval) srcOf(n syntax.Node) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(ev.src) || s > e {
		return ""
	}
	return ev.src[s:e]
}

// words evaluates a list of words, expanding brace lists into several words
// as bash does before running a command.
func (ev *wordEval) words(ws []*syntax.Word) []*cword {
	out := make([]*cword, 0, len(ws))
	for _, w := range ws {
		src := ev.srcOf(w)
		if exp := braceSplit(w); exp != nil {
			// The words of one brace list share its source text; only the
			// first carries it, so that views as written show it once.
			for i, part := range exp {
				cw := ev.word(part)
				if i == 0 {
					cw.src = src
				}
				cw.expand = true
				out = append(out, cw)
			}
			continue
		}
		cw := ev.word(w)
		cw.src = src
		out = append(out, cw)
	}
	return out
}

// braceSplit expands an unquoted brace list in w ({rm,-rf,x} → rm -rf x).
// It returns nil when w has none. Sequences ({a..z}) become holes.
func braceSplit(w *syntax.Word) []*syntax.Word {
	has := false
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "{") {
			has = true
		}
	}
	if !has {
		return nil
	}
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(cp) {
		return nil
	}
	out := expandBraces(cp, 0)
	if len(out) == 0 || len(out) > 64 {
		return nil
	}
	return out
}

func expandBraces(w *syntax.Word, depth int) []*syntax.Word {
	if depth > 8 {
		return nil
	}
	acc := [][]syntax.WordPart{nil}
	for _, p := range w.Parts {
		be, ok := p.(*syntax.BraceExp)
		if !ok {
			for i := range acc {
				acc[i] = append(acc[i], p)
			}
			continue
		}
		if be.Sequence {
			for i := range acc {
				acc[i] = append(acc[i], &syntax.ExtGlob{Pattern: &syntax.Lit{}}) // a hole
			}
			continue
		}
		var next [][]syntax.WordPart
		for _, el := range be.Elems {
			for _, sub := range expandBraces(el, depth+1) {
				for _, a := range acc {
					n := append(append([]syntax.WordPart(nil), a...), sub.Parts...)
					next = append(next, n)
				}
			}
		}
		if len(next) > 64 {
			return nil
		}
		acc = next
	}
	out := make([]*syntax.Word, 0, len(acc))
	for _, parts := range acc {
		if len(parts) == 0 {
			continue // an empty brace item vanishes
		}
		out = append(out, &syntax.Word{Parts: parts})
	}
	return out
}

// word evaluates one word to the values it can take.
func (ev *wordEval) word(w *syntax.Word) *cword {
	cw := &cword{nodes: w}
	if len(w.Parts) == 1 {
		// The common case: one plain literal.
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "\\*?[~") &&
			(ev.cr == 0 || strings.IndexByte(l.Value, ev.cr) < 0) {
			cw.vals = []string{l.Value}
			return cw
		}
	}
	vals := []string{""}
	parts := w.Parts
	if l, ok := parts[0].(*syntax.Lit); ok && strings.HasPrefix(l.Value, "~") {
		// Tilde expansion: the prefix up to the first slash is a home
		// directory (the user's, another user's, $PWD, $OLDPWD). A path
		// below it keeps its literal last part; a lone prefix is a hole.
		slash := strings.IndexByte(l.Value, '/')
		switch {
		case slash < 0 && len(parts) == 1:
			cw.expand = true
			cw.dyn = ev.facts != nil && (ev.facts.flag("home", ev.facts.home) || l.Value == "~+" || l.Value == "~-")
			cw.vals = []string{holeStr}
			return cw
		case slash > 0 && ev.facts != nil && l.Value[:slash] == "~" && ev.facts.flag("home", ev.facts.home):
			cw.expand, cw.dyn = true, true
			vals = ev.part(cw, &syntax.Lit{Value: l.Value[slash:]}, []string{holeStr}, false)
			parts = parts[1:]
		}
	}
	for _, p := range parts {
		vals = ev.part(cw, p, vals, false)
	}
	cw.vals = vals
	return cw
}

// appendVals appends each of add to each of acc, collapsing to a hole when
// there would be too many combinations.
func appendVals(acc, add []string) []string {
	if len(add) == 1 {
		for i := range acc {
			acc[i] += add[0]
		}
		return acc
	}
	if len(acc)*len(add) > maxCandidates {
		for i := range acc {
			acc[i] += holeStr
		}
		return acc
	}
	out := make([]string, 0, len(acc)*len(add))
	for _, a := range acc {
		for _, b := range add {
			out = append(out, a+b)
		}
	}
	return out
}

func (ev *wordEval) part(cw *cword, p syntax.WordPart, acc []string, inDouble bool) []string {
	switch p := p.(type) {
	case *syntax.Lit:
		val := ev.lit(p.Value)
		if inDouble {
			return appendVals(acc, []string{bash.UnescapeDouble(val)})
		}
		v, glob := bash.UnescapeUnquoted(val)
		if strings.ContainsRune(val, '\\') {
			cw.quoted = true
		}
		if glob {
			// Pathname expansion: names of files the command may have made,
			// any number of them.
			cw.expand, cw.dyn, cw.split = true, true, true
		}
		return appendVals(acc, []string{v})
	case *syntax.SglQuoted:
		cw.quoted = true
		if p.Dollar {
			var b strings.Builder
			bash.DecodeANSIC(ev.lit(p.Value), 0, &b)
			v := b.String()
			if i := strings.IndexByte(v, 0); i >= 0 {
				v = v[:i] // bash ends the string at a NUL: $'rm\0x' is rm
			}
			return appendVals(acc, []string{v})
		}
		return appendVals(acc, []string{ev.lit(p.Value)})
	case *syntax.DblQuoted:
		cw.quoted = true
		if p.Dollar && ev.facts != nil && ev.facts.flag("locale", ev.facts.locale) {
			// $"…" is translated through the message catalogue the script
			// chose.
			cw.expand, cw.dyn = true, true
			return appendVals(acc, []string{holeStr})
		}
		for _, q := range p.Parts {
			acc = ev.part(cw, q, acc, true)
		}
		return acc
	case *syntax.ParamExp:
		cw.expand = true
		ev.sawExpansion()
		if vals, ok := ev.param(p); ok {
			if !inDouble {
				// Unquoted values are split on IFS and globbed: only plain
				// words stay known, and none once IFS may have changed.
				if ev.facts != nil && ev.facts.flag("ifs", ev.facts.ifs) {
					cw.dyn, cw.split = true, true
					return appendVals(acc, []string{holeStr})
				}
				for _, v := range vals {
					if v == "" || strings.ContainsAny(v, " \t\n*?[") {
						cw.dyn, cw.split = true, true
						return appendVals(acc, []string{holeStr})
					}
				}
			}
			return appendVals(acc, vals)
		}
		if ev.paramKind(p) == kindRun {
			cw.dyn = true
			cw.split = cw.split || !inDouble
		}
		return appendVals(acc, []string{holeStr})
	case *syntax.ArithmExp:
		// An integer (the expression is checked where it is walked); it
		// splits only on an IFS holding digits.
		cw.expand = true
		ev.sawExpansion()
		if !inDouble && ev.facts != nil && ev.facts.flag("ifs", ev.facts.ifs) {
			cw.split = true
		}
		return appendVals(acc, []string{holeStr})
	case *syntax.ProcSubst:
		cw.expand, cw.dyn = true, true // one word: /dev/fd/N
		ev.sawExpansion()
		return appendVals(acc, []string{holeStr})
	default: // $(…), `…`, extglob, brace sequences
		cw.expand, cw.dyn = true, true
		cw.split = cw.split || !inDouble
		ev.sawExpansion()
		return appendVals(acc, []string{holeStr})
	}
}

func (ev *wordEval) sawExpansion() {
	if ev.expand != nil {
		*ev.expand = true
	}
}

// param resolves $name / ${name} from the environment.
func (ev *wordEval) param(p *syntax.ParamExp) ([]string, bool) {
	if p.Param == nil || !plainParam(p) || !bash.IsName(p.Param.Value) {
		return nil, false
	}
	return ev.known(p.Param.Value)
}

// paramKind says what an expansion the walker cannot resolve holds: data
// from the environment, or text the command chose. Only $name, ${name},
// a length or a transformation of such a value is data; a default, an
// alternative or a replacement is text written in the command.
func (ev *wordEval) paramKind(p *syntax.ParamExp) varKind {
	if p.Param == nil || ev.facts == nil {
		return kindRun
	}
	if p.Length {
		return kindInt
	}
	if p.Repl != nil || p.Exp != nil && p.Exp.Op != syntax.UpperFirst && p.Exp.Op != syntax.UpperAll &&
		p.Exp.Op != syntax.LowerFirst && p.Exp.Op != syntax.LowerAll && p.Exp.Op != syntax.RemSmallPrefix &&
		p.Exp.Op != syntax.RemLargePrefix && p.Exp.Op != syntax.RemSmallSuffix && p.Exp.Op != syntax.RemLargeSuffix {
		return kindRun
	}
	if p.Excl || p.NestedParam != nil || p.Flags != nil || len(p.Modifiers) > 0 {
		return kindRun
	}
	return ev.facts.kind(p.Param.Value, ev.posRun)
}
