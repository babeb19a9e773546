package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/testutil"
)

// BenchmarkReloadLatency measures hot reload (issue #4) on a real daemon (`hookd serve`,
// real fsnotify, real files): 200 edits of .claude/settings.json while 4 clients send
// UserPromptSubmit events back to back on their own connections. Each version N of the
// file has two hooks printing "N-a" and "N-b"; latency is the time from the write (the
// rename, or the end of the in-place write) to the first answer that carries version N.
// The next edit is made once the previous one was seen. Every answer must carry exactly
// one version's two hooks (a mix would mean an event saw two snapshots) and no event may
// fail. Sub-benchmarks: "rename" (editor-style save: temp file + rename) and "in-place"
// (truncate and write).
//
//	go test -run '^$' -bench ReloadLatency -benchtime 1x ./test/bench/
func BenchmarkReloadLatency(b *testing.B) {
	bins := buildOnce(b)
	for _, mode := range []string{"rename", "in-place"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r := runReloadBench(b, bins, mode, 200, 4)
				b.ReportMetric(r.p(50), "p50-ms")
				b.ReportMetric(r.p(99), "p99-ms")
				b.ReportMetric(r.p(100), "max-ms")
				b.ReportMetric(percentile(r.swap, 50), "swap-p50-ms")
				b.ReportMetric(percentile(r.swap, 99), "swap-p99-ms")
				b.ReportMetric(float64(r.events)/r.took.Seconds(), "events/s")
				b.ReportMetric(float64(r.mixed), "mixed")
				b.ReportMetric(float64(r.failed), "failed")
				b.Logf("load average at start: %s", r.load)
				b.Logf("%s: %d edits, write → first answer with the new hooks p50 %.1f ms, p99 %.1f ms, max %.1f ms "+
					"(write → swap p50 %.0f ms, p99 %.0f ms); %d events (%.0f/s) from 4 clients, %d mixed, %d failed",
					mode, len(r.lat), r.p(50), r.p(99), r.p(100), percentile(r.swap, 50), percentile(r.swap, 99),
					r.events, float64(r.events)/r.took.Seconds(), r.mixed, r.failed)
				if r.mixed > 0 || r.failed > 0 {
					b.Fatalf("%d answers mixed two versions, %d events failed (first: %s)", r.mixed, r.failed, r.firstBad)
				}
			}
		})
	}
}

type reloadResult struct {
	swap          []time.Duration // write → the daemon's swap (from its log), sorted
	lat           []time.Duration // per edit, sorted
	events        int64
	mixed, failed int64
	took          time.Duration
	firstBad      string
	load          string // /proc/loadavg when the edits started: the machine may be shared
}

// p returns the q-th percentile latency in milliseconds (nearest rank).
func (r reloadResult) p(q float64) float64 { return percentile(r.lat, q) }

func percentile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	i := int(q/100*float64(len(ds))+0.5) - 1
	i = max(0, min(i, len(ds)-1))
	return float64(ds[i].Microseconds()) / 1000
}

