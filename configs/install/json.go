package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/jsonobj"
)

// The installer edits Claude Code's settings files, which people write by hand and
// Claude Code rewrites: it must keep every key it does not own, in order, and move hook
// handlers without changing a byte of their content. So it works on an ordered view of
// the JSON in which every value it does not look into stays as its raw (compacted)
// bytes — string escapes and number spellings included.

// parseObject reads a JSON object keeping key order and raw values.
func parseObject(data []byte) (jsonobj.Object, error) {
	members, _, err := events.TopLevelMembers(data)
	if err != nil {
		return nil, err
	}
	o := make(jsonobj.Object, 0, len(members))
	for _, m := range members {
		o = append(o, jsonobj.Member{Key: m.Key, Value: jsonobj.Compact(data[m.ValStart:m.ValEnd])})
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
		xs[i] = jsonobj.Compact(xs[i])
	}
	return xs, nil
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
	members, _, err := events.TopLevelMembers(data)
	if err != nil {
		return nil, false
	}
	for _, m := range members {
		if m.Key == key {
			return data[m.ValStart:m.ValEnd], true
		}
	}
	return nil, false
}

func splice(data []byte, key string, val json.RawMessage, verbatim bool) ([]byte, error) {
	spans, _, err := events.TopLevelMembers(data)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	unit := indentUnit(data)
	var hit *events.Member
	for i := range spans {
		if spans[i].Key == key {
			if hit != nil {
				return nil, fmt.Errorf("the key %q occurs more than once; fix the file first", key)
			}
			hit = &spans[i]
		}
	}
	var b bytes.Buffer
	switch {
	case hit != nil && val != nil:
		prefix := lineIndent(data, hit.KeyStart)
		b.Write(data[:hit.ValStart])
		if verbatim {
			b.Write(val)
		} else {
			b.Write(indent(val, prefix, unit))
		}
		b.Write(data[hit.ValEnd:])
	case hit != nil: // remove the member and one adjacent comma
		from, to := hit.KeyStart, hit.ValEnd
		if hit.CommaAfter >= 0 {
			to = hit.CommaAfter + 1
		} else if hit.CommaBefore >= 0 {
			from = hit.CommaBefore
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
			b.Write(jsonobj.Marshal(key))
			b.WriteString(": ")
			b.Write(indent(val, unit, unit))
			b.WriteString("\n}")
			b.Write(data[closing+1:])
			break
		}
		last := spans[len(spans)-1]
		prefix := lineIndent(data, last.KeyStart)
		b.Write(data[:last.ValEnd])
		b.WriteString(",\n" + prefix)
		b.Write(jsonobj.Marshal(key))
		b.WriteString(": ")
		b.Write(indent(val, prefix, unit))
		b.Write(data[last.ValEnd:])
	default:
		return data, nil
	}
	return b.Bytes(), nil
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
