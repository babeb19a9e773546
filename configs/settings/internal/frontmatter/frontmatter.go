// Package frontmatter reads the YAML frontmatter of the Markdown files that define Claude
// Code subagents, skills and slash commands, as Claude Code 2.1.332 reads it, and turns
// its "hooks" into JSON for the strict settings decoder, remembering where each value
// came from so that errors point into the Markdown file. It also lists those files in
// their directories. A leaf below configs/settings (frontmatter.go there says how the
// hooks are scoped).
package frontmatter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// maxFrontmatter bounds the YAML hookd parses (Claude Code refuses an untrusted
// frontmatter over 64 KiB) and maxYAMLNodes the values it may expand to (aliases).
const (
	maxFrontmatter = 64 << 10
	maxYAMLNodes   = 100_000
)

// frontmatterRE is Claude Code 2.1.332's frontmatter pattern (K0); JavaScript's \s also
// matches \v.
var frontmatterRE = regexp.MustCompile(`\A---[\s\x0b]*\n((?s:.)*?)---`)

// frontmatterBlock returns the frontmatter of a Markdown file and the byte offset where it
// starts in data (ok false when the file has none).
func frontmatterBlock(data []byte) (block []byte, off int, ok bool) {
	bom := 0
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		bom = 3
	}
	text := data[bom:]
	if !bytes.HasPrefix(text, []byte("---")) || !bytes.Contains(text[3:], []byte("---")) {
		return nil, 0, false
	}
	m := frontmatterRE.FindSubmatchIndex(text)
	if m == nil {
		return nil, 0, false
	}
	return text[m[2]:m[3]], bom + m[2], true
}

// Doc is what a Markdown file's frontmatter says that hookd needs. Lines and columns are
// the Markdown file's.
type Doc struct {
	// Found: the file has a frontmatter block (else nothing below is set).
	Found bool
	// NotMapping, when set, is where a frontmatter that is not key: value pairs starts
	// (Claude Code reads no fields from it).
	NotMapping *Pos
	// Name is the frontmatter "name" as a string ("" when absent or not a string);
	// Skills the agent's "skills" (a list, or one comma-separated string).
	Name   string
	Skills []string
	// Invalid (agents only) says why Claude Code does not load the file as a subagent;
	// At is where (its "name", or the frontmatter's start).
	Invalid string
	At      Pos
	// HasHooks: the frontmatter has a "hooks" key; Hooks is its value as JSON (nil when
	// null), read back to the file by Doc.Pos.
	HasHooks bool
	Hooks    []byte
	marks    []mark
}

// Pos is a line and column in the Markdown file (1-based).
type Pos struct{ Line, Col int }

// Error is a frontmatter that cannot be read: where (0 when unknown), the field, why.
type Error struct {
	Pos
	Field, Msg string
}

func (e *Error) Error() string { return e.Msg }