func runReloadBench(b *testing.B, bins *binaries, mode string, edits, clients int) reloadResult {
	b.Helper()
	b.StopTimer()
	root := b.TempDir()
	sockDir, err := os.MkdirTemp("", "hkrl")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	home := filepath.Join(root, "home")
	proj := filepath.Join(home, "proj")
	settings := filepath.Join(proj, ".claude", "settings.json")
	sock := filepath.Join(sockDir, "hookd.sock")
	for _, d := range []string{filepath.Join(home, ".claude"), filepath.Join(root, "managed"), filepath.Dir(settings)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	version := func(n int) []byte {
		hs := []any{
			map[string]any{"type": "command", "command": fmt.Sprintf("echo %d-a", n)},
			map[string]any{"type": "command", "command": fmt.Sprintf("echo %d-b", n)},
		}
		data, _ := json.Marshal(map[string]any{"hooks": map[string]any{"UserPromptSubmit": []any{map[string]any{"hooks": hs}}}})
		return data
	}
	write := func(n int) {
		switch mode {
		case "rename":
			tmp := settings + ".tmp"
			if err := os.WriteFile(tmp, version(n), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.Rename(tmp, settings); err != nil {
				b.Fatal(err)
			}
		default:
			if err := os.WriteFile(settings, version(n), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	write(0)

	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(root, "xdg"),
		"XDG_STATE_HOME=" + filepath.Join(root, "xdg-state")}
	d := testutil.StartDaemon(b, testutil.DaemonOptions{Bin: bins.hookd, Socket: sock, Env: env,
		Args: []string{"--socket", sock, "--managed-dir", filepath.Join(root, "managed"),
			"--user-dir", filepath.Join(home, ".claude"), "--state-dir", filepath.Join(root, "state"), "serve"}})
	defer d.Stop()

	// seen[n] is the time the first answer carrying version n arrived.
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	seen := map[int]time.Time{}
	var events, mixed, failed atomic.Int64
	var firstBad atomic.Value
	bad := func(counter *atomic.Int64, what string) {
		counter.Add(1)
		firstBad.CompareAndSwap(nil, what)
	}
	payload, _ := json.Marshal(map[string]any{"session_id": "bench", "transcript_path": "", "cwd": proj,
		"hook_event_name": "UserPromptSubmit", "prompt": "hi"})
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := protocol.Dial(ctx, sock)
			if err != nil {
				bad(&failed, err.Error())
				return
			}
			defer cl.Close()
			req := &protocol.Request{Event: payload, ProjectDir: proj, Env: env, Options: protocol.Options{ResultOnly: true}}
			for ctx.Err() == nil {
				f, err := cl.Do(context.Background(), req, nil)
				events.Add(1)
				if err != nil || f.Result == nil {
					bad(&failed, fmt.Sprint("event: ", err))
					return
				}
				at := time.Now()
				res := f.Result
				for _, h := range res.Hooks {
					if h.Outcome != protocol.OutcomeOK {
						bad(&failed, fmt.Sprintf("hook %s: %s %s", h.Hook.Command, h.Outcome, h.Error))
					}
				}
				ctxs := append([]string(nil), res.AdditionalContext...)
				sort.Strings(ctxs)
				if len(ctxs) != 2 || !strings.HasSuffix(ctxs[0], "-a") || !strings.HasSuffix(ctxs[1], "-b") ||
					strings.TrimSuffix(ctxs[0], "-a") != strings.TrimSuffix(ctxs[1], "-b") {
					bad(&mixed, strings.Join(ctxs, ","))
					continue
				}
				n, _ := strconv.Atoi(strings.TrimSuffix(ctxs[0], "-a"))
				mu.Lock()
				if _, ok := seen[n]; !ok {
					seen[n] = at
					cond.Broadcast()
				}
				mu.Unlock()
			}
		}()
	}
	waitSeen := func(n int, deadline time.Duration) (time.Time, bool) {
		timer := time.AfterFunc(deadline, func() { mu.Lock(); cond.Broadcast(); mu.Unlock() })
		defer timer.Stop()
		end := time.Now().Add(deadline)
		mu.Lock()
		defer mu.Unlock()
		for {
			if t, ok := seen[n]; ok {
				return t, true
			}
			if time.Now().After(end) || failed.Load() > 0 {
				return time.Time{}, false
			}
			cond.Wait()
		}
	}
	if _, ok := waitSeen(0, 20*time.Second); !ok {
		stop()
		wg.Wait()
		b.Fatalf("the first version was never seen (%v)\n%s", firstBad.Load(), d.Logs())
	}

	var r reloadResult
	if l, err := os.ReadFile("/proc/loadavg"); err == nil {
		r.load = strings.TrimSpace(string(l))
	}
	var written []time.Time
	start := time.Now()
	b.StartTimer()
	for n := 1; n <= edits; n++ {
		write(n)
		wrote := time.Now()
		at, ok := waitSeen(n, 10*time.Second)
		if !ok {
			b.StopTimer()
			stop()
			wg.Wait()
			b.Fatalf("edit %d never seen within 10s (failed %d: %v)\n%s", n, failed.Load(), firstBad.Load(), d.Logs())
		}
		r.lat = append(r.lat, at.Sub(wrote))
		written = append(written, wrote)
	}
	b.StopTimer()
	r.took = time.Since(start)
	stop()
	wg.Wait()
	swaps := swapTimes(d.Logs())
	// One swap per edit (each edit changes the file and is seen before the next).
	if len(swaps) == len(written) {
		for i, at := range swaps {
			r.swap = append(r.swap, at.Sub(written[i]))
		}
	} else {
		b.Logf("%d swaps logged for %d edits; no write → swap figures", len(swaps), len(written))
	}
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	sort.Slice(r.swap, func(i, j int) bool { return r.swap[i] < r.swap[j] })
	r.events, r.mixed, r.failed = events.Load(), mixed.Load(), failed.Load()
	if v := firstBad.Load(); v != nil {
		r.firstBad = v.(string)
	}
	return r
}

// swapTimes returns the times of the daemon's "settings reloaded" log lines (one per
// project swap), in order. The log's timestamps have millisecond precision.
func swapTimes(logs string) []time.Time {
	var out []time.Time
	for _, line := range strings.Split(logs, "\n") {
		var rec struct {
			Msg string `json:"msg"`
			TS  string `json:"ts"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != "settings reloaded" {
			continue
		}
		if t, err := time.Parse("2006-01-02T15:04:05.000Z0700", rec.TS); err == nil {
			out = append(out, t)
		}
	}
	return out
}
