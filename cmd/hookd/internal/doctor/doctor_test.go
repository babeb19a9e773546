package doctor

import "testing"

func TestFirstShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/bin/hookc --timeout 5s":           "/usr/bin/hookc",
		"'/opt/my tools/hookc' --harness codex": "/opt/my tools/hookc",
		`"/a b/hookc"`:                          "/a b/hookc",
		`HOOKD_SOCKET=/s A=b /x/hookc`:          "/x/hookc",
		`/path\ with\ space/hookc -x`:           "/path with space/hookc",
		"  hookc":                               "hookc",
		"'unterminated":                         "unterminated",
		"/dir=with=equals/hookc":                "/dir=with=equals/hookc",
	} {
		if got := firstShellWord(in); got != want {
			t.Errorf("firstShellWord(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"2.1.332", "2.1.330", 1}, {"2.1.330", "2.1.1000", -1}, {"2.1", "2.1.0", 0}, {"1.0.0", "1.0.0", 0}} {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
