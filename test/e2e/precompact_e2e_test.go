//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/test/claudeapi"
)

// PreCompact hooks' plain stdout becomes the compaction's custom instructions (Claude
// Code 2.1.314 cuts each hook's at 10,000 characters). The session is driven over
// stream-json input: one prompt, then "/compact"; the loopback model answers the
// compaction request with a <summary>. What the model was asked to summarise with is
// read from that request, natively and through hookd.
type preCompact struct {
	Name  string
	Hooks []hook
	// Want are texts the compaction request must carry (JSON-escaped as sent), both modes.
	Want   []string
	Counts map[string]int
}

var preCompacts = []preCompact{
	{Name: "precompact-two-hooks",
		Hooks: []hook{{Name: "a", Event: "PreCompact", Body: emit("NOTE-A keep the API decisions", "", 0)},
			{Name: "b", Event: "PreCompact", Matcher: "manual", Body: emit("NOTE-B keep the test plan", "", 0)},
			{Name: "auto", Event: "PreCompact", Matcher: "auto", Body: emit("NOTE-AUTO", "", 0)}},
		Want:   []string{`NOTE-A keep the API decisions\n\nNOTE-B keep the test plan`},
		Counts: map[string]int{"a": 1, "b": 1}},
	{Name: "precompact-failed-hook",
		Hooks: []hook{{Name: "a", Event: "PreCompact", Body: emit("NOTE-PARTIAL", "broke", 1)},
			{Name: "b", Event: "PreCompact", Body: emit("NOTE-OK", "", 0)}},
		Want:   []string{`NOTE-OK`},
		Counts: map[string]int{"a": 1, "b": 1}},
}

func TestClaudePreCompact(t *testing.T) {
	for _, pc := range preCompacts {
		t.Run(pc.Name, func(t *testing.T) {
			t.Parallel()
			native, nc := runPreCompact(t, pc, "native")
			hookd, hc := runPreCompact(t, pc, "hookd")
			for _, want := range pc.Want {
				if !strings.Contains(native, want) {
					t.Errorf("native compaction request lacks %q:\n%s", want, native)
				}
				if !strings.Contains(hookd, want) {
					t.Errorf("hookd compaction request lacks %q:\n%s", want, hookd)
				}
			}
			for _, s := range []string{"NOTE-AUTO", "NOTE-PARTIAL"} {
				if strings.Contains(native, s) != strings.Contains(hookd, s) {
					t.Errorf("%q reaches the compaction natively: %v, through hookd: %v", s, strings.Contains(native, s), strings.Contains(hookd, s))
				}
			}
			for name, want := range pc.Counts {
				if nc[name] != want || hc[name] != want {
					t.Errorf("hook %s ran %d times natively and %d through hookd; want %d", name, nc[name], hc[name], want)
				}
			}
		})
	}
}

// runPreCompact runs one session and returns the body of the compaction request (the
// main-loop request the <summary> answered) and the hook counts.
func runPreCompact(t *testing.T, pc preCompact, mode string) (string, map[string]int) {
	t.Helper()
	w, env := streamWorld(t, "hke2e-pc-", pc.Name, pc.Hooks, mode)
	srv := claudeapi.Start(t, []claudeapi.Turn{say("finished"), say("<summary>the summary</summary>")})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin.claude, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	cmd.Dir = w.Proj
	cmd.Env = append(env, "ANTHROPIC_BASE_URL="+srv.URL)
	cmd.Stdin = strings.NewReader(`{"type":"user","message":{"role":"user","content":"go"}}` + "\n" +
		`{"type":"user","message":{"role":"user","content":"/compact"}}` + "\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("%s: running claude: %v", mode, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%s: %d main-loop requests, want the prompt's and the compaction's:\n%s", mode, len(reqs), out.String())
	}
	return string(reqs[1]), countRuns(w)
}
