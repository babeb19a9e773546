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

// TestWithEffort: a warm's CLAUDE_EFFORT has the latest tool event's level at the place
// it stood there (the environment must match in order), the guess before any tool event,
// none after one without.
func TestWithEffort(t *testing.T) {
	base := []string{"HOME=/h", "PATH=/bin", "CLAUDE_PROJECT_DIR=/p", "CLAUDE_PID=7"}
	var w Sessions
	if got := w.WithEffort(base); !slices.Equal(got, []string{"HOME=/h", "PATH=/bin", "CLAUDE_EFFORT=medium", "CLAUDE_PROJECT_DIR=/p", "CLAUDE_PID=7"}) {
		t.Fatalf("before any tool event: %q", got)
	}
	w.NoteEffort([]string{"HOME=/h", "CLAUDE_EFFORT=high", "PATH=/bin"})
	if got := w.WithEffort(base); !slices.Equal(got, []string{"HOME=/h", "CLAUDE_EFFORT=high", "PATH=/bin", "CLAUDE_PROJECT_DIR=/p", "CLAUDE_PID=7"}) {
		t.Fatalf("after a high one before PATH: %q", got)
	}
	w.NoteEffort([]string{"HOME=/h", "CLAUDE_EFFORT=low"}) // last: appended
	if got := w.WithEffort(base); !slices.Equal(got, append(slices.Clone(base), "CLAUDE_EFFORT=low")) {
		t.Fatalf("after a low one at the end: %q", got)
	}
	w.NoteEffort([]string{"HOME=/h"}) // a model without effort levels: no variable at all
	if got := w.WithEffort(base); !slices.Equal(got, base) {
		t.Fatalf("after one without: %q", got)
	}
	if len(base) != 4 || base[2] != "CLAUDE_PROJECT_DIR=/p" {
		t.Fatalf("base changed: %q", base)
	}
}

// TestPlaceEffort: an http event's CLAUDE_EFFORT (from its payload) goes where a warm puts
// it — the latest tool event's place, or before CLAUDE_PROJECT_DIR before any — replacing
// one already there, so the event's environment is its spare's.
func TestPlaceEffort(t *testing.T) {
	var w Sessions
	env := []string{"HOME=/h", "CLAUDE_EFFORT=stale", "CLAUDE_PROJECT_DIR=/p", "CLAUDE_PID=7"}
	if got := w.PlaceEffort(env, "medium"); !slices.Equal(got, []string{"HOME=/h", "CLAUDE_EFFORT=medium", "CLAUDE_PROJECT_DIR=/p", "CLAUDE_PID=7"}) {
		t.Fatalf("before any tool event: %q", got)
	}
	if got, want := w.PlaceEffort(env[:1], "high"), w.WithEffort(env[:1]); len(got) != 2 || got[1] != "CLAUDE_EFFORT=high" || len(want) != 2 {
		t.Fatalf("no anchor in the environment: %q (warm: %q)", got, want)
	}
	w.NoteEffort([]string{"HOME=/h", "CLAUDE_EFFORT=high", "PATH=/bin"})
	base := []string{"HOME=/h", "PATH=/bin", "CLAUDE_PROJECT_DIR=/p"}
	if got, warm := w.PlaceEffort(base, "high"), w.WithEffort(base); !slices.Equal(got, warm) {
		t.Fatalf("http %q, warm %q: not the same environment", got, warm)
	}
	if !slices.Equal(env, []string{"HOME=/h", "CLAUDE_EFFORT=stale", "CLAUDE_PROJECT_DIR=/p", "CLAUDE_PID=7"}) {
		t.Fatalf("PlaceEffort changed its argument: %q", env)
	}
}
