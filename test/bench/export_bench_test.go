package bench

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/test/testutil"
)

// BenchmarkExportOverhead: are answers slower with the decision log exported? Events/s
// and median latency through real daemons side by side (alternating timed windows, as
// BenchmarkAuditThroughput): the decision log alone (fsync batch, the default), plus
// OTLP to a real OpenTelemetry Collector (test/fleet/build-otelcol.sh), plus OTLP to an
// endpoint where nothing listens (the exporter retrying the whole time), plus syslog
// over UDP. Each mode reports its cost against the log-only daemon of the same round.
// The no-hook setup is the worst case: an answer is only parse, match, record.
//
//	make bench BENCHTIME=1x   (or: go test -run '^$' -bench ExportOverhead -benchtime 1x ./test/bench/)
func BenchmarkExportOverhead(b *testing.B) {
	bins := buildOnce(b)
	col := startBenchCollector(b)
	dead := freeBenchPort(b)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer udp.Close()
	go func() { // a syslog sink that reads and drops
		buf := make([]byte, 64<<10)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	const withHook = `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cat >/dev/null"}]}]}}`
	const noHook = `{"hooks":{"PreToolUse":[{"matcher":"NoSuchTool","hooks":[{"type":"command","command":"true"}]}]}}`
	setups := []struct {
		name            string
		settings        string
		clients, events int
	}{
		// One client, events back to back: the latency an agent sees, not the throughput
		// of a saturated machine.
		{"command/clients=1", withHook, 1, 150},
		{"command/clients=8", withHook, 8, 400},
		{"nohook/clients=8", noHook, 8, 2000},
	}
	modes := []struct{ name, config string }{
		{"log", `{"audit":{"fsync":"batch"}}`},
		{"otlp", fmt.Sprintf(`{"audit":{"otlp":{"endpoint":"http://127.0.0.1:%d/v1/logs"}}}`, col)},
		{"otlp-down", fmt.Sprintf(`{"audit":{"otlp":{"endpoint":"http://127.0.0.1:%d/v1/logs","max_backoff_s":1}}}`, dead)},
		{"syslog-udp", fmt.Sprintf(`{"audit":{"syslog":{"network":"udp","address":%q}}}`, udp.LocalAddr().String())},
	}
	const rounds = 5
	for _, s := range setups {
		b.Run(s.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ds := make([]*auditDaemon, len(modes))
				for j, m := range modes {
					ds[j] = startAuditDaemon(b, bins, s.settings, m.config)
					ds[j].run(b, s.clients, 200)
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
					b.ReportMetric(median(rates[j]), m.name+"-events/s")
					b.ReportMetric(median(p50s[j]), m.name+"-µs/event(p50)")
					if j > 0 {
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

func freeBenchPort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startBenchCollector runs the fleet tests' collector (otlp receiver → file exporter)
// and returns its port; without it the benchmark skips, saying why.
func startBenchCollector(b *testing.B) int {
	bin := os.Getenv("HOOKD_OTELCOL_BIN")
	if bin == "" {
		root, _ := filepath.Abs(filepath.Join("..", ".."))
		out, err := exec.Command(filepath.Join(root, "test", "fleet", "build-otelcol.sh"), "--print-bin").Output()
		if err != nil {
			b.Skipf("SKIP (loud): no OpenTelemetry Collector (%v): export overhead not measured", err)
		}
		bin = strings.TrimSpace(string(out))
	}
	dir := b.TempDir()
	port := freeBenchPort(b)
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte(testutil.CollectorConfig(port, filepath.Join(dir, "out.jsonl"), "")), 0o644)
	cmd := exec.Command(bin, "--config", cfg)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	for deadline := time.Now().Add(60 * time.Second); ; {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return port
		}
		if time.Now().After(deadline) {
			b.Fatal("collector did not listen")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
