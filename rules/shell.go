package rules

import (
	"errors"
	"strings"
)

// This file is a small, purpose-built lexer for POSIX/bash command lines. It
// does not evaluate anything: it finds the simple commands a line would run
// (including the ones inside $(…), backticks, <(…) and subshells), their
// words as written, and their redirections. Anything it does not understand
// is an error, and callers turn errors into fail-closed (deny/ask) or
// fail-open (`if`) answers — see doc.go.

// maxShellDepth bounds nesting of $(…), backticks and subshells so that a
// hostile command cannot exhaust the stack.
const maxShellDepth = 64

// maxShellLen bounds the input we analyse. Longer commands are reported as
// unparseable (deny/ask rules then fail closed).
const maxShellLen = 1 << 20

var (
	errUnterminatedSingle = errors.New("unterminated single quote")
	errUnterminatedDouble = errors.New("unterminated double quote")
	errUnterminatedBack   = errors.New("unterminated backquote")
	errUnterminatedSubst  = errors.New("unterminated $( or (")
	errUnterminatedBrace  = errors.New("unterminated ${")
	errUnexpectedParen    = errors.New("unexpected )")
	errUnexpectedOpen     = errors.New("unexpected (")
	errTrailingBackslash  = errors.New("trailing backslash")
	errMissingTarget      = errors.New("redirection without a target")
	errTooDeep            = errors.New("nesting too deep")
	errTooLong            = errors.New("command too long")
)

// shWord is one word as written in the source.
type shWord struct {
	raw    string // exact source text, quotes and escapes included
	expand bool   // contains $…, `…`, $(…) or <(…): its value is not known statically
	quoted bool   // contains quotes or backslashes
}

// shRedir is one redirection.
type shRedir struct {
	fd     string // explicit fd digits before the operator, "" if none
	op     string // ">", ">>", ">|", ">&", "&>", "&>>", "<", "<<", "<<-", "<<<", "<&", "<>"
	target shWord
}

// shCmd is one simple command: its words and redirections.
type shCmd struct {
	words   []shWord
	redirs  []shRedir
	funcDef bool // followed by "()": a function definition header, not a command
}

type heredoc struct {
	delim     string
	quoted    bool // delimiter was quoted: the body is literal
	stripTabs bool // <<-
}

// shParser holds the lexer state. Sub-parsers (backtick bodies) share cmds.
type shParser struct {
	src      string
	pos      int
	depth    int
	cmds     *[]shCmd
	cur      int // index in *cmds of the command being built, -1 if none
	heredocs []heredoc
	expand   bool // any expansion seen anywhere
}

// parseShell lexes src into simple commands, outer commands before the
// commands nested in them.
func parseShell(src string) (cmds []shCmd, expand bool, err error) {
	if len(src) > maxShellLen {
		return nil, false, errTooLong
	}
	p := &shParser{src: src, cmds: &cmds, cur: -1}
	if err := p.list(0); err != nil {
		return nil, false, err
	}
	return cmds, p.expand, nil
}

func (p *shParser) peek(off int) byte {
	if p.pos+off < len(p.src) {
		return p.src[p.pos+off]
	}
	return 0
}

// command returns the command being built, starting one if needed.
func (p *shParser) command() *shCmd {
	if p.cur < 0 {
		*p.cmds = append(*p.cmds, shCmd{})
		p.cur = len(*p.cmds) - 1
	}
	return &(*p.cmds)[p.cur]
}

// end finishes the current simple command (at an operator or newline).
func (p *shParser) end() { p.cur = -1 }

// hasWords reports whether the current command already has words.
func (p *shParser) hasWords() bool {
	return p.cur >= 0 && len((*p.cmds)[p.cur].words) > 0
}

