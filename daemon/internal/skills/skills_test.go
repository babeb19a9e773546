package skills

import (
	"testing"

	"github.com/hookd/hookd/configs/settings"
)

// TestTracker: a typed /name's skill is hidden from the event that invoked it, a Skill
// tool's is not; once hooks are removed only after a success on the exact matcher value
// (or an event without one); SessionEnd forgets; the state survives a new Tracker on the
// same directory (a daemon restart), and not End.
func TestTracker(t *testing.T) {
	dir := t.TempDir()
	tr := &Tracker{Dir: dir}
	tr.Invoke("s1", "greet", "d1", false)
	if got := tr.Active("s1", "d1"); len(got) != 0 {
		t.Errorf("the invoking prompt sees %v", got)
	}
	if got := tr.Active("s1", "d2"); len(got) != 1 || got[0] != "greet" {
		t.Errorf("the next event sees %v", got)
	}
	tr.Invoke("s1", "tool", "d3", true)
	tr.Invoke("s1", "greet", "d3", true) // again: no change
	if got := tr.Active("s1", "d3"); len(got) != 2 || got[1] != "tool" {
		t.Errorf("the Skill call's PostToolUse sees %v", got)
	}
	if len(tr.Active("s2", "d3")) != 0 {
		t.Error("another session sees s1's skills")
	}
	exact := &settings.Handler{ID: "a", Once: true, MatcherText: "Bash"}
	star := &settings.Handler{ID: "b", Once: true, MatcherText: "*"}
	plain := &settings.Handler{ID: "c", MatcherText: "Bash"}
	failed := &settings.Handler{ID: "d", Once: true, MatcherText: "Bash"}
	tr.Ran("s1", "Bash", []*settings.Handler{exact, star, plain, failed}, func(i int) bool { return i != 3 })
	for h, want := range map[*settings.Handler]bool{exact: true, star: false, plain: false, failed: false} {
		if tr.removed("s1", h.ID) != want {
			t.Errorf("%s removed %v, want %v", h.ID, !want, want)
		}
	}
	tr.Ran("s1", "", []*settings.Handler{star}, func(int) bool { return true })
	if !tr.removed("s1", "b") {
		t.Error("a once hook of an event without a match value stays after a success")
	}

	restarted := &Tracker{Dir: dir}
	if got := restarted.Active("s1", "dx"); len(got) != 2 || !restarted.removed("s1", "a") {
		t.Errorf("after a restart: %v, a removed %v", got, restarted.removed("s1", "a"))
	}
	restarted.End("s1")
	if got := (&Tracker{Dir: dir}).Active("s1", "dx"); len(got) != 0 {
		t.Errorf("after SessionEnd: %v", got)
	}
}

func TestInvoked(t *testing.T) {
	for _, tc := range []struct {
		event, tool, input, payload, name string
		visible                           bool
	}{
		{"UserPromptExpansion", "", "", `{"command_name": "greet"}`, "greet", false},
		{"PostToolUse", "Skill", `{"skill": "guard:hello"}`, `{}`, "guard:hello", true},
		{"PreToolUse", "Skill", `{"skill": "greet"}`, `{}`, "", false},
		{"PostToolUse", "Bash", `{"skill": "greet"}`, `{}`, "", false},
		{"PostToolUse", "Skill", `not json`, `{}`, "", true},
	} {
		name, visible := Invoked(tc.event, tc.tool, []byte(tc.input), []byte(tc.payload))
		if name != tc.name || name != "" && visible != tc.visible {
			t.Errorf("%s %s %s: %q %v", tc.event, tc.tool, tc.input, name, visible)
		}
	}
}
