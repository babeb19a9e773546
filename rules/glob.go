package rules

import "strings"

// starGlob is the wildcard used by command, specifier and param-value
// patterns (spec §8 "Bash"): `*` matches any run of characters, spaces
// included; `\*` is a literal star; nothing else is special. It is compiled
// once in Parse and matched without allocating, so it can sit on the hot path.
//
// A pattern that ends in " *" (space, star) has a word boundary: `ls *`
// matches `ls` and `ls -la` but not `lsof`. That is modelled by bare, the
// same pattern without the trailing " *", which must then match exactly.
type starGlob struct {
	parts []string // literal pieces between stars; len(parts) == stars+1
	bare  *starGlob
	fold  bool // compare case-insensitively (PowerShell)
}

// compileStarGlob compiles pattern. With boundary set, a trailing " *" makes
// the space-and-rest optional (word boundary). fold lowercases the pattern;
// the caller lowercases the subject too.
func compileStarGlob(pattern string, boundary, fold bool) *starGlob {
	if fold {
		pattern = strings.ToLower(pattern)
	}
	g := &starGlob{parts: splitStars(pattern), fold: fold}
	if boundary && strings.HasSuffix(pattern, " *") && !escapedAt(pattern, len(pattern)-1) {
		g.bare = &starGlob{parts: splitStars(pattern[:len(pattern)-2]), fold: fold}
	}
	return g
}

// escapedAt reports whether pattern[i] is preceded by an odd number of
// backslashes.
func escapedAt(pattern string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && pattern[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// splitStars splits pattern on unescaped stars, turning `\*` into `*` and
// `\\` into `\`. Other backslashes stay: shell commands are full of them.
func splitStars(pattern string) []string {
	var parts []string
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern) && (pattern[i+1] == '*' || pattern[i+1] == '\\'):
			b.WriteByte(pattern[i+1])
			i++
		case c == '*':
			parts = append(parts, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(parts, b.String())
}

// hasStar reports whether the glob contains a wildcard.
func (g *starGlob) hasStar() bool { return len(g.parts) > 1 }

// literal returns the pattern text when it has no wildcard.
func (g *starGlob) literal() string { return g.parts[0] }

// match reports whether s matches the whole pattern (or, with a word
// boundary, the pattern without its trailing " *").
func (g *starGlob) match(s string) bool {
	if g == nil {
		return false
	}
	if matchParts(g.parts, s) {
		return true
	}
	return g.bare != nil && matchParts(g.bare.parts, s)
}

// matchParts is the classic star-only glob: anchor the first and last
// literal, then place the middle ones greedily left to right. Greedy
// leftmost placement is optimal for star-only patterns, so no backtracking.
func matchParts(parts []string, s string) bool {
	if len(parts) == 1 {
		return s == parts[0]
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	mid := s[len(first) : len(s)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(mid, p)
		if i < 0 {
			return false
		}
		mid = mid[i+len(p):]
	}
	return true
}
