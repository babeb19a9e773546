// Package otlp ships hookd's decision records to an OpenTelemetry Collector as OTLP
// logs over HTTP: one LogRecord per audit record, the record's fields as attributes,
// the exact log line as the body.
//
// It is an audit.Sink: the audit.Shipper reads the hash-chained log, batches, retries
// and keeps the cursor; this package only encodes a batch and sends it once. The wire
// format is the OTLP protobuf types (go.opentelemetry.io/proto/otlp/logs/v1, whose
// LogsData is, by the OTLP specification, wire-identical to ExportLogsServiceRequest)
// encoded with google.golang.org/protobuf — binary for http/protobuf, protojson for
// http/json. The OpenTelemetry Go log SDK was not used: its exporter speaks only
// http/protobuf, owns a queue that drops records on overflow and retries on its own
// schedule, and links gRPC through the collector service package; hookd needs a
// synchronous "accepted or not" per batch to keep its cursor honest.
//
// # Configuration
//
// Config fields set in hookd's configuration win; the standard environment variables
// fill in the rest (OTEL_EXPORTER_OTLP_LOGS_* before OTEL_EXPORTER_OTLP_*):
// _ENDPOINT (base URL; "/v1/logs" is appended) and _LOGS_ENDPOINT (used as is),
// _HEADERS (k=v,k2=v2, values URL-encoded), _PROTOCOL (http/protobuf or http/json;
// grpc is refused with an error), _TIMEOUT (milliseconds), _COMPRESSION (gzip or none),
// and OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES for the resource.
//
// # Attributes
//
// Each LogRecord has event_name "hookd.decision" (or hookd.repair, hookd.checkpoint),
// the record's time, a severity (INFO for allow/none/defer/ask, WARN for deny/block/
// stop, ERROR for repairs) and attributes named "hookd.<json key>" — hookd.decision_id,
// hookd.seq, hookd.prev_hash, hookd.event, hookd.decision, hookd.reason,
// hookd.hooks (an array of maps with id, source, file, outcome, duration_ms, …),
// hookd.override, hookd.revision, hookd.harness — plus session.id. The resource names
// the machine and the account: service.name=hookd, service.version, host.name,
// user.name, user.id, process.pid.
package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"

	"github.com/hookd/hookd/daemon/audit"
)

// Protocols.
const (
	ProtocolProtobuf = "http/protobuf"
	ProtocolJSON     = "http/json"
)

// Config is the exporter's configuration; zero fields fall back to the environment,
// then to the OTLP defaults.
type Config struct {
	// Endpoint is the full logs URL (e.g. http://collector:4318/v1/logs).
	Endpoint string
	// Protocol is ProtocolProtobuf (default) or ProtocolJSON.
	Protocol string
	Headers  map[string]string
	Timeout  time.Duration // per request; default 10 s
	// Compression is "gzip" or "none" (default).
	Compression string
	// Resource attributes added to (and overriding) the defaults.
	Resource map[string]string
	// ServiceVersion is hookd's version, for service.version.
	ServiceVersion string
	// Client is the HTTP client (tests); nil means a default one.
	Client *http.Client
}

// Resolved is a Config after the environment and defaults were applied.
type Resolved struct {
	Endpoint    string
	Protocol    string
	Headers     map[string]string
	Timeout     time.Duration
	Compression string
	Resource    map[string]string
}