// list parses a command list until EOF (close == 0) or the matching close
// paren (close == ')'), which it consumes.
func (p *shParser) list(close byte) error {
	for {
		if p.pos >= len(p.src) {
			p.end()
			if close != 0 {
				return errUnterminatedSubst
			}
			return nil
		}
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			p.pos++
		case c == '\\' && p.peek(1) == '\n':
			p.pos += 2 // line continuation
		case c == '\n':
			p.end()
			p.pos++
			if err := p.readHeredocs(); err != nil {
				return err
			}
		case c == '#':
			// Between words a '#' starts a comment up to the newline.
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == ';':
			p.end()
			p.pos++
			for p.pos < len(p.src) && (p.src[p.pos] == ';' || p.src[p.pos] == '&') {
				p.pos++ // ;; ;& ;;& (case terminators)
			}
		case c == '&':
			switch p.peek(1) {
			case '&':
				p.end()
				p.pos += 2
			case '>':
				if err := p.redirect(""); err != nil {
					return err
				}
			default:
				p.end()
				p.pos++
			}
		case c == '|':
			p.end()
			if n := p.peek(1); n == '|' || n == '&' {
				p.pos += 2
			} else {
				p.pos++
			}
		case c == ')':
			if close != ')' {
				return errUnexpectedParen
			}
			p.end()
			p.pos++
			return nil
		case c == '(':
			if err := p.openParen(); err != nil {
				return err
			}
		case (c == '<' || c == '>') && p.peek(1) != '(':
			if err := p.redirect(""); err != nil {
				return err
			}
		default:
			start := p.pos
			p.command() // reserve the slot so this command precedes its $(…) commands
			idx := p.cur
			w, err := p.word()
			if err != nil {
				return err
			}
			if p.pos == start { // cannot happen for well-formed input; never loop
				return errUnexpectedOpen
			}
			// "2>file": an all-digit word glued to a redirection is its fd.
			if n := p.peek(0); (n == '<' || n == '>') && p.peek(1) != '(' && isDigits(w.raw) && p.pos > start {
				if err := p.redirect(w.raw); err != nil {
					return err
				}
				continue
			}
			cmd := &(*p.cmds)[idx]
			cmd.words = append(cmd.words, w)
		}
	}
}

// openParen handles '(' between words: a subshell at command start, an
// arithmetic command "((…))", "for ((…))", or a function definition "f()".
func (p *shParser) openParen() error {
	if p.hasWords() {
		cmd := &(*p.cmds)[p.cur]
		if len(cmd.words) == 1 && cmd.words[0].raw == "for" && p.peek(1) == '(' {
			return p.arith(2, true)
		}
		// "name ( )" is a function definition header.
		i := p.pos + 1
		for i < len(p.src) && (p.src[i] == ' ' || p.src[i] == '\t') {
			i++
		}
		if i < len(p.src) && p.src[i] == ')' {
			cmd.funcDef = true
			p.pos = i + 1
			p.end()
			return nil
		}
		return errUnexpectedOpen
	}
	if p.cur >= 0 && len((*p.cmds)[p.cur].redirs) > 0 {
		return errUnexpectedOpen
	}
	if p.peek(1) == '(' {
		return p.arith(2, false)
	}
	p.pos++
	return p.nested(')')
}

// nested parses a nested list ($(…), (…), <(…)) with its own command slot.
func (p *shParser) nested(close byte) error {
	if p.depth >= maxShellDepth {
		return errTooDeep
	}
	savedCur, savedHD := p.cur, p.heredocs
	p.cur, p.heredocs = -1, nil
	p.depth++
	err := p.list(close)
	p.depth--
	p.cur = savedCur
	// Heredocs opened inside but not yet read (no newline inside) are read
	// after the next newline of the enclosing list, as bash does.
	p.heredocs = append(savedHD, p.heredocs...)
	return err
}

