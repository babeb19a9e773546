//go:build fleet

package test

// Fleet tests against real outside engines: an OpenTelemetry Collector built from the
// Go module proxy (test/fleet/build-otelcol.sh) and Debian's rsyslog. They are slow and
// need those builds/installs, so they carry the "fleet" build tag and run from
// `make fleet`, once per CI run. Outside CI a missing tool skips LOUDLY; in CI (CI=true)
// the scripts install it or the test fails.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"

	"github.com/hookd/hookd/protocol"

	"github.com/hookd/hookd/test/testutil"
)

// otelcolBin builds (or finds in the cache) the collector.
func otelcolBin(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("HOOKD_OTELCOL_BIN"); b != "" {
		return b
	}
	cmd := exec.Command(filepath.Join(repoRoot(), "test", "fleet", "build-otelcol.sh"), "--print-bin")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("building the OpenTelemetry Collector failed in CI: %v", err)
		}
		t.Skipf("SKIP (loud): cannot build the OpenTelemetry Collector (%v); the OTLP export test did not run", err)
	}
	return strings.TrimSpace(string(out))
}

// collector is a running otelcol with the otlp receiver on 127.0.0.1:port and the file
// exporter writing to a fresh file per start.
type collector struct {
	t     *testing.T
	bin   string
	dir   string
	port  int
	runs  int
	cmd   *exec.Cmd
	done  chan struct{}
	logs  *syncBuffer
	files []string
}

func startCollector(t *testing.T) *collector {
	c := &collector{t: t, bin: otelcolBin(t), dir: t.TempDir(), port: freePort(t)}
	c.start()
	t.Cleanup(c.stop)
	return c
}

func (c *collector) endpoint() string { return fmt.Sprintf("http://127.0.0.1:%d/v1/logs", c.port) }

func (c *collector) start() {
	t := c.t
	t.Helper()
	c.runs++
	out := filepath.Join(c.dir, fmt.Sprintf("export-%d.jsonl", c.runs))
	c.files = append(c.files, out)
	cfg := filepath.Join(c.dir, fmt.Sprintf("config-%d.yaml", c.runs))
	yaml := testutil.CollectorConfig(c.port, out, "50ms")
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(c.bin, "--config", cfg)
	c.logs = &syncBuffer{}
	c.cmd.Stdout, c.cmd.Stderr = c.logs, c.logs
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	c.done = done
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); close(done) }(c.cmd)
	// Ready when the receiver accepts connections.
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", c.port))
		if err == nil {
			conn.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("collector exited at start:\n%s", c.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector did not listen within 60s:\n%s", c.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop shuts the collector down the way a service manager restarts it (SIGTERM: the
// receiver stops, the file exporter flushes).
func (c *collector) stop() {
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	c.cmd = nil
}

// exported is one LogRecord the collector wrote, with its resource attributes.
type exported struct {
	rec      *logspb.LogRecord
	resource map[string]string
}

func (x exported) attr(k string) *commonpb.AnyValue {
	for _, a := range x.rec.Attributes {
		if a.Key == k {
			return a.Value
		}
	}
	return nil
}

func (x exported) str(k string) string {
	if v := x.attr(k); v != nil {
		return v.GetStringValue()
	}
	return ""
}

// records reads every LogRecord from every run's file.
func (c *collector) records() []exported {
	c.t.Helper()
	var out []exported
	for _, f := range c.files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // not written yet
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var ld logspb.LogsData
			if err := protojson.Unmarshal(sc.Bytes(), &ld); err != nil {
				continue // a line being flushed
			}
			for _, rl := range ld.ResourceLogs {
				res := map[string]string{}
				for _, a := range rl.GetResource().GetAttributes() {
					res[a.Key] = a.Value.GetStringValue()
				}
				for _, sl := range rl.ScopeLogs {
					for _, lr := range sl.LogRecords {
						out = append(out, exported{rec: lr, resource: res})
					}
				}
			}
		}
	}
	return out
}

// localDecisions reads the daemon's own log: decision_id → seq.
func localDecisions(t *testing.T, e *Env) map[string]float64 {
	out := map[string]float64{}
	for _, r := range auditLines(t, e) {
		if r["kind"] == "decision" {
			out[r["decision_id"].(string)] = r["seq"].(float64)
		}
	}
	return out
}