// Resolve applies the environment (getenv; os.Getenv when nil) and defaults to c.
func Resolve(c Config, getenv func(string) string) (Resolved, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	env := func(k string) string {
		if v := getenv("OTEL_EXPORTER_OTLP_LOGS_" + k); v != "" {
			return v
		}
		return getenv("OTEL_EXPORTER_OTLP_" + k)
	}
	r := Resolved{Endpoint: c.Endpoint, Protocol: c.Protocol, Timeout: c.Timeout, Compression: c.Compression,
		Headers: map[string]string{}, Resource: map[string]string{}}
	if r.Endpoint == "" {
		if v := getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"); v != "" {
			r.Endpoint = v
		} else if v := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
			r.Endpoint = strings.TrimRight(v, "/") + "/v1/logs"
		} else {
			r.Endpoint = "http://localhost:4318/v1/logs"
		}
	}
	u, err := url.Parse(r.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return r, fmt.Errorf("otlp endpoint %q: must be an http:// or https:// URL", r.Endpoint)
	}
	if r.Protocol == "" {
		r.Protocol = env("PROTOCOL")
	}
	switch r.Protocol {
	case "":
		r.Protocol = ProtocolProtobuf
	case ProtocolProtobuf, ProtocolJSON:
	case "grpc":
		return r, errors.New(`otlp protocol "grpc" is not supported: use "http/protobuf" or "http/json" (the collector's otlp receiver serves both on port 4318)`)
	default:
		return r, fmt.Errorf("otlp protocol %q: must be %q or %q", r.Protocol, ProtocolProtobuf, ProtocolJSON)
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS"} {
		h, err := parseList(getenv(k))
		if err != nil {
			return r, fmt.Errorf("%s: %w", k, err)
		}
		for k, v := range h {
			r.Headers[k] = v
		}
	}
	for k, v := range c.Headers {
		r.Headers[k] = v
	}
	if r.Timeout == 0 {
		if v := env("TIMEOUT"); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				return r, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT %q: must be a positive number of milliseconds", v)
			}
			r.Timeout = time.Duration(ms) * time.Millisecond
		} else {
			r.Timeout = 10 * time.Second
		}
	}
	if r.Compression == "" {
		r.Compression = env("COMPRESSION")
	}
	switch r.Compression {
	case "", "none":
		r.Compression = "none"
	case "gzip":
	default:
		return r, fmt.Errorf("otlp compression %q: must be \"gzip\" or \"none\"", r.Compression)
	}
	r.Resource = defaultResource(c.ServiceVersion)
	ra, err := parseList(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return r, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	for k, v := range ra {
		r.Resource[k] = v
	}
	if v := getenv("OTEL_SERVICE_NAME"); v != "" {
		r.Resource["service.name"] = v
	}
	for k, v := range c.Resource {
		r.Resource[k] = v
	}
	return r, nil
}

// parseList parses the OTEL "k=v,k2=v2" format (values percent-decoded).
func parseList(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", part)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		out[k] = dv
	}
	return out, nil
}

func defaultResource(version string) map[string]string {
	r := map[string]string{"service.name": "hookd", "process.pid": strconv.Itoa(os.Getpid())}
	if version != "" {
		r["service.version"] = version
	}
	if h, err := os.Hostname(); err == nil {
		r["host.name"] = h
	}
	if u, err := user.Current(); err == nil {
		r["user.name"], r["user.id"] = u.Username, u.Uid
	}
	if id, err := os.ReadFile("/etc/machine-id"); err == nil {
		if s := strings.TrimSpace(string(id)); s != "" {
			r["host.id"] = s
		}
	}
	return r
}

// Exporter is the OTLP/HTTP audit.Sink.
type Exporter struct {
	r      Resolved
	client *http.Client
	res    *resourcepb.Resource
	scope  *commonpb.InstrumentationScope
}

// New resolves c and returns an exporter.
func New(c Config) (*Exporter, error) {
	r, err := Resolve(c, nil)
	if err != nil {
		return nil, err
	}
	return NewResolved(r, c.Client, c.ServiceVersion), nil
}

// NewResolved returns an exporter for an already resolved configuration.
func NewResolved(r Resolved, client *http.Client, version string) *Exporter {
	if client == nil {
		client = &http.Client{}
	}
	e := &Exporter{r: r, client: client,
		scope: &commonpb.InstrumentationScope{Name: "github.com/hookd/hookd/daemon/audit", Version: version}}
	e.res = &resourcepb.Resource{}
	for _, k := range sortedKeys(r.Resource) {
		e.res.Attributes = append(e.res.Attributes, kv(k, str(r.Resource[k])))
	}
	return e
}

// Config reports the resolved configuration (for `hookd status` and logs).
func (e *Exporter) Config() Resolved { return e.r }

// Close releases idle connections.
func (e *Exporter) Close() error {
	e.client.CloseIdleConnections()
	return nil
}