// arith skips an arithmetic expression starting at p.pos ("((" or "$((",
// skip = bytes before the expression). Command substitutions inside are still
// parsed. If the parens do not close as "))" it is really a nested subshell
// ("$( (a) )"), so fall back to parsing it as one. forLoop allows the ';'
// of "for ((i=0; i<n; i++))".
func (p *shParser) arith(skip int, forLoop bool) error {
	start := p.pos
	p.pos += skip
	depth := 0
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch c {
		case '\\':
			p.pos += 2
			continue
		case '$', '`':
			if _, err := p.dollarOrBack(); err != nil {
				return err
			}
			continue
		case '(':
			depth++
		case ')':
			if depth == 0 {
				if p.peek(1) == ')' {
					p.pos += 2
					p.expand = true
					return nil
				}
				return p.arithFallback(start, skip)
			}
			depth--
		case ';':
			if !forLoop {
				return p.arithFallback(start, skip)
			}
		case '\'', '"', '\n', '|':
			// Not plausible arithmetic; parse as commands instead.
			return p.arithFallback(start, skip)
		}
		p.pos++
	}
	return p.arithFallback(start, skip)
}

// arithFallback re-parses "((…" / "$((…" as nested subshells.
func (p *shParser) arithFallback(start, skip int) error {
	// "$((" → "$(" + "(": one substitution containing a subshell.
	// "((" → "(" + "(": two nested subshells.
	p.pos = start + skip - 1
	if skip == 3 { // "$(("
		return p.nested(')')
	}
	// "((" at command start
	p.pos = start + 1
	return p.nested(')')
}

// word reads one word at p.pos.
func (p *shParser) word() (shWord, error) {
	start := p.pos
	w := shWord{}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch c {
		case ' ', '\t', '\r', '\n', ';', '&', '|', ')':
			w.raw = p.src[start:p.pos]
			return w, nil
		case '(':
			// Array assignment "a=(1 2)" keeps its parens in the word.
			if eq := strings.IndexByte(p.src[start:p.pos], '='); eq > 0 && isName(strings.TrimSuffix(p.src[start:start+eq], "+")) && start+eq+1 == p.pos {
				if err := p.skipParens(); err != nil {
					return w, err
				}
				continue
			}
			w.raw = p.src[start:p.pos]
			return w, nil
		case '<', '>':
			if p.peek(1) == '(' && p.pos == start {
				p.pos += 2
				w.expand = true
				p.expand = true
				if err := p.nested(')'); err != nil {
					return w, err
				}
				continue
			}
			w.raw = p.src[start:p.pos]
			return w, nil
		case '\\':
			if p.pos+1 >= len(p.src) {
				return w, errTrailingBackslash
			}
			w.quoted = true
			p.pos += 2
		case '\'':
			w.quoted = true
			i := strings.IndexByte(p.src[p.pos+1:], '\'')
			if i < 0 {
				return w, errUnterminatedSingle
			}
			p.pos += i + 2
		case '"':
			w.quoted = true
			e, err := p.double()
			if err != nil {
				return w, err
			}
			w.expand = w.expand || e
		case '$', '`':
			if c == '$' && p.peek(1) == '\'' {
				w.quoted = true
				if err := p.ansiC(); err != nil {
					return w, err
				}
				continue
			}
			if c == '$' && p.peek(1) == '"' {
				w.quoted = true
				p.pos++
				e, err := p.double()
				if err != nil {
					return w, err
				}
				w.expand = w.expand || e
				continue
			}
			e, err := p.dollarOrBack()
			if err != nil {
				return w, err
			}
			w.expand = w.expand || e
		default:
			p.pos++
		}
	}
	w.raw = p.src[start:p.pos]
	return w, nil
}

// skipParens skips a balanced (…) inside a word (array assignment).
func (p *shParser) skipParens() error {
	depth := 0
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch c {
		case '\\':
			p.pos += 2
			continue
		case '\'':
			i := strings.IndexByte(p.src[p.pos+1:], '\'')
			if i < 0 {
				return errUnterminatedSingle
			}
			p.pos += i + 2
			continue
		case '"':
			if _, err := p.double(); err != nil {
				return err
			}
			continue
		case '$', '`':
			if _, err := p.dollarOrBack(); err != nil {
				return err
			}
			continue
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				p.pos++
				return nil
			}
		}
		p.pos++
	}
	return errUnterminatedSubst
}

