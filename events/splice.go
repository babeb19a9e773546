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
	if !json.Valid(payload) {
		return nil, errors.New("replace top-level member: payload is not valid JSON")
	}
	var cv bytes.Buffer
	_ = json.Compact(&cv, value)
	val := cv.Bytes()

	s := scanner{b: payload}
	s.ws()
	if s.i >= len(payload) || payload[s.i] != '{' {
		return nil, errors.New("replace top-level member: payload is not a JSON object")
	}
	s.i++
	type span struct{ from, to int }
	var hits []span
	lastValueEnd := -1 // end of the last member's value; -1 for an empty object
	for {
		s.ws()
		if payload[s.i] == '}' {
			break
		}
		if payload[s.i] == ',' {
			s.i++
			s.ws()
		}
		ks := s.i
		s.skipString()
		k := payload[ks:s.i]
		s.ws()
		s.i++ // ':'
		s.ws()
		vs := s.i
		s.skipValue()
		if keyEquals(k, key) {
			hits = append(hits, span{vs, s.i})
		}
		lastValueEnd = s.i
	}
	closing := s.i

	var out bytes.Buffer
	out.Grow(len(payload) + len(val) + len(key) + 4)
	if len(hits) == 0 {
		kb, err := json.Marshal(key)
		if err != nil {
			return nil, fmt.Errorf("replace top-level member: %w", err)
		}
		at := closing // {} or { }: insert right before '}'
		if lastValueEnd >= 0 {
			at = lastValueEnd // after the last value, before any whitespace and '}'
		}
		out.Write(payload[:at])
		if lastValueEnd >= 0 {
			out.WriteByte(',')
		}
		out.Write(kb)
		out.WriteByte(':')
		out.Write(val)
		out.Write(payload[at:])
		return out.Bytes(), nil
	}
	prev := 0
	for _, h := range hits {
		out.Write(payload[prev:h.from])
		out.Write(val)
		prev = h.to
	}
	out.Write(payload[prev:])
	return out.Bytes(), nil
}

// keyEquals compares a raw JSON string token with key, unescaping only when needed.
func keyEquals(raw []byte, key string) bool {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == key
	}
	var k string
	return json.Unmarshal(raw, &k) == nil && k == key
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
