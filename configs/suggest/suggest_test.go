package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"status", "status", 0},
		{"stauts", "status", 1}, // one swap
		{"Bassh", "Bash", 1},    // one insertion
		{"PreToolUze", "PreToolUse", 1},
		{"kitten", "sitting", 3}, // the textbook case
		{"ca", "abc", 3},         // optimal string alignment: no edit of an edited substring
		{"héllo", "hello", 1},    // runes, not bytes
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	events := []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "StopFailure", "SessionStart", "Notification"}
	cmds := []string{"serve", "status", "reload", "validate", "run", "events", "install", "uninstall", "audit", "version"}
	for _, tc := range []struct {
		word       string
		candidates []string
		want       string
	}{
		{"PreToolUze", events, "PreToolUse"},
		{"pretooluse", events, "PreToolUse"}, // case only: always suggested
		{"PRETOOLUSE", events, "PreToolUse"},
		{"Stpo", events, "Stop"},
		{"PreToolUse", events, ""}, // correct: nothing to suggest
		{"Frobnicate", events, ""}, // far from everything: no random guess
		{"stauts", cmds, "status"},
		{"valdiate", cmds, "validate"},
		{"instal", cmds, "install"},
		{"x", cmds, ""},
		{"sevre", cmds, "serve"},
	} {
		if got := Closest(tc.word, tc.candidates); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

func FuzzDistance(f *testing.F) {
	f.Add("stauts", "status")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := Distance(a, b)
		if d != Distance(b, a) {
			t.Fatalf("not symmetric: %q %q", a, b)
		}
		if (d == 0) != (string([]rune(a)) == string([]rune(b))) {
			t.Fatalf("Distance(%q, %q) = %d", a, b, d)
		}
		if n := max(len([]rune(a)), len([]rune(b))); d > n {
			t.Fatalf("Distance(%q, %q) = %d > %d", a, b, d, n)
		}
	})
}
