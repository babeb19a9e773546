package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

// Issue 7's benchmark: what an unmodified hook costs per event when Claude Code spawns it
// directly, through hookc → hookd cold, through hookc → hookd prewarmed, and as a
// persistent worker; hookc against a hello-world Go binary; the socket round trip;
// throughput; memory; sizes. Variants are interleaved round-robin in one run, and every
// measurement starts after the machine settled (Settle), so background work of one variant
// (a prewarmed interpreter starting) never lands in another's figure.
//
// HOOKD_BENCH_ROUNDS (default 40) sets the rounds of the per-hook comparison;
// HOOKD_BENCH_MD=BENCHMARKS.md writes the section into that file.

// The unmodified hooks: the smallest real hooks there are, a script file each.
const (
	warmPyHook = "import json,sys; json.load(sys.stdin)\n"
	warmJsHook = "JSON.parse(require('fs').readFileSync(0))\n"
	// The same work as persistent workers (docs/workers.md).
	warmPyWorker = "import json,sys\nfor line in sys.stdin:\n    json.loads(line)\n    sys.stdout.write('{\"exit_code\":0,\"stdout\":\"\",\"stderr\":\"\"}\\n')\n    sys.stdout.flush()\n"
	warmJsWorker = "const rl=require('readline').createInterface({input:process.stdin});\nrl.on('line',l=>{JSON.parse(l);process.stdout.write('{\"exit_code\":0,\"stdout\":\"\",\"stderr\":\"\"}\\n')});\n"
	// rawClient is the least a forwarder can do: one blocking socket, one request line, one
	// answer line, no flags, no rendering. The floor under hookc.
	rawClient = `package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"syscall"
)

func main() {
	p, _ := io.ReadAll(os.Stdin)
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		os.Exit(1)
	}
	if syscall.Connect(fd, &syscall.SockaddrUnix{Name: os.Getenv("HOOKD_SOCKET")}) != nil {
		os.Exit(1)
	}
	req, _ := json.Marshal(map[string]any{"v": 1, "event_text": string(p), "env": os.Environ(),
		"project_dir": os.Getenv("CLAUDE_PROJECT_DIR"), "options": map[string]any{"result_only": true}})
	_, _ = syscall.Write(fd, append(req, '\n'))
	var buf []byte
	b := make([]byte, 64<<10)
	for !bytes.Contains(buf, []byte("\n")) {
		n, err := syscall.Read(fd, b)
		if n <= 0 || err != nil {
			break
		}
		buf = append(buf, b[:n]...)
	}
	var f struct {
		Result *struct {
			Stdout   string ` + "`json:\"stdout\"`" + `
			ExitCode int    ` + "`json:\"exit_code\"`" + `
		} ` + "`json:\"result\"`" + `
	}
	if json.Unmarshal(buf, &f) != nil || f.Result == nil {
		os.Exit(1)
	}
	_, _ = os.Stdout.WriteString(f.Result.Stdout)
	os.Exit(f.Result.ExitCode)
}
`
	helloSrc = "package main\n\nimport (\n\t\"io\"\n\t\"os\"\n)\n\nfunc main() {\n\t_, _ = io.Copy(io.Discard, os.Stdin)\n\t_, _ = os.Stdout.WriteString(\"{}\\n\")\n}\n"
)

type lang struct {
	name, interp, hook, worker, tool string
}

func settingsFor(hooks map[string]string) string {
	var groups []any
	for tool, cmd := range hooks {
		groups = append(groups, map[string]any{"matcher": tool, "hooks": []any{map[string]any{"type": "command", "command": cmd}}})
	}
	groups = append(groups, map[string]any{"matcher": "True", "hooks": []any{map[string]any{"type": "command", "command": "true"}}})
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": groups}})
	return string(b)
}

