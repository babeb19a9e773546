package runner

import (
	"context"
	"github.com/hookd/hookd/test/testutil"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// shWorker is a worker in sh: it answers each event line with the event's length, the
// worker's pid and its generation (from a counter file), and misbehaves on request.
const shWorker = `
gen=$(cat "$GEN" 2>/dev/null || echo 0); gen=$((gen+1)); echo $gen > "$GEN"
echo "worker $$ up" >&2
while IFS= read -r line; do
  case "$line" in
    *crash*) echo "dying" >&2; exit 3 ;;
    *hang*) sleep 30 ;;
    *garbage*) echo "not json" ;;
    *extra*) printf '{"exit_code":0,"stdout":"a","stderr":""}\n{"exit_code":0,"stdout":"b","stderr":""}\n' ;;
    *block*) printf '{"exit_code":2,"stdout":"","stderr":"blocked by worker"}\n' ;;
    *) printf '{"exit_code":0,"stdout":"%s %s %s","stderr":"e"}\n' "${#line}" "$$" "$gen" ;;
  esac
done
`

func workerSpec(t *testing.T, dir string) ProcSpec {
	script := filepath.Join(dir, "worker.sh")
	if _, err := os.Stat(script); err != nil {
		if err := os.WriteFile(script, []byte(shWorker), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := append(testEnv(dir), "GEN="+filepath.Join(dir, "gen"))
	return ProcSpec{Command: "sh " + script, Dir: dir, Env: env, Worker: true, HookID: "w", HookRev: "1",
		Timeout: 5 * time.Second}
}

// wstat reads one of the pool's worker figures by its status name.
func wstat(p *Pool, name string) uint64 {
	s := p.Stats().Workers
	v, ok := map[string]uint64{
		"workers": uint64(s.Workers), "started": s.Started, "events": s.Events, "crashes": s.Crashes,
		"timeouts": s.Timeouts, "protocol_errors": s.ProtocolErrors,
	}[name]
	if !ok {
		panic("no worker figure " + name)
	}
	return v
}

func runEvent(p *Pool, spec ProcSpec, payload string) ProcResult {
	spec.Stdin = []byte(payload)
	return p.Run(context.Background(), spec)
}

// answer splits a normal answer: payload length, pid, generation.
func answer(t *testing.T, r ProcResult) (n, pid, gen int) {
	t.Helper()
	f := strings.Fields(string(r.Stdout))
	if r.ExitCode != 0 || r.StartErr != nil || len(f) != 3 {
		t.Fatalf("not a normal answer: exit %d err %v stdout %q stderr %q", r.ExitCode, r.StartErr, r.Stdout, r.Stderr)
	}
	n, _ = strconv.Atoi(f[0])
	pid, _ = strconv.Atoi(f[1])
	gen, _ = strconv.Atoi(f[2])
	return
}

func TestWorkerServesEventsInOneProcess(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{})
	spec := workerSpec(t, dir)
	var pid0 int
	for i := range 5 {
		// Pretty-printed JSON goes over as one compact line.
		payload := "{\n  \"i\": " + strconv.Itoa(i) + ",\n  \"s\": \"a b\"\n}"
		r := runEvent(p, spec, payload)
		n, pid, gen := answer(t, r)
		if n != len(`{"i":0,"s":"a b"}`) || gen != 1 || string(r.Stderr) != "e" {
			t.Fatalf("event %d: n=%d gen=%d stderr %q", i, n, gen, r.Stderr)
		}
		if i == 0 {
			pid0 = pid
		} else if pid != pid0 {
			t.Fatalf("event %d served by pid %d, first by %d", i, pid, pid0)
		}
	}
	if r := runEvent(p, spec, `{"block":1}`); r.ExitCode != 2 || string(r.Stderr) != "blocked by worker" {
		t.Fatalf("exit-2 answer: %+v", r)
	}
	if wstat(p, "started") != 1 {
		t.Fatalf("started %d", wstat(p, "started"))
	}
}

func TestWorkerCrashMidEventIsErrorAndRestarts(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{DeathBackoff: 10 * time.Millisecond})
	spec := workerSpec(t, dir)
	_, pid1, _ := answer(t, runEvent(p, spec, `{}`))
	r := runEvent(p, spec, `{"crash":true}`)
	if r.StartErr == nil || r.ExitCode == 0 || !strings.Contains(r.StartErr.Error(), "exit status 3") {
		t.Fatalf("crash mid-event: exit %d err %v", r.ExitCode, r.StartErr)
	}
	if !strings.Contains(string(r.Stderr), "dying") {
		t.Fatalf("crash result lacks the worker's stderr: %q", r.Stderr)
	}
	// Restarted in the background, before the next event asks.
	poll(t, 5*time.Second, "worker restarted", func() bool { return wstat(p, "started") == 2 })
	_, pid2, gen := answer(t, runEvent(p, spec, `{}`))
	if pid2 == pid1 || gen != 2 {
		t.Fatalf("after crash: pid %d (was %d) gen %d", pid2, pid1, gen)
	}
	poll(t, 5*time.Second, "crashed worker reaped", func() bool { return testutil.ProcessGone(pid1) })
}

func TestWorkerBackoffGrows(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{DeathBackoff: 100 * time.Millisecond})
	spec := workerSpec(t, dir)
	spec.Timeout = 10 * time.Second
	start := time.Now()
	for range 3 {
		if r := runEvent(p, spec, `{"crash":1}`); r.StartErr == nil {
			t.Fatalf("crash not reported: %+v", r)
		}
	}
	// Restarts waited 100ms, then 200ms.
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("three crashes in %v: no backoff", d)
	}
	answer(t, runEvent(p, spec, `{}`))
}