// Read reads data's frontmatter; agent checks the subagent fields Claude Code requires.
func Read(data []byte, agent bool) (*Doc, *Error) {
	doc := &Doc{}
	block, off, ok := frontmatterBlock(data)
	if !ok {
		return doc, nil
	}
	doc.Found = true
	lineOff := bytes.Count(data[:off], []byte{'\n'})
	lines := newLineMap(block)
	at := func(line, col int) Pos {
		if line <= 0 {
			return Pos{}
		}
		line, col = lines.pos(line, col)
		return Pos{line + lineOff, col}
	}
	if len(block) > maxFrontmatter {
		return nil, &Error{at(1, 1), "", fmt.Sprintf("frontmatter of %d bytes: hookd reads at most %d", len(block), maxFrontmatter)}
	}
	var y yaml.Node
	if err := yaml.Unmarshal(block, &y); err != nil {
		line, msg := yamlErrorLine(err)
		return nil, &Error{at(line, 1), "", "invalid YAML frontmatter: " + msg}
	}
	var root *yaml.Node
	if y.Kind == yaml.DocumentNode && len(y.Content) == 1 {
		root = y.Content[0]
	}
	if root == nil || root.Kind != yaml.MappingNode {
		if root != nil && !(root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
			p := at(root.Line, root.Column)
			doc.NotMapping = &p
		}
		return doc, nil
	}
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		fields[root.Content[i].Value] = root.Content[i+1]
	}
	if n := fields["name"]; n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		doc.Name = n.Value
	}
	if agent {
		if _, why := agentName(fields); why != "" {
			doc.Invalid, doc.At = why, at(root.Line, root.Column)
			if n := fields["name"]; n != nil {
				doc.At = at(n.Line, n.Column)
			}
		}
		doc.Skills = yamlNames(fields["skills"])
	}
	for _, top := range []string{"PreToolUse", "PermissionRequest"} {
		if n := fields[top]; n != nil {
			return nil, &Error{at(n.Line, n.Column), top, "declared at the frontmatter's top level, outside \"hooks\": Claude Code refuses to load hooks there; move it under hooks:"}
		}
	}
	hooks, ok := fields["hooks"]
	doc.HasHooks = ok
	if hooks == nil || hooks.Kind == yaml.ScalarNode && hooks.Tag == "!!null" {
		return doc, nil
	}
	var c yamlJSON
	if err := c.emit(hooks, 0); err != nil {
		var ye *yamlValueError
		if errors.As(err, &ye) {
			return nil, &Error{at(ye.line, ye.col), "hooks", ye.msg}
		}
		return nil, &Error{at(hooks.Line, hooks.Column), "hooks", err.Error()}
	}
	for i := range c.marks {
		p := at(c.marks[i].line, c.marks[i].col)
		c.marks[i].line, c.marks[i].col = p.Line, p.Col
	}
	doc.Hooks, doc.marks = c.buf.Bytes(), c.marks
	return doc, nil
}

// Pos is the Markdown file's line and column of the value at byte off of Hooks (0, 0
// when unknown).
func (d *Doc) Pos(off int) (line, col int) {
	line, col, _ = markPos(d.marks, off)
	return line, col
}

// agentName is an agent's type: its frontmatter "name", as Claude Code 2.1.332 requires
// it (a string, not starting with "-", at most 64 characters, no ":"), with a
// "description". why says why Claude Code does not load the file as an agent.
func agentName(fields map[string]*yaml.Node) (name, why string) {
	n := fields["name"]
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!str" || n.Value == "" {
		return "", "no \"name\" in the frontmatter: Claude Code does not load this file as a subagent, and its hooks never run"
	}
	name = n.Value
	switch {
	case strings.HasPrefix(name, "-"):
		why = "names must not start with \"-\""
	case len([]rune(name)) > 64:
		why = "names must be at most 64 characters"
	case strings.Contains(name, ":"):
		why = "names must not contain \":\" (reserved for plugin namespacing)"
	}
	if d := fields["description"]; why == "" && (d == nil || d.Kind != yaml.ScalarNode || d.Tag != "!!str" || d.Value == "") {
		why = "missing required \"description\""
	}
	if why != "" {
		return "", "invalid subagent " + strconv.Quote(name) + ": " + why + ": Claude Code does not load it, and its hooks never run"
	}
	return name, ""
}

