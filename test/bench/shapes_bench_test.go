package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/runner"
)

// BenchmarkLaunchShapes is issue 26 item 3's table: for each launch shape hookd runs cold
// or prewarms — bash and sh scripts, `node -e`, node scripts that visibly read stdin and
// ones that do not, npx (bunx and uvx when installed) — what one PreToolUse event costs
// natively (Claude Code spawns `/bin/sh -c '<command>'`) and through hookd (Claude Code
// spawns hookc in the exec form, hookd runs the command). The hook is the same small guard
// in every shape: read the event from stdin, parse it, exit 0. Per round, each shape runs
// natively and through hookd one after the other (which goes first alternates per
// round), back to back (a burst of 4) and then with 0.5 s gaps; the machine is settled
// before each burst. Wall per event (median) and CPU per event (client's rusage plus the
// daemon's whole process tree: hooks, spares, zygotes) are reported, and how hookd ran
// each shape (its prewarm counters).
//
//	HOOKD_SHAPES_ROUNDS=5 go test -run '^$' -bench '^BenchmarkLaunchShapes$' -benchtime 1x -v ./test/bench/
//
// The bunx and uvx rows need bun and uv on PATH (bun is on npm: `npm install --prefix DIR
// bun` and DIR/node_modules/.bin on PATH); without them those rows are left out, said so.
//
// HOOKD_BENCH_MD=BENCHMARKS.md writes the table into that file's "shapes" section.
func BenchmarkLaunchShapes(b *testing.B) {
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("HOOKD_SHAPES_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	const burst = 4
	_, hookc := Bins(b)
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("SKIPPING the launch-shape benchmark (loud): node is not installed")
	}
	const js = "JSON.parse(require('fs').readFileSync(0, 'utf8'))\n"
	type shape struct{ name, tool, cmd string }
	shapes := []shape{
		{"bash script (`bash guard.sh`)", "ShBash", "bash guard.sh"},
		{"sh script by path (`#!/bin/sh`)", "ShPosix", "./guard-posix.sh"},
		{"`node -e '…'`", "NodeE", node + ` -e "` + strings.TrimSpace(js) + `"`},
		{"node script that reads stdin visibly", "NodeScript", node + " guard.js"},
		{"node script that reads stdin through a package", "NodeQuiet", node + " quiet.js"},
		{"`npx --no-install guard-cli` (package in the project)", "Npx", "npx --no-install guard-cli"},
	}
	for _, l := range []struct{ bin, name, tool, cmd string }{
		{"bunx", "`bunx guard-cli`", "Bunx", "bunx guard-cli"},
		{"uvx", "`uvx` (a Python tool)", "Uvx", "uvx --offline guard"},
	} {
		if _, err := exec.LookPath(l.bin); err == nil {
			shapes = append(shapes, shape{l.name, l.tool, l.cmd})
		} else {
			b.Logf("%s is not installed here: its row is left out", l.bin)
		}
	}
	cmds := map[string]string{}
	for _, s := range shapes {
		cmds[s.tool] = s.cmd
	}
	// The commands are relative to the hooks' working directory, the project, natively and
	// through hookd; the files are written there before the first event.
	d := StartDaemon(b, DaemonOptions{Settings: settingsFor(cmds), HookdFile: true})
	dir := d.Project
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			b.Fatal(err)
		}
		return p
	}
	write("guard.sh", "#!/bin/bash\ninput=$(cat)\ncase \"$input\" in *'rm -rf /'*) echo blocked >&2; exit 2;; esac\n", 0o755)
	write("guard-posix.sh", "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in *'rm -rf /'*) echo blocked >&2; exit 2;; esac\n", 0o755)
	write("guard.js", js, 0o644)
	// A script that reads stdin through a package (not a relative path): the analysis
	// cannot see it read stdin, so hookd runs it cold.
	// (Its name must not contain the word "stdin": the analysis reads the script's text.)
	write("quiet.js", "require('event-guard')\n", 0o644)
	write("node_modules/event-guard/index.js", js, 0o644)
	write("node_modules/event-guard/package.json", `{"name":"event-guard","version":"1.0.0","main":"index.js"}`, 0o644)
	// A package's bin run through npx, as READMEs write it; installed in the project (the
	// hook's working directory), so npx runs it without the registry (--no-install).
	write("node_modules/guard-cli/cli.js", "#!/usr/bin/env node\n"+js, 0o755)
	write("node_modules/guard-cli/package.json", `{"name":"guard-cli","version":"1.0.0","bin":{"guard-cli":"cli.js"}}`, 0o644)
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", ".bin"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink("../guard-cli/cli.js", filepath.Join(dir, "node_modules", ".bin", "guard-cli")); err != nil {
		b.Fatal(err)
	}
	write("package.json", `{"name":"shapes","version":"1.0.0","private":true}`, 0o644)

	pids := []int{os.Getpid(), d.PID()}
	settle := func() { Settle(3*time.Second, pids...) }
	env := append(d.BaseEnv(), "CLAUDECODE=1")

	// one runs one event of s, natively or through hookd, and returns its wall time and CPU.
	one := func(s shape, viaHookd bool) (time.Duration, time.Duration) {
		payload := d.Payload("PreToolUse-Bash", map[string]any{"tool_name": s.tool})
		cmd := exec.Command("/bin/sh", "-c", s.cmd)
		if viaHookd {
			cmd = exec.Command(hookc)
		}
		cmd.Env, cmd.Dir, cmd.Stdin = env, d.Project, strings.NewReader(payload)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		before := treeCPU(d.PID())
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if err != nil || (viaHookd && strings.Contains(so.String(), `"deny"`)) {
			b.Fatalf("%s (hookd %v): %v\n%s%s", s.name, viaHookd, err, so.String(), se.String())
		}
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if viaHookd {
			cpu += treeCPU(d.PID()) - before
		}
		return wall, cpu
	}
	// Warm-up: each shape once both ways (hookd's first event of a key is cold by design).
	for _, s := range shapes {
		one(s, false)
		one(s, true)
	}
	settle()
	type acc struct {
		b2b, gap       []float64
		b2bCPU, gapCPU time.Duration
	}
	res := map[string]*[2]acc{}
	for _, s := range shapes {
		res[s.name] = &[2]acc{}
	}
	hits0 := prewarmStat(d, "hits")
	load0 := loadAvg3()
	t0 := time.Now()
	for r := range rounds {
		for _, s := range shapes {
			for _, via := range [][2]bool{{false, true}, {true, false}}[r%2] {
				a := &res[s.name][b2i(via)]
				settle()
				for range burst {
					w, c := one(s, via)
					a.b2b = append(a.b2b, float64(w)/1e6)
					a.b2bCPU += c
				}
				time.Sleep(500 * time.Millisecond)
				w, c := one(s, via)
				a.gap = append(a.gap, float64(w)/1e6)
				a.gapCPU += c
			}
		}
	}
	took := time.Since(t0)
	hits := prewarmStat(d, "hits") - hits0
	b.ReportMetric(0, "ns/op")

	var t strings.Builder
	fmt.Fprintf(&t, "Produced by `HOOKD_SHAPES_ROUNDS=%d go test -run '^$' -bench '^BenchmarkLaunchShapes$' -benchtime 1x ./test/bench/` (%s): %d rounds, per shape natively and through hookd side by side (which goes first alternating per round), each a burst of %d events back to back after the machine settled, then one event after a 0.5 s gap. Native: `/bin/sh -c '<command>'`, what Claude Code spawns for a command hook. hookd: hookc spawned directly (the exec form Claude Code 2.1.139+ gets from `hookd install`), hookd running the command. Load average (1, 5, 15 min) at the start: %s; at the end: %s; took %s. The machine (%s CPUs) is shared: compare the two columns of one row.\n\n",
		rounds, version(node, "--version"), rounds, burst, load0, loadAvg3(), took.Round(time.Second), version("nproc"))
	t.WriteString("| launch shape | how hookd runs it | back to back: native / hookd (ms, median) | ratio | CPU/event native / hookd (ms) | after 0.5 s: native / hookd (ms, median) | ratio | CPU/event native / hookd (ms) |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range shapes {
		n, h := res[s.name][0], res[s.name][1]
		safe, reason, _ := runner.AnalyzeCommand(runner.ProcSpec{Command: s.cmd, Dir: d.Project, Env: env, Prewarm: runner.PrewarmAuto})
		how := "cold: " + reason
		if reason == "node" || reason == "python" || reason == "ruby" {
			how = "cold: a " + reason + " script that does not visibly read stdin"
		}
		if safe {
			how = "prewarmed (" + reason + ")"
		}
		perB, perG := time.Duration(len(n.b2b)), time.Duration(len(n.gap))
		fmt.Fprintf(&t, "| %s | %s | %.0f / %.0f | %.2f× | %.0f / %.0f | %.0f / %.0f | %.2f× | %.0f / %.0f |\n", s.name, how,
			medianF(n.b2b), medianF(h.b2b), medianF(n.b2b)/medianF(h.b2b), float64(n.b2bCPU/perB)/1e6, float64(h.b2bCPU/perB)/1e6,
			medianF(n.gap), medianF(h.gap), medianF(n.gap)/medianF(h.gap), float64(n.gapCPU/perG)/1e6, float64(h.gapCPU/perG)/1e6)
	}
	fmt.Fprintf(&t, "\nRatio = native ÷ hookd (> 1: hookd faster). Prewarmed events through hookd during the measured rounds: %.0f.\n", hits)
	Section(b, "shapes", t.String())
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
