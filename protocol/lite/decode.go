package lite

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The decoder below reads the few fields a forwarder needs from JSON it did not write
// (the daemon's answer, the harness's payload). It is strict in the way encoding/json
// is: it accepts exactly the texts json.Unmarshal accepts (RFC 8259, at most 10,000
// nested arrays and objects, nothing but whitespace after the value) and, for the fields
// it reads, yields what json.Unmarshal into the equivalent struct yields — object keys
// matched case-insensitively (with the Kelvin sign and long s folding to k and s), the
// last of repeated keys winning, repeated objects merged, null leaving a field alone (a
// pointer nil), strings unquoted with invalid UTF-8 and lone surrogates as U+FFFD, a
// value of the wrong type reported as an error. FuzzDecodeAnswer and FuzzEventName
// check it against encoding/json.

// maxDepth is encoding/json's limit on nested arrays and objects.
const maxDepth = 10000

var errSyntax = errors.New("invalid JSON")

type scanner struct {
	b []byte
	i int
	// typeErr is set when a value does not fit the field it was read into
	// (json.UnmarshalTypeError); the caller decides which fields it counts for.
	typeErr bool
}

func (s *scanner) ws() {
	for s.i < len(s.b) && isWS(s.b[s.i]) {
		s.i++
	}
}

// peek returns the next non-space byte, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// end checks that only whitespace is left.
func (s *scanner) end() error {
	if s.peek() != 0 || s.i < len(s.b) {
		return errSyntax
	}
	return nil
}

// str consumes a string token and returns its quoted span.
func (s *scanner) str() ([]byte, error) {
	if s.peek() != '"' {
		return nil, errSyntax
	}
	start := s.i
	s.i++
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start:s.i], nil
		case c < 0x20:
			return nil, errSyntax
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, errSyntax
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return nil, errSyntax
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return nil, errSyntax
					}
				}
				s.i += 6
			default:
				return nil, errSyntax
			}
		default:
			s.i++
		}
	}
	return nil, errSyntax
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number consumes a number token (RFC 8259 grammar) and returns its span.
func (s *scanner) number() ([]byte, error) {
	start := s.i
	b := s.b
	if s.i < len(b) && b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(b) && b[s.i] == '0':
		s.i++
	case s.i < len(b) && '1' <= b[s.i] && b[s.i] <= '9':
		for s.i < len(b) && isDigit(b[s.i]) {
			s.i++
		}
	default:
		return nil, errSyntax
	}
	if s.i < len(b) && b[s.i] == '.' {
		s.i++
		if s.i >= len(b) || !isDigit(b[s.i]) {
			return nil, errSyntax
		}
		for s.i < len(b) && isDigit(b[s.i]) {
			s.i++
		}
	}
	if s.i < len(b) && (b[s.i] == 'e' || b[s.i] == 'E') {
		s.i++
		if s.i < len(b) && (b[s.i] == '+' || b[s.i] == '-') {
			s.i++
		}
		if s.i >= len(b) || !isDigit(b[s.i]) {
			return nil, errSyntax
		}
		for s.i < len(b) && isDigit(b[s.i]) {
			s.i++
		}
	}
	return b[start:s.i], nil
}

// literal consumes true, false or null.
func (s *scanner) literal() error {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return nil
		}
	}
	return errSyntax
}

// scalar consumes a string, number or literal.
func (s *scanner) scalar() error {
	var err error
	switch c := s.peek(); {
	case c == '"':
		_, err = s.str()
	case c == '-' || isDigit(c):
		_, err = s.number()
	default:
		err = s.literal()
	}
	return err
}

// skip consumes one value, with depth arrays and objects already open around it, and
// returns its span. It does not recurse: a deeply nested value costs a byte per level.
func (s *scanner) skip(depth int) ([]byte, error) {
	c := s.peek()
	start := s.i
	if c != '{' && c != '[' {
		err := s.scalar()
		return s.b[start:s.i], err
	}
	var open []byte // the '{' and '[' not yet closed
	for {
		// A value is expected here.
		switch c := s.peek(); c {
		case '{', '[':
			if depth+len(open)+1 > maxDepth {
				return nil, errSyntax
			}
			s.i++
			open = append(open, c)
			if n := s.peek(); n == c+2 { // '}' is '{'+2, ']' is '['+2
				s.i++
				open = open[:len(open)-1]
				break
			}
			if c == '{' {
				if err := s.key(); err != nil {
					return nil, err
				}
			}
			continue
		default:
			if err := s.scalar(); err != nil {
				return nil, err
			}
		}
		// A value ended: close what ends here, then expect the next value.
		for {
			if len(open) == 0 {
				return s.b[start:s.i], nil
			}
			top := open[len(open)-1]
			n := s.peek()
			if n == top+2 {
				s.i++
				open = open[:len(open)-1]
				continue
			}
			if n != ',' {
				return nil, errSyntax
			}
			s.i++
			if top == '{' {
				if err := s.key(); err != nil {
					return nil, err
				}
			}
			break
		}
	}
}