// Export sends batch as one OTLP request. A 2xx answer is success, except that records
// the collector reports in partial_success.rejected_log_records are returned as an
// *audit.PermanentError, as are whole-batch 400 answers (the data itself is refused;
// retrying cannot help). Every other failure — network, 429, 5xx, 401/403/404 (a
// configuration that an admin can fix) — is an ordinary error: the shipper retries.
func (e *Exporter) Export(ctx context.Context, batch []audit.Entry) error {
	body, ctype, err := e.encode(batch)
	if err != nil {
		return &audit.PermanentError{Rejected: len(batch), Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, e.r.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.r.Endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("User-Agent", "hookd")
	if e.r.Compression == "gzip" {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range e.r.Headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode/100 == 2:
		rejected, msg := partialSuccess(data, resp.Header.Get("Content-Type"))
		if rejected > 0 {
			return &audit.PermanentError{Rejected: int(rejected), Err: fmt.Errorf("collector: %s", msg)}
		}
		return nil
	case resp.StatusCode == http.StatusBadRequest:
		return &audit.PermanentError{Rejected: len(batch), Err: fmt.Errorf("collector answered %s: %s", resp.Status, snippet(data))}
	default:
		err := fmt.Errorf("collector answered %s: %s", resp.Status, snippet(data))
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			if s, perr := strconv.Atoi(ra); perr == nil && s > 0 {
				return &RetryAfter{Wait: time.Duration(s) * time.Second, Err: err}
			}
		}
		return err
	}
}

// RetryAfter is a retryable failure whose server asked for a minimum wait.
type RetryAfter struct {
	Wait time.Duration
	Err  error
}

func (r *RetryAfter) Error() string { return fmt.Sprintf("%v (retry after %s)", r.Err, r.Wait) }
func (r *RetryAfter) Unwrap() error { return r.Err }

// MinRetryWait implements the shipper's hint interface.
func (r *RetryAfter) MinRetryWait() time.Duration { return r.Wait }

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

// partialSuccess reads ExportLogsServiceResponse.partial_success (field 1:
// rejected_log_records = 1, error_message = 2) from a protobuf or JSON answer, without
// linking the collector service package (and through it gRPC).
func partialSuccess(data []byte, ctype string) (int64, string) {
	if len(data) == 0 {
		return 0, ""
	}
	if strings.HasPrefix(ctype, "application/json") {
		var v struct {
			PartialSuccess struct {
				RejectedLogRecords json.Number `json:"rejectedLogRecords"`
				ErrorMessage       string      `json:"errorMessage"`
			} `json:"partialSuccess"`
		}
		if json.Unmarshal(data, &v) != nil {
			return 0, ""
		}
		n, _ := v.PartialSuccess.RejectedLogRecords.Int64()
		return n, v.PartialSuccess.ErrorMessage
	}
	var rejected int64
	var msg string
	walk(data, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) {
		if num == 1 && typ == protowire.BytesType {
			walk(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) {
				switch {
				case num == 1 && typ == protowire.VarintType:
					rejected = int64(x)
				case num == 2 && typ == protowire.BytesType:
					msg = string(v)
				}
			})
		}
	})
	return rejected, msg
}

func walk(b []byte, fn func(protowire.Number, protowire.Type, []byte, uint64)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			x, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return
			}
			fn(num, typ, nil, x)
			b = b[n:]
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return
			}
			fn(num, typ, v, 0)
			b = b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return
			}
			b = b[n:]
		}
	}
}

// encode builds the request body.
func (e *Exporter) encode(batch []audit.Entry) ([]byte, string, error) {
	sl := &logspb.ScopeLogs{Scope: e.scope, LogRecords: make([]*logspb.LogRecord, 0, len(batch))}
	now := uint64(time.Now().UnixNano())
	for _, en := range batch {
		sl.LogRecords = append(sl.LogRecords, LogRecord(en, now))
	}
	data := &logspb.LogsData{ResourceLogs: []*logspb.ResourceLogs{{Resource: e.res, ScopeLogs: []*logspb.ScopeLogs{sl}}}}
	var body []byte
	var err error
	ctype := "application/x-protobuf"
	if e.r.Protocol == ProtocolJSON {
		ctype = "application/json"
		// OTLP/JSON: enums as integers; protojson's lowerCamelCase names and
		// string-encoded 64-bit integers are what the specification asks for.
		body, err = protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(data)
	} else {
		body, err = proto.Marshal(data)
	}
	if err != nil {
		return nil, "", err
	}
	if e.r.Compression == "gzip" {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(body); err != nil {
			return nil, "", err
		}
		if err := zw.Close(); err != nil {
			return nil, "", err
		}
		body = buf.Bytes()
	}
	return body, ctype, nil
}

