package settings

import (
	"path/filepath"
	"strings"
	"testing"
)

func parseOne(t *testing.T, text string) *File {
	t.Helper()
	dir := t.TempDir()
	f, err := ParseFile(FileRef{Path: filepath.Join(dir, "settings.json"), Kind: KindProject}, []byte(text), dir)
	if err != nil {
		t.Fatalf("ParseFile: %v", err)
	}
	return f
}

// TestOnFailureDecoding: "onFailure" is decoded for command and http handlers, and
// FailsClosed follows Claude Code 2.1.330: only "block", only synchronous hooks, never on
// Stop, SubagentStop, TaskCompleted or TeammateIdle.
func TestOnFailureDecoding(t *testing.T) {
	tests := []struct {
		name, text string
		fails      bool
		warn       string // substring of a warning on .onFailure
	}{
		{"command block", `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"g","onFailure":"block"}]}]}}`, true, ""},
		{"http block", `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"http","url":"http://x","onFailure":"block"}]}]}}`, true, ""},
		{"continue", `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"g","onFailure":"continue"}]}]}}`, false, ""},
		{"absent", `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"g"}]}]}}`, false, ""},
		{"async", `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"g","async":true,"onFailure":"block"}]}]}}`, false, "async"},
		{"asyncRewake", `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"g","asyncRewake":true,"onFailure":"block"}]}]}}`, false, "async"},
		{"Stop", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"g","onFailure":"block"}]}]}}`, false, "ignored on Stop"},
		{"SubagentStop", `{"hooks":{"SubagentStop":[{"hooks":[{"type":"command","command":"g","onFailure":"block"}]}]}}`, false, "ignored on SubagentStop"},
		{"TaskCompleted", `{"hooks":{"TaskCompleted":[{"hooks":[{"type":"command","command":"g","onFailure":"block"}]}]}}`, false, "ignored on TaskCompleted"},
		{"TeammateIdle", `{"hooks":{"TeammateIdle":[{"hooks":[{"type":"command","command":"g","onFailure":"block"}]}]}}`, false, "ignored on TeammateIdle"},
		{"PostToolUse (stops nothing, but not ignored)", `{"hooks":{"PostToolUse":[{"hooks":[{"type":"command","command":"g","onFailure":"block"}]}]}}`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := parseOne(t, tt.text)
			if len(f.Handlers) != 1 {
				t.Fatalf("%d handlers", len(f.Handlers))
			}
			if got := f.Handlers[0].FailsClosed(); got != tt.fails {
				t.Errorf("FailsClosed = %v, want %v", got, tt.fails)
			}
			var warned bool
			for _, w := range f.Warnings {
				if strings.HasSuffix(w.Field, ".onFailure") && tt.warn != "" && strings.Contains(w.Message, tt.warn) {
					warned = true
				}
				if strings.Contains(w.Message, "unknown handler field") {
					t.Errorf("onFailure reported as unknown: %v", w)
				}
			}
			if tt.warn != "" && !warned {
				t.Errorf("no warning …%s… on onFailure in %v", tt.warn, f.Warnings)
			}
		})
	}
}

// TestOnFailureInvalidValue: Claude Code's schema takes only "continue" and "block"; any
// other value (a typo of block, or a boolean) makes the file invalid, so the last good
// version stays rather than a guard silently failing open.
func TestOnFailureInvalidValue(t *testing.T) {
	for _, v := range []string{`"deny"`, `"Block"`, `true`, `""`} {
		dir := t.TempDir()
		path := filepath.Join(dir, "settings.json")
		_, err := ParseFile(FileRef{Path: path, Kind: KindProject},
			[]byte(`{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"g","onFailure":`+v+`}]}]}}`), dir)
		if err == nil || !strings.Contains(err.Error(), "hooks.PreToolUse[0].hooks[0].onFailure") || !strings.Contains(err.Error(), path) {
			t.Errorf("onFailure %s: err = %v, want an error naming the file and field", v, err)
		}
	}
}

// TestOnFailureNotDeduplicatedAway: two copies of a command, one fail-closed, are not
// folded into the copy without onFailure.
func TestOnFailureNotDeduplicatedAway(t *testing.T) {
	f := parseOne(t, `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"g"},{"type":"command","command":"g","onFailure":"block"}]}]}}`)
	if f.Handlers[0].Key == f.Handlers[1].Key {
		t.Fatalf("same dedup key %q for a fail-closed and a plain copy", f.Handlers[0].Key)
	}
}

// TestUnknownHandlerFieldIsErrorLevel: a handler field hookd does not know is an
// error-level finding naming file and field; the hook still loads. A field the pinned
// Claude Code accepts and hookd deliberately ignores is an ordinary warning.
func TestUnknownHandlerFieldIsErrorLevel(t *testing.T) {
	f := parseOne(t, `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"g","failMode":"closed","holdsTools":true}]}]}}`)
	if len(f.Handlers) != 1 {
		t.Fatalf("%d handlers; the hook must still load", len(f.Handlers))
	}
	var unknown, internal *Warning
	for i, w := range f.Warnings {
		switch w.Field {
		case "hooks.PreToolUse[0].hooks[0].failMode":
			unknown = &f.Warnings[i]
		case "hooks.PreToolUse[0].hooks[0].holdsTools":
			internal = &f.Warnings[i]
		}
	}
	if unknown == nil || !unknown.IsError() || !strings.Contains(unknown.Message, "unknown handler field") || unknown.File == "" {
		t.Errorf("failMode finding = %+v, want an error-level unknown handler field naming the file", unknown)
	}
	if internal == nil || internal.IsError() {
		t.Errorf("holdsTools = %+v, want a plain warning", internal)
	}
}

// TestModelSwitchMatcher: a model-switch group matcher loses its "[1m]" suffix before it
// is compiled, as in Claude Code 2.1.330, so "claude-sonnet-4-5[1m]" matches the
// (stripped) to_model "claude-sonnet-4-5".
func TestModelSwitchMatcher(t *testing.T) {
	f := parseOne(t, `{"hooks":{"PreModelSwitch":[{"matcher":"claude-sonnet-4-5[1m]|claude-opus-4-6","hooks":[{"type":"command","command":"g"}]}]}}`)
	snap := Compile([]*File{f})
	ev := f.Handlers[0].Event
	for value, want := range map[string]int{"claude-sonnet-4-5": 1, "claude-opus-4-6": 1, "claude-haiku-4-5": 0} {
		if run, _ := snap.Match(Query{Event: ev, MatchValue: value}); len(run) != want {
			t.Errorf("to_model %q: %d handlers run, want %d", value, len(run), want)
		}
	}
}
