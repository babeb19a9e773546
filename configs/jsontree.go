package configs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// jsontree is a small ordered JSON tree with byte offsets. encoding/json into maps loses
// key order (hooks run in configuration order, so file order matters) and positions
// (errors should point at the line and column of the bad value), hence this.

type jkind uint8

const (
	jNull jkind = iota + 1
	jBool
	jNumber
	jString
	jArray
	jObject
)

type jnode struct {
	kind       jkind
	start, end int // the value's bytes in the source: data[start:end]

	keys   []string // object keys, first-occurrence order
	keyOff []int    // offset of each key
	vals   []*jnode
	elems  []*jnode // array elements

	str string
	num json.Number
	b   bool
}

// get returns the value of key in an object.
func (n *jnode) get(key string) *jnode {
	if n == nil || n.kind != jObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// what names the node's type for error messages: "a string", "null", ...
func (n *jnode) what() string {
	switch n.kind {
	case jNull:
		return "null"
	case jBool:
		return "a boolean"
	case jNumber:
		return "a number"
	case jString:
		return "a string"
	case jArray:
		return "an array"
	case jObject:
		return "an object"
	}
	return "nothing"
}

// dupKey records a key that appeared twice in one object. JavaScript's JSON.parse (and so
// Claude Code) keeps the last value; so does parseJSON, and the loader warns.
type dupKey struct {
	key string
	off int
}

// jsonSyntaxError is a syntax error at a byte offset.
type jsonSyntaxError struct {
	off int
	msg string
}

func (e *jsonSyntaxError) Error() string { return e.msg }

// parseJSON parses one JSON value (and nothing after it) into a tree. data is first
// checked with encoding/json, whose *SyntaxError carries the offset of the problem.
func parseJSON(data []byte) (*jnode, []dupKey, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := int(se.Offset)
			// Offset counts the bytes read including the offending one; point at that byte
			// (or at the end of the input for "unexpected end").
			if off > 0 && off <= len(data) && !bytes.Contains([]byte(se.Error()), []byte("unexpected end")) {
				off--
			}
			return nil, nil, &jsonSyntaxError{off: off, msg: se.Error()}
		}
		return nil, nil, &jsonSyntaxError{off: 0, msg: err.Error()}
	}
	p := &jparser{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	n, err := p.value()
	if err != nil {
		return nil, nil, &jsonSyntaxError{off: int(p.dec.InputOffset()), msg: err.Error()}
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, nil, &jsonSyntaxError{off: int(p.dec.InputOffset()), msg: "invalid character after top-level value"}
	}
	return n, p.dups, nil
}

type jparser struct {
	data []byte
	dec  *json.Decoder
	dups []dupKey
}

// next returns the next token and the offset where it starts.
func (p *jparser) next() (json.Token, int, error) {
	off := int(p.dec.InputOffset())
	for off < len(p.data) {
		switch p.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	tok, err := p.dec.Token()
	return tok, off, err
}

func (p *jparser) value() (*jnode, error) {
	tok, start, err := p.next()
	if err != nil {
		return nil, err
	}
	return p.valueFrom(tok, start)
}

func (p *jparser) valueFrom(tok json.Token, start int) (*jnode, error) {
	n := &jnode{start: start}
	switch t := tok.(type) {
	case nil:
		n.kind = jNull
	case bool:
		n.kind, n.b = jBool, t
	case json.Number:
		n.kind, n.num = jNumber, t
	case string:
		n.kind, n.str = jString, t
	case json.Delim:
		switch t {
		case '[':
			n.kind = jArray
			for p.dec.More() {
				e, err := p.value()
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, e)
			}
			if _, _, err := p.next(); err != nil { // ']'
				return nil, err
			}
		case '{':
			n.kind = jObject
			for p.dec.More() {
				kt, koff, err := p.next()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				if i := indexOf(n.keys, key); i >= 0 {
					p.dups = append(p.dups, dupKey{key: key, off: koff})
					n.vals[i] = v
					continue
				}
				n.keys = append(n.keys, key)
				n.keyOff = append(n.keyOff, koff)
				n.vals = append(n.vals, v)
			}
			if _, _, err := p.next(); err != nil { // '}'
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unexpected %q", rune(t))
		}
	default:
		return nil, fmt.Errorf("unexpected token %v", tok)
	}
	n.end = int(p.dec.InputOffset())
	return n, nil
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

// lineCol converts a byte offset into a 1-based line and a 1-based column counted in
// characters (what editors show).
func lineCol(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	if off < 0 {
		off = 0
	}
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	lineStart := bytes.LastIndexByte(data[:off], '\n') + 1
	col = 1 + utf8.RuneCount(data[lineStart:off])
	return line, col
}