// 1,000 decisions while the collector is restarted once: every decision reaches the
// collector (0 lost after retries); any duplicate carries the same decision id and the
// same line; each record has the attributes a SOC filters on; the shipped bodies still
// form the hash chain.
func TestFleetOTLPCollectorRestart(t *testing.T) {
	col := startCollector(t)
	e := NewEnv(t)
	writeHookdConfig(t, e, map[string]any{"audit": map[string]any{"otlp": map[string]any{
		"endpoint": col.endpoint(), "max_batch": 100, "max_backoff_s": 1,
	}}})
	e.WriteSettings("user", preToolUse(cmdHook("exit 0")))
	e.WriteSettings("project", `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"exit 0 # project"}]}]}}`)
	e.Start()

	const total, workers = 1000, 4
	var sent atomic.Int64
	var wg sync.WaitGroup
	restarted := make(chan struct{})
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := sent.Add(1)
				if i > total {
					return
				}
				payload := e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": fmt.Sprintf("toolu_%d", i),
					"tool_input": map[string]any{"command": fmt.Sprintf("echo %d", i)}, "session_id": fmt.Sprintf("sess-%d", w)})
				c, err := protocol.Dial(context.Background(), e.Socket)
				if err != nil {
					errs <- err
					return
				}
				var last *protocol.Frame
				_, err = c.Do(context.Background(), &protocol.Request{Event: json.RawMessage(payload), ProjectDir: e.Project, Env: e.BaseEnv(),
					Options: protocol.Options{Client: "fleet-test"}}, func(f *protocol.Frame) { last = f })
				c.Close()
				if err != nil || last == nil || last.Type != protocol.FrameResult {
					errs <- fmt.Errorf("event %d: %v %+v", i, err, last)
					return
				}
				if i == total/3 {
					close(restarted)
				}
			}
		}(w)
	}
	// Restart the collector once, a third of the way in; decisions keep coming while it
	// is down. (If the senders fail before that, wg.Wait below reports why.)
	sendersDone := make(chan struct{})
	go func() { wg.Wait(); close(sendersDone) }()
	select {
	case <-restarted:
	case <-sendersDone:
		t.Fatalf("senders stopped before the restart point: %v", <-errs)
	}
	col.stop()
	time.Sleep(300 * time.Millisecond) // let exports fail against a closed port
	col.start()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	local := localDecisions(t, e)
	if len(local) != total {
		t.Fatalf("the daemon's log holds %d decisions; want %d", len(local), total)
	}
	var recs []exported
	Eventually(t, 3*time.Minute, "every decision at the collector", func() bool {
		recs = col.records()
		seen := map[string]bool{}
		for _, x := range recs {
			seen[x.str("hookd.decision_id")] = true
		}
		for id := range local {
			if !seen[id] {
				time.Sleep(200 * time.Millisecond)
				return false
			}
		}
		return true
	})
	byID := map[string][]exported{}
	for _, x := range recs {
		if id := x.str("hookd.decision_id"); id != "" {
			byID[id] = append(byID[id], x)
		}
	}
	dups := 0
	for id, xs := range byID {
		if _, ok := local[id]; !ok {
			t.Errorf("collector has decision %s that the local log does not", id)
		}
		for _, x := range xs[1:] {
			dups++
			if x.rec.Body.GetStringValue() != xs[0].rec.Body.GetStringValue() {
				t.Errorf("duplicate of %s differs from the first copy", id)
			}
		}
	}
	t.Logf("collector runs: %d; %d decisions, %d log records received, %d duplicates (same decision id)", col.runs, len(local), len(recs), dups)

	// What a SOC sees on one record.
	x := byID[func() string {
		for id := range local {
			return id
		}
		return ""
	}()][0]
	for _, k := range []string{"hookd.decision_id", "session.id", "hookd.event", "hookd.tool_name", "hookd.decision",
		"hookd.revision", "hookd.harness", "hookd.prev_hash", "hookd.tool_use_id"} {
		if x.str(k) == "" {
			t.Errorf("attribute %s missing or empty on %v", k, x.rec.Attributes)
		}
	}
	if x.str("hookd.event") != "PreToolUse" || x.str("hookd.decision") == "" || x.str("hookd.harness") != "fleet-test" {
		t.Errorf("event/decision/harness = %q/%q/%q", x.str("hookd.event"), x.str("hookd.decision"), x.str("hookd.harness"))
	}
	if x.rec.EventName != "hookd.decision" || x.rec.TimeUnixNano == 0 {
		t.Errorf("event_name %q time %d", x.rec.EventName, x.rec.TimeUnixNano)
	}
	hooks := x.attr("hookd.hooks").GetArrayValue().GetValues()
	files := map[string]bool{}
	for _, h := range hooks {
		for _, kv := range h.GetKvlistValue().GetValues() {
			if kv.Key == "file" {
				files[kv.Value.GetStringValue()] = true
			}
		}
	}
	if !files[e.SettingsPath("user")] || !files[e.SettingsPath("project")] {
		t.Errorf("hooks name their files %v; want the user and project settings files", files)
	}
	host, _ := os.Hostname()
	if x.resource["service.name"] != "hookd" || x.resource["host.name"] != host || x.resource["user.name"] == "" {
		t.Errorf("resource %v", x.resource)
	}
	// The body is the exact audit line: its SHA-256 is the next record's prev_hash.
	bySeq := map[int64]exported{}
	for _, x := range recs {
		bySeq[x.attr("hookd.seq").GetIntValue()] = x
	}
	chained := 0
	for seq, x := range bySeq {
		if next, ok := bySeq[seq+1]; ok {
			sum := sha256.Sum256([]byte(x.rec.Body.GetStringValue()))
			if next.str("hookd.prev_hash") != hex.EncodeToString(sum[:]) {
				t.Fatalf("exported record %d does not chain to %d", seq+1, seq)
			}
			chained++
		}
	}
	if chained < total-1 {
		t.Errorf("only %d links checked", chained)
	}
	ex, _ := e.Status()["audit"].(map[string]any)["exporters"].([]any)
	if len(ex) != 1 || ex[0].(map[string]any)["name"] != "otlp" || ex[0].(map[string]any)["cursor"].(float64) < total {
		t.Errorf("hookd status audit.exporters = %v", ex)
	}
	t.Logf("exporter status: %v", ex)
}

