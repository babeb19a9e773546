package rules

import (
	"fmt"
	"unicode/utf8"
)

// List names the permission list a rule belongs to.
type List string

// The three permission lists (spec §8).
const (
	Allow List = "allow"
	Ask   List = "ask"
	Deny  List = "deny"
)

// ifList is the internal list used for `if` filters (spec §2.1). It is not
// accepted by Parse.
const ifList List = "if"

// Decision is a permission outcome. None means nothing decided.
type Decision string

// Decisions, as hooks and rules express them.
const (
	None          Decision = ""
	DecisionAllow Decision = "allow"
	DecisionAsk   Decision = "ask"
	DecisionDeny  Decision = "deny"
	DecisionDefer Decision = "defer"
)

// Origin says where a rule came from. Base is the directory that "/x" path
// patterns are relative to (spec §8): project settings → the project root;
// local settings → the project root (Claude Code says "original cwd"; the
// project root is the closest stable stand-in a daemon has); user settings →
// ~/.claude; a --settings file → its directory.
type Origin struct {
	File   string // settings file path, for messages and the audit log
	Source string // "managed", "user", "project", "local", "flag", … (informational)
	Base   string // absolute directory for "/x" patterns; may be empty if none are used
}

// Rule is one compiled permission rule. Build it with Parse; the zero value
// matches nothing.
type Rule struct {
	Text   string // the rule as written (trimmed)
	List   List
	Origin Origin

	tool      toolMatch
	spec      specKind
	glob      *starGlob // command / specifier / agent type / param value
	path      pathPattern
	domain    domainPattern
	param     string
	family    family // for path rules: which tools the pattern is about
	namesMore bool   // Bash pattern names more than the command word (spec §2.1)
	fields    []string
}

// String returns the rule text.
func (r *Rule) String() string {
	if r == nil {
		return ""
	}
	return r.Text
}

// Call is one tool call to evaluate.
type Call struct {
	Tool  string         // canonical tool name, e.g. "Bash", "Read", "mcp__github__create_issue"
	Input map[string]any // decoded tool_input
	Cwd   string         // event cwd (absolute)
	Home  string         // user's home, for ~ patterns
}

// Match is the rules' answer for one call. Rule is nil when Decision is None.
type Match struct {
	Decision Decision
	Rule     *Rule
	// FailClosed is set when the rule matched only because the input could
	// not be analysed (an unparseable Bash command, a command name or inner
	// script that is not a literal, an unparseable WebFetch URL): deny and
	// ask rules fail closed. Useful in the audit log.
	FailClosed bool
	// Command is, for a Bash deny or ask match, the simple command the rule
	// matched ("rm -rf x", as resolved; as written when it holds unknowns).
	Command string
	// Unresolved says, for a fail-closed match, what could not be resolved
	// ("command name is not a literal: `$x`").
	Unresolved string
}

// Set is an immutable, pooled collection of rules from every settings
// source. It is safe for concurrent use.
type Set struct {
	deny, ask, allow []*Rule
}

// NewSet pools rules from every source (spec §8: "rules from all scopes are
// pooled"), keeping their order within each list. Nil rules are skipped.
func NewSet(rules []*Rule) *Set {
	s := &Set{}
	for _, r := range rules {
		if r == nil {
			continue
		}
		switch r.List {
		case Deny:
			s.deny = append(s.deny, r)
		case Ask:
			s.ask = append(s.ask, r)
		case Allow:
			s.allow = append(s.allow, r)
		}
	}
	return s
}

// Len returns the number of rules in the set.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.deny) + len(s.ask) + len(s.allow)
}

// Rules returns the rules of one list in evaluation order. The slice must
// not be modified.
func (s *Set) Rules(l List) []*Rule {
	if s == nil {
		return nil
	}
	switch l {
	case Deny:
		return s.deny
	case Ask:
		return s.ask
	case Allow:
		return s.allow
	}
	return nil
}

// Evaluate applies the rules to a call: deny, then ask, then allow; the
// first matching rule of the first list with a match decides, regardless of
// specificity (spec §8). With no match the Decision is None.
func (s *Set) Evaluate(c Call) Match {
	if s == nil {
		return Match{}
	}
	x := newEvalCtx(&c)
	for _, r := range s.deny {
		if ok, fc := r.match(x, Deny); ok {
			return x.matched(DecisionDeny, r, fc)
		}
	}
	for _, r := range s.ask {
		if ok, fc := r.match(x, Ask); ok {
			return x.matched(DecisionAsk, r, fc)
		}
	}
	if c.Tool == "Bash" {
		if r := bashAllow(x, s.allow); r != nil {
			return Match{Decision: DecisionAllow, Rule: r}
		}
		return Match{}
	}
	for _, r := range s.allow {
		if ok, _ := r.match(x, Allow); ok {
			return Match{Decision: DecisionAllow, Rule: r}
		}
	}
	return Match{}
}

