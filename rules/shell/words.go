package shell

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// This file turns Bash source into syntax trees with mvdan.cc/sh/v3/syntax
// (the parser behind shfmt, bash dialect) and evaluates words statically:
// quote removal, $'…' decoding, brace expansion, and parameter expansion of
// variables whose value an assignment in the same script makes known. What
// cannot be known statically — a command substitution, a variable from the
// environment, a glob — becomes a hole: a placeholder that stands for any
// text. analyze.go builds the views that carry the holes; what a hole costs
// is the matcher's business (package rules fails closed on it).

// Hole stands, in a View, for text that cannot be known without running the
// shell. A NUL byte cannot occur in a shell word, so it never collides with
// real text.
const Hole = '\x00'

const holeStr = string(Hole)

// maxShellLen bounds the input we analyse. Longer commands are reported as
// unparseable (Analysis.Err).
const maxShellLen = 1 << 20

// maxNesting bounds bracket nesting before the parser sees the input: the
// parser is recursive and slows down sharply on pathological nesting.
const maxNesting = 256

// maxCandidates bounds the values one word may take (x=a or x=b …); beyond
// it the word becomes a hole.
const maxCandidates = 8

var (
	errTooLong = errors.New("command too long")
	errTooDeep = errors.New("nesting too deep")
)

var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
}}

// parseBash parses src as a Bash script. The error says why it does not
// parse; callers fail closed on it (deny/ask) or open (`if`).
func parseBash(src string) (*syntax.File, error) {
	if len(src) > maxShellLen {
		return nil, errTooLong
	}
	if nestingDepth(src) > maxNesting {
		return nil, errTooDeep
	}
	p := parserPool.Get().(*syntax.Parser)
	defer parserPool.Put(p)
	f, err := p.Parse(strings.NewReader(src), "")
	if err != nil {
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s (line %d, column %d)", pe.Text, pe.Pos.Line(), pe.Pos.Col())
		}
		return nil, err
	}
	return f, nil
}

// nestingDepth over-estimates how deeply brackets nest, ignoring quotes.
func nestingDepth(src string) int {
	depth, max := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '`':
			depth++
			if depth > max {
				max = depth
			}
		case ')', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	if strings.Count(src, "`") > maxNesting {
		return strings.Count(src, "`")
	}
	return max
}

// cword is one word of a simple command after static evaluation.
type cword struct {
	src    string   // as written (quotes and expansions included)
	vals   []string // the values it can take; holes (\x00) where unknown
	quoted bool     // contains quotes or escapes
	expand bool     // contains an expansion ($…, `…`, $(…), <(…), a glob)
	nodes  *syntax.Word
}

// single returns the word's value when it is known and unique.
func (w *cword) single() (string, bool) {
	if len(w.vals) == 1 && !strings.ContainsRune(w.vals[0], Hole) {
		return w.vals[0], true
	}
	return "", false
}

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
// known and unique, else as written.
func (w *cword) text() string {
	if v, ok := w.single(); ok {
		return v
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
	noVars bool // inside a function or trap body: variables are unknown
	expand *bool
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
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "\\*?[") {
			cw.vals = []string{l.Value}
			return cw
		}
	}
	vals := []string{""}
	for _, p := range w.Parts {
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
		if inDouble {
			return appendVals(acc, []string{unescapeDouble(p.Value)})
		}
		v, glob := unescapeUnquoted(p.Value)
		if strings.ContainsRune(p.Value, '\\') {
			cw.quoted = true
		}
		if glob {
			cw.expand = true
		}
		return appendVals(acc, []string{v})
	case *syntax.SglQuoted:
		cw.quoted = true
		if p.Dollar {
			var b strings.Builder
			decodeANSIC(p.Value, 0, &b)
			return appendVals(acc, []string{strings.ReplaceAll(b.String(), "\x00", "")})
		}
		return appendVals(acc, []string{p.Value})
	case *syntax.DblQuoted:
		cw.quoted = true
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
				// words stay known.
				for _, v := range vals {
					if v == "" || strings.ContainsAny(v, " \t\n*?[") {
						return appendVals(acc, []string{holeStr})
					}
				}
			}
			return appendVals(acc, vals)
		}
		return appendVals(acc, []string{holeStr})
	default: // $(…), `…`, $((…)), <(…), extglob, brace sequences
		cw.expand = true
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
	if ev.noVars || ev.env == nil || p.Param == nil || p.Excl || p.Length || p.Width || p.IsSet ||
		p.Index != nil || p.Slice != nil || p.Repl != nil || p.Names != 0 || p.Exp != nil ||
		p.NestedParam != nil || len(p.Modifiers) > 0 || p.Flags != nil || !isName(p.Param.Value) {
		return nil, false
	}
	return ev.env.get(p.Param.Value)
}

// unescapeUnquoted removes backslashes from an unquoted literal and turns
// glob patterns (*, ?, […]) into holes: pathname expansion decides what they
// become. glob reports whether there was one.
func unescapeUnquoted(s string) (string, bool) {
	if !strings.ContainsAny(s, "\\*?[") {
		return s, false
	}
	var b strings.Builder
	glob := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
			}
		case '*', '?':
			glob = true
			b.WriteByte(Hole)
		case '[':
			// A bracket expression needs at least one character before its ']'.
			if i+2 <= len(s) {
				if j := strings.IndexByte(s[i+2:], ']'); j >= 0 {
					glob = true
					b.WriteByte(Hole)
					i += 2 + j
					continue
				}
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), glob
}

// unescapeDouble removes the backslashes that are escapes inside "…".
func unescapeDouble(s string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// baseName is the command name a path runs ("/usr/bin/env" → "env"); a
// word without a slash is returned as is.
func baseName(v string) string {
	if !strings.Contains(v, "/") {
		return v
	}
	b := path.Base(v)
	if b == "/" || b == "." {
		return v
	}
	return b
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isNameByte(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// isName reports whether s is a shell variable name.
func isName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

// decodeANSIC decodes the body of $'…' starting at raw[i] into b, as bash
// does (\n, \t, \xHH, \NNN octal, \', \\, …), and returns the index of
// the closing quote (or the end of raw).
func decodeANSIC(raw string, i int, b *strings.Builder) int {
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == '\'' {
			return i
		}
		if c != '\\' || i+1 >= len(raw) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := raw[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(raw) && isHex(raw[i+1]) {
				i++
				v = v*16 + hexVal(raw[i])
				n++
			}
			if n == 0 {
				b.WriteString("\\x")
			} else {
				b.WriteByte(byte(v))
			}
		case 'u', 'U':
			// \uHHHH, \UHHHHHHHH: a code point.
			max := 4
			if e == 'U' {
				max = 8
			}
			v, n := 0, 0
			for n < max && i+1 < len(raw) && isHex(raw[i+1]) {
				i++
				v = v*16 + hexVal(raw[i])
				n++
			}
			if n == 0 {
				b.WriteByte('\\')
				b.WriteByte(e)
			} else {
				b.WriteRune(rune(v))
			}
		case 'c':
			// \cX: control character.
			if i+1 < len(raw) {
				i++
				b.WriteByte(raw[i] & 0x1f)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := int(e-'0'), 1
			for n < 3 && i+1 < len(raw) && raw[i+1] >= '0' && raw[i+1] <= '7' {
				i++
				v = v*8 + int(raw[i]-'0')
				n++
			}
			b.WriteByte(byte(v))
		default: // \\ \' \" \? and unknown escapes
			if e != '\\' && e != '\'' && e != '"' && e != '?' {
				b.WriteByte('\\')
			}
			b.WriteByte(e)
		}
	}
	return i
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}
