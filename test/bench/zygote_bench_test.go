package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 14's per-event benchmark: an unmodified Python guard on PreToolUse, as Claude Code
// would run it, against the same guard through hookc → hookd cold, prewarmed, forked from
// the zygote, and as a persistent worker; back to back (bursts of events with no pause,
// as a fast model sends them) and with 0.5 s between events. Wall time per event and the
// CPU time the whole process tree spent per event (the client, the daemon and everything
// under it, including reaped children). Variants are interleaved.
//
// HOOKD_ZYGOTE_ROUNDS (default 6) sets the rounds; HOOKD_BENCH_MD=BENCHMARKS.md writes the
// section. HOOKD_BENCH_BASELINE=/path/to/hookd adds the cold and zygote rows run by that
// binary (an earlier build), interleaved with the others: a before/after comparison in one
// run, on the same load. HOOKD_BENCH_ONLY=REGEXP keeps only the variants whose name
// matches (the first kept is the "vs" baseline).

// zygGuard is an unmodified guard of the usual shape: parse the event, check the command
// against a few patterns, block with exit 2 or allow silently.
const zygGuard = `import json, os, re, sys

DANGEROUS = [r"\brm\s+-rf\s+/", r"\bgit\s+push\s+--force\b", r"\bcurl\b.*\|\s*sh\b", r"\bchmod\s+777\b"]

def main():
    data = json.load(sys.stdin)
    if data.get("tool_name") not in ("Bash", "BenchPy", "BenchPyS", "BenchPyPool", "BenchPyShim"):
        return 0
    cmd = data.get("tool_input", {}).get("command", "")
    for pat in DANGEROUS:
        if re.search(pat, cmd):
            print("blocked by guard: " + pat, file=sys.stderr)
            return 2
    return 0

sys.exit(main())
`

const zygGuardWorker = `import json, re, sys
DANGEROUS = [r"\brm\s+-rf\s+/", r"\bgit\s+push\s+--force\b", r"\bcurl\b.*\|\s*sh\b", r"\bchmod\s+777\b"]
for line in sys.stdin:
    data = json.loads(line)
    cmd = data.get("tool_input", {}).get("command", "")
    code = 2 if any(re.search(p, cmd) for p in DANGEROUS) else 0
    sys.stdout.write(json.dumps({"exit_code": code, "stdout": "", "stderr": ""}) + "\n")
    sys.stdout.flush()
`

