package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ReplaceTopLevel returns payload with the value of its top-level member key replaced by
// value. The sequential pipeline uses it to hand the next hook the previous hook's
// updatedInput as tool_input.
//
// It splices bytes instead of decoding and re-encoding, because hooks must receive the
// payload as Claude Code wrote it: unknown fields, key order, number spellings and
// whitespace outside the replaced value stay byte for byte the same. Keys are compared
// after unescaping ("tool\u005finput" is tool_input); a key that occurs more than once
// has every occurrence replaced, so no JSON reader can see the old value. An absent key
// is appended as the last member. value is inserted compacted.
func ReplaceTopLevel(payload []byte, key string, value json.RawMessage) ([]byte, error) {
	if !json.Valid(value) {
		return nil, errors.New("replace top-level member: value is not valid JSON")
	}
	members, closing, err := TopLevelMembers(payload)
	if err != nil {
		return nil, fmt.Errorf("replace top-level member: %w", err)
	}
	var cv bytes.Buffer
	_ = json.Compact(&cv, value)
	val := cv.Bytes()

	var out bytes.Buffer
	out.Grow(len(payload) + len(val) + len(key) + 4)
	prev, hit := 0, false
	for _, m := range members {
		if m.Key == key {
			out.Write(payload[prev:m.ValStart])
			out.Write(val)
			prev, hit = m.ValEnd, true
		}
	}
	if hit {
		out.Write(payload[prev:])
		return out.Bytes(), nil
	}
	kb, err := json.Marshal(key)
	if err != nil {
		return nil, fmt.Errorf("replace top-level member: %w", err)
	}
	at := closing // {} or { }: insert right before '}'
	if len(members) > 0 {
		at = members[len(members)-1].ValEnd // after the last value, before any whitespace and '}'
	}
	out.Write(payload[:at])
	if len(members) > 0 {
		out.WriteByte(',')
	}
	out.Write(kb)
	out.WriteByte(':')
	out.Write(val)
	out.Write(payload[at:])
	return out.Bytes(), nil
}

// Member is one top-level member of a JSON object, located in the object's text.
type Member struct {
	Key      string // unescaped ("tool\u005finput" is tool_input)
	KeyStart int    // the key's opening quote
	// ValStart and ValEnd delimit the value: data[ValStart:ValEnd].
	ValStart, ValEnd int
	// CommaBefore and CommaAfter are the offsets of the commas that separate the member
	// from its neighbours; -1 when there is none.
	CommaBefore, CommaAfter int
}

// TopLevelMembers returns the top-level members of the JSON object in data, in order,
// duplicates included, and the offset of its closing brace. It is the one reader of
// object structure for the code that edits JSON text in place (the sequential
// pipeline's tool_input, the installer's settings files): every byte outside the member
// being edited stays the author's.
func TopLevelMembers(data []byte) ([]Member, int, error) {
	if !json.Valid(data) {
		var v json.RawMessage
		if err := json.Unmarshal(data, &v); err != nil { // the detail, on the error path only
			return nil, 0, fmt.Errorf("not valid JSON: %w", err)
		}
		return nil, 0, errors.New("not valid JSON")
	}
	s := scanner{b: data}
	s.ws()
	if data[s.i] != '{' {
		return nil, 0, errors.New("not a JSON object")
	}
	s.i++
	var out []Member
	for {
		s.ws()
		if data[s.i] == '}' {
			break
		}
		comma := -1
		if data[s.i] == ',' {
			comma = s.i
			s.i++
			s.ws()
		}
		ks := s.i
		s.skipString()
		m := Member{Key: unquoteKey(data[ks:s.i]), KeyStart: ks, CommaBefore: comma, CommaAfter: -1}
		s.ws()
		s.i++ // ':'
		s.ws()
		m.ValStart = s.i
		s.skipValue()
		m.ValEnd = s.i
		if len(out) > 0 {
			out[len(out)-1].CommaAfter = comma
		}
		out = append(out, m)
	}
	return out, s.i, nil
}

// unquoteKey returns the text of a raw JSON string token, unescaping only when needed.
func unquoteKey(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	var k string
	_ = json.Unmarshal(raw, &k) // valid: json.Valid accepted the whole document
	return k
}

// scanner walks JSON that json.Valid has accepted, so it needs no error handling.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) skipString() {
	s.i++ // opening quote
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
		case '"':
			s.i++
			return
		default:
			s.i++
		}
	}
}

func (s *scanner) skipValue() {
	switch s.b[s.i] {
	case '"':
		s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return
				}
			}
			s.i++
		}
	default: // number, true, false, null
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			s.i++
		}
	}
}