func BenchmarkWarm(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the benchmark reads /proc")
	}
	rounds := 40
	if v, err := strconv.Atoi(os.Getenv("HOOKD_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	_, hookc := Bins(b)
	dir := b.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			b.Fatal(err)
		}
		return p
	}
	var langs []lang
	for _, l := range []lang{
		{name: "Python", interp: "python3", hook: write("hook.py", warmPyHook), worker: write("worker.py", warmPyWorker), tool: "BenchPy"},
		{name: "Node", interp: "node", hook: write("hook.js", warmJsHook), worker: write("worker.js", warmJsWorker), tool: "BenchJs"},
	} {
		if _, err := exec.LookPath(l.interp); err != nil {
			b.Logf("%s not installed: skipping %s", l.interp, l.name)
			continue
		}
		langs = append(langs, l)
	}
	helloBin, rawBin := filepath.Join(dir, "hello"), filepath.Join(dir, "rawclient")
	for bin, src := range map[string]string{helloBin: helloSrc, rawBin: rawClient} {
		if err := GoBuild(bin, write(filepath.Base(bin)+".go", src), dir); err != nil {
			b.Fatal(err)
		}
	}
	load0 := loadAvg()

	hookCmds, workerCmds, workerCfg := map[string]string{}, map[string]string{}, []any{}
	for _, l := range langs {
		hookCmds[l.tool] = l.interp + " " + l.hook
		workerCmds[l.tool] = l.interp + " " + l.worker
		workerCfg = append(workerCfg, map[string]any{"match": workerCmds[l.tool], "worker": true})
	}
	wcfg, _ := json.Marshal(map[string]any{"hooks": workerCfg})
	cold := StartDaemon(b, DaemonOptions{Settings: settingsFor(hookCmds), HookdFile: true, Config: `{"prewarm": false}`})
	warm := StartDaemon(b, DaemonOptions{Settings: settingsFor(hookCmds), HookdFile: true})
	worker := StartDaemon(b, DaemonOptions{Settings: settingsFor(workerCmds), HookdFile: true, Config: string(wcfg)})
	daemons := []*Daemon{cold, warm, worker}
	pids := []int{os.Getpid()}
	for _, d := range daemons {
		pids = append(pids, d.PID())
	}
	settle := func() {
		// A replacement waits out the pool's refill delay, then takes as long as its
		// interpreter needs — seconds on a loaded machine. Wait until every key the warm
		// daemon has seen has a process waiting and a zygote that was started is ready (a
		// condition, not a time), then for every process to be quiet. The bound only keeps
		// a pool that never refills from hanging the run; the hit check then reports it.
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			st := warm.Status()
			pw := func(n string) float64 { return statusNum(st, "prewarm", n) }
			zyg, _ := st["zygote"].(map[string]any)
			zon, _ := zyg["enabled"].(bool)
			if pw("starting") == 0 && pw("idle") >= pw("keys") &&
				(!zon || statusNum(st, "zygote", "started") == 0 || statusNum(st, "zygote", "zygotes") > 0) {
				break
			}
		}
		Settle(3*time.Second, pids...)
	}

	// spawn runs one process as a harness would: payload on stdin, stdout captured.
	spawn := func(env []string, payload string, name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(payload)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			b.Fatalf("%s %v: %v\n%s%s", name, args, err, out.String(), errb.String())
		}
		return d
	}
	hookcEnv := func(d *Daemon) []string { return append(d.BaseEnv(), "CLAUDECODE=1") }
	conns := map[*Daemon]*protocol.Client{}
	for _, d := range daemons {
		c, err := protocol.Dial(context.Background(), d.Socket)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns[d] = c
	}
	socket := func(d *Daemon, payload string) time.Duration {
		start := time.Now()
		f, err := conns[d].Do(context.Background(), d.Request(payload), nil)
		el := time.Since(start)
		if err != nil || f.Result == nil {
			b.Fatalf("socket event: %v %+v", err, f)
		}
		for _, h := range f.Result.Hooks {
			if h.Outcome != protocol.OutcomeOK {
				b.Fatalf("hook outcome %s: %s", h.Outcome, h.Error)
			}
		}
		return el
	}

	// 1. Per event, per language, round-robin.
	payloads := map[*Daemon]map[string]string{}
	for _, d := range daemons {
		payloads[d] = map[string]string{}
		for _, l := range langs {
			payloads[d][l.tool] = d.Payload("PreToolUse-Bash", map[string]any{"tool_name": l.tool})
		}
	}
	type variant struct {
		name, how string
		run       func(l lang) time.Duration
		prep      func(l lang) // before the machine settles
	}
	// The floor: the hook prewarmed by hand, no hookd: a blocked process gets the payload
	// and exits. What remains is the hook's own work after reading stdin plus its exit.
	var byHand *exec.Cmd
	var byHandIn io.WriteCloser
	floorPrep := func(l lang) {
		byHand = exec.Command("/bin/sh", "-c", l.interp+" "+l.hook)
		byHand.Env = hookcEnv(warm)
		byHandIn, _ = byHand.StdinPipe()
		if err := byHand.Start(); err != nil {
			b.Fatal(err)
		}
	}
	floorRun := func(l lang) time.Duration {
		start := time.Now()
		_, _ = io.WriteString(byHandIn, payloads[warm][l.tool])
		_ = byHandIn.Close()
		err := byHand.Wait()
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	variants := []variant{
		{"direct spawn (as Claude Code)", "`sh -c '%s %s' < payload`", func(l lang) time.Duration {
			return spawn(hookcEnv(warm), payloads[warm][l.tool], "/bin/sh", "-c", l.interp+" "+l.hook)
		}, nil},
		{"hookc → hookd, cold", "`hookc < payload`, hookd `{\"prewarm\": false}`", func(l lang) time.Duration {
			return spawn(hookcEnv(cold), payloads[cold][l.tool], hookc)
		}, nil},
		{"hookc → hookd, prewarmed", "`hookc < payload`, hookd default config", func(l lang) time.Duration {
			return spawn(hookcEnv(warm), payloads[warm][l.tool], hookc)
		}, nil},
		{"hookc → hookd, persistent worker", "`hookc < payload`, hook `\"worker\": true`", func(l lang) time.Duration {
			return spawn(hookcEnv(worker), payloads[worker][l.tool], hookc)
		}, nil},
		{"socket → hookd, prewarmed", "one request on an open connection", func(l lang) time.Duration {
			return socket(warm, payloads[warm][l.tool])
		}, nil},
		{"socket → hookd, persistent worker", "one request on an open connection", func(l lang) time.Duration {
			return socket(worker, payloads[worker][l.tool])
		}, nil},
		{"floor: prewarmed by hand, no hookd", "write payload to a blocked `sh -c '…'`, wait for exit", floorRun, floorPrep},
	}
	samples := map[string]Samples{}
	key := func(l lang, v variant) string { return l.name + "\x00" + v.name }
	// Warm-up: first sight of each key is cold by design; workers start.
	for _, l := range langs {
		for _, v := range variants {
			if v.prep != nil {
				v.prep(l)
			}
			settle()
			v.run(l)
		}
	}
	// A prewarmed-variant event is served warm either by a prewarmed process (prewarm
	// hits) or, for a Python hook, by a child forked from the zygote (docs/zygote.md):
	// counting only the pool's hits made this check fail by exactly the Python half.
	warmServed := func() float64 { return prewarmStat(warm, "hits") + zygoteStat(warm, "forked") }
	hitsBefore := warmServed()
	phase1 := time.Now()
	for range rounds {
		for _, l := range langs {
			for _, v := range variants {
				if v.prep != nil {
					v.prep(l)
				}
				settle()
				samples[key(l, v)] = append(samples[key(l, v)], v.run(l))
			}
		}
	}
	phase1Took := time.Since(phase1)
	warmHits := warmServed() - hitsBefore
	wantHits := float64(rounds * len(langs) * 2) // hookc and socket variants
	if warmHits != wantHits {
		b.Errorf("prewarmed variants were served warm %v times of %v; prewarm status: %v; zygote status: %v", warmHits, wantHits, warm.Status()["prewarm"], warm.Status()["zygote"])
	}

	// Idle cost of prewarming: the RSS of the processes waiting in the warm daemon.
	settle()
	idleRSS := 0
	idleProcs := 0
	for _, p := range Descendants(warm.PID()) {
		idleRSS += RSS(p)
		idleProcs++
	}

	// 2. hookc against a hello-world Go binary, interleaved. The event matches no hook.
	noHooks := warm.Payload("PreToolUse-Bash", map[string]any{"tool_name": "NoHooks"})
	var hookcS, helloS, rawS Samples
	settle()
	for range 300 {
		hookcS = append(hookcS, spawn(hookcEnv(warm), noHooks, hookc))
		helloS = append(helloS, spawn(hookcEnv(warm), noHooks, helloBin))
		rawS = append(rawS, spawn(hookcEnv(warm), noHooks, rawBin))
	}

	// 3 and 4 run on fresh daemons, one with the default configuration (the audit log on,
	// fsync "batch": every answer waits for its record to be durable) and one with the
	// audit log off, to tell the daemon's own cost from the audit's.
	for _, d := range daemons {
		d.Stop()
	}
	type config struct {
		name, json string
		d          *Daemon
		no, true_  string
		rtt, dial  Samples
		hot        Samples // back to back on one daemon: no wake-up from idle
		rssIdle    int
		rssLoad    int
		tp         map[int][2]float64 // clients → events/s without hooks, with one `true` hook
	}
	configs := []*config{
		{name: "default configuration (audit log on, fsync batch)"},
		{name: "audit log off (`{\"audit\": {\"enabled\": false}}`)", json: `{"audit": {"enabled": false}}`},
	}
	for _, c := range configs {
		c.d = StartDaemon(b, DaemonOptions{Settings: settingsFor(nil), Config: c.json})
		c.no = c.d.Payload("PreToolUse-Bash", map[string]any{"tool_name": "NoHooks"})
		c.true_ = c.d.Payload("PreToolUse-Bash", map[string]any{"tool_name": "True"})
		c.tp = map[int][2]float64{}
		cl, err := protocol.Dial(context.Background(), c.d.Socket)
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		conns[c.d] = cl
		for range 100 {
			socket(c.d, c.no) // warm-up
		}
	}
	time.Sleep(200 * time.Millisecond)
	for _, c := range configs {
		c.rssIdle = RSS(c.d.PID())
	}
	// 3. Socket round trip, no hooks: on an open connection, and dialling per event;
	// the two configurations interleaved.
	for range 3000 {
		for _, c := range configs {
			c.rtt = append(c.rtt, socket(c.d, c.no))
			start := time.Now()
			cl, err := protocol.Dial(context.Background(), c.d.Socket)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := cl.Do(context.Background(), c.d.Request(c.no), nil); err != nil {
				b.Fatal(err)
			}
			cl.Close()
			c.dial = append(c.dial, time.Since(start))
		}
	}
	// The interleaved figures include waking an idle daemon (as a sporadic hook event does);
	// back to back on one daemon shows the daemon's own work per event.
	for _, c := range configs {
		for range 3000 {
			c.hot = append(c.hot, socket(c.d, c.no))
		}
	}

	// 4. Throughput and memory: socket-direct clients on open connections.
	dur := 3 * time.Second
	throughput := func(c *config, payload string, clients int) float64 {
		var n atomic.Int64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		errc := make(chan error, clients)
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl, err := protocol.Dial(context.Background(), c.d.Socket)
				if err != nil {
					errc <- err
					return
				}
				defer cl.Close()
				for {
					select {
					case <-stop:
						return
					default:
					}
					f, err := cl.Do(context.Background(), c.d.Request(payload), nil)
					if err != nil || f.Result == nil {
						errc <- fmt.Errorf("%v %+v", err, f)
						return
					}
					n.Add(1)
				}
			}()
		}
		start := time.Now()
		done := make(chan struct{})
		go func() {
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					c.rssLoad = max(c.rssLoad, RSS(c.d.PID()))
				}
			}
		}()
		time.Sleep(dur)
		close(stop)
		wg.Wait()
		close(done)
		el := time.Since(start)
		close(errc)
		for err := range errc {
			b.Fatal(err)
		}
		return float64(n.Load()) / el.Seconds()
	}
	clientCounts := []int{1, 4, 16}
	for _, n := range clientCounts {
		for _, c := range configs {
			c.tp[n] = [2]float64{throughput(c, c.no, n), throughput(c, c.true_, n)}
		}
	}

	sizes := map[string]int64{}
	for name, p := range map[string]string{"hookc": hookc, "hello": helloBin, "hookd": filepath.Join(filepath.Dir(hookc), "hookd")} {
		if fi, err := os.Stat(p); err == nil {
			sizes[name] = fi.Size()
		}
	}

	// Report.
	var w strings.Builder
	fmt.Fprintf(&w, "## Latency and cold start (issue 7)\n\n")
	fmt.Fprintf(&w, "Produced by `make bench` (this section alone: `go test -run '^$' -bench Warm -benchtime 1x ./test/bench/`;\n"+
		"`HOOKD_BENCH_MD=BENCHMARKS.md` writes it here). Machine: %s, %d CPUs (`nproc`), %s; %s, %s. "+
		"Binaries built as `make build` does (`CGO_ENABLED=0 go build -trimpath -ldflags '-s -w'`). "+
		"Every figure below comes from the same run; variants were interleaved round-robin, each measurement "+
		"started after the machine settled (no process of any daemon using CPU), %d rounds, %s.\n\n",
		runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version(), version("python3", "--version"), "node "+version("node", "--version"),
		rounds, phase1Took.Round(time.Second))
	fmt.Fprintf(&w, "The hooks are unmodified script files: Python `%s`, Node `%s`. The payload is the captured Claude Code 2.1.330 "+
		"`PreToolUse-Bash.json` (%d bytes). Times are wall clock for the whole process as the harness sees it "+
		"(spawn, stdin, exit), or for one request on an open socket.\n\n",
		strings.TrimSpace(warmPyHook), strings.TrimSpace(warmJsHook), len(payloads[warm][langs[0].tool]))
	// The goals, judged on this run.
	yes := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**not met**"
	}
	w.WriteString("| Goal (issue 7) | This run | |\n|---|---|---|\n")
	for _, l := range langs {
		if l.name != "Python" {
			continue
		}
		d, p, f := samples[key(l, variants[0])].Quantile(0.5), samples[key(l, variants[2])].Quantile(0.5), samples[key(l, variants[6])].Quantile(0.5)
		r := float64(d) / float64(p)
		fmt.Fprintf(&w, "| Python hook prewarmed ≥ 20× faster than direct | %.1f× through `hookc` (%s → %s); the hook alone prewarmed by hand, no hookd: %.1f× | %s |\n",
			r, Ms(d), Ms(p), float64(d)/float64(f), yes(r >= 20))
	}
	fmt.Fprintf(&w, "| hookc ≤ 1.3× a hello-world Go binary | %.2f× (a minimal raw-socket client: %.2f×) | %s |\n",
		float64(hookcS.Quantile(0.5))/float64(helloS.Quantile(0.5)), float64(rawS.Quantile(0.5))/float64(helloS.Quantile(0.5)),
		yes(float64(hookcS.Quantile(0.5)) <= 1.3*float64(helloS.Quantile(0.5))))
	fmt.Fprintf(&w, "| socket round trip ≤ 0.1 ms p50 | interleaved: %s (decision log on), %s (off); back to back: %s (on), %s (off) | %s |\n",
		Ms(configs[0].rtt.Quantile(0.5)), Ms(configs[1].rtt.Quantile(0.5)), Ms(configs[0].hot.Quantile(0.5)), Ms(configs[1].hot.Quantile(0.5)),
		yes(configs[0].rtt.Quantile(0.5) <= 100*time.Microsecond))
	best := func(c *config, i int) (float64, int) {
		v, n := 0.0, 0
		for _, k := range clientCounts {
			if c.tp[k][i] > v {
				v, n = c.tp[k][i], k
			}
		}
		return v, n
	}
	d0, n0 := best(configs[0], 0)
	d1, n1 := best(configs[1], 0)
	fmt.Fprintf(&w, "| ≥ 20,000 events/s without hooks (2 CPUs) | best %s/s (%d clients, decision log on), %s/s (%d clients, off) | %s |\n",
		thousands(d0), n0, thousands(d1), n1, yes(d0 >= 20000))
	t0, m0 := best(configs[0], 1)
	fmt.Fprintf(&w, "| ≥ 1,000 events/s with one `true` hook | best %s/s (%d clients; one client: %s/s) | %s |\n\n",
		thousands(t0), m0, thousands(configs[0].tp[1][1]), yes(t0 >= 1000))

	for _, l := range langs {
		direct := samples[key(l, variants[0])].Quantile(0.5)
		fmt.Fprintf(&w, "**%s hook** (`%s %s`)\n\n| Variant | How | p50 | p90 | vs direct (p50) |\n|---|---|---:|---:|---:|\n", l.name, l.interp, filepath.Base(l.hook))
		for _, v := range variants {
			s := samples[key(l, v)]
			how := v.how
			if strings.Contains(how, "%s") {
				how = fmt.Sprintf(how, l.interp, filepath.Base(l.hook))
			}
			ratio := float64(direct) / float64(s.Quantile(0.5))
			r := fmt.Sprintf("%.1f× faster", ratio)
			if v.name == variants[0].name {
				r = "1×"
			} else if ratio < 1 {
				r = fmt.Sprintf("%.2f× (slower)", ratio)
			}
			fmt.Fprintf(&w, "| %s | %s | %s | %s | %s |\n", v.name, how, Ms(s.Quantile(0.5)), Ms(s.Quantile(0.9)), r)
		}
		w.WriteString("\n")
		b.ReportMetric(float64(direct)/float64(samples[key(l, variants[2])].Quantile(0.5)), "x-"+strings.ToLower(l.name)+"-prewarmed-vs-direct")
	}
	fmt.Fprintf(&w, "Prewarmed processes or zygote forks served %v of %v prewarmed-variant events. Idle cost: %d process(es) waiting in the "+
		"prewarmed daemon, %.1f MiB RSS together.\n\n", warmHits, wantHits, idleProcs, float64(idleRSS)/1024)

	hr := float64(hookcS.Quantile(0.5)) / float64(helloS.Quantile(0.5))
	fmt.Fprintf(&w, "**hookc overhead** (300 interleaved pairs, the event matches no hook; goal ≤ 1.3×)\n\n| Binary | p50 | p90 |\n|---|---:|---:|\n")
	fmt.Fprintf(&w, "| hello-world Go binary (reads stdin, prints `{}`), same build flags | %s | %s |\n", Ms(helloS.Quantile(0.5)), Ms(helloS.Quantile(0.9)))
	fmt.Fprintf(&w, "| `hookc < payload` → hookd → answer | %s | %s |\n", Ms(hookcS.Quantile(0.5)), Ms(hookcS.Quantile(0.9)))
	fmt.Fprintf(&w, "| **ratio hookc / hello** | **%.2f×** | |\n", hr)
	fmt.Fprintf(&w, "| reference: minimal raw-socket client (one blocking socket, no flags, no rendering) → hookd | %s | %s |\n", Ms(rawS.Quantile(0.5)), Ms(rawS.Quantile(0.9)))
	fmt.Fprintf(&w, "| ratio minimal client / hello (the floor for any forwarder on this machine) | %.2f× | |\n\n", float64(rawS.Quantile(0.5))/float64(helloS.Quantile(0.5)))
	b.ReportMetric(hr, "x-hookc-vs-hello")

	fmt.Fprintf(&w, "**Socket round trip** (no hooks; 3,000 requests per configuration, interleaved; goal ≤ 0.1 ms p50)\n\n"+
		"| Daemon configuration | Request | p50 | p90 | p99 |\n|---|---|---:|---:|---:|\n")
	for _, c := range configs {
		fmt.Fprintf(&w, "| %s | on an open connection | %s | %s | %s |\n", c.name, Ms(c.rtt.Quantile(0.5)), Ms(c.rtt.Quantile(0.9)), Ms(c.rtt.Quantile(0.99)))
		fmt.Fprintf(&w, "| %s | dial + request + close (what hookc does) | %s | %s | %s |\n", c.name, Ms(c.dial.Quantile(0.5)), Ms(c.dial.Quantile(0.9)), Ms(c.dial.Quantile(0.99)))
		fmt.Fprintf(&w, "| %s | back to back on an open connection (daemon busy, no wake-up from idle) | %s | %s | %s |\n", c.name, Ms(c.hot.Quantile(0.5)), Ms(c.hot.Quantile(0.9)), Ms(c.hot.Quantile(0.99)))
	}
	fmt.Fprintf(&w, "\nThe interleaved rows alternate between the two daemons, so every request wakes an idle process, as a sporadic hook event does; the back-to-back rows measure the daemon's own work per event.\n")
	b.ReportMetric(float64(configs[0].rtt.Quantile(0.5))/1e6, "ms-socket-p50")
	b.ReportMetric(float64(configs[1].rtt.Quantile(0.5))/1e6, "ms-socket-p50-noaudit")
	b.ReportMetric(float64(configs[1].hot.Quantile(0.5))/1e6, "ms-socket-p50-noaudit-hot")

	fmt.Fprintf(&w, "\n**Throughput** (socket-direct, each client one open connection sending events back to back for %v; "+
		"daemon and clients share the machine's %d CPUs; goals ≥ 20,000/s without hooks, ≥ 1,000/s with one `true` hook)\n\n"+
		"| Clients | no hooks, default | no hooks, audit off | one `true` hook, default | one `true` hook, audit off |\n|---:|---:|---:|---:|---:|\n", dur, runtime.NumCPU())
	for _, n := range clientCounts {
		fmt.Fprintf(&w, "| %d | %s/s | %s/s | %s/s | %s/s |\n", n, thousands(configs[0].tp[n][0]), thousands(configs[1].tp[n][0]),
			thousands(configs[0].tp[n][1]), thousands(configs[1].tp[n][1]))
	}
	// The anchors (research/peers.md §4a): their published claims, not reproduced here.
	var pyWorkerSock, pyWarmHookc time.Duration
	for _, l := range langs {
		if l.name == "Python" {
			pyWorkerSock = samples[key(l, variants[5])].Quantile(0.5)
			pyWarmHookc = samples[key(l, variants[2])].Quantile(0.5)
		}
	}
	fmt.Fprintf(&w, "\n**Against the anchors' claims.** These are the projects' own published figures, on their hardware, "+
		"not reproduced here. *clooks* (Node HTTP daemon on localhost, Claude Code `http` hooks) claims 34.6 ms → **0.31 ms per call** "+
		"(Apple Silicon): a daemon round trip with the handler in-process, no process spawned; the comparable hookd figure is the "+
		"socket round trip above, %s p50 with the decision log on (each answer waits for its fsync), %s with it off. "+
		"*claude-code-hooks-daemon* (Python, Unix socket, a bash forwarder per event) claims ≈21 ms → **under 1 ms** after "+
		"warm-up, for handlers written as its Python classes; the comparable hookd figure is a persistent Python worker over the "+
		"socket, %s p50 here. For hooks as users already have them neither anchor claims a figure (clooks runs them as `sh -c` per "+
		"call, the hooks-daemon does not run them); hookd runs them prewarmed in %s through `hookc` (Python, p50).\n",
		Ms(configs[0].rtt.Quantile(0.5)), Ms(configs[1].rtt.Quantile(0.5)), Ms(pyWorkerSock), Ms(pyWarmHookc))
	fmt.Fprintf(&w, "\n**Memory and size**\n\n| | |\n|---|---:|\n")
	for _, c := range configs {
		fmt.Fprintf(&w, "| hookd RSS idle (after 100 events), %s | %.1f MiB |\n", c.name, float64(c.rssIdle)/1024)
		fmt.Fprintf(&w, "| hookd RSS under load (max during the throughput runs), %s | %.1f MiB |\n", c.name, float64(c.rssLoad)/1024)
	}
	fmt.Fprintf(&w, "| hookc binary | %.2f MiB (%d bytes) |\n", float64(sizes["hookc"])/(1<<20), sizes["hookc"])
	fmt.Fprintf(&w, "| hookd binary | %.2f MiB |\n", float64(sizes["hookd"])/(1<<20))
	fmt.Fprintf(&w, "| hello-world Go binary | %.2f MiB |\n", float64(sizes["hello"])/(1<<20))
	fmt.Fprintf(&w, "\nLoad average (1 min) at the start and end of the run: %s, %s — the machine is shared with other work; ratios come from interleaved runs.\n", load0, loadAvg())
	Section(b, "warm", w.String())
}

func zygoteStat(d *Daemon, name string) float64  { return statusNum(d.Status(), "zygote", name) }
func prewarmStat(d *Daemon, name string) float64 { return statusNum(d.Status(), "prewarm", name) }

// statusNum reads one number of a part of a decoded `hookd status` answer (0 if absent).
func statusNum(st map[string]any, part, name string) float64 {
	m, _ := st[part].(map[string]any)
	f, _ := m[name].(float64)
	return f
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

func version(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return name + " (unknown version)"
	}
	return strings.TrimSpace(string(out))
}

func thousands(f float64) string {
	s := strconv.FormatInt(int64(f+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
