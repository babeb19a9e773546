// Package conformance checks hookd against the Claude Code binary the project pins: the
// binary carries its hook event list and its settings schema (zod, minified JavaScript) as
// data, and `make conformance` extracts both and fails, naming the event or field, when
// hookd's event catalogue or handler decoder lacks one. A new Claude Code event or handler
// field is then a test failure, not a warning nobody reads (issue 11: onFailure shipped in
// 2.1.295 and hookd ignored it for 35 releases).
//
// The extraction reads the JavaScript text inside the binary. It anchors on what the
// schema says, not on minified names (those change every release), and fails loudly
// when an anchor is gone: then the binary's layout changed and this file needs a look.
package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Extracted is what the binary says.
type Extracted struct {
	// Events are the hook events, in the binary's own order.
	Events []string
	// Fields are the fields each handler type's settings schema accepts, by type
	// ("command", "http", "mcp_tool", "prompt", "agent"), in schema order.
	Fields map[string][]string
}

// hooksRecordRE finds the settings schema's "hooks" record: the key enum of the record
// whose values are matcher groups, z.record(z.enum(EVENTS), z.array(GROUP)), minified as
// <rec>(F(<events>),A(<group>())). It is the first such record after the matcher group's
// own description.
var (
	groupAnchor   = []byte(`"List of hooks to execute when the matcher matches"`)
	hooksRecordRE = regexp.MustCompile(`\(F\(([A-Za-z_$][\w$]*)\),A\([A-Za-z_$][\w$]*\(\)\)\)`)
	stringArrayRE = regexp.MustCompile(`^\[("[A-Za-z]+",)*"[A-Za-z]+"\]`)
	// fallbackRE: a JS array of PascalCase strings that starts with PreToolUse.
	fallbackRE = regexp.MustCompile(`\["PreToolUse"(,"[A-Z][A-Za-z]+")+\]`)
)

// ExtractEvents returns the hook event list of a Claude Code binary (or of any text
// holding its JavaScript).
func ExtractEvents(bin []byte) ([]string, error) {
	if i := bytes.Index(bin, groupAnchor); i >= 0 {
		window := bin[i:min(len(bin), i+4096)]
		if m := hooksRecordRE.FindSubmatch(window); m != nil {
			if list, ok := arrayNamed(bin, m[1]); ok {
				return list, nil
			}
		}
	}
	// Fallback: the longest array of event-like names starting with PreToolUse. The
	// binary holds several subsets (events with matchers, tool events, …); the full list
	// is the longest, and it must contain the events every version has had.
	var best []string
	for _, m := range fallbackRE.FindAll(bin, -1) {
		if list := parseStringArray(m); len(list) > len(best) {
			best = list
		}
	}
	if len(best) == 0 || !containsAll(best, "PreToolUse", "PostToolUse", "Stop", "SessionStart", "UserPromptSubmit") {
		return nil, errors.New("no hook event list found: neither the settings schema's hooks record " +
			"nor an array starting with \"PreToolUse\" is in the binary; its layout changed (update test/conformance/extract.go)")
	}
	return best, nil
}

// arrayNamed finds `<name>=[...]` (a var or a member of a var list) and parses the array.
func arrayNamed(bin, name []byte) ([]string, bool) {
	pat := append(append([]byte(nil), name...), "=["...)
	for off := 0; ; {
		i := bytes.Index(bin[off:], pat)
		if i < 0 {
			return nil, false
		}
		i += off
		off = i + len(pat)
		if i > 0 {
			if c := bin[i-1]; c == '_' || c == '$' || c == '.' || isAlnum(c) {
				continue // a longer identifier or a member ending in name
			}
		}
		rest := bin[i+len(name)+1 : min(len(bin), i+len(name)+1+4096)]
		if m := stringArrayRE.Find(rest); m != nil {
			return parseStringArray(m), true
		}
	}
}

func parseStringArray(m []byte) []string {
	s := strings.Trim(string(m), "[]")
	parts := strings.Split(s, ",")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		out = append(out, strings.Trim(p, `"`))
	}
	return out
}

// schemaAnchor is the object the binary's handler-schema factory returns.
var schemaAnchor = []byte("{BashCommandHookSchema:")

// typeRE finds one handler schema object: <x>=c({type:E("command")...
var typeRE = regexp.MustCompile(`=[A-Za-z_$][\w$]*\(\{type:[A-Za-z_$][\w$]*\("([a-z_]+)"\)`)

// ExtractHandlerFields returns the fields each handler type's settings schema accepts:
// the keys of the z.object literals in the function that returns {BashCommandHookSchema,
// PromptHookSchema, HttpHookSchema, AgentHookSchema, McpToolHookSchema}.
func ExtractHandlerFields(bin []byte) (map[string][]string, error) {
	end := bytes.Index(bin, schemaAnchor)
	if end < 0 {
		return nil, errors.New("no handler schemas found: \"{BashCommandHookSchema:\" is not in the binary; its layout changed (update test/conformance/extract.go)")
	}
	start := bytes.LastIndex(bin[max(0, end-64<<10):end], []byte("function "))
	if start < 0 {
		return nil, errors.New("handler schemas: no enclosing function within 64 KiB before {BashCommandHookSchema:; the binary's layout changed (update test/conformance/extract.go)")
	}
	body := bin[max(0, end-64<<10)+start : end]
	out := map[string][]string{}
	for _, loc := range typeRE.FindAllSubmatchIndex(body, -1) {
		typ := string(body[loc[2]:loc[3]])
		open := bytes.IndexByte(body[loc[0]:], '{') + loc[0]
		keys, err := objectKeys(body[open:])
		if err != nil {
			return nil, fmt.Errorf("handler schema %q: %w", typ, err)
		}
		if _, dup := out[typ]; !dup {
			out[typ] = keys
		}
	}
	for _, t := range []string{"command", "http", "mcp_tool", "prompt", "agent"} {
		if len(out[t]) == 0 {
			return nil, fmt.Errorf("handler schemas: none for type %q found before {BashCommandHookSchema:; the binary's layout changed (update test/conformance/extract.go)", t)
		}
	}
	return out, nil
}

