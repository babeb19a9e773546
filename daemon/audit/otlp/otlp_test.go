package otlp

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	logspb "go.opentelemetry.io/proto/otlp/logs/v1"

	"github.com/hookd/hookd/daemon/audit"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolveEnvironment(t *testing.T) {
	r, err := Resolve(Config{}, env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":     "https://col.example:4318/",
		"OTEL_EXPORTER_OTLP_HEADERS":      "authorization=Bearer%20abc, x-a=1",
		"OTEL_EXPORTER_OTLP_LOGS_HEADERS": "x-a=2",
		"OTEL_EXPORTER_OTLP_PROTOCOL":     "http/json",
		"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT": "2500",
		"OTEL_EXPORTER_OTLP_COMPRESSION":  "gzip",
		"OTEL_RESOURCE_ATTRIBUTES":        "deployment.environment=prod,service.name=x",
		"OTEL_SERVICE_NAME":               "hookd-fleet",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Endpoint != "https://col.example:4318/v1/logs" || r.Protocol != ProtocolJSON || r.Timeout != 2500*time.Millisecond || r.Compression != "gzip" {
		t.Fatalf("%+v", r)
	}
	if r.Headers["authorization"] != "Bearer abc" || r.Headers["x-a"] != "2" {
		t.Fatalf("headers %v", r.Headers)
	}
	if r.Resource["deployment.environment"] != "prod" || r.Resource["service.name"] != "hookd-fleet" || r.Resource["host.name"] == "" {
		t.Fatalf("resource %v", r.Resource)
	}
	// The logs-specific endpoint is used as is; hookd's own config wins over both.
	r, _ = Resolve(Config{}, env(map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://a:1/custom", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://b:2"}))
	if r.Endpoint != "http://a:1/custom" || r.Protocol != ProtocolProtobuf {
		t.Fatalf("%+v", r)
	}
	r, _ = Resolve(Config{Endpoint: "http://c:3/v1/logs", Protocol: ProtocolProtobuf}, env(map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://a:1/custom", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}))
	if r.Endpoint != "http://c:3/v1/logs" || r.Protocol != ProtocolProtobuf {
		t.Fatalf("config must win: %+v", r)
	}
	r, _ = Resolve(Config{}, env(nil))
	if r.Endpoint != "http://localhost:4318/v1/logs" {
		t.Fatalf("default endpoint %q", r.Endpoint)
	}
	for _, bad := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://x"},
		{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"},
		{"OTEL_EXPORTER_OTLP_TIMEOUT": "-1"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
	} {
		if _, err := Resolve(Config{}, env(bad)); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

func entry(seq uint64, decision string) audit.Entry {
	code := 2
	r := &audit.Record{V: 1, Kind: audit.KindDecision, Time: time.Unix(1700000000, 5), Seq: seq, PrevHash: "ab",
		DecisionID: "01ID" + decision, Event: "PreToolUse", SessionID: "s1", ToolName: "Bash", Decision: decision,
		Reason: "r", Caller: &audit.Caller{UID: 1000, PID: 7, Client: "hookc"}, Revision: "rev",
		Hooks: []audit.Hook{{ID: "h", Source: "user", File: "/home/u/.claude/settings.json", Outcome: "blocked", ExitCode: &code, DurationMS: 3}},
		Override: &audit.Override{HookDecision: "allow", Final: "deny", Rule: "Bash(rm:*)", List: "deny", File: "/etc/x",
			Command: "rm f", Unresolved: "command name is not a literal: `$x`"},
		RuleAnswer: &audit.Rule{Decision: "deny", Rule: "Bash(x)", List: "deny", Command: "x y", Unresolved: "u"}}
	return audit.Entry{Record: r, Line: []byte(`{"seq":` + "1" + `}`)}
}

// Each protocol sends what a collector decodes: the body is parsed back with the
// protobuf types, gzip is honoured, headers are sent.
func TestExportWireFormats(t *testing.T) {
	for _, tc := range []struct{ proto, comp string }{{ProtocolProtobuf, "none"}, {ProtocolJSON, "gzip"}} {
		var got logspb.LogsData
		var hdr http.Header
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hdr = r.Header
			var body io.Reader = r.Body
			if r.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(r.Body)
				if err != nil {
					t.Error(err)
					return
				}
				body = zr
			}
			data, _ := io.ReadAll(body)
			var err error
			if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				err = protojson.Unmarshal(data, &got)
			} else {
				err = proto.Unmarshal(data, &got)
			}
			if err != nil {
				t.Errorf("%s: collector-side decode: %v", tc.proto, err)
			}
		}))
		e, err := New(Config{Endpoint: srv.URL + "/v1/logs", Protocol: tc.proto, Compression: tc.comp, Headers: map[string]string{"x-tenant": "sec"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Export(context.Background(), []audit.Entry{entry(1, "deny"), entry(2, "allow")}); err != nil {
			t.Fatalf("%s: %v", tc.proto, err)
		}
		srv.Close()
		if hdr.Get("x-tenant") != "sec" {
			t.Errorf("%s: header not sent: %v", tc.proto, hdr)
		}
		lrs := got.GetResourceLogs()[0].GetScopeLogs()[0].GetLogRecords()
		if len(lrs) != 2 || lrs[0].SeverityNumber != logspb.SeverityNumber_SEVERITY_NUMBER_WARN || lrs[1].SeverityText != "INFO" {
			t.Fatalf("%s: records %v", tc.proto, lrs)
		}
		attrs := map[string]string{}
		for _, a := range lrs[0].Attributes {
			attrs[a.Key] = a.Value.String()
		}
		for _, k := range []string{"hookd.decision_id", "hookd.seq", "session.id", "hookd.hooks", "hookd.override", "hookd.harness", "hookd.revision", "hookd.reason"} {
			if attrs[k] == "" {
				t.Errorf("%s: attribute %s missing", tc.proto, k)
			}
		}
		// The rule override and the rule answer carry the simple command the rule matched
		// and what hookd could not resolve when it failed closed.
		for attr, want := range map[string]map[string]string{
			"hookd.override":    {"rule": "Bash(rm:*)", "command": "rm f", "unresolved": "command name is not a literal: `$x`", "file": "/etc/x"},
			"hookd.rule_answer": {"rule": "Bash(x)", "command": "x y", "unresolved": "u"},
		} {
			got := map[string]string{}
			for _, a := range lrs[0].Attributes {
				if a.Key == attr {
					for _, kv := range a.Value.GetKvlistValue().GetValues() {
						got[kv.Key] = kv.Value.GetStringValue()
					}
				}
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %s.%s = %q, want %q", tc.proto, attr, k, got[k], v)
				}
			}
		}
		if lrs[0].Body.GetStringValue() != `{"seq":1}` {
			t.Errorf("%s: body %v", tc.proto, lrs[0].Body)
		}
	}
}

// Failures are classified: 503/429 retry (with Retry-After), 400 and partial success
// are permanent, 2xx is success.
func TestExportAnswers(t *testing.T) {
	status, retryAfter, body := 0, "", []byte(nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(status)
		w.Write(body)
	}))
	defer srv.Close()
	e, _ := New(Config{Endpoint: srv.URL})
	batch := []audit.Entry{entry(1, "allow")}
	status = 503
	err := e.Export(context.Background(), batch)
	var perm *audit.PermanentError
	if err == nil || errors.As(err, &perm) {
		t.Fatalf("503: %v", err)
	}
	status, retryAfter = 429, "7"
	var ra *RetryAfter
	if err := e.Export(context.Background(), batch); !errors.As(err, &ra) || ra.Wait != 7*time.Second {
		t.Fatalf("429: %v", err)
	}
	status, retryAfter = 400, ""
	if err := e.Export(context.Background(), batch); !errors.As(err, &perm) {
		t.Fatalf("400: %v", err)
	}
	// ExportLogsServiceResponse{partial_success{rejected_log_records: 1, error_message: "bad"}}
	status, body = 200, []byte{0x0a, 0x07, 0x08, 0x01, 0x12, 0x03, 'b', 'a', 'd'}
	if err := e.Export(context.Background(), batch); !errors.As(err, &perm) || perm.Rejected != 1 || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("partial success: %v", err)
	}
	body = nil
	if err := e.Export(context.Background(), batch); err != nil {
		t.Fatalf("200: %v", err)
	}
	srv.Close()
	if err := e.Export(context.Background(), batch); err == nil || errors.As(err, &perm) {
		t.Fatalf("connection refused must be retryable: %v", err)
	}
}
