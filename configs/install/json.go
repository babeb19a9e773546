package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The installer edits Claude Code's settings files, which people write by hand and
// Claude Code rewrites: it must keep every key it does not own, in order, and move hook
// handlers without changing a byte of their content. So it works on an ordered view of
// the JSON in which every value it does not look into stays as its raw (compacted)
// bytes — string escapes and number spellings included.

// member is one key of an object, with its value's raw bytes.
type member struct {
	Key string
	Val json.RawMessage
}

// object is a JSON object with its key order.
type object []member

func (o object) get(key string) (json.RawMessage, bool) {
	// The last occurrence wins, as in Claude Code (and encoding/json).
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == key {
			return o[i].Val, true
		}
	}
	return nil, false
}

func (o object) has(key string) bool { _, ok := o.get(key); return ok }

// set replaces every occurrence of key, or appends it.
func (o object) set(key string, v json.RawMessage) object {
	found := false
	out := o[:0:0]
	for _, m := range o {
		if m.Key == key {
			if found {
				continue
			}
			found = true
			m.Val = v
		}
		out = append(out, m)
	}
	if !found {
		out = append(out, member{key, v})
	}
	return out
}

func (o object) without(key string) object {
	out := o[:0:0]
	for _, m := range o {
		if m.Key != key {
			out = append(out, m)
		}
	}
	return out
}

// parseObject reads a JSON object keeping key order and raw values.
func parseObject(data []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	o := object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		o = append(o, member{key, compact(raw)})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

// parseArray reads a JSON array keeping its elements raw.
func parseArray(data []byte) ([]json.RawMessage, error) {
	var xs []json.RawMessage
	if err := json.Unmarshal(data, &xs); err != nil {
		return nil, err
	}
	if xs == nil && strings.TrimSpace(string(data)) != "[]" {
		return nil, errors.New("not a JSON array")
	}
	for i := range xs {
		xs[i] = compact(xs[i])
	}
	return xs, nil
}

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}

// raw encodes an object compactly, keys in order, values as they are.
func (o object) raw() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(str(m.Key))
		b.WriteByte(':')
		b.Write(m.Val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func array(xs []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(x)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// str encodes s as a JSON string without HTML escaping (Claude Code's files are not HTML).
func str(s string) json.RawMessage {
	return mustJSON(s)
}

func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("install: encoding %T: %v", v, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// indent pretty-prints raw JSON with prefix before every line but the first.
func indent(raw json.RawMessage, prefix, unit string) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, prefix, unit); err != nil {
		return raw
	}
	return b.Bytes()
}

// equalJSON reports whether two JSON texts are the same value (object key order
// ignored, as in JSON; array order kept).
func equalJSON(a, b []byte) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return bytes.Equal(a, b)
	}
	return equalValue(x, y)
}

func equalValue(x, y any) bool {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok || len(xv) != len(yv) {
			return false
		}
		for k, v := range xv {
			w, ok := yv[k]
			if !ok || !equalValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return false
		}
		for i := range xv {
			if !equalValue(xv[i], yv[i]) {
				return false
			}
		}
		return true
	case json.Number:
		yv, ok := y.(json.Number)
		if !ok {
			return false
		}
		if xv == yv {
			return true
		}
		fx, ex := xv.Float64()
		fy, ey := yv.Float64()
		return ex == nil && ey == nil && fx == fy
	default:
		return x == y
	}
}

// spliceTopLevel returns the text of the JSON object data with the value of its
// top-level member key replaced by val (pretty-printed to fit the file's indentation),
// or the member appended when absent, or removed when val is nil. Every other byte of
// the file stays as it was: comments are not JSON, but whitespace, key order and the
// spelling of other values are the user's.
func spliceTopLevel(data []byte, key string, val json.RawMessage) ([]byte, error) {
	return splice(data, key, val, false)
}

// spliceVerbatim is spliceTopLevel with val inserted exactly as given (text taken from
// the original file, to restore it byte for byte).
func spliceVerbatim(data []byte, key string, val []byte) ([]byte, error) {
	return splice(data, key, val, true)
}

// rawTopLevel returns the exact text of the value of data's top-level member key.
func rawTopLevel(data []byte, key string) ([]byte, bool) {
	spans, err := topLevelSpans(data)
	if err != nil {
		return nil, false
	}
	for _, sp := range spans {
		if sp.key == key {
			return data[sp.valStart:sp.valEnd], true
		}
	}
	return nil, false
}

