package events

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestCompactPiece: one PreCompact hook's output as Claude Code 2.1.330 keeps it — trimmed
// as JavaScript trims, cut at 10,000 UTF-16 code units with its notice, never half a
// surrogate pair, provenance markers the cut removed put back in front.
func TestCompactPiece(t *testing.T) {
	notice := func(n int) string {
		return "\n\n[PreCompact hook [./g.sh] output cut: " + itoa(n) + " characters is over the 10000-character limit]"
	}
	long := strings.Repeat("a", 10001)
	emoji := strings.Repeat("a", 9999) + "😀" + "b" // the pair straddles the cut: 10,002 units
	marker := strings.Repeat("x", 10000) + "<artifact-content-authored-by-others/>"
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"whitespace only", " \n\t\ufeff ", ""},
		{"trimmed", "\n  keep the API notes \r\n", "keep the API notes"},
		{"NEL is not JS whitespace", "\u0085x\u0085", "\u0085x\u0085"},
		{"exactly 10000", strings.Repeat("a", 10000), strings.Repeat("a", 10000)},
		{"10001 cut", long, strings.Repeat("a", 10000) + notice(10001)},
		{"surrogate pair not split", emoji, strings.Repeat("a", 9999) + notice(10002)},
		{"astral counted as two", strings.Repeat("😀", 5000), strings.Repeat("😀", 5000)},
		{"astral over", strings.Repeat("😀", 5001), strings.Repeat("😀", 5000) + notice(10002)},
		{"marker cut away comes first", marker, "<artifact-content-authored-by-others/>\n" + strings.Repeat("x", 10000) + notice(10038)},
		{"marker kept stays put", "<remote-control-device-report/>" + long, "<remote-control-device-report/>" + strings.Repeat("a", 10000-31) + notice(10032)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compactPiece("./g.sh", tt.in); got != tt.want {
				t.Fatalf("compactPiece = %q…(%d units), want %q…(%d units)", head(got), units(got), head(tt.want), units(tt.want))
			}
		})
	}
}

// TestPreCompactInstructions: plain stdout of exit-0 PreCompact hooks is forwarded as
// plain stdout, each hook cut on its own, joined with a blank line in configuration
// order; a block, an error or a JSON answer is not instructions.
func TestPreCompactInstructions(t *testing.T) {
	ev := mustEvent(t, "PreCompact")
	long := strings.Repeat("z", 12000)
	tests := []struct {
		name       string
		hooks      []hook
		wantStdout string
		wantOutput string
		wantExit   int
	}{
		{"one hook", []hook{{"a", cmd(0, "Keep the API decisions.\n", "")}}, "Keep the API decisions.\n", "", 0},
		{"two joined in configuration order", []hook{{"a", cmd(0, "first\n", "")}, {"b", cmd(0, "", "")}, {"c", cmd(0, "  second  ", "")}},
			"first\n\nsecond\n", "", 0},
		{"each cut on its own", []hook{{"a", cmd(0, long, "")}, {"b", cmd(0, "short", "")}},
			strings.Repeat("z", 10000) + "\n\n[PreCompact hook [./a.sh] output cut: 12000 characters is over the 10000-character limit]\n\nshort\n", "", 0},
		{"failed hook adds nothing", []hook{{"a", cmd(1, "partial", "broke")}, {"b", cmd(0, "ok", "")}}, "ok\n", "", 0},
		{"json answer is not instructions", []hook{{"a", cmd(0, `{"systemMessage":"hi"}`, "")}}, "", "", 0},
		{"block wins", []hook{{"a", cmd(0, "text", "")}, {"b", cmd(2, "", "no compaction")}},
			"", `{"decision":"block","reason":"[./b.sh]: no compaction"}`, 0},
		{"continue:false needs JSON", []hook{{"a", cmd(0, "text", "")}, {"b", cmd(0, `{"continue":false,"stopReason":"S"}`, "")}},
			"", `{"continue":false,"stopReason":"S"}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mergeRender(ev, runHooks(t, ev, tt.hooks, nil))
			if res.Stdout != tt.wantStdout || string(res.Output) != tt.wantOutput || res.ExitCode != tt.wantExit {
				t.Fatalf("stdout %q output %s exit %d; want stdout %q output %s exit %d", head(res.Stdout), res.Output, res.ExitCode, head(tt.wantStdout), tt.wantOutput, tt.wantExit)
			}
			before := res.Stdout
			finalize(ev, res)
			if res.Stdout != before {
				t.Fatalf("Finalize is not idempotent: %q then %q", before, res.Stdout)
			}
		})
	}
}

func units(s string) int { return len(utf16.Encode([]rune(s))) }

func head(s string) string {
	if len(s) > 80 {
		return s[:40] + "…" + s[len(s)-40:]
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
