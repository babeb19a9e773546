package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Mask actions.
const (
	MaskHash = "hash" // replace the value with "sha256:<hex>"
	MaskDrop = "drop" // remove the key (or array element)
)

// commandPath is the mask path that applies to each hook's command in a record:
// "hash" records command_sha256 instead of the command, "drop" records neither.
const commandPath = "hooks.command"

// masker hides configured fields before a record is written, and caps sizes.
//
// Paths are dotted, from the top of the event payload: "tool_input.content",
// "tool_input.edits.*.new_string" ("*" matches any key or array index). A rule whose
// path starts with "tool_input." applies to the updated input too (which replaces
// tool_input); "updated_input.<x>" applies to the updated input only. After masking,
// a string longer than MaxFieldBytes keeps its first MaxFieldBytes bytes plus a marker
// with its full length and SHA-256, and an input still larger than 4×MaxFieldBytes is
// replaced by its length and SHA-256.
type masker struct {
	input, updated []maskRule
	command        string // "", MaskHash or MaskDrop
	max            int
}

type maskRule struct {
	path   []string
	action string
	label  string // "tool_input.content:hash", for Record.Masked
}

// MaskRule hides one field of recorded payloads (hookd's configuration: audit.mask).
type MaskRule struct {
	Path   string // dotted, e.g. "tool_input.content"; see masker
	Action string // MaskHash or MaskDrop
}

// defaultMaxFieldBytes caps a recorded string when the configuration says nothing.
const defaultMaxFieldBytes = 64 << 10

// newMasker compiles mask rules. maxFieldBytes <= 0 means defaultMaxFieldBytes.
func newMasker(rules []MaskRule, maxFieldBytes int) (*masker, error) {
	if maxFieldBytes <= 0 {
		maxFieldBytes = defaultMaxFieldBytes
	}
	m := &masker{max: maxFieldBytes}
	for i, r := range rules {
		if r.Action != MaskHash && r.Action != MaskDrop {
			return nil, fmt.Errorf("audit.mask[%d].action: must be %q or %q (found %q)", i, MaskHash, MaskDrop, r.Action)
		}
		segs := strings.Split(r.Path, ".")
		for _, s := range segs {
			if s == "" {
				return nil, fmt.Errorf("audit.mask[%d].path: %q has an empty segment", i, r.Path)
			}
		}
		mr := maskRule{path: segs, action: r.Action, label: r.Path + ":" + r.Action}
		switch {
		case r.Path == commandPath:
			m.command = r.Action
		case segs[0] == "updated_input":
			if len(segs) == 1 {
				return nil, fmt.Errorf("audit.mask[%d].path: name a field inside updated_input", i)
			}
			m.updated = append(m.updated, maskRule{path: segs[1:], action: r.Action, label: mr.label})
		case segs[0] == "tool_input":
			m.input = append(m.input, mr)
			if len(segs) > 1 {
				m.updated = append(m.updated, maskRule{path: segs[1:], action: r.Action, label: mr.label})
			}
		default:
			m.input = append(m.input, mr)
		}
	}
	return m, nil
}

// Input masks and caps an event payload. It returns the value to record and the labels
// of the rules that changed it.
func (m *masker) Input(raw json.RawMessage) (json.RawMessage, []string) {
	return m.apply(raw, m.input)
}

// UpdatedInput masks and caps a merged updatedInput.
func (m *masker) UpdatedInput(raw json.RawMessage) (json.RawMessage, []string) {
	return m.apply(raw, m.updated)
}

// Command returns what to record for a hook command: the command or its SHA-256.
func (m *masker) Command(cmd string) (command, sha string) {
	switch m.command {
	case MaskHash:
		return "", sha256Hex([]byte(cmd))
	case MaskDrop:
		return "", ""
	}
	return m.Text(cmd), ""
}

// Text caps a free-text field (reasons, hook errors).
func (m *masker) Text(s string) string {
	if len(s) <= m.max {
		return s
	}
	return capString(s, m.max)
}

func (m *masker) apply(raw json.RawMessage, rules []maskRule) (json.RawMessage, []string) {
	if len(raw) == 0 {
		return nil, nil
	}
	if len(rules) == 0 && len(raw) <= m.max {
		return raw, nil // the common case: nothing to do, no decode
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		// Not JSON (cannot happen for a payload the engine accepted): record only its
		// size and hash.
		return summary(raw), []string{"cap"}
	}
	var labels []string
	for _, r := range rules {
		var hit bool
		v, hit = maskAt(v, r.path, r.action)
		if hit {
			labels = append(labels, r.label)
		}
	}
	var capped bool
	v = capValue(v, m.max, &capped)
	if capped {
		labels = append(labels, "cap")
	}
	out, err := marshal(v)
	if err != nil {
		return summary(raw), append(labels, "cap")
	}
	if len(out) > 4*m.max {
		if !capped {
			labels = append(labels, "cap")
		}
		return summary(out), labels
	}
	return out, labels
}

// maskAt applies action at path inside v, returning the new v and whether anything
// matched. Drop at the root is meaningless and ignored.
func maskAt(v any, path []string, action string) (any, bool) {
	if len(path) == 0 {
		if action == MaskHash {
			return hashValue(v), true
		}
		return v, false
	}
	seg, rest := path[0], path[1:]
	switch t := v.(type) {
	case map[string]any:
		hit := false
		for k, child := range t {
			if seg != "*" && seg != k {
				continue
			}
			if len(rest) == 0 && action == MaskDrop {
				delete(t, k)
				hit = true
				continue
			}
			nv, h := maskAt(child, rest, action)
			t[k] = nv
			hit = hit || h
		}
		return t, hit
	case []any:
		hit := false
		if seg == "*" {
			if len(rest) == 0 && action == MaskDrop {
				return []any{}, len(t) > 0
			}
			for i := range t {
				nv, h := maskAt(t[i], rest, action)
				t[i], hit = nv, hit || h
			}
			return t, hit
		}
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(t) {
			return t, false
		}
		if len(rest) == 0 && action == MaskDrop {
			return append(t[:i:i], t[i+1:]...), true
		}
		t[i], hit = maskAt(t[i], rest, action)
		return t, hit
	}
	return v, false
}

// hashValue is "sha256:<hex>" of a string's bytes, or of another value's compact JSON.
func hashValue(v any) string {
	if s, ok := v.(string); ok {
		return "sha256:" + sha256Hex([]byte(s))
	}
	b, _ := marshal(v)
	return "sha256:" + sha256Hex(b)
}

func capValue(v any, max int, capped *bool) any {
	switch t := v.(type) {
	case string:
		if len(t) > max {
			*capped = true
			return capString(t, max)
		}
	case map[string]any:
		for k, c := range t {
			t[k] = capValue(c, max, capped)
		}
	case []any:
		for i, c := range t {
			t[i] = capValue(c, max, capped)
		}
	}
	return v
}

// capString keeps the first max bytes (on a rune boundary) and says what was cut.
func capString(s string, max int) string {
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…[hookd: cut to %d of %d bytes, sha256:%s]", s[:cut], cut, len(s), sha256Hex([]byte(s)))
}

func summary(raw []byte) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"hookd_capped": true, "bytes": len(raw), "sha256": sha256Hex(raw)})
	return b
}

// marshal is json.Marshal without HTML escaping (the log is read by people and tools,
// not browsers) and without the trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
