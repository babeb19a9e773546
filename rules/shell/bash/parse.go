package bash

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// This file turns Bash source into a syntax tree with mvdan.cc/sh/v3/syntax
// (the parser behind shfmt, bash dialect), within bounds, and where that
// parser and bash read the same bytes differently, the way bash does.
//
// Bounds. mvdan's parser and the walkers over its tree recurse, so a deep
// input (`$(( a[a[a[…]]] ))`, `if if if …`, `time time …`) would exhaust the
// goroutine stack, which is fatal to the whole daemon. Before the parser
// sees anything, cost counts every byte that could open a level of
// recursion — brackets, backquotes, `?`, block keywords (5 units) and the
// operators that chain (`- + ! ~ = * & |`, time, coproc, function: 1 unit)
// — with no regard to quoting, so it can only over-count: each level the
// parser recurses consumes at least one such byte. A unit is about 1 KiB of
// stack (measured: 4–5 KiB per subscript or parenthesis level, about 1 KiB
// per unary, assignment, negation or pipe), and maxCost keeps the parse and
// the walk within about 16 MiB of stack; maxTokens bounds the number of
// words and operators, hence the tree's size. An input over either bound is
// not parsed as is: the bytes of its quoted parts (single quotes, literal
// double quotes, comments, the bodies of quoted here-documents), which
// cannot nest, are replaced by filler of the same length and the result is
// parsed first; if that copy is within the bounds and mvdan sees every
// replaced part as the same kind of quoted text, the original has the same
// structure and is parsed. Anything else is an error, and the caller fails
// closed.
//
// Disagreements with bash, resolved bash's way (reported upstream; see
// docs/rules.md):
//   - a carriage return is a word character to bash and a blank to mvdan:
//     mvdan is given a placeholder byte that is a word character to both,
//     and values get the carriage return back;
//   - a comment ends at the newline in bash even after a backslash; mvdan
//     joins the next line to it: the backslash is blanked and the script
//     parsed again;
//   - `coproc NAME cmd | …`: bash runs `NAME cmd`, mvdan takes NAME as the
//     coprocess's name: the word is put back;
//   - a NUL byte cannot reach bash through argv and mvdan skips it: a command
//     holding one is an error.

// MaxLen bounds the input we analyse. Longer commands are reported as
// unparseable (Analysis.Err).
const MaxLen = 1 << 20

// maxCost bounds the recursion the parser and the walkers may need (see
// cost); maxTokens the size of the tree.
const (
	maxCost   = 16384
	maxTokens = 50000
)

var (
	ErrTooLong = errors.New("command too long (over 1 MiB)")
	ErrTooDeep = errors.New("command too deeply nested or too large to analyse")
	ErrNUL     = errors.New("command contains a NUL byte (bash never sees what follows it)")
)

var (
	parserPool = sync.Pool{New: func() any {
		return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
	}}
	commentParserPool = sync.Pool{New: func() any {
		return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
	}}
)

// script is a parsed Bash script.
type Script struct {
	File *syntax.File
	// cr is the byte mvdan saw in place of each carriage return (0: none).
	CR byte
	// notes are disagreements with bash that could not be undone; each
	// makes the analysis fail closed.
	Notes []string
}

// parseBash parses src as a Bash script, within the bounds above. The
// error says why it was not parsed; callers fail closed on it (deny/ask)
// or open (`if`).
func Parse(src string) (*Script, error) {
	if len(src) > MaxLen {
		return nil, ErrTooLong
	}
	if strings.IndexByte(src, 0) >= 0 {
		return nil, ErrNUL
	}
	s := &Script{}
	text := src
	if strings.IndexByte(src, '\r') >= 0 {
		s.CR = crPlaceholder(src)
		if s.CR == 0 {
			return nil, errors.New("command holds carriage returns and every control byte")
		}
		text = strings.ReplaceAll(src, "\r", string(s.CR))
	}
	var comments []syntax.Comment
	if c, t := Cost(text); c > maxCost || t > maxTokens {
		var err error
		if comments, err = checkDefused(text); err != nil {
			return nil, err
		}
	}
	// A comment that ends in a backslash: bash ends it at the newline, mvdan
	// joins the next line to it. Blank the backslash (it is inside the
	// comment either way) and parse again.
	b := []byte(nil)
	for try := 0; ; try++ {
		keep := strings.Contains(text, "\\\n") && strings.IndexByte(text, '#') >= 0
		f, coms, err := parseWith(text, keep)
		if err != nil {
			return nil, err
		}
		if comments == nil {
			comments = coms
		}
		fixed := false
		for _, c := range comments {
			if !strings.HasSuffix(c.Text, "\\\n") {
				continue
			}
			i := int(c.Hash.Offset()) + len(c.Text) - 1 // the backslash
			if i < 0 || i+1 >= len(text) || text[i] != '\\' || text[i+1] != '\n' {
				return nil, errors.New("a comment ending in a backslash could not be located")
			}
			if b == nil {
				b = []byte(text)
			}
			b[i] = ' '
			fixed = true
		}
		if !fixed {
			s.File = f
			break
		}
		if try == 3 {
			return nil, errors.New("comments ending in a backslash could not be separated from the next line")
		}
		text, comments = string(b), nil
	}
	if strings.Contains(text, "coproc") {
		s.Notes = FixCoprocs(s.File)
	}
	if strings.Contains(text, "<<") && strings.Contains(text, "\\\n") {
		s.Notes = append(s.Notes, heredocContinuations(text, s.File)...)
	}
	return s, nil
}

