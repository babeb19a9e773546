package warmed

import (
	"slices"
	"strconv"
	"testing"
)

func TestFirst(t *testing.T) {
	var w Sessions
	steps := []struct {
		session string
		start   bool
		want    bool
	}{
		{"a", false, true},  // first event of a session without SessionStart
		{"a", false, false}, // later events
		{"a", true, true},   // resume or clear: warm again
		{"b", true, true},
		{"b", false, false},
		{"", false, false}, // no session id: only on SessionStart
		{"", true, true},
	}
	for i, s := range steps {
		if got := w.First(s.session, s.start); got != s.want {
			t.Fatalf("step %d (%q, start %v): got %v", i, s.session, s.start, got)
		}
	}
	for i := range maxSessions + 10 { // bounded: starts over, never grows past the bound
		w.First(strconv.Itoa(i), false)
	}
	if len(w.seen) > maxSessions {
		t.Fatalf("%d sessions remembered", len(w.seen))
	}
}

func TestEffortEnv(t *testing.T) {
	var w Sessions
	if got := w.EffortEnv(); !slices.Equal(got, []string{"CLAUDE_EFFORT=" + guessEffort}) {
		t.Fatalf("before any tool event: %q", got)
	}
	w.NoteEffort("high")
	if got := w.EffortEnv(); !slices.Equal(got, []string{"CLAUDE_EFFORT=high"}) {
		t.Fatalf("after a high one: %q", got)
	}
	w.NoteEffort("") // a model without effort levels: no variable at all
	if got := w.EffortEnv(); got != nil {
		t.Fatalf("after one without: %q", got)
	}
}