// key consumes an object key and its colon.
func (s *scanner) key() error {
	if _, err := s.str(); err != nil {
		return err
	}
	if s.peek() != ':' {
		return errSyntax
	}
	s.i++
	return nil
}

// object consumes an object whose members are read by member, which must consume the
// value of the key it is given (already unquoted). depth counts the object itself.
func (s *scanner) object(depth int, member func(key []byte, depth int) error) error {
	if s.peek() != '{' {
		return errSyntax
	}
	if depth > maxDepth {
		return errSyntax
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		q, err := s.str()
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return errSyntax
		}
		s.i++
		if err := member(unquote(q), depth); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// stringField reads a value into a string field: a string sets it, null leaves it, any
// other value is a type error.
func (s *scanner) stringField(dst *string, depth int) error {
	switch s.peek() {
	case '"':
		q, err := s.str()
		if err != nil {
			return err
		}
		*dst = string(unquote(q))
		return nil
	case 'n':
		return s.literal()
	}
	s.typeErr = true
	_, err := s.skip(depth)
	return err
}

// intField reads a value into an int field: an integer in range sets it, null leaves
// it, anything else (1.5, 1e2, "1", true) is a type error.
func (s *scanner) intField(dst *int, depth int) error {
	switch c := s.peek(); {
	case c == '-' || isDigit(c):
		num, err := s.number()
		if err != nil {
			return err
		}
		n, perr := strconv.ParseInt(string(num), 10, 64)
		if perr != nil || int64(int(n)) != n {
			s.typeErr = true
			return nil
		}
		*dst = int(n)
		return nil
	case c == 'n':
		return s.literal()
	}
	s.typeErr = true
	_, err := s.skip(depth)
	return err
}

// rawField reads any value into a json.RawMessage field: a copy of its text (null
// included, as "null").
func (s *scanner) rawField(dst *[]byte, depth int) error {
	span, err := s.skip(depth)
	if err != nil {
		return err
	}
	*dst = append((*dst)[:0], span...)
	return nil
}

// structField reads a value into a pointer-to-struct field. For an object, set(false)
// allocates the struct if the pointer is nil (a repeated key merges into the same
// struct, as with encoding/json) and fields reads its members; null calls set(true),
// which sets the pointer nil; any other value is a type error.
func (s *scanner) structField(depth int, set func(null bool), fields func(key []byte, depth int) error) error {
	switch s.peek() {
	case '{':
		set(false)
		return s.object(depth+1, fields)
	case 'n':
		if err := s.literal(); err != nil {
			return err
		}
		set(true)
		return nil
	}
	s.typeErr = true
	_, err := s.skip(depth)
	return err
}

// is reports whether the JSON key (unquoted) names field: equal under encoding/json's
// case folding. field is ASCII lower case, digits and '_'.
func is(key []byte, field string) bool {
	j := 0
	for i := 0; i < len(key); {
		if j >= len(field) {
			return false
		}
		c := key[i]
		want := field[j]
		if 'a' <= want && want <= 'z' {
			want -= 'a' - 'A'
		}
		j++
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			if c != want {
				return false
			}
			i++
			continue
		}
		// The only non-ASCII runes whose case folds reach ASCII letters: KELVIN SIGN
		// (k) and LATIN SMALL LETTER LONG S (s).
		r, n := utf8.DecodeRune(key[i:])
		switch {
		case r == '\u212a' && want == 'K', r == '\u017f' && want == 'S':
			i += n
		default:
			return false
		}
	}
	return j == len(field)
}

// unquote is encoding/json's unquoteBytes for a span str accepted: escapes resolved,
// surrogate pairs joined, lone surrogates and invalid UTF-8 as U+FFFD.
func unquote(q []byte) []byte {
	s := q[1 : len(q)-1]
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+2*utf8.UTFMax)
	b = append(b, s[:r]...)
	for r < len(s) {
		switch c := s[r]; {
		case c == '\\':
			r++
			switch s[r] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := getu4(s[r-1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != utf8.RuneError {
						r += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[r])
			}
			r++
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return b
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// EventName extracts hook_event_name from a payload without validating the rest; "" if
// the payload is not a JSON object or has none — protocol.EventName, which clients use
// to fail safe on garbage.
func EventName(payload []byte) string {
	s := &scanner{b: payload}
	if s.peek() != '{' {
		return "" // null decodes into nothing; anything else fails
	}
	name := ""
	err := s.object(1, func(key []byte, depth int) error {
		if is(key, "hook_event_name") {
			return s.stringField(&name, depth)
		}
		_, err := s.skip(depth)
		return err
	})
	if err != nil || s.end() != nil || s.typeErr {
		return ""
	}
	return name
}