// LogRecord converts one audit entry.
func LogRecord(en audit.Entry, observed uint64) *logspb.LogRecord {
	r := en.Record
	lr := &logspb.LogRecord{
		TimeUnixNano:         uint64(r.Time.UnixNano()),
		ObservedTimeUnixNano: observed,
		EventName:            "hookd." + r.Kind,
		Body:                 str(string(en.Line)),
	}
	lr.SeverityNumber, lr.SeverityText = severity(r)
	a := &lr.Attributes
	add := func(k string, v *commonpb.AnyValue) { *a = append(*a, kv(k, v)) }
	addS := func(k, v string) {
		if v != "" {
			add(k, str(v))
		}
	}
	add("hookd.seq", i64(int64(r.Seq)))
	addS("hookd.prev_hash", r.PrevHash)
	addS("hookd.kind", r.Kind)
	addS("hookd.decision_id", r.DecisionID)
	addS("hookd.daemon_version", r.DaemonVersion)
	addS("hookd.event", r.Event)
	addS("session.id", r.SessionID)
	addS("hookd.session_id", r.SessionID)
	addS("hookd.tool_use_id", r.ToolUseID)
	addS("hookd.tool_name", r.ToolName)
	addS("hookd.cwd", r.Cwd)
	addS("hookd.project_dir", r.ProjectDir)
	if c := r.Caller; c != nil {
		add("hookd.caller.uid", i64(int64(c.UID)))
		add("hookd.caller.pid", i64(int64(c.PID)))
		addS("hookd.harness", c.Client)
	}
	addS("hookd.revision", r.Revision)
	if len(r.Sources) > 0 {
		var vs []*commonpb.AnyValue
		for _, s := range r.Sources {
			vs = append(vs, kvlist(kvS("file", s.File), kvS("source", s.Source), kvS("hash", s.Hash)))
		}
		add("hookd.sources", arr(vs))
	}
	addS("hookd.mode", r.Mode)
	if len(r.Hooks) > 0 {
		var vs []*commonpb.AnyValue
		var total float64
		for _, h := range r.Hooks {
			kvs := []*commonpb.KeyValue{kvS("id", h.ID), kvS("source", h.Source), kvS("file", h.File),
				kvS("matcher", h.Matcher), kvS("type", h.Type), kvS("command", h.Command),
				kvS("command_sha256", h.CommandSHA256), kvS("outcome", h.Outcome),
				kv("duration_ms", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: h.DurationMS}}),
				kvS("error", h.Error), kvS("decision", h.Decision)}
			if h.ExitCode != nil {
				kvs = append(kvs, kv("exit_code", i64(int64(*h.ExitCode))))
			}
			vs = append(vs, kvlist(kvs...))
			if h.DurationMS > total {
				total = h.DurationMS
			}
		}
		add("hookd.hooks", arr(vs))
		// The longest hook: parallel hooks overlap, so this is the hooks' share of the
		// answer's latency.
		add("hookd.hooks_duration_ms", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: total}})
	}
	addS("hookd.hook_decision", r.HookDecision)
	addS("hookd.decision", r.Decision)
	addS("hookd.decision_source", r.DecisionSource)
	addS("hookd.reason", r.Reason)
	if ra := r.RuleAnswer; ra != nil {
		add("hookd.rule_answer", kvlist(kvS("decision", ra.Decision), kvS("rule", ra.Rule), kvS("list", ra.List),
			kvS("file", ra.File), kvS("source", ra.Source), kvS("command", ra.Command), kvS("unresolved", ra.Unresolved)))
	}
	if o := r.Override; o != nil {
		add("hookd.override", kvlist(kvS("hook_decision", o.HookDecision), kvS("final", o.Final), kvS("rule", o.Rule),
			kvS("list", o.List), kvS("file", o.File), kvS("source", o.Source), kvS("command", o.Command),
			kvS("unresolved", o.Unresolved)))
	}
	if r.Kind == audit.KindDecision {
		add("hookd.exit_code", i64(int64(r.ExitCode)))
	}
	if len(r.Masked) > 0 {
		var vs []*commonpb.AnyValue
		for _, m := range r.Masked {
			vs = append(vs, str(m))
		}
		add("hookd.masked", arr(vs))
	}
	if rp := r.Repair; rp != nil {
		add("hookd.repair", kvlist(kvS("reason", rp.Reason), kvS("file", rp.File), kvS("detail", rp.Detail),
			kv("expected_seq", i64(int64(rp.ExpectedSeq))), kv("found_seq", i64(int64(rp.FoundSeq)))))
	}
	if r.Checkpoint != "" {
		addS("hookd.checkpoint", r.Checkpoint)
	}
	return lr
}

func severity(r *audit.Record) (logspb.SeverityNumber, string) {
	switch r.Kind {
	case audit.KindRepair:
		return logspb.SeverityNumber_SEVERITY_NUMBER_ERROR, "ERROR"
	case audit.KindDecision:
		switch r.Decision {
		case audit.DecisionDeny, audit.DecisionBlock, audit.DecisionStop:
			return logspb.SeverityNumber_SEVERITY_NUMBER_WARN, "WARN"
		}
	}
	return logspb.SeverityNumber_SEVERITY_NUMBER_INFO, "INFO"
}

func str(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

func i64(n int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}
}

func arr(vs []*commonpb.AnyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
}

func kv(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

func kvS(k, v string) *commonpb.KeyValue {
	if v == "" {
		return nil
	}
	return kv(k, str(v))
}

// kvlist builds a map value, leaving out nil (empty) entries.
func kvlist(kvs ...*commonpb.KeyValue) *commonpb.AnyValue {
	l := &commonpb.KeyValueList{}
	for _, x := range kvs {
		if x != nil {
			l.Values = append(l.Values, x)
		}
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: l}}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