func parseWith(text string, keepComments bool) (*syntax.File, []syntax.Comment, error) {
	pool := &parserPool
	if keepComments {
		pool = &commentParserPool
	}
	p := pool.Get().(*syntax.Parser)
	defer pool.Put(p)
	f, err := p.Parse(strings.NewReader(text), "")
	if err != nil {
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			return nil, nil, fmt.Errorf("%s (line %d, column %d)", pe.Text, pe.Pos.Line(), pe.Pos.Col())
		}
		return nil, nil, err
	}
	if !keepComments {
		return f, nil, nil
	}
	var coms []syntax.Comment
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok {
			coms = append(coms, *c)
		}
		return true
	})
	return f, coms, nil
}

// crPlaceholder picks a control byte that src does not hold, for mvdan to
// read instead of each carriage return: a word character to mvdan, as the
// carriage return is to bash.
func crPlaceholder(src string) byte {
	for c := byte(1); c < 0x20; c++ {
		if c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
			continue
		}
		if strings.IndexByte(src, c) < 0 {
			return c
		}
	}
	return 0
}

// costOf is the recursion units a byte may open (see the comment at the top).
var costOf = func() (t [256]uint8) {
	for _, c := range "([{`?" {
		t[c] = 5
	}
	for _, c := range "-+!~=*&|" {
		t[c] = 1
	}
	return t
}()

// tokenByte marks bytes that may start or end a token or a word part.
var tokenByte = func() (t [256]bool) {
	for _, c := range " \t\n;&|<>(){}$`\"'" {
		t[c] = true
	}
	return t
}()

// cost over-estimates, with no regard to quoting, the recursion units and
// the tokens src may need.
func Cost(src string) (units, tokens int) {
	for i := 0; i < len(src); i++ {
		c := src[i]
		units += int(costOf[c])
		if tokenByte[c] {
			tokens++
		}
		if c >= 'a' && c <= 'w' && (i == 0 || !IsNameByte(src[i-1])) {
			j := i + 1
			for j < len(src) && IsNameByte(src[j]) {
				j++
			}
			switch src[i:j] {
			case "if", "while", "until", "for", "select", "case":
				units += 5
			case "time", "coproc", "function":
				units++
			}
			i = j - 1
		}
	}
	return units, tokens
}

// quiet is a part of the input that cannot nest: the inside of single
// quotes or of literal double quotes, a comment, a here-document body.
type quiet struct {
	start, end int
	kind       quietKind
	delim      string // here-documents: the delimiter as the finder read it
	dash       bool   // <<-
}

type quietKind uint8

const (
	qSingle quietKind = iota
	qDouble
	qComment
	qHeredoc
)

// checkDefused decides whether an input over the bounds may still be
// parsed: its quiet parts are replaced by filler and the copy must be within
// the bounds, parse, and show every replaced part as the same kind of quiet
// text (so the original parses to the same structure). It returns the
// copy's comments (same positions as the original's).
func checkDefused(text string) ([]syntax.Comment, error) {
	qs := findQuiet(text)
	if len(qs) == 0 {
		return nil, ErrTooDeep
	}
	d, ok := defuse(text, qs)
	if !ok {
		return nil, ErrTooDeep
	}
	if c, t := Cost(d); c > maxCost || t > maxTokens {
		return nil, ErrTooDeep
	}
	f, coms, err := parseWith(d, true)
	if err != nil {
		return nil, err
	}
	if !verifyQuiet(d, f, coms, qs) {
		return nil, ErrTooDeep
	}
	return coms, nil
}

