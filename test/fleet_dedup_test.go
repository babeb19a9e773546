//go:build fleet

package test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
)

// lossyProxy sits between hookd and the real collector and loses answers on purpose:
// the request reaches the collector, which accepts it, but hookd does not learn so. It is
// the fault a collector restart mid-request causes by chance (TestFleetOTLPCollectorRestart
// saw none), forced.
type lossyProxy struct {
	t      *testing.T
	target string
	mu     sync.Mutex
	mode   string   // "pass"; "lose": forward, then answer 503 (once); "hold": forward, then never answer (once)
	batch  []string // decision ids of the request whose answer was lost
	held   chan struct{}
}

func (p *lossyProxy) set(mode string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode, p.batch, p.held = mode, nil, make(chan struct{})
}

func (p *lossyProxy) lost() ([]string, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.batch, p.held
}

func (p *lossyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req, _ := http.NewRequest(http.MethodPost, p.target, bytes.NewReader(body))
	for _, h := range []string{"Content-Type", "Content-Encoding"} {
		req.Header.Set(h, r.Header.Get(h))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p.mu.Lock()
	mode := p.mode
	var ids []string
	if mode != "pass" && resp.StatusCode == http.StatusOK {
		var ld logspb.LogsData
		if err := proto.Unmarshal(body, &ld); err != nil {
			p.t.Errorf("proxy: decoding the export request: %v", err)
		}
		for _, rl := range ld.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				for _, lr := range sl.LogRecords {
					for _, a := range lr.Attributes {
						if a.Key == "hookd.decision_id" {
							ids = append(ids, a.Value.GetStringValue())
						}
					}
				}
			}
		}
	}
	if len(ids) == 0 { // only a batch with decisions in it is lost
		mode = "pass"
	}
	if mode != "pass" {
		p.mode, p.batch = "pass", ids
		close(p.held)
	}
	p.mu.Unlock()
	switch mode {
	case "lose":
		http.Error(w, "answer lost", http.StatusServiceUnavailable)
	case "hold":
		<-r.Context().Done() // until hookd is gone
	default:
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		w.Write(answer)
	}
}

// At-least-once, forced: a batch the collector accepted but whose answer hookd never got
// is sent again — once after a 503 (the exporter's retry), once after hookd is killed
// before it could write its cursor (the restarted daemon resumes from the cursor) — and
// every copy at the real collector carries the same decision id, seq and body, so
// de-duplicating on hookd.decision_id gives back exactly the local log.
func TestFleetOTLPDuplicatesKeepDecisionID(t *testing.T) {
	col := startCollector(t)
	proxy := &lossyProxy{t: t, target: col.endpoint(), mode: "pass", held: make(chan struct{})}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	e := NewEnv(t)
	writeHookdConfig(t, e, map[string]any{"audit": map[string]any{"otlp": map[string]any{
		"endpoint": srv.URL + "/v1/logs", "max_batch": 50, "max_backoff_s": 1,
	}}})
	e.WriteSettings("user", preToolUse(cmdHook("exit 0")))
	e.Start()
	n := 0
	send := func(k int) {
		t.Helper()
		for i := 0; i < k; i++ {
			n++
			res, _ := e.Event(e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": fmt.Sprintf("toolu_%d", n),
				"tool_input": map[string]any{"command": fmt.Sprintf("echo %d", n)}}))
			if res == nil {
				t.Fatalf("event %d: no result", n)
			}
		}
	}
	// Everything so far at the collector, by decision id.
	settle := func(what string) map[string][]exported {
		t.Helper()
		byID := map[string][]exported{}
		Eventually(t, 3*time.Minute, what, func() bool {
			byID = map[string][]exported{}
			for _, x := range col.records() {
				if id := x.str("hookd.decision_id"); id != "" {
					byID[id] = append(byID[id], x)
				}
			}
			for id := range localDecisions(t, e) {
				if len(byID[id]) == 0 {
					time.Sleep(200 * time.Millisecond)
					return false
				}
			}
			return true
		})
		return byID
	}
	send(20)
	settle("the first decisions at the collector")

	// 1. The collector accepts a batch; hookd gets a 503 instead and retries it.
	proxy.set("lose")
	send(60)
	_, lost := proxy.lost()
	select {
	case <-lost:
	case <-time.After(2 * time.Minute):
		t.Fatal("no batch reached the proxy")
	}
	retried, _ := proxy.lost()
	settle("every decision after the lost answer")

	// 2. The collector accepts a batch; hookd is killed while waiting for the answer,
	// before its cursor moves; the restarted daemon resumes from the cursor.
	proxy.set("hold")
	send(60)
	_, held := proxy.lost()
	select {
	case <-held:
	case <-time.After(2 * time.Minute):
		t.Fatal("no batch reached the proxy")
	}
	resent, _ := proxy.lost()
	if err := e.daemon.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-e.exited
	e.daemon = nil
	e.Start()
	send(5)
	byID := settle("every decision after the restart")

	local := localDecisions(t, e)
	if len(local) != n {
		t.Fatalf("local log holds %d decisions; sent %d", len(local), n)
	}
	for id := range byID {
		if _, ok := local[id]; !ok {
			t.Errorf("collector has decision %s the local log does not", id)
		}
	}
	for name, ids := range map[string][]string{"after a 503": retried, "after a kill": resent} {
		if len(ids) == 0 {
			t.Fatalf("%s: no batch was lost; the test did not exercise the re-send", name)
		}
		for _, id := range ids {
			xs := byID[id]
			if len(xs) < 2 {
				t.Errorf("%s: decision %s reached the collector %d time(s); want a duplicate", name, id, len(xs))
				continue
			}
			for _, x := range xs[1:] {
				if x.str("hookd.decision_id") != id || x.attr("hookd.seq").GetIntValue() != xs[0].attr("hookd.seq").GetIntValue() ||
					x.rec.Body.GetStringValue() != xs[0].rec.Body.GetStringValue() {
					t.Errorf("%s: a copy of %s differs: seq %d vs %d", name, id, x.attr("hookd.seq").GetIntValue(), xs[0].attr("hookd.seq").GetIntValue())
				}
			}
			if int64(local[id]) != xs[0].attr("hookd.seq").GetIntValue() {
				t.Errorf("%s: %s has seq %d at the collector, %v locally", name, id, xs[0].attr("hookd.seq").GetIntValue(), local[id])
			}
		}
		t.Logf("%s: %d decision(s) re-sent, each duplicate with the same decision id, seq and body", name, len(ids))
	}
}
