package cmdcheck

import "testing"

func FuzzFirstCommandWords(f *testing.F) {
	for _, s := range []string{`"$CLAUDE_PROJECT_DIR"/x.sh a`, "FOO=1 exec env -i /x", "python3 -c 'x'", "a | b; c", "~/bin/x ${HOME}/y", "$(x) y", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		words, ok := FirstWords(cmd, "/p")
		if ok && len(words) == 0 {
			t.Fatalf("%q: ok without words", cmd)
		}
		_ = Missing(cmd, nil, "/p", "/nonexistent")
	})
}
