// Package jsontree is a small ordered JSON tree with byte offsets, shared by hookd's two
// strict decoders (the Claude Code settings model in configs/settings and hookd's own
// configuration in configs). encoding/json into maps loses key order (hooks run in
// configuration order, so file order matters) and positions (errors should point at the
// line and column of the bad value), hence this. Standard library only.
package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Kind is a JSON value's type.
type Kind uint8

// The JSON kinds.
const (
	Null Kind = iota + 1
	Bool
	Number
	String
	Array
	Object
)

// Node is one JSON value with its position in the source.
type Node struct {
	Kind       Kind
	Start, End int // the value's bytes in the source: data[start:end]

	Keys   []string // object keys, first-occurrence order
	KeyOff []int    // offset of each key
	Vals   []*Node
	Elems  []*Node // array elements

	Str     string      // a String's value
	Num     json.Number // a Number's value
	Boolean bool        // a Bool's value
}

// Get returns the value of key in an object.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i, k := range n.Keys {
		if k == key {
			return n.Vals[i]
		}
	}
	return nil
}

// What names the node's type for error messages: "a string", "null", ...
func (n *Node) What() string {
	switch n.Kind {
	case Null:
		return "null"
	case Bool:
		return "a boolean"
	case Number:
		return "a number"
	case String:
		return "a string"
	case Array:
		return "an array"
	case Object:
		return "an object"
	}
	return "nothing"
}

// DupKey records a key that appeared twice in one object. JavaScript's JSON.parse (and so
// Claude Code) keeps the last value; so does Parse, and the loader warns.
type DupKey struct {
	Key string
	Off int // the byte offset of the second occurrence
}

// SyntaxError is a syntax error at a byte offset.
type SyntaxError struct {
	Off int
	Msg string
}

func (e *SyntaxError) Error() string { return e.Msg }

// Parse parses one JSON value (and nothing after it) into a tree. data is first
// checked with encoding/json, whose *SyntaxError carries the offset of the problem.
func Parse(data []byte) (*Node, []DupKey, error) {
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
			return nil, nil, &SyntaxError{Off: off, Msg: se.Error()}
		}
		return nil, nil, &SyntaxError{Off: 0, Msg: err.Error()}
	}
	p := &jparser{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	n, err := p.value()
	if err != nil {
		return nil, nil, &SyntaxError{Off: int(p.dec.InputOffset()), Msg: err.Error()}
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, nil, &SyntaxError{Off: int(p.dec.InputOffset()), Msg: "invalid character after top-level value"}
	}
	return n, p.dups, nil
}

type jparser struct {
	data []byte
	dec  *json.Decoder
	dups []DupKey
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

func (p *jparser) value() (*Node, error) {
	tok, start, err := p.next()
	if err != nil {
		return nil, err
	}
	return p.valueFrom(tok, start)
}

func (p *jparser) valueFrom(tok json.Token, start int) (*Node, error) {
	n := &Node{Start: start}
	switch t := tok.(type) {
	case nil:
		n.Kind = Null
	case bool:
		n.Kind, n.Boolean = Bool, t
	case json.Number:
		n.Kind, n.Num = Number, t
	case string:
		n.Kind, n.Str = String, t
	case json.Delim:
		switch t {
		case '[':
			n.Kind = Array
			for p.dec.More() {
				e, err := p.value()
				if err != nil {
					return nil, err
				}
				n.Elems = append(n.Elems, e)
			}
			if _, _, err := p.next(); err != nil { // ']'
				return nil, err
			}
		case '{':
			n.Kind = Object
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
				if i := indexOf(n.Keys, key); i >= 0 {
					p.dups = append(p.dups, DupKey{Key: key, Off: koff})
					n.Vals[i] = v
					continue
				}
				n.Keys = append(n.Keys, key)
				n.KeyOff = append(n.KeyOff, koff)
				n.Vals = append(n.Vals, v)
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
	n.End = int(p.dec.InputOffset())
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

// LineCol converts a byte offset into a 1-based line and a 1-based column counted in
// characters (what editors show).
func LineCol(data []byte, off int) (line, col int) {
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