// findQuiet finds the quiet parts of src, reading quotes, comments and
// here-documents the simple way. It may be wrong: verifyQuiet checks each
// part against the parser before anything relies on it.
func findQuiet(src string) []quiet {
	var qs []quiet
	type pending struct {
		delim  string
		quoted bool
		dash   bool
	}
	var hdocs []pending
	wordStart := true
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', ';', '&', '|', '(', ')':
			wordStart = true
			continue
		case '\n':
			wordStart = true
			for _, h := range hdocs {
				i++ // past the newline
				start := i
				end, next := heredocEnd(src, i, h.delim, h.dash)
				if end > start && (h.quoted || !strings.ContainsAny(src[start:end], "$`\\")) {
					qs = append(qs, quiet{start: start, end: end, kind: qHeredoc, delim: h.delim, dash: h.dash})
				}
				i = next - 1 // on the delimiter line's newline (or the end)
			}
			hdocs = hdocs[:0]
			continue
		case '\\':
			i++
		case '\'':
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return qs
			}
			if j > 0 {
				qs = append(qs, quiet{start: i + 1, end: i + 1 + j, kind: qSingle})
			}
			i += j + 1
		case '"':
			j := i + 1
			pure := true
			for j < len(src) && src[j] != '"' {
				if src[j] == '$' || src[j] == '`' || src[j] == '\\' {
					pure = false
					if src[j] == '\\' {
						j++
					}
				}
				j++
			}
			if j >= len(src) {
				return qs
			}
			if pure && j > i+1 {
				qs = append(qs, quiet{start: i + 1, end: j, kind: qDouble})
			}
			i = j
		case '$':
			if i+1 < len(src) && src[i+1] == '\'' {
				j := i + 2
				for j < len(src) && src[j] != '\'' {
					if src[j] == '\\' {
						j++
					}
					j++
				}
				i = j
			}
		case '#':
			if wordStart {
				j := strings.IndexByte(src[i:], '\n')
				if j < 0 {
					j = len(src) - i
				}
				if j > 1 {
					qs = append(qs, quiet{start: i + 1, end: i + j, kind: qComment})
				}
				i += j - 1
				continue
			}
		case '<':
			if strings.HasPrefix(src[i:], "<<<") {
				i += 2
				break
			}
			if !strings.HasPrefix(src[i:], "<<") {
				break
			}
			j := i + 2
			h := pending{}
			if j < len(src) && src[j] == '-' {
				h.dash = true
				j++
			}
			for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
				j++
			}
			var d strings.Builder
		word:
			for j < len(src) {
				switch ch := src[j]; ch {
				case ' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>':
					break word
				case '\'', '"':
					h.quoted = true
					k := strings.IndexByte(src[j+1:], ch)
					if k < 0 {
						return qs
					}
					d.WriteString(src[j+1 : j+1+k])
					j += k + 2
				case '\\':
					h.quoted = true
					if j+1 < len(src) {
						d.WriteByte(src[j+1])
					}
					j += 2
				default:
					d.WriteByte(ch)
					j++
				}
			}
			h.delim = d.String()
			hdocs = append(hdocs, h)
			i = j - 1
			wordStart = false
			continue
		}
		wordStart = false
	}
	return qs
}

// heredocEnd finds the end of a here-document body starting at i: the
// offset of its delimiter line, and the offset just past that line.
func heredocEnd(src string, i int, delim string, dash bool) (end, next int) {
	for i < len(src) {
		j := strings.IndexByte(src[i:], '\n')
		line := src[i:]
		if j >= 0 {
			line = src[i : i+j]
		}
		cmp := line
		if dash {
			cmp = strings.TrimLeft(cmp, "\t")
		}
		if cmp == delim {
			if j < 0 {
				return i, len(src)
			}
			return i, i + j
		}
		if j < 0 {
			return len(src), len(src)
		}
		i += j + 1
	}
	return len(src), len(src)
}

