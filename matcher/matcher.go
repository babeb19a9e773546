// Package matcher implements Claude Code's hook group matchers (spec §2).
//
//   - "*", "" or an omitted matcher match everything.
//   - A pattern made only of letters, digits, '_', '-', space, '|' and ',' is an exact
//     name or a list of exact names separated by '|' or ',' (surrounding spaces ignored):
//     "Bash", "Edit|Write", "Edit, Write", "code-reviewer". Matching is case-sensitive.
//   - Anything else is a regular expression tested unanchored ("Edit.*" also matches
//     "NotebookEdit"; write "^Edit$" to anchor).
//   - FileChanged and StopFailure use a narrower exact set (letters, digits, '_' and '|'
//     only, '|' the only separator); for them "*" is the literal file name "*".
//
// Claude Code evaluates regex matchers with JavaScript's RegExp; hookd uses Go's RE2.
// The two agree on the patterns people write for tool names (alternation, classes,
// anchors, quantifiers). JavaScript-only constructs — lookahead/lookbehind, backreferences
// — are rejected by Compile with an error instead of being guessed at, so a settings file
// that uses them fails validation loudly rather than matching differently.
//
// Patterns are compiled once, when settings load; Match never allocates or panics.
//
// "spec §N" means §N of docs/spec/claude-code-hooks-spec.md (docs/spec/README.md).
package matcher

import (
	"fmt"
	"regexp"
	"strings"
)

// Matcher is a compiled group matcher. The zero value matches everything.
type Matcher struct {
	src   string
	names []string       // exact names; nil with re == nil means "match all"
	re    *regexp.Regexp // regex form
}

// All is a matcher that matches everything.
var All = &Matcher{}

// Compile compiles pattern. narrow selects the FileChanged/StopFailure rules.
func Compile(pattern string, narrow bool) (*Matcher, error) {
	trimmed := strings.TrimSpace(pattern)
	if trimmed == "" || (trimmed == "*" && !narrow) {
		return &Matcher{src: pattern}, nil
	}
	if narrow && trimmed == "*" {
		return &Matcher{src: pattern, names: []string{"*"}}, nil
	}
	if isExact(pattern, narrow) {
		var names []string
		seps := "|,"
		if narrow {
			seps = "|"
		}
		for _, p := range strings.FieldsFunc(pattern, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
			if p = strings.TrimSpace(p); p != "" {
				names = append(names, p)
			}
		}
		if len(names) == 0 { // e.g. "|" or " , ": a list of nothing matches nothing
			names = []string{}
		}
		return &Matcher{src: pattern, names: names}, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("invalid matcher regex %q: %s", pattern, describe(err))
	}
	return &Matcher{src: pattern, re: re}, nil
}

func isExact(p string, narrow bool) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '|':
		case !narrow && (c == '-' || c == ' ' || c == ','):
		default:
			return false
		}
	}
	return true
}

// describe turns a regexp error into a message that hints at JavaScript-only syntax.
func describe(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "(?=") || strings.Contains(msg, "(?!") || strings.Contains(msg, "(?<") ||
		strings.Contains(msg, "invalid or unsupported Perl syntax") || strings.Contains(msg, "invalid escape sequence: `\\") {
		msg += " (lookaround and backreferences are JavaScript-only; hookd matchers use RE2 syntax)"
	}
	return msg
}

// Match reports whether v matches.
func (m *Matcher) Match(v string) bool {
	if m == nil {
		return true
	}
	if m.re != nil {
		return m.re.MatchString(v)
	}
	if m.names == nil {
		return true
	}
	for _, n := range m.names {
		if n == v {
			return true
		}
	}
	return false
}

// MatchesAll reports whether the matcher matches everything.
func (m *Matcher) MatchesAll() bool { return m == nil || (m.re == nil && m.names == nil) }

// Names returns the exact names of a list matcher (nil for match-all and regex).
func (m *Matcher) Names() []string {
	if m == nil {
		return nil
	}
	return m.names
}

// IsRegex reports whether the matcher is a regular expression.
func (m *Matcher) IsRegex() bool { return m != nil && m.re != nil }

// String returns the pattern as written.
func (m *Matcher) String() string {
	if m == nil {
		return ""
	}
	return m.src
}