// double reads a "…" string starting at its opening quote. It reports
// whether it contained an expansion.
func (p *shParser) double() (bool, error) {
	p.pos++ // opening quote
	expand := false
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\\':
			p.pos += 2
		case '"':
			p.pos++
			return expand, nil
		case '$', '`':
			e, err := p.dollarOrBack()
			if err != nil {
				return false, err
			}
			expand = expand || e
		default:
			p.pos++
		}
	}
	return false, errUnterminatedDouble
}

// ansiC reads $'…' (backslash escapes, no expansion).
func (p *shParser) ansiC() error {
	p.pos += 2
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\\':
			p.pos += 2
		case '\'':
			p.pos++
			return nil
		default:
			p.pos++
		}
	}
	return errUnterminatedSingle
}

// dollarOrBack handles '$' or '`' at p.pos: command substitution (parsed as
// nested commands), arithmetic, ${…}, or a plain parameter. It reports
// whether the text is an expansion. $'…' and $"…" are handled by word, so
// here (and inside "…" or heredoc bodies, where they are not special) a '$'
// followed by a quote is literal.
func (p *shParser) dollarOrBack() (bool, error) {
	if p.src[p.pos] == '`' {
		return true, p.backquote()
	}
	switch n := p.peek(1); {
	case n == '(' && p.peek(2) == '(':
		return true, p.arith(3, false)
	case n == '(':
		p.pos += 2
		p.expand = true
		return true, p.nested(')')
	case n == '{':
		p.expand = true
		return true, p.brace()
	case n == '_' || (n >= 'a' && n <= 'z') || (n >= 'A' && n <= 'Z'):
		p.pos += 2
		for p.pos < len(p.src) && isNameByte(p.src[p.pos]) {
			p.pos++
		}
		p.expand = true
		return true, nil
	case n == '@' || n == '*' || n == '#' || n == '?' || n == '$' || n == '!' || n == '-' || (n >= '0' && n <= '9'):
		p.pos += 2
		p.expand = true
		return true, nil
	default:
		// A lone '$' (or "$'" inside quotes) is literal.
		p.pos++
		return false, nil
	}
}

// brace reads ${…}, parsing substitutions inside it.
func (p *shParser) brace() error {
	p.pos += 2
	depth := 1
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\\':
			p.pos += 2
		case '\'':
			i := strings.IndexByte(p.src[p.pos+1:], '\'')
			if i < 0 {
				return errUnterminatedSingle
			}
			p.pos += i + 2
		case '"':
			if _, err := p.double(); err != nil {
				return err
			}
		case '$', '`':
			if _, err := p.dollarOrBack(); err != nil {
				return err
			}
		case '{':
			depth++
			p.pos++
		case '}':
			depth--
			p.pos++
			if depth == 0 {
				return nil
			}
		default:
			p.pos++
		}
	}
	return errUnterminatedBrace
}

// backquote reads `…` and parses its body (after bash's backslash
// unescaping) as a nested command list.
func (p *shParser) backquote() error {
	p.expand = true
	var body strings.Builder
	i := p.pos + 1
	for ; i < len(p.src); i++ {
		c := p.src[i]
		if c == '\\' && i+1 < len(p.src) {
			n := p.src[i+1]
			if n == '`' || n == '\\' || n == '$' {
				body.WriteByte(n)
			} else {
				body.WriteByte(c)
				body.WriteByte(n)
			}
			i++
			continue
		}
		if c == '`' {
			break
		}
		body.WriteByte(c)
	}
	if i >= len(p.src) {
		return errUnterminatedBack
	}
	p.pos = i + 1
	if p.depth >= maxShellDepth {
		return errTooDeep
	}
	sub := &shParser{src: body.String(), depth: p.depth + 1, cmds: p.cmds, cur: -1}
	return sub.list(0)
}

