package settings

import (
	"strings"
	"testing"
)

// Claude Code accepts Write(…)/Glob(…) path rules and never consults them (2.1.210 warns).
// Rejecting the file would drop its hooks and real rules, so they are warnings.
func TestIgnoredRulesAreWarnings(t *testing.T) {
	data := []byte(`{"permissions":{"deny":["Write(.env)","Bash(rm *)","Glob(secret/**)"]},
		"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}`)
	f, err := ParseFile(FileRef{Path: "/p/.claude/settings.json", Kind: KindProject}, data, "/home/u")
	if err != nil {
		t.Fatalf("file with an ignored rule rejected: %v", err)
	}
	if len(f.Rules) != 1 || f.Rules[0].Text != "Bash(rm *)" || len(f.Handlers) != 1 {
		t.Fatalf("rules %d handlers %d", len(f.Rules), len(f.Handlers))
	}
	var got []string
	for _, w := range f.Warnings {
		got = append(got, w.String())
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{"permissions.deny[0]", "Write(.env)", "permissions.deny[2]", "Edit(path)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
}
