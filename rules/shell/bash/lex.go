package bash

import (
	"path"
	"strings"
)

// Hole stands for text that cannot be known without running the shell. A
// NUL byte cannot occur in a shell word, so it never collides with real
// text.
const Hole = '\x00'

// UnescapeUnquoted removes backslashes from an unquoted literal and turns
// glob patterns (*, ?, […]) into holes: pathname expansion decides what they
// become. glob reports whether there was one.
func UnescapeUnquoted(s string) (string, bool) {
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

// UnescapeDouble removes the backslashes that are escapes inside "…".
func UnescapeDouble(s string) string {
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

// BaseName is the command name a path runs ("/usr/bin/env" → "env"); a
// word without a slash is returned as is.
func BaseName(v string) string {
	if !strings.Contains(v, "/") {
		return v
	}
	b := path.Base(v)
	if b == "/" || b == "." {
		return v
	}
	return b
}

// IsDigits reports whether s is a non-empty run of ASCII digits.
func IsDigits(s string) bool {
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

func IsNameByte(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// isName reports whether s is a shell variable name.
func IsName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !IsNameByte(s[i]) {
			return false
		}
	}
	return true
}

// DecodeANSIC decodes the body of $'…' starting at raw[i] into b, as bash
// does (\n, \t, \xHH, \NNN octal, \', \\, …), and returns the index of
// the closing quote (or the end of raw).
func DecodeANSIC(raw string, i int, b *strings.Builder) int {
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