// yamlNames reads a list of names: a sequence of strings, or one comma-separated string.
func yamlNames(n *yaml.Node) []string {
	if n == nil {
		return nil
	}
	var out []string
	switch n.Kind {
	case yaml.SequenceNode:
		for _, e := range n.Content {
			if e.Kind == yaml.ScalarNode && strings.TrimSpace(e.Value) != "" {
				out = append(out, strings.TrimSpace(e.Value))
			}
		}
	case yaml.ScalarNode:
		for _, s := range strings.Split(n.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// lineMap turns the YAML parser's line:column in a block into the Markdown file's. The
// parser ends a line at \r\n, \n, and also at a lone \r, NEL, LS and PS, where the file
// (and every editor and tool that names a line, grep -n, sed, vim) has only \n; columns
// count characters in both.
type lineMap []linePos

// linePos: where a line of the parser's starts, as the block's own line:column.
type linePos struct{ line, col int }

func newLineMap(block []byte) lineMap {
	m := lineMap{{1, 1}}
	line, col := 1, 1
	for i := 0; i < len(block); {
		r, size := utf8.DecodeRune(block[i:])
		switch {
		case r == '\r' && i+1 < len(block) && block[i+1] == '\n':
			size = 2
			fallthrough
		case r == '\n':
			line, col = line+1, 1
			m = append(m, linePos{line, col})
		case r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029':
			col++
			m = append(m, linePos{line, col})
		default:
			col++
		}
		i += size
	}
	return m
}

// pos is the block's line:column of the parser's (1-based; a line past the end is the
// last line).
func (m lineMap) pos(line, col int) (int, int) {
	p := m[min(line, len(m))-1]
	return p.line, p.col + max(col, 1) - 1
}

// yamlErrorLine splits "yaml: line N: msg" into N and msg (0 when there is no line).
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

// yamlJSON writes a YAML value as JSON, remembering where each value came from, so the
// strict settings decoder reads frontmatter hooks and its errors point into the file.
type yamlJSON struct {
	buf   bytes.Buffer
	marks []mark
	nodes int
}

// mark: the JSON value at byte off came from YAML line:col.
type mark struct{ off, line, col int }

type yamlValueError struct {
	line, col int
	msg       string
}

func (e *yamlValueError) Error() string { return e.msg }

func (c *yamlJSON) emit(n *yaml.Node, depth int) error {
	c.nodes++
	if c.nodes > maxYAMLNodes || depth > 64 {
		return &yamlValueError{n.Line, n.Column, "the frontmatter's hooks are too large or too deeply nested (aliases expanded)"}
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return &yamlValueError{n.Line, n.Column, "an alias to nothing"}
		}
		// The value is the anchor's; its position, the alias's (where the reader looks).
		c.marks = append(c.marks, mark{c.buf.Len(), n.Line, n.Column})
		m := len(c.marks)
		err := c.emit(n.Alias, depth+1)
		c.marks[m-1] = mark{c.marks[m-1].off, n.Line, n.Column}
		return err
	}
	c.marks = append(c.marks, mark{c.buf.Len(), n.Line, n.Column})
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return &yamlValueError{n.Line, n.Column, "not one YAML document"}
		}
		return c.emit(n.Content[0], depth+1)
	case yaml.MappingNode:
		c.buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return &yamlValueError{k.Line, k.Column, "a mapping key must be a plain name"}
			}
			if i > 0 {
				c.buf.WriteByte(',')
			}
			kb, _ := json.Marshal(k.Value)
			c.buf.Write(kb)
			c.buf.WriteByte(':')
			if err := c.emit(v, depth+1); err != nil {
				return err
			}
		}
		c.buf.WriteByte('}')
	case yaml.SequenceNode:
		c.buf.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				c.buf.WriteByte(',')
			}
			if err := c.emit(e, depth+1); err != nil {
				return err
			}
		}
		c.buf.WriteByte(']')
	case yaml.ScalarNode:
		return c.scalar(n)
	default:
		return &yamlValueError{n.Line, n.Column, "an unsupported YAML value"}
	}
	return nil
}

// scalar writes a YAML scalar as the JSON value Claude Code's parser (YAML 1.2 core
// schema) reads: null, booleans, numbers (decimal, 0x, 0o, .inf refused), else strings.
func (c *yamlJSON) scalar(n *yaml.Node) error {
	switch n.Tag {
	case "!!null":
		c.buf.WriteString("null")
	case "!!bool":
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			return &yamlValueError{n.Line, n.Column, "not a boolean: " + n.Value}
		}
		c.buf.WriteString(strconv.FormatBool(b))
	case "!!int":
		v := strings.ReplaceAll(n.Value, "_", "")
		i, err := strconv.ParseInt(v, 0, 64)
		if err != nil {
			return &yamlValueError{n.Line, n.Column, "not an integer: " + n.Value}
		}
		c.buf.WriteString(strconv.FormatInt(i, 10))
	case "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return &yamlValueError{n.Line, n.Column, "not a finite number: " + n.Value}
		}
		b, _ := json.Marshal(f)
		c.buf.Write(b)
	default: // !!str, !!timestamp, !!binary, custom tags: the text as written
		b, _ := json.Marshal(n.Value)
		c.buf.Write(b)
	}
	return nil
}

