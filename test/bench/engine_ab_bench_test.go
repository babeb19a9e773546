package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

// BenchmarkEngineAB compares the daemon's own work per event between this tree's hookd and
// a baseline binary: the event matches no hook (a PreToolUse whose tool no hook names; the
// project's settings have a hook for another tool), the decision log is on (the default
// configuration: fsync "batch", so every answer waits for its record), requests go back to
// back on one open connection per daemon — the "0.424 ms p50" row of BENCHMARKS.md's
// socket round trip, as an A/B. The two daemons run side by side and are measured in
// alternating blocks (the order flips every round), so load on this shared machine falls
// on both alike. Reported per side: p50, p90 and p99 of the round trip, and the daemon's
// CPU time per event (utime+stime from /proc, clock ticks).
//
//	HOOKD_BASELINE_BIN=/path/to/old/hookd HOOKD_AB_ROUNDS=20 \
//	  go test -run '^$' -bench '^BenchmarkEngineAB$' -benchtime 1x -v ./test/bench/
//
// Build the baseline from another commit in its own worktree with `make build`. Without
// HOOKD_BASELINE_BIN the benchmark skips, saying so.
func BenchmarkEngineAB(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the benchmark reads /proc")
	}
	base := os.Getenv("HOOKD_BASELINE_BIN")
	if base == "" {
		b.Skip("SKIPPING the A/B engine benchmark: set HOOKD_BASELINE_BIN to a baseline hookd binary")
	}
	rounds, block := 20, 200
	if v, err := strconv.Atoi(os.Getenv("HOOKD_AB_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	type side struct {
		name  string
		d     *Daemon
		conn  *protocol.Client
		req   *protocol.Request
		rtt   Samples
		ticks int
	}
	sides := []*side{{name: "baseline (" + base + ")"}, {name: "this tree"}}
	for i, s := range sides {
		bin := ""
		if i == 0 {
			bin = base
		}
		s.d = StartDaemon(b, DaemonOptions{Settings: settingsFor(nil), Bin: bin})
		c, err := protocol.Dial(context.Background(), s.d.Socket)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		s.conn, s.req = c, s.d.Request(s.d.Payload("PreToolUse-Bash", map[string]any{"tool_name": "NoHooks"}))
	}
	event := func(s *side) time.Duration {
		start := time.Now()
		f, err := s.conn.Do(context.Background(), s.req, nil)
		el := time.Since(start)
		if err != nil || f.Result == nil || len(f.Result.Hooks) != 0 {
			b.Fatalf("%s: %v %+v", s.name, err, f)
		}
		return el
	}
	for _, s := range sides { // warm-up: the project's snapshot, the log's first segment
		for range block {
			event(s)
		}
	}
	load0 := loadAvg3()
	for i := 0; i < b.N; i++ {
		for r := range rounds {
			order := []*side{sides[r%2], sides[1-r%2]}
			for _, s := range order {
				t0 := cpuTicks(s.d.PID())
				for range block {
					s.rtt = append(s.rtt, event(s))
				}
				s.ticks += cpuTicks(s.d.PID()) - t0
			}
		}
	}
	var w strings.Builder
	fmt.Fprintf(&w, "**Engine A/B** (no hook matches, decision log on; back to back on an open connection; %d rounds × %d events per side, alternating; load average %s → %s)\n\n",
		rounds, block, load0, loadAvg3())
	fmt.Fprintf(&w, "| hookd | p50 | p90 | p99 | daemon CPU per event |\n|---|---:|---:|---:|---:|\n")
	for _, s := range sides {
		cpu := time.Duration(s.ticks) * (time.Second / 100) / time.Duration(len(s.rtt))
		fmt.Fprintf(&w, "| %s | %s | %s | %s | %s |\n", s.name, Ms(s.rtt.Quantile(0.5)), Ms(s.rtt.Quantile(0.9)), Ms(s.rtt.Quantile(0.99)), Ms(cpu))
	}
	ratio := float64(sides[1].rtt.Quantile(0.5)) / float64(sides[0].rtt.Quantile(0.5))
	fmt.Fprintf(&w, "\nthis tree / baseline, p50: %.2f×\n", ratio)
	Section(b, "engine-ab", w.String())
	b.ReportMetric(float64(sides[0].rtt.Quantile(0.5))/1e6, "ms-p50-baseline")
	b.ReportMetric(float64(sides[1].rtt.Quantile(0.5))/1e6, "ms-p50-tree")
}

// cpuTicks is a process's utime+stime in clock ticks (USER_HZ, 100 on Linux).
func cpuTicks(pid int) int {
	st := procStat(pid)
	if len(st) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(st[11])
	s, _ := strconv.Atoi(st[12])
	return u + s
}
