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
// Claude Code evaluates regex matchers with JavaScript's RegExp. hookd compiles a pattern
// with Go's RE2 when RE2 accepts it (the patterns people write for tool names:
// alternation, classes, anchors, quantifiers — where the two agree). A pattern RE2
// rejects — lookahead/lookbehind, backreferences, e.g. `^(?!Monitor).*$` — is compiled
// with regexp2 in its ECMAScript mode instead, so the hook matches what it matches in
// Claude Code. (Rejecting such a file would leave a guard in it unrun, which fails open;
// Claude Code 2.1.288 even blocks a PreToolUse call whose matching failed.) Node's RegExp
// is the test oracle for both forms. A backtracking match is bounded by jsMatchTimeout;
// past it the matcher reports a match, so a guard runs rather than being skipped.
//
// Patterns are compiled once, when settings load; Match never panics, and the RE2 and
// exact forms never allocate.
//
// "spec §N" means §N of docs/spec/claude-code-hooks-spec.md (docs/spec/README.md).
package matcher

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

// jsMatchTimeout bounds one backtracking (regexp2) match; tool and event names are short,
// so only a pathological pattern comes near it.
const jsMatchTimeout = 100 * time.Millisecond

// Matcher is a compiled group matcher. The zero value matches everything.
type Matcher struct {
	src   string
	names []string        // exact names; nil with re == nil means "match all"
	re    *regexp.Regexp  // regex form
	js    *regexp2.Regexp // regex form RE2 cannot express (JavaScript semantics)
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
	if err == nil {
		return &Matcher{src: pattern, re: re}, nil
	}
	js, jerr := regexp2.Compile(pattern, regexp2.ECMAScript)
	if jerr != nil {
		return nil, fmt.Errorf("invalid matcher regex %q: %s", pattern, describe(err))
	}
	js.MatchTimeout = jsMatchTimeout
	return &Matcher{src: pattern, js: js}, nil
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

// describe turns a regexp error into a message that says which syntaxes were tried.
func describe(err error) string {
	return err.Error() + " (neither RE2 nor JavaScript regex syntax)"
}

// Match reports whether v matches.
func (m *Matcher) Match(v string) bool {
	if m == nil {
		return true
	}
	if m.re != nil {
		return m.re.MatchString(v)
	}
	if m.js != nil {
		ok, err := m.js.MatchString(v)
		return ok || err != nil // a timed-out match runs the hook (see the package comment)
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
func (m *Matcher) MatchesAll() bool {
	return m == nil || (m.re == nil && m.js == nil && m.names == nil)
}

// Names returns the exact names of a list matcher (nil for match-all and regex).
func (m *Matcher) Names() []string {
	if m == nil {
		return nil
	}
	return m.names
}

// IsRegex reports whether the matcher is a regular expression.
func (m *Matcher) IsRegex() bool { return m != nil && (m.re != nil || m.js != nil) }

// String returns the pattern as written.
func (m *Matcher) String() string {
	if m == nil {
		return ""
	}
	return m.src
}