// The standard OTEL_EXPORTER_OTLP_* variables alone configure the exporter, here with
// http/json and gzip: an empty "otlp" section turns it on.
func TestFleetOTLPJSONFromEnvironment(t *testing.T) {
	col := startCollector(t)
	e := NewEnv(t)
	writeHookdConfig(t, e, map[string]any{"audit": map[string]any{"otlp": map[string]any{}}})
	e.extraEnv = []string{
		fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", col.port),
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/json", "OTEL_EXPORTER_OTLP_COMPRESSION=gzip",
		"OTEL_RESOURCE_ATTRIBUTES=deployment.environment=fleet-test,team=sec",
	}
	e.WriteSettings("user", preToolUse(cmdHook("echo nope >&2; exit 2")))
	e.Start()
	for i := 0; i < 20; i++ {
		res, _ := e.Event(e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf /"}}))
		if res == nil {
			t.Fatal("no result")
		}
	}
	local := localDecisions(t, e)
	var recs []exported
	Eventually(t, time.Minute, "20 decisions at the collector", func() bool {
		recs = col.records()
		n := 0
		for _, x := range recs {
			if _, ok := local[x.str("hookd.decision_id")]; ok {
				n++
			}
		}
		if n < len(local) {
			time.Sleep(100 * time.Millisecond)
		}
		return n >= len(local)
	})
	x := recs[0]
	if x.resource["deployment.environment"] != "fleet-test" || x.resource["team"] != "sec" {
		t.Errorf("OTEL_RESOURCE_ATTRIBUTES not applied: %v", x.resource)
	}
	if x.str("hookd.decision") != "deny" && x.str("hookd.decision") != "block" {
		t.Errorf("decision %q; the hook exits 2", x.str("hookd.decision"))
	}
	if x.rec.SeverityText != "WARN" {
		t.Errorf("severity %q for a denied tool call", x.rec.SeverityText)
	}
}
