package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkForwarderDispatch measures what each way of reaching hookd costs Claude Code
// per event, with a hook that does nothing (`true` on PreToolUse Bash, in the user's
// settings): natively (Claude Code spawns `sh -c true`), through hookd over hookc (Claude
// Code spawns `sh -c 'hookc …'` in the shell form, or hookc itself in the exec form; hookc
// forwards over the Unix socket, hookd spawns `true`), and
// through hookd over http (`hookd install --transport http`: Claude Code POSTs the event,
// hookd spawns `true`). Whole sessions of the corpus benchmark's script (runCorpusSession,
// 8 tool calls, model answering at once), the three modes in rotating order per round.
// Reported per mode: the median PreToolUse span Claude Code reports (first hook_started
// to last hook_response, in ms), hookd's own median time for the hook (its decision log),
// and the median session wall time and CPU seconds.
//
//	HOOKD_CLAUDE_BIN=… HOOKD_DISPATCH_ROUNDS=5 go test -run '^$' -bench '^BenchmarkForwarderDispatch$' -benchtime 1x -v ./test/bench/
//
// HOOKD_BENCH_MD=BENCHMARKS.md writes the table into that file's "dispatch" section.
func BenchmarkForwarderDispatch(b *testing.B) {
	claude := os.Getenv("HOOKD_CLAUDE_BIN")
	if claude == "" {
		b.Skip("SKIPPING the forwarder dispatch benchmark: HOOKD_CLAUDE_BIN must be set (make bench sets it)")
	}
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("HOOKD_DISPATCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	trivial := corpusSetup{id: "trivial", prepare: func(w *corpusWorld) (map[string]map[string]any, error) {
		return map[string]map[string]any{"user": {"hooks": map[string]any{"PreToolUse": []any{cmdHook("Bash", "true")}}}}, nil
	}}
	hookd, hookc := Bins(b)
	modes := []string{"native", "hookd", "exec", "http"}
	type acc struct{ span, hook, wall, cpu []float64 }
	res := map[string]*acc{}
	for _, m := range modes {
		res[m] = &acc{}
	}
	load0 := loadAvg3()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			order := append(append([]string{}, modes[r%len(modes):]...), modes[:r%len(modes)]...)
			for _, mode := range order {
				run, err := runCorpusSession(b, claude, "", hookd, hookc, trivial, mode, 0, false)
				if err != nil {
					b.Fatalf("%s round %d: %v", mode, r, err)
				}
				a := res[mode]
				a.span = append(a.span, run.events["PreToolUse"]...)
				a.hook = append(a.hook, run.hookdHooks["PreToolUse"]...)
				a.wall = append(a.wall, run.wall.Seconds())
				a.cpu = append(a.cpu, run.cpu().Seconds())
				b.Logf("%s round %d: wall %.2fs, CPU %.2fs, PreToolUse spans %v", mode, r, run.wall.Seconds(), run.cpu().Seconds(), run.events["PreToolUse"])
			}
		}
	}
	b.ReportMetric(0, "ns/op")
	var t strings.Builder
	fmt.Fprintf(&t, "Produced by `HOOKD_DISPATCH_ROUNDS=%d go test -run '^$' -bench '^BenchmarkForwarderDispatch$' -benchtime 1x ./test/bench/` on %d rounds of four sessions (8 tool calls each, the model answering at once, order rotating). Load average (1, 5, 15 min) at the start: %s; at the end: %s. The machine is shared: compare the rows of one run.\n\n", rounds, rounds, load0, loadAvg3())
	t.WriteString("| forwarder | PreToolUse as Claude Code reports it (median ms) | hookd's own time for the hook (median ms) | Claude Code's side (difference) | session wall (median s) | session CPU (median s) |\n|---|---:|---:|---:|---:|---:|\n")
	for _, m := range modes {
		a := res[m]
		name := map[string]string{"native": "none (native `sh -c true`)", "hookd": "hookc, shell form (`sh -c 'hookc …'`) → Unix socket", "exec": "hookc, exec form (`args`, no shell) → Unix socket", "http": "http (`--transport http`)"}[m]
		hook, diff := "—", "—"
		if len(a.hook) > 0 {
			hook = fmt.Sprintf("%.1f", medianF(a.hook))
			diff = fmt.Sprintf("%.1f", medianF(a.span)-medianF(a.hook))
		}
		fmt.Fprintf(&t, "| %s | %.1f (n=%d) | %s | %s | %.2f | %.2f |\n", name, medianF(a.span), len(a.span), hook, diff, medianF(a.wall), medianF(a.cpu))
	}
	Section(b, "dispatch", t.String())
}