// markPos is the YAML line and column of the JSON value at off: the mark at off, or the
// nearest before it.
func markPos(marks []mark, off int) (line, col int, ok bool) {
	i := sort.Search(len(marks), func(i int) bool { return marks[i].off > off }) - 1
	if i < 0 {
		return 0, 0, false
	}
	// Several values can start at one offset (an alias and its anchor's value): the
	// first recorded is the outermost, which is where the reader looks.
	for i > 0 && marks[i-1].off == marks[i].off {
		i--
	}
	return marks[i].line, marks[i].col, true
}

// AgentFiles lists the subagent definitions of one agents directory (<user dir>/agents,
// <project>/.claude/agents), subdirectories included, sorted; hidden entries skipped.
func AgentFiles(dir string) []string {
	var out []string
	walkMarkdown(dir, false, func(p string, _ []string) { out = append(out, p) })
	sort.Strings(out)
	return out
}

// walkMarkdown calls fn for each regular *.md file below dir (at most 8 levels: links may
// loop; hidden entries skipped) with its path and its names below dir, ".md" dropped.
// With skills, a directory below dir holding a SKILL.md is that one file, named by the
// directory, and not entered further.
func walkMarkdown(dir string, skills bool, fn func(path string, names []string)) {
	var walk func(d string, names []string, depth int)
	walk = func(d string, names []string, depth int) {
		ents, err := os.ReadDir(d)
		if err != nil || depth > 8 {
			return
		}
		for _, e := range ents {
			if skills && len(names) > 0 && strings.EqualFold(e.Name(), "SKILL.md") {
				fn(filepath.Join(d, e.Name()), names)
				return
			}
		}
		for _, e := range ents {
			n := e.Name()
			if strings.HasPrefix(n, ".") {
				continue
			}
			p, more := filepath.Join(d, n), names[:len(names):len(names)]
			switch fi, err := os.Stat(p); {
			case err != nil:
			case fi.IsDir():
				walk(p, append(more, n), depth+1)
			case fi.Mode().IsRegular() && strings.HasSuffix(n, ".md"):
				fn(p, append(more, strings.TrimSuffix(n, ".md")))
			}
		}
	}
	walk(dir, nil, 0)
}

// SkillFiles lists the SKILL.md of every skill directory in dir (<user dir>/skills,
// <project>/.claude/skills, <plugin root>/skills): name → path, for the directories that
// hold one.
func SkillFiles(dir string) map[string]string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, n)); err != nil || !fi.IsDir() {
			continue
		}
		p := filepath.Join(dir, n, "SKILL.md")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out[n] = p
		}
	}
	return out
}

// CommandFiles lists the slash commands of a commands directory (<user dir>/commands,
// <project>/.claude/commands) as Claude Code 2.1.332 names them: a file's path below
// the directory with ":" for "/" and without ".md" ("frontend:component"); a directory
// holding a SKILL.md is one skill, named by its path. name → file.
func CommandFiles(dir string) map[string]string {
	out := map[string]string{}
	walkMarkdown(dir, true, func(p string, names []string) { out[strings.Join(names, ":")] = p })
	return out
}

// Entry is a file that may define a subagent, a skill or a slash command: Name is a
// skill's or command's name (an agent's file name, until its frontmatter names it), Dir a
// skill's directory; Command marks a slash command's file.
type Entry struct {
	Path, Name, Dir string
	Command         bool
}

// Agents lists the subagent files of an agents directory (AgentFiles).
func Agents(dir string) []Entry {
	var out []Entry
	for _, p := range AgentFiles(dir) {
		out = append(out, Entry{Path: p, Name: strings.TrimSuffix(filepath.Base(p), ".md")})
	}
	return out
}

// Skills lists the skills of a skills directory (SkillFiles), by name.
func Skills(dir string) []Entry {
	var out []Entry
	for n, p := range SkillFiles(dir) {
		out = append(out, Entry{Path: p, Name: n, Dir: filepath.Dir(p)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Commands lists the slash commands of a commands directory (CommandFiles), by name; a
// directory holding a SKILL.md there is a skill.
func Commands(dir string) []Entry {
	var out []Entry
	for n, p := range CommandFiles(dir) {
		e := Entry{Path: p, Name: n, Command: true}
		if strings.EqualFold(filepath.Base(p), "SKILL.md") {
			e.Command, e.Dir = false, filepath.Dir(p)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
