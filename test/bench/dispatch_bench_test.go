package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// hookd spawns `true`). Two more native rows give the exec form's floors: Claude Code
// spawning `true` directly (a small C program), and spawning a Go program that does
// nothing (the start every hookc run pays, Go's runtime, without the round trip). Whole
// sessions of the corpus benchmark's script (runCorpusSession, 8 tool calls, model
// answering at once), the modes in rotating order per round.
// Reported per mode: the median PreToolUse span Claude Code reports (first hook_started
// to last hook_response, in ms; also without each session's first, which pays more), hookd's own median time for the hook (its decision log),
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
	trueBin, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	// The two floors of the exec form, natively (no hookd): Claude Code spawning a small C
	// program, and spawning a Go program that does nothing, built as hookc is (Go's
	// runtime start, which every hookc run pays, without the round trip).
	noop := filepath.Join(b.TempDir(), "noop")
	if err := os.WriteFile(noop+".go", []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := GoBuild(noop, filepath.Base(noop)+".go", filepath.Dir(noop)); err != nil {
		b.Fatal(err)
	}
	execHook := func(command string) corpusSetup {
		return corpusSetup{id: "trivial-exec", prepare: func(w *corpusWorld) (map[string]map[string]any, error) {
			h := map[string]any{"type": "command", "command": command, "args": []string{}}
			return map[string]map[string]any{"user": {"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{h}}}}}}, nil
		}}
	}
	setups := map[string]corpusSetup{"native-true": execHook(trueBin), "native-go": execHook(noop)}
	modes := []string{"native", "native-true", "native-go", "hookd", "exec", "http"}
	type acc struct{ span, later, hook, wall, cpu []float64 }
	res := map[string]*acc{}
	for _, m := range modes {
		res[m] = &acc{}
	}
	load0 := loadAvg3()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			order := append(append([]string{}, modes[r%len(modes):]...), modes[:r%len(modes)]...)
			for _, mode := range order {
				setup, runMode := trivial, mode
				if s, ok := setups[mode]; ok {
					setup, runMode = s, "native"
				}
				run, err := runCorpusSession(b, claude, "", hookd, hookc, setup, runMode, 0, false)
				if err != nil {
					b.Fatalf("%s round %d: %v", mode, r, err)
				}
				a := res[mode]
				a.span = append(a.span, run.events["PreToolUse"]...)
				if ev := run.events["PreToolUse"]; len(ev) > 1 { // a session's first spawn pays more
					a.later = append(a.later, ev[1:]...)
				}
				a.hook = append(a.hook, run.hookdHooks["PreToolUse"]...)
				a.wall = append(a.wall, run.wall.Seconds())
				a.cpu = append(a.cpu, run.cpu().Seconds())
				b.Logf("%s round %d: wall %.2fs, CPU %.2fs, PreToolUse spans %v", mode, r, run.wall.Seconds(), run.cpu().Seconds(), run.events["PreToolUse"])
			}
		}
	}
	b.ReportMetric(0, "ns/op")
	var t strings.Builder
	fmt.Fprintf(&t, "Produced by `HOOKD_DISPATCH_ROUNDS=%d go test -run '^$' -bench '^BenchmarkForwarderDispatch$' -benchtime 1x ./test/bench/` on %d rounds of six sessions (8 tool calls each, the model answering at once, order rotating). Load average (1, 5, 15 min) at the start: %s; at the end: %s. The machine is shared: compare the rows of one run.\n\n", rounds, rounds, load0, loadAvg3())
	t.WriteString("| forwarder | PreToolUse as Claude Code reports it (median ms) | the same, the session's later events only | hookd's own time for the hook (median ms) | Claude Code's side (difference) | session wall (median s) | session CPU (median s) |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range modes {
		a := res[m]
		name := map[string]string{"native": "none (native `sh -c true`)", "native-true": "none (native, exec form: `true` spawned directly)", "native-go": "none (native, exec form: a Go program that does nothing, built as hookc is)", "hookd": "hookc, shell form (`sh -c 'hookc …'`) → Unix socket", "exec": "hookc, exec form (`args`, no shell) → Unix socket", "http": "http (`--transport http`)"}[m]
		hook, diff := "—", "—"
		if len(a.hook) > 0 {
			hook = fmt.Sprintf("%.1f", medianF(a.hook))
			diff = fmt.Sprintf("%.1f", medianF(a.span)-medianF(a.hook))
		}
		fmt.Fprintf(&t, "| %s | %.1f (n=%d) | %.1f (n=%d) | %s | %s | %.2f | %.2f |\n", name, medianF(a.span), len(a.span), medianF(a.later), len(a.later), hook, diff, medianF(a.wall), medianF(a.cpu))
	}
	Section(b, "dispatch", t.String())
}