// redirect reads a redirection operator at p.pos and its target word.
func (p *shParser) redirect(fd string) error {
	var op string
	rest := p.src[p.pos:]
	for _, o := range []string{"&>>", "&>", "<<<", "<<-", "<<", "<&", "<>", ">>", ">|", ">&", "<", ">"} {
		if strings.HasPrefix(rest, o) {
			op = o
			break
		}
	}
	p.pos += len(op)
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
	if p.pos >= len(p.src) {
		return errMissingTarget
	}
	switch p.src[p.pos] {
	case '\n', ';', '&', '|', '<', '>', '(', ')', '#':
		return errMissingTarget
	}
	p.command()
	idx := p.cur
	target, err := p.word()
	if err != nil {
		return err
	}
	if target.raw == "" {
		return errMissingTarget
	}
	if op == "<<" || op == "<<-" {
		p.heredocs = append(p.heredocs, heredoc{
			delim:     unquoteWord(target.raw),
			quoted:    target.quoted,
			stripTabs: op == "<<-",
		})
	}
	cmd := &(*p.cmds)[idx]
	cmd.redirs = append(cmd.redirs, shRedir{fd: fd, op: op, target: target})
	return nil
}

// readHeredocs consumes the bodies of pending heredocs after a newline.
// Unquoted bodies are scanned for command substitutions, which run.
func (p *shParser) readHeredocs() error {
	pending := p.heredocs
	p.heredocs = nil
	for _, h := range pending {
		atLineStart := true
	body:
		for p.pos < len(p.src) {
			if atLineStart {
				le := strings.IndexByte(p.src[p.pos:], '\n')
				if le < 0 {
					le = len(p.src)
				} else {
					le += p.pos
				}
				line := p.src[p.pos:le]
				if h.stripTabs {
					line = strings.TrimLeft(line, "\t")
				}
				if line == h.delim {
					p.pos = le
					if p.pos < len(p.src) {
						p.pos++
					}
					break body
				}
				atLineStart = false
			}
			c := p.src[p.pos]
			switch {
			case c == '\n':
				p.pos++
				atLineStart = true
			case h.quoted:
				p.pos++
			case c == '\\':
				p.pos += 2
			case c == '$' || c == '`':
				if _, err := p.dollarOrBack(); err != nil {
					return err
				}
			default:
				p.pos++
			}
		}
		// EOF before the delimiter ends the heredoc, as bash does (with a warning).
	}
	if p.pos > len(p.src) {
		p.pos = len(p.src)
	}
	return nil
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

// unquoteWord performs quote removal on a word without expansions: it
// drops quotes and resolves backslash escapes. Expansions are kept as
// written. It is used for display-independent comparisons (wrapper names,
// redirect targets, heredoc delimiters, the "unquoted" deny view).
func unquoteWord(raw string) string {
	if !strings.ContainsAny(raw, `'"\$`) {
		return raw
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '\\':
			if i+1 < len(raw) {
				i++
				if raw[i] != '\n' {
					b.WriteByte(raw[i])
				}
			}
		case '\'':
			j := strings.IndexByte(raw[i+1:], '\'')
			if j < 0 {
				b.WriteString(raw[i+1:])
				return b.String()
			}
			b.WriteString(raw[i+1 : i+1+j])
			i += j + 1
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' && i+1 < len(raw) && strings.IndexByte("\"\\$`\n", raw[i+1]) >= 0 {
					i++
					if raw[i] == '\n' {
						continue
					}
				}
				b.WriteByte(raw[i])
			}
		case '$':
			if i+1 < len(raw) && raw[i+1] == '\'' {
				i = decodeANSIC(raw, i+2, &b) // $'…'
				continue
			}
			if i+1 < len(raw) && raw[i+1] == '"' {
				continue // $"…": drop the $, the quote is handled next
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
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
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := int(e-'0'), 1
			for n < 3 && i+1 < len(raw) && raw[i+1] >= '0' && raw[i+1] <= '7' {
				i++
				v = v*8 + int(raw[i]-'0')
				n++
			}
			b.WriteByte(byte(v))
		default: // \\ \' \" \? and unknown escapes: the character itself
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