// matched builds the Match for a deny or ask rule, with what it matched.
func (x *evalCtx) matched(d Decision, r *Rule, failClosed bool) Match {
	m := Match{Decision: d, Rule: r, FailClosed: failClosed}
	if x.c.Tool == "Bash" && r.spec == specBash {
		m.Command = clipText(x.hit.command)
		if failClosed {
			m.Unresolved = clipText(x.hit.unresolved)
		}
	}
	return m
}

// maxMatchText bounds Match.Command and Match.Unresolved: they travel in
// reasons, frames, logs and audit records, and a command may be megabytes.
const maxMatchText = 1024

// clipText shortens s to maxMatchText bytes on a rune boundary, marking the cut.
func clipText(s string) string {
	if len(s) <= maxMatchText {
		return s
	}
	i := maxMatchText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf("… (%d bytes in all)", len(s))
}

// Resolution is a merged hook decision resolved against the rules.
type Resolution struct {
	Final        Decision // decision after rules
	Source       string   // "hook" | "rule" | "" (nothing decided)
	HookDecision Decision // what the hooks said (merged)
	Rules        Match    // the rules' own answer for this call
	OverriddenBy *Rule    // set when a rule downgraded a hook's allow (or upgraded a hook's ask/defer to deny)
}

// Resolve combines the merged hook decision for a PreToolUse call (or the
// updated input of a PermissionRequest allow, spec §8 item 6) with the
// rules, the way Claude Code does since 2.1.77/2.1.101 (spec §8 "Hooks vs
// rules"):
//
//   - hook deny  → deny (source hook), whatever the rules say;
//   - hook defer → defer (source hook), unless a deny rule matches: deny (source rule);
//   - hook ask   → ask (source hook), unless a deny rule matches: deny (source rule);
//   - hook allow → deny if a deny rule matches, ask if an ask rule matches
//     (source rule, OverriddenBy set), else allow (source hook);
//   - no hook decision → the rules' own answer (Source "rule" if a rule
//     matched, else ""). Claude Code keeps the final say then: it applies
//     its permission mode, its own copy of these rules, and may prompt.
//
// An unknown hook decision is treated as no decision. s may be nil.
func Resolve(hook Decision, s *Set, c Call) Resolution {
	m := s.Evaluate(c)
	res := Resolution{HookDecision: hook, Rules: m}
	overrideBy := func(d Decision) {
		res.Final, res.Source, res.OverriddenBy = d, "rule", m.Rule
	}
	switch hook {
	case DecisionDeny:
		res.Final, res.Source = DecisionDeny, "hook"
	case DecisionDefer, DecisionAsk:
		if m.Decision == DecisionDeny {
			overrideBy(DecisionDeny)
		} else {
			res.Final, res.Source = hook, "hook"
		}
	case DecisionAllow:
		switch m.Decision {
		case DecisionDeny, DecisionAsk:
			overrideBy(m.Decision)
		default:
			res.Final, res.Source = DecisionAllow, "hook"
		}
	default:
		res.Final = m.Decision
		if m.Decision != None {
			res.Source = "rule"
		}
	}
	return res
}

// If is a compiled handler `if` filter (spec §2.1): one permission-rule
// string, evaluated only on tool events (the caller decides that).
type If struct {
	Text string
	rule *Rule
}

// ParseIf compiles an `if` filter. It uses the rule grammar with the `if`
// semantics of spec §2.1: single-segment "src/**" means <cwd>/src, param
// rules are accepted, and unparseable input makes the filter match.
func ParseIf(text string, origin Origin) (*If, error) {
	r, err := parse(text, ifList, origin)
	if err != nil {
		return nil, err
	}
	return &If{Text: r.Text, rule: r}, nil
}

// Matches reports whether the handler should run for this call. It fails
// open: a command or URL that cannot be analysed runs the hook, as Claude
// Code does. A nil filter matches everything.
func (f *If) Matches(c Call) bool {
	if f == nil || f.rule == nil {
		return true
	}
	ok, _ := f.rule.match(newEvalCtx(&c), ifList)
	return ok
}