// defuse copies src with the bytes of each quiet part replaced by a filler
// byte that occurs nowhere else outside them, keeping only the bytes that
// still mean something there: the newline that ends a here-document's last
// line, and backquotes and backslashes when the input has backquotes
// outside quiet parts (inside backquotes they can end a quote). A
// here-document body becomes one line of filler, which no delimiter
// matches, so its end stays where it was.
func defuse(src string, qs []quiet) (string, bool) {
	var outside [256]bool
	last := 0
	for _, q := range qs {
		if q.start < last {
			return "", false
		}
		for i := last; i < q.start; i++ {
			outside[src[i]] = true
		}
		last = q.end
	}
	for i := last; i < len(src); i++ {
		outside[src[i]] = true
	}
	filler := byte(0)
	for _, c := range []byte("xyzXYZqQjJkK0123456789_") {
		if !outside[c] {
			filler = c
			break
		}
	}
	if filler == 0 {
		return "", false
	}
	bq := outside['`']
	b := []byte(src)
	for _, q := range qs {
		for i := q.start; i < q.end; i++ {
			switch c := b[i]; {
			case c == '\n' && q.kind == qHeredoc && i == q.end-1:
			case (c == '\\' || c == '`') && bq:
			default:
				b[i] = filler
			}
		}
	}
	return string(b), true
}

// verifyQuiet checks that mvdan, on the defused copy d, sees every quiet
// part inside quiet text of the same kind (and every here-document with the
// delimiter the finder read).
func verifyQuiet(d string, f *syntax.File, coms []syntax.Comment, qs []quiet) bool {
	type span struct{ start, end int }
	var spans [4][]span
	var delims []string
	add := func(k quietKind, s, e int) { spans[k] = append(spans[k], span{s, e}) }
	for _, c := range coms {
		s := int(c.Hash.Offset()) + 1
		add(qComment, s, s+len(c.Text))
	}
	hdocs := map[int]string{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.SglQuoted:
			if !n.Dollar {
				add(qSingle, int(n.Left.Offset())+1, int(n.Right.Offset()))
			}
		case *syntax.DblQuoted:
			if !n.Dollar && len(n.Parts) == 1 {
				if l, ok := n.Parts[0].(*syntax.Lit); ok {
					add(qDouble, int(l.ValuePos.Offset()), int(l.ValueEnd.Offset()))
				}
			}
		case *syntax.Redirect:
			if (n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc) && n.Hdoc != nil && len(n.Hdoc.Parts) == 1 {
				if l, ok := n.Hdoc.Parts[0].(*syntax.Lit); ok {
					s, e := int(l.ValuePos.Offset()), int(l.ValueEnd.Offset())
					add(qHeredoc, s, e)
					hdocs[s] = hdocDelim(n.Word)
				}
			}
		}
		return true
	})
	_ = delims
	for k := range spans {
		slices.SortFunc(spans[k], func(a, b span) int { return a.start - b.start })
	}
	for _, q := range qs {
		ss := spans[q.kind]
		i, _ := slices.BinarySearchFunc(ss, q.start, func(s span, t int) int { return s.start - t })
		// The containing span starts at or before q.start.
		if i == len(ss) || ss[i].start > q.start {
			i--
		}
		if i < 0 || ss[i].start > q.start || ss[i].end < q.end {
			return false
		}
		if q.kind == qHeredoc {
			// The body must be the whole here-document, ended by the same
			// delimiter, so that no line of the original ends it earlier.
			if ss[i].start != q.start || hdocs[ss[i].start] != q.delim {
				return false
			}
		}
	}
	return true
}

// hdocDelim is a here-document's delimiter with quotes removed, as the
// parser compares body lines with it.
func hdocDelim(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v, _ := UnescapeUnquoted(p.Value)
			b.WriteString(v)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				} else {
					return "\x00" // never equal to the finder's
				}
			}
		default:
			return "\x00"
		}
	}
	return b.String()
}

// heredocContinuations finds the unquoted here-documents that bash ends
// earlier than mvdan: bash joins a body line ending in a backslash with the
// next before comparing it with the delimiter ("E\\" + "" is "E"), mvdan
// does not, so what follows would be a command to bash and body text to
// mvdan. Each is a note: the analysis fails closed.
func heredocContinuations(src string, f *syntax.File) []string {
	var notes []string
	syntax.Walk(f, func(n syntax.Node) bool {
		r, ok := n.(*syntax.Redirect)
		if !ok || (r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc) || r.Hdoc == nil || r.Word == nil {
			return true
		}
		for _, p := range r.Word.Parts {
			if _, lit := p.(*syntax.Lit); !lit || strings.ContainsRune(p.(*syntax.Lit).Value, '\\') {
				return true // quoted: no continuation lines
			}
		}
		delim := hdocDelim(r.Word)
		s, e := int(r.Hdoc.Pos().Offset()), int(r.Hdoc.End().Offset())
		if s < 0 || e > len(src) || s > e {
			return true
		}
		body := src[s:e]
		if i := strings.LastIndexByte(body, '\n'); i >= 0 {
			last := body[i+1:]
			if r.Op == syntax.DashHdoc {
				last = strings.TrimLeft(last, "\t")
			}
			if last == delim {
				body = body[:i+1] // mvdan's end: the delimiter line itself
			}
		}
		var line strings.Builder
		for _, phys := range strings.SplitAfter(body, "\n") {
			text := strings.TrimSuffix(phys, "\n")
			if r.Op == syntax.DashHdoc && line.Len() == 0 {
				text = strings.TrimLeft(text, "\t")
			}
			trailing := len(text) - len(strings.TrimRight(text, "\\"))
			if trailing%2 == 1 && strings.HasSuffix(phys, "\n") {
				line.WriteString(text[:len(text)-1])
				continue
			}
			line.WriteString(text)
			if line.String() == delim {
				notes = append(notes, "a here-document line ending in a backslash ends `<<"+delim+"` early in bash")
				return true
			}
			line.Reset()
		}
		return true
	})
	return notes
}

