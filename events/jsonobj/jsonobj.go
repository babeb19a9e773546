// Package jsonobj is a JSON object that keeps its members in order and its values as raw
// bytes: the one ordered-object type of hookd.
//
// hookd writes JSON that people and harnesses read — the answers to Claude Code, Codex
// and Gemini CLI (package events and events/harness), Claude Code's settings files (the
// installer) — and much of it passes through values hookd does not look into. Order
// matters there (answers read like the spec's examples, a settings file keeps the order
// its owner gave it) and so do bytes (a hook handler moved between files keeps its string
// escapes and number spellings). map[string]any keeps neither.
//
// An Object is a slice of members and is used like one: Set, SetRaw, Without and Merge
// return a new Object and never change the one they are called on, so an Object can be
// shared and edited without aliasing surprises.
//
// Duplicate keys: Parse keeps every member as written. Get and Lookup see the last
// occurrence, as JavaScript's JSON.parse (Claude Code, Gemini CLI) and encoding/json do;
// SetRaw replaces every occurrence (keeping the first one's position) and Without removes
// them all, so no reader can still see an old value.
//
// It imports only the standard library; events, events/harness and configs/install use it.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Member is one key of an object with its value's JSON text.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Object is a JSON object with its key order.
type Object []Member

// ErrNotObject is returned by Parse for JSON that is not an object.
var ErrNotObject = errors.New("not a JSON object")

// Parse reads a JSON object, keeping its members in order and each value's bytes exactly
// as written (whitespace inside values included). It reads one object and ignores what
// follows it; callers that need the whole text to be valid check json.Valid first.
func Parse(data []byte) (Object, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, ErrNotObject
	}
	o := Object{}
	for d.More() {
		kt, err := d.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		o = append(o, Member{kt.(string), v})
	}
	return o, nil
}

// Lookup returns the value of key (its last occurrence) and whether the object has it.
func (o Object) Lookup(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == key {
			return o[i].Value, true
		}
	}
	return nil, false
}

// Get returns the value of key (its last occurrence), nil when absent.
func (o Object) Get(key string) json.RawMessage {
	v, _ := o.Lookup(key)
	return v
}

// Has reports whether the object has key.
func (o Object) Has(key string) bool {
	_, ok := o.Lookup(key)
	return ok
}

// Keys returns the keys in order (duplicates as often as they occur).
func (o Object) Keys() []string {
	keys := make([]string, len(o))
	for i, m := range o {
		keys[i] = m.Key
	}
	return keys
}

// Set is SetRaw with v's JSON encoding (Marshal).
func (o Object) Set(key string, v any) Object {
	return o.SetRaw(key, Marshal(v))
}

// SetRaw returns o with key's value replaced by raw, used as given: at the first
// occurrence's position, later occurrences dropped; appended when absent.
func (o Object) SetRaw(key string, raw json.RawMessage) Object {
	out := make(Object, 0, len(o)+1)
	found := false
	for _, m := range o {
		if m.Key == key {
			if found {
				continue
			}
			found = true
			m.Value = raw
		}
		out = append(out, m)
	}
	if !found {
		out = append(out, Member{key, raw})
	}
	return out
}

// Without returns o without key (every occurrence).
func (o Object) Without(key string) Object {
	out := make(Object, 0, len(o))
	for _, m := range o {
		if m.Key != key {
			out = append(out, m)
		}
	}
	return out
}

// Merge returns {...o, ...other}: other's members set on o in other's order, as
// JavaScript's object spread does.
func (o Object) Merge(other Object) Object {
	for _, m := range other {
		o = o.SetRaw(m.Key, m.Value)
	}
	return o
}

// JSON encodes the object compactly between its members: keys in order (without HTML
// escaping), values exactly as they are held.
func (o Object) JSON() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(Marshal(m.Key))
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// MarshalJSON makes an Object usable as a value of other JSON (encoding/json compacts
// what it returns).
func (o Object) MarshalJSON() ([]byte, error) { return o.JSON(), nil }

// Marshal is json.Marshal without HTML escaping: none of hookd's readers is a browser,
// and "[echo E2 >&2; exit 2]" stays readable in answers, logs and audit records. A
// json.RawMessage comes out compacted. It panics when v cannot be encoded, which only a
// program error causes (a func, a channel, an invalid RawMessage): values from outside
// go in with SetRaw.
func Marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("jsonobj: encoding %T: %v", v, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Compact returns a copy of raw without insignificant whitespace (a plain copy when raw
// is not valid JSON), for values from outside that should read as encoding/json writes
// them.
func Compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}
