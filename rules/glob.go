package rules

import (
	"strings"

	"github.com/hookd/hookd/rules/shell"
)

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

// matchHoles reports whether some text could match g once every hole
// (shell.Hole, text unknown until run time) in s is filled in: whether the two
// star patterns intersect. It is the classic two-pattern walk: a star on
// either side may stand for any run of the other side, a hole included.
func (g *starGlob) matchHoles(s string) bool {
	if g == nil {
		return false
	}
	if intersects(g.parts, s) {
		return true
	}
	return g.bare != nil && intersects(g.bare.parts, s)
}

func intersects(parts []string, s string) bool {
	// Tokens of the pattern: bytes, with -1 for a star.
	var p []int
	for i, part := range parts {
		if i > 0 {
			p = append(p, -1)
		}
		for j := 0; j < len(part); j++ {
			p = append(p, int(part[j]))
		}
	}
	n, m := len(p), len(s)
	// reach[j]: pattern prefix i can meet subject prefix j.
	reach := make([]bool, m+1)
	next := make([]bool, m+1)
	reach[0] = true
	// Close row 0 over holes in s (a hole may be empty).
	for j := 0; j < m; j++ {
		if reach[j] && s[j] == shell.Hole {
			reach[j+1] = true
		}
	}
	for i := 0; i < n; i++ {
		clear(next)
		for j := 0; j <= m; j++ {
			if !reach[j] {
				continue
			}
			switch {
			case p[i] == -1:
				// The star may be empty, or eat s[j:k] for any k.
				for k := j; k <= m; k++ {
					next[k] = true
				}
			case j < m && s[j] == shell.Hole:
				// The hole produces p[i] and may go on (stays at j), or ends
				// after it (j+1).
				next[j] = true
				next[j+1] = true
			case j < m && int(s[j]) == p[i]:
				next[j+1] = true
			}
		}
		// A hole may be empty: close over holes.
		for j := 0; j < m; j++ {
			if next[j] && s[j] == shell.Hole {
				next[j+1] = true
			}
		}
		reach, next = next, reach
	}
	return reach[m]
}