// asAssign reads a word NAME=value or NAME+=value as an assignment.
func asAssign(w *syntax.Word) *syntax.Assign {
	if len(w.Parts) == 0 {
		return nil
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return nil
	}
	i := strings.IndexByte(l.Value, '=')
	if i <= 0 {
		return nil
	}
	name, appnd := l.Value[:i], false
	if strings.HasSuffix(name, "+") {
		name, appnd = name[:len(name)-1], true
	}
	if !syntax.ValidName(name) {
		return nil
	}
	start := l.ValuePos
	nameEnd := syntax.NewPos(start.Offset()+uint(len(name)), start.Line(), start.Col()+uint(len(name)))
	restPos := syntax.NewPos(start.Offset()+uint(i+1), start.Line(), start.Col()+uint(i+1))
	a := &syntax.Assign{Append: appnd, Name: &syntax.Lit{ValuePos: start, ValueEnd: nameEnd, Value: name}}
	parts := append([]syntax.WordPart{&syntax.Lit{ValuePos: restPos, ValueEnd: l.ValueEnd, Value: l.Value[i+1:]}}, w.Parts[1:]...)
	a.Value = &syntax.Word{Parts: parts}
	return a
}

// assignWord writes an assignment back as the word it was.
func assignWord(a *syntax.Assign) *syntax.Word {
	if a.Name == nil || a.Array != nil || a.Index != nil || a.Naked {
		return nil
	}
	op := "="
	if a.Append {
		op = "+="
	}
	parts := []syntax.WordPart{&syntax.Lit{ValuePos: a.Name.ValuePos, ValueEnd: a.Name.ValueEnd, Value: a.Name.Value + op}}
	if a.Value != nil {
		parts = append(parts, a.Value.Parts...)
	}
	return &syntax.Word{Parts: parts}
}

// FixCoprocs undoes mvdan's reading of `coproc NAME cmd | …`: bash has no
// coprocess name there (a name is only taken before a compound command)
// and runs `NAME cmd`. It returns what could not be undone.
func FixCoprocs(f *syntax.File) []string {
	var notes []string
	syntax.Walk(f, func(n syntax.Node) bool {
		cc, ok := n.(*syntax.CoprocClause)
		if !ok || cc.Name == nil || cc.Stmt == nil {
			return true
		}
		left := cc.Stmt
		for {
			b, ok := left.Cmd.(*syntax.BinaryCmd)
			if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) {
				break
			}
			left = b.X
		}
		if left == cc.Stmt {
			return true // NAME { …; } or NAME ( … ): a real name
		}
		switch call := left.Cmd.(type) {
		case *syntax.CallExpr:
			if a := asAssign(cc.Name); a != nil && len(call.Args) > 0 {
				// coproc X=1 cmd | …: an assignment prefix.
				call.Assigns = append([]*syntax.Assign{a}, call.Assigns...)
				cc.Name = nil
				return true
			}
			// coproc NAME A=1 cmd | …: NAME is the command, A=1 a word.
			words := []*syntax.Word{cc.Name}
			for _, a := range call.Assigns {
				w := assignWord(a)
				if w == nil {
					notes = append(notes, "`coproc` followed by a word, an array assignment and a pipe")
					return true
				}
				words = append(words, w)
			}
			call.Args = append(words, call.Args...)
			call.Assigns = nil
			cc.Name = nil
		case nil:
			left.Cmd = &syntax.CallExpr{Args: []*syntax.Word{cc.Name}}
			cc.Name = nil
		}
		return true
	})
	return notes
}