// objectKeys returns the top-level keys of the JavaScript object literal at the start of
// src ("{a:…,b:…}"), skipping strings, template literals, regular expressions and nested
// brackets.
func objectKeys(src []byte) ([]string, error) {
	if len(src) == 0 || src[0] != '{' {
		return nil, errors.New("not an object literal")
	}
	var keys []string
	depth := 0
	expectKey := false
	prev := byte('{') // last significant character, to tell a regex from a division
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j, err := skipString(src, i)
			if err != nil {
				return nil, err
			}
			if depth == 1 && expectKey && j+1 < len(src) && src[j+1] == ':' {
				keys = append(keys, string(src[i+1:j]))
			}
			expectKey = false
			i, prev = j, c
		case c == '/' && strings.IndexByte("(,=:[!&|?{};", prev) >= 0:
			j, err := skipRegex(src, i)
			if err != nil {
				return nil, err
			}
			i, prev = j, '/'
		case c == '{' || c == '(' || c == '[':
			depth++
			expectKey = depth == 1 && c == '{'
			prev = c
		case c == '}' || c == ')' || c == ']':
			depth--
			if depth == 0 {
				return keys, nil
			}
			prev = c
		case c == ',':
			expectKey = depth == 1
			prev = c
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
		case isIdentStart(c):
			j := i
			for j < len(src) && (isAlnum(src[j]) || src[j] == '_' || src[j] == '$') {
				j++
			}
			if depth == 1 && expectKey && j < len(src) && src[j] == ':' {
				keys = append(keys, string(src[i:j]))
			}
			expectKey = false
			i, prev = j-1, 'a'
		default:
			expectKey = false
			prev = c
		}
	}
	return nil, errors.New("object literal does not end")
}

// skipString returns the index of the quote that closes the string starting at i. In a
// template literal, ${…} may hold further strings and braces.
func skipString(src []byte, i int) (int, error) {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case q:
			return j, nil
		case '$':
			if q == '`' && j+1 < len(src) && src[j+1] == '{' {
				// Skip the substitution: balance braces, skipping nested strings.
				depth := 0
				for k := j + 1; k < len(src); k++ {
					switch src[k] {
					case '{':
						depth++
					case '}':
						depth--
						if depth == 0 {
							j = k
							goto next
						}
					case '"', '\'', '`':
						e, err := skipString(src, k)
						if err != nil {
							return 0, err
						}
						k = e
					}
				}
				return 0, errors.New("template substitution does not end")
			}
		}
	next:
	}
	return 0, errors.New("string does not end")
}

func skipRegex(src []byte, i int) (int, error) {
	class := false
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				for j+1 < len(src) && isAlnum(src[j+1]) { // flags
					j++
				}
				return j, nil
			}
		case '\n':
			return 0, errors.New("regular expression does not end")
		}
	}
	return 0, errors.New("regular expression does not end")
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func containsAll(list []string, want ...string) bool {
	have := map[string]bool{}
	for _, s := range list {
		have[s] = true
	}
	for _, w := range want {
		if !have[w] {
			return false
		}
	}
	return true
}

// Known is what hookd knows, for Check.
type Known struct {
	Events []string
	// Decoded are the handler fields the decoder reads, each with the handler types it
	// applies to (nil: all types); Ignored the ones it knows and deliberately ignores.
	Decoded map[string][]string
	Ignored map[string]string
}

// Check compares what the binary says with what hookd knows and returns one problem per
// missing event or field, each naming it; none means hookd is current.
func Check(x Extracted, k Known) []string {
	var problems []string
	have := map[string]bool{}
	for _, e := range k.Events {
		have[e] = true
	}
	inBinary := map[string]bool{}
	for _, e := range x.Events {
		inBinary[e] = true
		if !have[e] {
			problems = append(problems, fmt.Sprintf("event %s: Claude Code has it, hookd's catalogue (events/catalogue.go) does not", e))
		}
	}
	for _, e := range k.Events {
		if !inBinary[e] {
			problems = append(problems, fmt.Sprintf("event %s: hookd's catalogue has it, the pinned Claude Code does not (removed or renamed?)", e))
		}
	}
	types := make([]string, 0, len(x.Fields))
	for t := range x.Fields {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		for _, f := range x.Fields[t] {
			applies, decoded := k.Decoded[f]
			switch {
			case decoded && (applies == nil || contains(applies, t)):
			case decoded:
				problems = append(problems, fmt.Sprintf("handler field %s on %s handlers: Claude Code accepts it there, hookd's decoder applies it only to %s (configs/settings/file.go fieldTypes)", f, t, strings.Join(applies, ", ")))
			default:
				if _, ok := k.Ignored[f]; !ok {
					problems = append(problems, fmt.Sprintf("handler field %s on %s handlers: Claude Code accepts it, hookd's decoder does not know it (configs/settings/file.go: decode it in fieldTypes, or say why it is ignored in ignoredHandlerFields)", f, t))
				}
			}
		}
	}
	return problems
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