func TestWorkerTimeoutKillsAndReplaces(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{DeathBackoff: time.Millisecond})
	spec := workerSpec(t, dir)
	_, pid1, _ := answer(t, runEvent(p, spec, `{}`))
	spec.Timeout = 200 * time.Millisecond
	// The hung worker sleeps 30 s: only the timeout can end the event with TimedOut.
	r := runEvent(p, spec, `{"hang":1}`)
	if !r.TimedOut {
		t.Fatalf("not timed out: %+v", r)
	}
	poll(t, 5*time.Second, "hung worker gone", func() bool { return testutil.ProcessGone(pid1) })
	spec.Timeout = 5 * time.Second
	_, pid2, _ := answer(t, runEvent(p, spec, `{}`))
	if pid2 == pid1 {
		t.Fatal("not replaced")
	}
}

func TestWorkerProtocolErrors(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{DeathBackoff: time.Millisecond})
	spec := workerSpec(t, dir)
	if r := runEvent(p, spec, `{"garbage":1}`); r.StartErr == nil || !strings.Contains(r.StartErr.Error(), "invalid result line") {
		t.Fatalf("garbage: %+v", r)
	}
	answer(t, runEvent(p, spec, `{}`))
	// Two answers to one event: the second is found before the next event and the
	// worker is replaced rather than letting answers slip by one.
	if r := runEvent(p, spec, `{"extra":1}`); string(r.Stdout) != "a" {
		t.Fatalf("extra: %+v", r)
	}
	poll(t, 5*time.Second, "second line arrives", func() bool {
		p.workers.mu.Lock()
		defer p.workers.mu.Unlock()
		for _, w := range p.workers.m {
			w.sem <- struct{}{}
			n := 0
			if w.inst != nil {
				n = len(w.inst.lines)
			}
			<-w.sem
			return n == 1
		}
		return false
	})
	if r := runEvent(p, spec, `{}`); r.StartErr == nil || !strings.Contains(r.StartErr.Error(), "between events") {
		t.Fatalf("unsolicited line not caught: %+v", r)
	}
	answer(t, runEvent(p, spec, `{}`))
	if n := wstat(p, "protocol_errors"); n != 2 {
		t.Fatalf("protocol errors %d", n)
	}
}

func TestWorkerReplacedOnScriptEditAndRevision(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{})
	spec := workerSpec(t, dir)
	_, pid1, _ := answer(t, runEvent(p, spec, `{}`))
	script := filepath.Join(dir, "worker.sh")
	if err := os.WriteFile(script, []byte(strings.Replace(shWorker, `"e"`, `"E"`, 1)), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runEvent(p, spec, `{}`)
	if _, pid2, _ := answer(t, r); pid2 == pid1 || string(r.Stderr) != "E" {
		t.Fatalf("script edit not honoured: pid %d→%d stderr %q", pid1, pid2, r.Stderr)
	}
	spec.HookRev = "2"
	_, pid3, gen := answer(t, runEvent(p, spec, `{}`))
	if gen != 3 {
		t.Fatalf("revision change did not start a new worker: gen %d pid %d", gen, pid3)
	}
	poll(t, 5*time.Second, "old revision's worker stopped", func() bool { return wstat(p, "workers") == 1 })
}

func TestWorkerQueuesConcurrentEvents(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{})
	spec := workerSpec(t, dir)
	errs := make(chan string, 20)
	for i := range 20 {
		go func() {
			payload := `{"i":"` + strings.Repeat("x", i) + `"}`
			r := runEvent(p, spec, payload)
			f := strings.Fields(string(r.Stdout))
			if len(f) != 3 || f[0] != strconv.Itoa(len(payload)) {
				errs <- "event " + strconv.Itoa(i) + " got " + string(r.Stdout)
				return
			}
			errs <- ""
		}()
	}
	for range 20 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}
