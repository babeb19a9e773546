package settings

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/rules"
)

// FuzzParseFile checks that no input makes ParseFile, Compile or Match panic, and that
// results keep their invariants. Seeded with every table of the parse tests and the
// shipped example.
func FuzzParseFile(f *testing.F) {
	for _, c := range parseErrorCases {
		f.Add([]byte(c.text), uint8(0))
	}
	for i, c := range parseWarningCases {
		f.Add([]byte(c.text), uint8(i))
	}
	example, err := os.ReadFile(filepath.Join("..", "examples", "settings.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example, uint8(2))
	f.Add([]byte("\xef\xbb\xbf{}"), uint8(1))
	f.Add([]byte(`{"hooks":{"FileChanged":[{"matcher":"a|b","hooks":[{"type":"command","command":"x","if":"Read(./a)"}]}]}}`), uint8(3))

	kinds := []Kind{KindManaged, KindUser, KindProject, KindLocal, KindFlag, KindHookd}
	all := events.All()
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		ref := FileRef{Path: "/p/.claude/settings.json", Kind: kinds[int(k)%len(kinds)]}
		file, err := ParseFile(ref, data, "/home/u")
		if err != nil {
			var fe *FileError
			if file != nil || !errors.As(err, &fe) || fe.File != ref.Path {
				t.Fatalf("error %v (%T) with file %v", err, err, file)
			}
			return
		}
		if len(file.Hash) != 64 || file.Settings == nil {
			t.Fatalf("bad file %+v", file)
		}
		for _, h := range file.Handlers {
			if h.Event == nil || h.Key == "" || h.ID == "" || !json.Valid(h.Raw) || !h.Event.Accepts(h.Type) {
				t.Fatalf("bad handler %+v", h)
			}
			if h.Type == events.Command && h.Command == "" || h.Type == events.HTTP && h.URL == "" || h.Timeout < 0 {
				t.Fatalf("invalid handler accepted: %+v", h)
			}
		}
		s := Compile([]*File{file, file})
		call := &rules.Call{Tool: "Bash", Input: map[string]any{"command": "git status && rm -rf x"}, Cwd: "/p", Home: "/home/u"}
		for _, e := range all {
			run, notRun := s.Match(Query{Event: e, MatchValue: "Bash", Tool: call})
			seen := map[string]bool{}
			for _, h := range append(append([]*Handler{}, run...), notRun...) {
				if seen[h.Key] {
					t.Fatalf("duplicate key %q in result", h.Key)
				}
				seen[h.Key] = true
			}
		}
	})
}
