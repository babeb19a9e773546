package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/testutil"
)

// BenchmarkAuditThroughput measures events/s through a real daemon with the decision log
// off and on (each fsync policy; "batch" is the default), side by side, in two setups:
//
//   - command: one command hook on PreToolUse (`sh -c 'cat >/dev/null'`), the realistic
//     case — the hook's process start dominates;
//   - nohook: no hook matches, so an event is only parse, match, merge, record, answer —
//     the worst case for the log's share of the cost.
//
// Clients (8, and 32 for nohook) on persistent connections send PreToolUse events (≈1 KiB
// payloads) as fast as answers come back: with group commit, more concurrent callers
// share each fsync. The timed windows alternate between modes (seven rounds); each mode
// reports the median events/s, the median per-event latency, and its cost: the median
// over rounds of 1 − (its events/s ÷ audit=off's in the same round). The log lives on the
// same file system as the rest of the state (ext4 on the project machine).
//
//	make bench BENCHTIME=1x   (or: go test -run '^$' -bench AuditThroughput ./test/bench/)
func BenchmarkAuditThroughput(b *testing.B) {
	bins := buildOnce(b)
	const withHook = `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cat >/dev/null"}]}]}}`
	const noHook = `{"hooks":{"PreToolUse":[{"matcher":"NoSuchTool","hooks":[{"type":"command","command":"true"}]}]}}`
	setups := []struct {
		name     string
		settings string
		clients  int
		events   int // per timed window
	}{
		{"command/clients=8", withHook, 8, 600},
		{"command/clients=16", withHook, 16, 600},
		{"nohook/clients=8", noHook, 8, 3000},
		{"nohook/clients=32", noHook, 32, 3000},
	}
	modes := []struct{ name, config string }{
		{"off", `{"audit":{"enabled":false}}`},
		{"batch", `{"audit":{"fsync":"batch"}}`},
		{"always", `{"audit":{"fsync":"always"}}`},
		{"never", `{"audit":{"fsync":"never"}}`},
	}
	const rounds = 7
	for _, s := range setups {
		b.Run(s.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				// One daemon per mode, all started up front (an idle daemon costs nothing);
				// the timed windows then alternate between modes, so that drift in the
				// machine's speed lands on every mode alike.
				ds := make([]*auditDaemon, len(modes))
				for j, m := range modes {
					ds[j] = startAuditDaemon(b, bins, s.settings, m.config)
					ds[j].run(b, s.clients, 200) // warm up: settings loaded, prewarm pool filled
				}
				rates := make([][]float64, len(modes))
				p50s := make([][]float64, len(modes))
				for r := 0; r < rounds; r++ {
					for j := range modes {
						rate, p50 := ds[j].run(b, s.clients, s.events)
						rates[j], p50s[j] = append(rates[j], rate), append(p50s[j], p50)
					}
				}
				for j, m := range modes {
					ds[j].Stop()
					if m.name != "off" {
						if n := ds[j].records(b); n != 200+rounds*s.events {
							b.Fatalf("%s: %d records for %d events", m.name, n, 200+rounds*s.events)
						}
					}
					rate := median(rates[j])
					b.ReportMetric(rate, m.name+"-events/s")
					b.ReportMetric(median(p50s[j]), m.name+"-µs/event(p50)")
					if j > 0 {
						// Paired: each round's window against the audit=off window of the
						// same round, so a burst of load elsewhere hits both sides.
						var costs []float64
						for r := range rates[j] {
							costs = append(costs, 100*(1-rates[j][r]/rates[0][r]))
						}
						b.ReportMetric(median(costs), m.name+"-cost%")
					}
				}
				b.ReportMetric(0, "ns/op")
			}
		})
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

type auditDaemon struct {
	*testutil.Daemon
	root, sock, state string
	payload           []byte
}

func startAuditDaemon(b *testing.B, bins *binaries, settings, config string) *auditDaemon {
	b.Helper()
	root := b.TempDir()
	sockDir, err := os.MkdirTemp("", "hka")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(sockDir) })
	d := &auditDaemon{root: root, sock: filepath.Join(sockDir, "s"), state: filepath.Join(root, "state")}
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "home", "proj")
	for _, dir := range []string{filepath.Join(home, ".claude"), filepath.Join(proj, ".claude"), filepath.Join(root, "managed")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(filepath.Join(proj, ".claude", "settings.json"), settings)
	cfg := filepath.Join(root, "hookd.json")
	write(cfg, config)
	d.Daemon = testutil.StartDaemon(b, testutil.DaemonOptions{Bin: bins.hookd, Socket: d.sock, Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")},
		Args: []string{"--socket", d.sock, "--managed-dir", filepath.Join(root, "managed"), "--user-dir", filepath.Join(home, ".claude"), "--state-dir", d.state, "--config", cfg, "serve"}})
	d.payload, _ = json.Marshal(map[string]any{
		"session_id": "bench-session", "transcript_path": filepath.Join(home, ".claude", "projects", "p", "bench-session.jsonl"),
		"cwd": proj, "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_bench",
		"tool_input": map[string]any{"command": "grep -rn TODO src/ | head -50", "description": strings.Repeat("find the open TODOs ", 40)},
	})
	return d
}

// run sends n events from concurrent clients and returns events/s and the median
// per-event latency in µs.
func (d *auditDaemon) run(b *testing.B, clients, n int) (float64, float64) {
	b.Helper()
	var next sync.WaitGroup
	lat := make([][]time.Duration, clients)
	work := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		work <- struct{}{}
	}
	close(work)
	errs := make(chan error, clients)
	start := time.Now()
	for c := 0; c < clients; c++ {
		next.Add(1)
		go func() {
			defer next.Done()
			cl, err := protocol.Dial(context.Background(), d.sock)
			if err != nil {
				errs <- err
				return
			}
			defer cl.Close()
			for range work {
				t0 := time.Now()
				f, err := cl.Do(context.Background(), &protocol.Request{Event: d.payload, Options: protocol.Options{ResultOnly: true}}, nil)
				if err != nil {
					errs <- err
					return
				}
				if f.Result == nil || f.Result.DecisionID == "" {
					errs <- fmt.Errorf("answer without a decision: %+v", f)
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}()
	}
	next.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatalf("client: %v\n%s", err, d.Logs())
	}
	var all []float64
	for _, l := range lat {
		for _, x := range l {
			all = append(all, float64(x.Microseconds()))
		}
	}
	return float64(n) / elapsed.Seconds(), median(all)
}

// records counts the lines of the decision log.
func (d *auditDaemon) records(b *testing.B) int {
	data, err := os.ReadFile(filepath.Join(d.state, "audit", "decisions.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Count(data, []byte("\n"))
}
