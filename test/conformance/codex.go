package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
)

// Codex CLI carries the JSON Schemas it validates hook input and output against as
// pretty-printed JSON documents in its binary, one per event and direction, each with a
// "title" such as "pre-tool-use.command.output". hookd keeps copies of them
// (events/harness/testdata/codex-<version>/, named "pre-tool-use.output.json"): the
// tests validate every answer hookd renders for Codex against them, so they must be the
// pinned binary's own. ExtractCodexSchemas reads them out of the binary and
// TestCodexSchemas compares (or, with -update, rewrites) the copies.

var codexTitleRE = regexp.MustCompile(`"title": *"([a-z-]+)\.command\.(input|output)"`)

// schemaStart is how each schema document begins in the binary.
var schemaStart = []byte(`"$schema"`)

// ExtractCodexSchemas returns the hook schemas of a Codex binary by file name
// ("pre-tool-use.output.json"), each re-encoded as the copies are: keys sorted, one space
// of indentation, a final newline. It fails when it finds none, or when a title sits in
// something that is not a schema document.
func ExtractCodexSchemas(bin []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, m := range codexTitleRE.FindAllSubmatchIndex(bin, -1) {
		title := string(bin[m[0]:m[1]])
		name := string(bin[m[2]:m[3]]) + "." + string(bin[m[4]:m[5]]) + ".json"
		// The document opens at the last `{` before its "$schema" member, which comes
		// before the title (members are sorted).
		s := bytes.LastIndex(bin[max(0, m[0]-1<<20):m[0]], schemaStart)
		if s < 0 {
			return nil, fmt.Errorf("codex schema %s: no \"$schema\" before its title (layout changed)", name)
		}
		s += max(0, m[0]-1<<20)
		open := bytes.LastIndexByte(bin[:s], '{')
		if open < 0 {
			return nil, fmt.Errorf("codex schema %s: no opening brace (layout changed)", name)
		}
		dec := json.NewDecoder(bytes.NewReader(bin[open:min(len(bin), open+1<<20)]))
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("codex schema %s: %v (layout changed)", name, err)
		}
		if t, _ := doc["title"].(string); `"title": "`+t+`"` != title && `"title":"`+t+`"` != title {
			return nil, fmt.Errorf("codex schema %s: the document around the title is titled %q (layout changed)", name, t)
		}
		b, err := json.MarshalIndent(doc, "", " ") // map keys are sorted
		if err != nil {
			return nil, err
		}
		out[name] = append(b, '\n')
	}
	if len(out) == 0 {
		return nil, errors.New("no *.command.input/output schemas found (layout changed, or not a Codex binary)")
	}
	return out, nil
}

// DiffSchemas names the schema files that differ between want (the binary's) and have
// (the copies): missing, extra, or different in content (compared as JSON values).
func DiffSchemas(want, have map[string][]byte) []string {
	var problems []string
	for name, w := range want {
		h, ok := have[name]
		if !ok {
			problems = append(problems, name+": in the binary, no copy")
			continue
		}
		var a, b any
		if json.Unmarshal(w, &a) != nil || json.Unmarshal(h, &b) != nil || !jsonEqual(a, b) {
			problems = append(problems, name+": the copy differs from the binary's schema")
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			problems = append(problems, name+": a copy of a schema the binary no longer has")
		}
	}
	sort.Strings(problems)
	return problems
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