func splice(data []byte, key string, val json.RawMessage, verbatim bool) ([]byte, error) {
	spans, err := topLevelSpans(data)
	if err != nil {
		return nil, err
	}
	unit := indentUnit(data)
	var hit *span
	for i := range spans {
		if spans[i].key == key {
			if hit != nil {
				return nil, fmt.Errorf("the key %q occurs more than once; fix the file first", key)
			}
			hit = &spans[i]
		}
	}
	var b bytes.Buffer
	switch {
	case hit != nil && val != nil:
		prefix := lineIndent(data, hit.keyStart)
		b.Write(data[:hit.valStart])
		if verbatim {
			b.Write(val)
		} else {
			b.Write(indent(val, prefix, unit))
		}
		b.Write(data[hit.valEnd:])
	case hit != nil: // remove the member and one adjacent comma
		from, to := hit.memberStart, hit.valEnd
		if hit.commaAfter >= 0 {
			to = hit.commaAfter + 1
		} else if hit.commaBefore >= 0 {
			from = hit.commaBefore
		}
		// Drop the line the member stood on when it had one to itself.
		ls := bytes.LastIndexByte(data[:from], '\n')
		if ls >= 0 && len(bytes.TrimSpace(data[ls+1:from])) == 0 {
			rest := data[to:]
			if nl := bytes.IndexByte(rest, '\n'); nl >= 0 && len(bytes.TrimSpace(rest[:nl])) == 0 {
				from, to = ls+1, to+nl+1
			}
		}
		b.Write(data[:from])
		b.Write(data[to:])
	case val != nil: // append before the closing brace
		closing := bytes.LastIndexByte(data, '}')
		if len(spans) == 0 {
			b.WriteString("{\n" + unit)
			b.Write(str(key))
			b.WriteString(": ")
			b.Write(indent(val, unit, unit))
			b.WriteString("\n}")
			b.Write(data[closing+1:])
			break
		}
		last := spans[len(spans)-1]
		prefix := lineIndent(data, last.keyStart)
		b.Write(data[:last.valEnd])
		b.WriteString(",\n" + prefix)
		b.Write(str(key))
		b.WriteString(": ")
		b.Write(indent(val, prefix, unit))
		b.Write(data[last.valEnd:])
	default:
		return data, nil
	}
	return b.Bytes(), nil
}

type span struct {
	key                     string
	memberStart, keyStart   int
	valStart, valEnd        int
	commaBefore, commaAfter int
}

// topLevelSpans finds each top-level member of the object in data: where its key
// starts and where its value starts and ends.
func topLevelSpans(data []byte) ([]span, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("settings must be a JSON object")
	}
	var out []span
	prevEnd := int(dec.InputOffset())
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		keyEnd := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		valEnd := int(dec.InputOffset())
		valStart := valEnd - len(raw)
		sp := span{key: key, valStart: valStart, valEnd: valEnd, commaBefore: -1, commaAfter: -1}
		// The key token ends at keyEnd; its opening quote is the last '"' … scan back
		// over the key's text from the colon.
		colon := bytes.LastIndexByte(data[:valStart], ':')
		sp.keyStart = keyStartBefore(data, colon)
		sp.memberStart = sp.keyStart
		if c := bytes.LastIndexByte(data[prevEnd:sp.keyStart], ','); c >= 0 {
			sp.commaBefore = prevEnd + c
		}
		_ = keyEnd
		if len(out) > 0 && sp.commaBefore >= 0 {
			out[len(out)-1].commaAfter = sp.commaBefore
		}
		out = append(out, sp)
		prevEnd = valEnd
	}
	return out, nil
}

// keyStartBefore finds the opening quote of the key whose closing quote precedes the
// colon at i.
func keyStartBefore(data []byte, colon int) int {
	j := colon - 1
	for j >= 0 && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
		j--
	}
	// data[j] is the closing quote; walk back to an unescaped opening quote.
	for k := j - 1; k >= 0; k-- {
		if data[k] == '"' {
			bs := 0
			for m := k - 1; m >= 0 && data[m] == '\\'; m-- {
				bs++
			}
			if bs%2 == 0 {
				return k
			}
		}
	}
	return 0
}

// lineIndent is the whitespace at the start of the line holding offset i.
func lineIndent(data []byte, i int) string {
	ls := bytes.LastIndexByte(data[:i], '\n') + 1
	j := ls
	for j < i && (data[j] == ' ' || data[j] == '\t') {
		j++
	}
	if j != i { // the key is not first on its line (a one-line file)
		return ""
	}
	return string(data[ls:j])
}

// indentUnit guesses the file's indentation step from its first indented line;
// two spaces (what Claude Code writes) when there is none.
func indentUnit(data []byte) string {
	for _, line := range bytes.Split(data, []byte("\n")) {
		t := bytes.TrimLeft(line, " \t")
		if len(t) > 0 && len(t) < len(line) {
			return string(line[:len(line)-len(t)])
		}
	}
	return "  "
}