// treeCPU is the CPU time (user + system, including reaped children) of pid and all its
// live descendants.
func treeCPU(pid int) time.Duration {
	var ticks int64
	for _, p := range append([]int{pid}, Descendants(pid)...) {
		st := procStat(p)
		if len(st) < 15 {
			continue
		}
		for _, i := range []int{11, 12, 13, 14} {
			n, _ := strconv.ParseInt(st[i], 10, 64)
			ticks += n
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ = 100 on Linux
}

func BenchmarkPythonGuard(b *testing.B) {
	rounds := 6
	if v, err := strconv.Atoi(os.Getenv("HOOKD_ZYGOTE_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	const burst = 8
	_, hookc := Bins(b)
	shim, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("SKIP (loud): python3 not installed")
	}
	out, err := exec.Command(shim, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		b.Fatal(err)
	}
	real := strings.TrimSpace(string(out))
	if r, _ := filepath.EvalSymlinks(shim); r == real || strings.HasPrefix(readHead(shim), "\x7fELF") {
		shim = "" // python3 on PATH is the interpreter itself: no shim to measure
	}
	dir := b.TempDir()
	guard := filepath.Join(dir, "guard.py")
	worker := filepath.Join(dir, "guard_worker.py")
	os.WriteFile(guard, []byte(zygGuard), 0o644)
	os.WriteFile(worker, []byte(zygGuardWorker), 0o644)

	cmds := map[string]string{
		"BenchPy":     real + " " + guard,
		"BenchPyS":    real + " -S " + guard,
		"BenchPyPool": real + " -W default " + guard, // an option the zygote does not model: the prewarm pool serves it
	}
	if shim != "" {
		cmds["BenchPyShim"] = "python3 " + guard
	}
	cold := StartDaemon(b, DaemonOptions{Settings: settingsFor(cmds), HookdFile: true, Config: `{"prewarm": false}`})
	warm := StartDaemon(b, DaemonOptions{Settings: settingsFor(cmds), HookdFile: true})
	// The same zygote with the spares' pre-faulting off (docs/zygote.md, "Pre-faulting").
	noPF := StartDaemon(b, DaemonOptions{Settings: settingsFor(cmds), HookdFile: true, Env: []string{"HOOKD_ZYGOTE_PREFAULT=off"}})
	wcmd := real + " " + worker
	wcfg, _ := json.Marshal(map[string]any{"hooks": []any{map[string]any{"match": wcmd, "worker": true}}})
	workerD := StartDaemon(b, DaemonOptions{Settings: settingsFor(map[string]string{"BenchPy": wcmd}), HookdFile: true, Config: string(wcfg)})
	daemons := []*Daemon{cold, warm, noPF, workerD}
	var baseCold, baseWarm *Daemon
	if bin := os.Getenv("HOOKD_BENCH_BASELINE"); bin != "" {
		baseCold = StartDaemon(b, DaemonOptions{Settings: settingsFor(cmds), HookdFile: true, Config: `{"prewarm": false}`, Bin: bin})
		baseWarm = StartDaemon(b, DaemonOptions{Settings: settingsFor(cmds), HookdFile: true, Bin: bin})
		daemons = append(daemons, baseCold, baseWarm)
	}
	pids := []int{os.Getpid()}
	for _, d := range daemons {
		pids = append(pids, d.PID())
	}
	settle := func() { Settle(3*time.Second, pids...) }
	load0 := loadAvg()

	type variant struct {
		name string
		d    *Daemon // nil: spawned directly as Claude Code would
		tool string
		argv []string // direct spawn
	}
	env := func(d *Daemon) []string { return append(d.BaseEnv(), "CLAUDECODE=1") }
	variants := []variant{
		{name: "cold spawn, real interpreter path (as Claude Code)", tool: "BenchPy", argv: []string{"/bin/sh", "-c", cmds["BenchPy"]}},
		{name: "cold spawn, `python3 -S`, real path", tool: "BenchPyS", argv: []string{"/bin/sh", "-c", cmds["BenchPyS"]}},
	}
	if shim != "" {
		variants = append(variants, variant{name: "cold spawn through the pyenv shim (`python3` on PATH)", tool: "BenchPyShim", argv: []string{"/bin/sh", "-c", cmds["BenchPyShim"]}})
	}
	if baseCold != nil {
		variants = append(variants,
			variant{name: "baseline hookd: cold (`prewarm: false`)", d: baseCold, tool: "BenchPy"},
			variant{name: "baseline hookd: **zygote** (real path)", d: baseWarm, tool: "BenchPy"})
	}
	variants = append(variants,
		variant{name: "hookc → hookd, cold (`prewarm: false`)", d: cold, tool: "BenchPy"},
		variant{name: "hookc → hookd, prewarm pool (`-W default`)", d: warm, tool: "BenchPyPool"},
		variant{name: "hookc → hookd, **zygote** (real path)", d: warm, tool: "BenchPy"},
		variant{name: "hookc → hookd, zygote, pre-faulting off (`HOOKD_ZYGOTE_PREFAULT=off`)", d: noPF, tool: "BenchPy"},
		variant{name: "hookc → hookd, zygote, `python3 -S`", d: warm, tool: "BenchPyS"},
	)
	if shim != "" {
		variants = append(variants, variant{name: "hookc → hookd, zygote, `python3` = pyenv shim", d: warm, tool: "BenchPyShim"})
	}
	variants = append(variants, variant{name: "hookc → hookd, persistent worker", d: workerD, tool: "BenchPy"})
	if only := os.Getenv("HOOKD_BENCH_ONLY"); only != "" {
		// A subset, for a focused comparison with more rounds: variants whose name matches.
		re := regexp.MustCompile(only)
		variants = slices.DeleteFunc(variants, func(v variant) bool { return !re.MatchString(v.name) })
		if len(variants) == 0 {
			b.Fatalf("HOOKD_BENCH_ONLY=%q matches no variant", only)
		}
	}

	// one runs one event of v and returns its wall time and the CPU it cost.
	one := func(v variant) (time.Duration, time.Duration) {
		d := v.d
		if d == nil {
			d = warm
		}
		payload := d.Payload("PreToolUse-Bash", map[string]any{"tool_name": v.tool})
		var cmd *exec.Cmd
		if v.d == nil {
			cmd = exec.Command(v.argv[0], v.argv[1:]...)
		} else {
			cmd = exec.Command(hookc)
		}
		cmd.Env = env(d)
		cmd.Dir = d.Project
		cmd.Stdin = strings.NewReader(payload)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		var before time.Duration
		if v.d != nil {
			before = treeCPU(v.d.PID())
		}
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if err != nil {
			b.Fatalf("%s: %v\n%s%s", v.name, err, so.String(), se.String())
		}
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if v.d != nil {
			cpu += treeCPU(v.d.PID()) - before
		}
		return wall, cpu
	}
	// Warm-up: each hook's first event (cold by design), zygotes and workers start.
	for range 3 {
		for _, v := range variants {
			one(v)
		}
		settle()
	}
	forked0 := zygStat(warm, "forked")
	var baseForked0 float64
	if baseWarm != nil {
		baseForked0 = zygStat(baseWarm, "forked")
	}
	zyg0 := map[*Daemon]map[string]any{warm: zygManager(warm), noPF: zygManager(noPF)}

	type result struct {
		wall     Samples
		cpu      time.Duration
		n        int
		gap      Samples
		gapCPU   time.Duration
		gapCount int
	}
	res := make([]result, len(variants))
	t0 := time.Now()
	for range rounds {
		for i, v := range variants {
			settle()
			for range burst { // back to back
				w, c := one(v)
				res[i].wall = append(res[i].wall, w)
				res[i].cpu += c
				res[i].n++
			}
		}
	}
	b2bTook := time.Since(t0)
	for range rounds {
		for i, v := range variants {
			time.Sleep(500 * time.Millisecond)
			w, c := one(v)
			res[i].gap = append(res[i].gap, w)
			res[i].gapCPU += c
			res[i].gapCount++
		}
	}
	forked := zygStat(warm, "forked") - forked0
	zygEvents := 0
	for i, v := range variants {
		if v.d == warm && v.tool != "BenchPyPool" {
			zygEvents += res[i].n + res[i].gapCount
		}
	}
	if int(forked) != zygEvents {
		b.Errorf("zygote variants: %v of %d events were forked (ran_cold %v, last fallback %v)", forked, zygEvents, zygStat(warm, "ran_cold"), zygManager(warm)["last_fallback"])
	}
	for i, v := range variants {
		if baseWarm != nil && v.d == baseWarm {
			if n := zygStat(baseWarm, "forked") - baseForked0; int(n) != res[i].n+res[i].gapCount {
				b.Errorf("baseline zygote: %v of %d events were forked", n, res[i].n+res[i].gapCount)
			}
		}
	}

	var w strings.Builder
	fmt.Fprintf(&w, "\nCommand: `make bench` (this part alone: `go test -run '^$' -bench PythonGuard -benchtime 1x ./test/bench/`), %d rounds × %d events back to back and %d rounds with 0.5 s gaps per variant, variants interleaved. %s; %s. Load average (1 min) at start and end: %s, %s — the machine (2 CPUs) is shared with other engineers' builds and tests, so absolute figures are noisy; compare rows of one run.\n\n",
		rounds, burst, rounds, version(real, "--version"), version("uname", "-r"), load0, loadAvg())
	fmt.Fprintf(&w, "The hook: an unmodified Python guard (`json`, `re`; exit 2 blocks), on PreToolUse. CPU = user + system time of the client and of the daemon's whole process tree (zygote, forked and reaped children included), per event.\n\n")
	fmt.Fprintf(&w, "| variant | back to back p50 | p90 | CPU/event | vs cold spawn | 0.5 s gaps p50 | CPU/event | vs cold spawn |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	base, baseGap := res[0].wall.Quantile(0.5), res[0].gap.Quantile(0.5)
	for i, v := range variants {
		r := res[i]
		p50, g50 := r.wall.Quantile(0.5), r.gap.Quantile(0.5)
		fmt.Fprintf(&w, "| %s | %s | %s | %s | %.1f× | %s | %s | %.1f× |\n", v.name, Ms(p50), Ms(r.wall.Quantile(0.9)),
			Ms(r.cpu/time.Duration(r.n)), float64(base)/float64(p50), Ms(g50), Ms(r.gapCPU/time.Duration(r.gapCount)), float64(baseGap)/float64(g50))
	}
	fmt.Fprintf(&w, "\nForked events in the zygote rows: %v of %d (every one). Back-to-back phase took %s.\n", forked, zygEvents, b2bTook.Round(time.Second))
	// Per forked child, over its whole life (as a spare too; hookd's status counters):
	// minor page faults (MADV_POPULATE_WRITE counts its pages as faults too) and CPU.
	delta := func(d *Daemon, k string) float64 {
		f0, _ := zyg0[d][k].(float64)
		f1, _ := zygManager(d)[k].(float64)
		return f1 - f0
	}
	for _, r := range []struct {
		name string
		d    *Daemon
	}{{"pre-faulting on (real path, `-S` and shim rows together)", warm}, {"pre-faulting off", noPF}} {
		if n := delta(r.d, "children_exited"); n > 0 {
			fmt.Fprintf(&w, "Zygote children, %s: %.0f minor faults per child after its spare was ready (the event's path and exit), %.0f over its whole life, %.1f ms CPU per child over its whole life; %.0f pages pre-faulted per event, in %.0f of %.0f events.\n",
				r.name, delta(r.d, "child_event_faults")/max(1, delta(r.d, "children_reported")), delta(r.d, "child_minor_faults")/n, delta(r.d, "child_cpu_ms")/n,
				delta(r.d, "populated_pages")/n, delta(r.d, "prefaulted_events"), n)
		}
	}
	Section(b, "zygote", w.String())
}

func readHead(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 4)
	n, _ := f.Read(buf)
	return string(buf[:n])
}

func zygManager(d *Daemon) map[string]any {
	m, _ := d.Status()["zygote"].(map[string]any)
	return m
}

func zygStat(d *Daemon, name string) float64 {
	f, _ := zygManager(d)[name].(float64)
	return f
}
