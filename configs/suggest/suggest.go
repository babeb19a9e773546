// Package suggest finds the name a user probably meant: "did you mean" for mistyped
// commands, hook events, tool names and flags.
//
// A candidate is suggested when it equals the word but for letter case (Claude Code's
// event and tool names are case-sensitive: "pretooluse" is a different, unknown event), or
// when it is within a small edit distance (insertions, deletions, substitutions and
// swaps of two neighbouring letters, compared without case): one edit for words of up to
// four letters, two up to eight, three beyond. Distances are never "close enough" by
// prefix alone, so a far-off word gets no suggestion rather than a random one.
//
// The package imports only the standard library.
package suggest

import (
	"strings"
	"unicode/utf8"
)

// Closest returns the candidate word most probably meant, or "" when none is close. A
// candidate equal to word is not a suggestion (the word is fine) and yields "".
func Closest(word string, candidates []string) string {
	best, bestD := "", -1
	lw := strings.ToLower(word)
	limit := maxDistance(word)
	for _, c := range candidates {
		if c == word {
			return ""
		}
		if strings.EqualFold(c, word) {
			return c // only the case differs: the best suggestion there is
		}
		d := Distance(lw, strings.ToLower(c))
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// maxDistance is how many edits a suggestion may be from word.
func maxDistance(word string) int {
	switch n := utf8.RuneCountInString(word); {
	case n <= 4:
		return 1
	case n <= 8:
		return 2
	default:
		return 3
	}
}

// Distance is the optimal-string-alignment edit distance between a and b, in runes:
// the fewest insertions, deletions, substitutions and transpositions of adjacent runes
// that turn a into b (no substring is edited twice).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: the one before the previous (for transpositions), previous, current.
	pp := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(rb)]
}
