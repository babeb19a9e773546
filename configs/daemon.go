package configs

import (
	_ "embed"
	"errors"
	"fmt"
	"github.com/hookd/hookd/configs/internal/jsontree"
	"github.com/hookd/hookd/configs/settings"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/hookd/hookd/events"
)

// DaemonConfig is hookd's own configuration. It lives in hookd's own file, never in a
// Claude Code settings file (Claude Code ignores a whole settings file that has a key it
// does not know, spec §12).
type DaemonConfig struct {
	// Mode is "parallel" (default; Claude Code's behaviour, spec §3.5) or "sequential": a
	// pipeline in configured order where the first deny stops it and each hook sees the
	// previous hook's updatedInput.
	Mode string `json:"mode"`
	// Hooks are per-hook settings, matched by exact command string or handler ID.
	Hooks []HookOverride `json:"hooks"`
	// Prewarm is the global default for prewarming command hooks' processes: null (the
	// default) prewarms only hooks that are safe by construction (an interpreter running
	// a script that reads stdin; docs/performance.md), true prewarms every command hook,
	// false none. A hook's own "prewarm" wins.
	Prewarm *bool `json:"prewarm"`
	// KillProcessGroup is the global default for killing a hook's process group when
	// the hook exits (what it left running in the background): null or true kills it,
	// false leaves it. A hook's own "kill_process_group" wins. A timeout, a
	// cancellation and the daemon's death kill the group either way.
	KillProcessGroup *bool       `json:"kill_process_group"`
	Audit            AuditConfig `json:"audit"`
	// MaxRequestBytes limits one event payload (what hookc reads from stdin; the same
	// number on both sides). The request line carrying it may be longer — JSON escaping
	// and the environment — up to protocol.MaxRequestLine(MaxRequestBytes).
	MaxRequestBytes int `json:"max_request_bytes"`
	// Limits bound what callers can make the daemon hold (docs/reliability.md).
	Limits LimitsConfig `json:"limits"`
	// OutputCapBytes caps what is read from each of a hook's stdout and stderr.
	OutputCapBytes int `json:"output_cap_bytes"`
	// Settings are extra settings files, like Claude Code's --settings. Relative paths are
	// resolved against the config file's directory, "~/" against the home directory.
	Settings []string `json:"settings"`
	// Harnesses configure agents other than Claude Code (docs/harnesses/).
	Harnesses HarnessesConfig `json:"harnesses"`

	// Path is the file the config was loaded from; "" for the embedded default.
	Path string `json:"-"`
}

// HookOverride is hookd-specific behaviour for the handlers it matches.
type HookOverride struct {
	// Match is a handler's command string (as written, or its exec-form command line) or
	// its ID, compared exactly.
	Match string `json:"match"`
	// Prewarm forces prewarming of this hook on (true) or off (false); unset inherits
	// DaemonConfig.Prewarm.
	Prewarm *bool `json:"prewarm,omitempty"`
	// Worker runs the hook as a long-lived worker process speaking the line protocol of
	// docs/workers.md (one event JSON per line in, one result JSON per line out).
	Worker *bool `json:"worker,omitempty"`
	// OnTimeout is "ignore" (Claude Code's behaviour: a timeout is no decision, spec §4.1)
	// or "deny" (fail closed); "" means ignore.
	OnTimeout string `json:"on_timeout,omitempty"`
	// KillProcessGroup: false leaves what the hook started in the background running
	// after the hook exits (DaemonConfig.KillProcessGroup); unset inherits the global.
	KillProcessGroup *bool `json:"kill_process_group,omitempty"`
}

// KeepsProcessGroup reports whether the group of a hook with override o is left alone
// when the hook exits.
func (c *DaemonConfig) KeepsProcessGroup(o HookOverride) bool {
	if o.KillProcessGroup != nil {
		return !*o.KillProcessGroup
	}
	return c != nil && c.KillProcessGroup != nil && !*c.KillProcessGroup
}

// HarnessesConfig holds one HarnessConfig per harness hookd adapts.
type HarnessesConfig struct {
	Codex  HarnessConfig `json:"codex"`
	Gemini HarnessConfig `json:"gemini"`
}

// HarnessConfig is hookd's behaviour for events one harness sends.
type HarnessConfig struct {
	// PermissionRules: the permission rules of the Claude Code settings hierarchy
	// (permissions.allow/ask/deny) apply to this harness's tool calls — one policy for
	// every agent. nil means true; false opts the harness out (its hooks still run).
	PermissionRules *bool `json:"permission_rules"`
}

// For returns the configuration of harness name (zero for Claude Code and unknown names).
func (h HarnessesConfig) For(name string) HarnessConfig {
	switch name {
	case "codex":
		return h.Codex
	case "gemini":
		return h.Gemini
	}
	return HarnessConfig{}
}

// RulesApply reports whether Claude Code's permission rules apply (the default).
func (h HarnessConfig) RulesApply() bool { return h.PermissionRules == nil || *h.PermissionRules }

// LimitsConfig bounds the daemon's resources per caller and in total.
type LimitsConfig struct {
	// MaxConnectionsPerUID: open connections one uid may hold; more are answered with a
	// "busy" error frame and closed.
	MaxConnectionsPerUID int `json:"max_connections_per_uid"`
	// RequestReadTimeoutMS: once the first byte of a request line has arrived, the rest
	// of the line must arrive within this long; a half-sent request gets an error frame
	// and its connection is closed.
	RequestReadTimeoutMS int `json:"request_read_timeout_ms"`
	// IdleConnectionTimeoutMS: a connection with no request in flight and no byte of a
	// new one for this long is closed (a harness keeping a connection between turns
	// redials). Separate from the read timeout so that an agent idling between turns
	// keeps its connection while a half-sent request is still cut short.
	IdleConnectionTimeoutMS int `json:"idle_connection_timeout_ms"`
	// MaxInFlightRequestBytes: request bytes held across all connections at once;
	// a request that would exceed it is answered "busy" and its connection closed.
	MaxInFlightRequestBytes int `json:"max_inflight_request_bytes"`
	// MaxLiveProjects: projects (settings snapshots with their inotify watches) kept
	// loaded at once; beyond it the least recently used are evicted. An evicted project's
	// next event reads its settings from disk again.
	MaxLiveProjects int `json:"max_live_projects"`
	// ProjectIdleTimeoutMS: a project with no event for this long is evicted (unless its
	// settings have ConfigChange hooks, which need its files watched).
	ProjectIdleTimeoutMS int `json:"project_idle_timeout_ms"`
}

// AuditConfig configures the decision log.
type AuditConfig struct {
	Enabled       *bool      `json:"enabled"` // nil means true
	Path          string     `json:"path"`    // "" means the daemon's state directory
	Fsync         string     `json:"fsync"`   // "always" | "batch" | "never"
	MaxSizeMB     int        `json:"max_size_mb"`
	Retain        int        `json:"retain"`
	Mask          []MaskRule `json:"mask"`
	MaxFieldBytes int        `json:"max_field_bytes"`
	// OTLP ships every record to an OpenTelemetry Collector as a log record (docs/fleet.md);
	// present (even {}) means on, with the OTEL_EXPORTER_OTLP_* environment filling
	// whatever it leaves empty.
	OTLP *OTLPConfig `json:"otlp"`
	// Syslog ships every record as an RFC 5424 message; present means on.
	Syslog *SyslogConfig `json:"syslog"`
	// Checkpoint signs the chain head periodically with the admin's Ed25519 key.
	Checkpoint *CheckpointConfig `json:"checkpoint"`
}

// OTLPConfig configures the OTLP/HTTP exporter. Empty fields fall back to the standard
// OTEL_EXPORTER_OTLP_* variables, then to the OTLP defaults.
type OTLPConfig struct {
	Endpoint    string `json:"endpoint"`      // full logs URL, e.g. http://collector:4318/v1/logs
	Protocol    string `json:"protocol"`      // "http/protobuf" | "http/json"
	Headers     string `json:"headers"`       // "k=v,k2=v2", like OTEL_EXPORTER_OTLP_HEADERS
	TimeoutMS   int    `json:"timeout_ms"`    // per request
	Compression string `json:"compression"`   // "gzip" | "none"
	Resource    string `json:"resource"`      // extra resource attributes, "k=v,k2=v2"
	MaxBatch    int    `json:"max_batch"`     // records per request (default 512)
	MaxBackoffS int    `json:"max_backoff_s"` // longest wait between retries (default 30)
}

// SyslogConfig configures the RFC 5424 syslog exporter.
type SyslogConfig struct {
	// Network is "unixgram" (default; the local syslog socket), "unix" (stream), "udp"
	// or "tcp" (octet-counted framing, RFC 6587).
	Network string `json:"network"`
	// Address is the socket path or host:port; default /dev/log for unixgram.
	Address  string `json:"address"`
	Facility string `json:"facility"` // default "auth"
	AppName  string `json:"app_name"` // default "hookd"
	// MaxMessageBytes caps one message (default 8192, rsyslog's default); a longer
	// record keeps its structured data and a cut JSON body marked truncated.
	MaxMessageBytes int `json:"max_message_bytes"`
}

// CheckpointConfig configures signed checkpoints of the decision log.
type CheckpointConfig struct {
	// KeyFile holds the signer key (`hookd audit keygen` writes one), readable by hookd.
	KeyFile string `json:"key_file"`
	// IntervalS is how often a checkpoint is written while records arrive (default 60);
	// one is also written at rotation and at close.
	IntervalS int `json:"interval_s"`
}

// IsEnabled reports whether auditing is on (the default).
func (a AuditConfig) IsEnabled() bool { return a.Enabled == nil || *a.Enabled }

// MaskRule hides one field of recorded payloads.
type MaskRule struct {
	Path   string `json:"path"`   // dotted path, e.g. "tool_input.content"
	Action string `json:"action"` // "hash" | "drop"
}

// Daemon modes and override values.
const (
	ModeParallel    = "parallel"
	ModeSequential  = "sequential"
	OnTimeoutIgnore = "ignore"
	OnTimeoutDeny   = "deny"
)

//go:embed default.json
var defaultConfigJSON []byte

// DefaultDaemonConfig returns a fresh copy of the embedded default configuration.
func DefaultDaemonConfig() *DaemonConfig {
	c := &DaemonConfig{}
	if err := decodeDaemonConfig(c, "default.json", defaultConfigJSON); err != nil {
		// default.json is part of the binary and covered by tests; reaching this is a
		// build defect, not a configuration problem.
		panic("configs: embedded default.json: " + err.Error())
	}
	return c
}

// LoadDaemonConfig loads hookd's configuration from path, on top of the defaults (a key
// the file leaves out keeps its default). An empty path or a missing file yields the
// embedded default. Decoding is strict: unknown keys and wrong types are errors naming
// the field, line and column.
func LoadDaemonConfig(path string) (*DaemonConfig, error) {
	c := DefaultDaemonConfig()
	if path == "" {
		return c, nil
	}
	data, err := settings.ReadFile(path) // a FIFO or a hung mount must not wedge start-up or SIGHUP
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load config %s: %w", path, err)
	}
	if err := decodeDaemonConfig(c, path, data); err != nil {
		return nil, err
	}
	c.Path = path
	home, _ := os.UserHomeDir()
	for i, s := range c.Settings {
		s = settings.ExpandHome(s, home)
		if !filepath.IsAbs(s) {
			s = filepath.Join(filepath.Dir(path), s)
		}
		c.Settings[i] = s
	}
	return c, nil
}

func decodeDaemonConfig(c *DaemonConfig, path string, data []byte) error {
	root, _, err := jsontree.Parse(data)
	if err != nil {
		fe := &settings.FileError{File: path, Err: fmt.Errorf("invalid JSON: %w", err)}
		var se *jsontree.SyntaxError
		if errors.As(err, &se) {
			fe.Line, fe.Col = jsontree.LineCol(data, se.Off)
		}
		return fe
	}
	sd := &strictDecoder{path: path, data: data}
	if err := sd.decode(root, "", reflect.ValueOf(c).Elem()); err != nil {
		return err
	}
	return c.validate(path, sd)
}

func (c *DaemonConfig) validate(path string, sd *strictDecoder) error {
	bad := func(field, format string, args ...any) error {
		e := &settings.FileError{File: path, Field: field, Err: fmt.Errorf(format, args...)}
		if n := sd.at[field]; n != nil {
			e.Line, e.Col = jsontree.LineCol(sd.data, n.Start)
		}
		return e
	}
	if c.Mode != ModeParallel && c.Mode != ModeSequential {
		return bad("mode", "must be %q or %q (found %q)", ModeParallel, ModeSequential, c.Mode)
	}
	for i, o := range c.Hooks {
		f := fmt.Sprintf("hooks[%d]", i)
		if o.Match == "" {
			return bad(f+".match", "missing (a command string or handler ID)")
		}
		if o.OnTimeout != "" && o.OnTimeout != OnTimeoutIgnore && o.OnTimeout != OnTimeoutDeny {
			return bad(f+".on_timeout", "must be %q or %q (found %q)", OnTimeoutIgnore, OnTimeoutDeny, o.OnTimeout)
		}
	}
	switch c.Audit.Fsync {
	case "always", "batch", "never":
	default:
		return bad("audit.fsync", "must be \"always\", \"batch\" or \"never\" (found %q)", c.Audit.Fsync)
	}
	for i, m := range c.Audit.Mask {
		f := fmt.Sprintf("audit.mask[%d]", i)
		if m.Path == "" {
			return bad(f+".path", "missing (a dotted path such as tool_input.content)")
		}
		if m.Action != "hash" && m.Action != "drop" {
			return bad(f+".action", "must be \"hash\" or \"drop\" (found %q)", m.Action)
		}
	}
	for field, v := range map[string]int{
		"audit.max_size_mb": c.Audit.MaxSizeMB, "audit.max_field_bytes": c.Audit.MaxFieldBytes,
		"max_request_bytes": c.MaxRequestBytes, "output_cap_bytes": c.OutputCapBytes,
		"limits.max_connections_per_uid":    c.Limits.MaxConnectionsPerUID,
		"limits.request_read_timeout_ms":    c.Limits.RequestReadTimeoutMS,
		"limits.idle_connection_timeout_ms": c.Limits.IdleConnectionTimeoutMS,
		"limits.max_inflight_request_bytes": c.Limits.MaxInFlightRequestBytes,
		"limits.max_live_projects":          c.Limits.MaxLiveProjects,
		"limits.project_idle_timeout_ms":    c.Limits.ProjectIdleTimeoutMS,
	} {
		if v <= 0 {
			return bad(field, "must be positive (found %d)", v)
		}
	}
	if o := c.Audit.OTLP; o != nil {
		switch o.Protocol {
		case "", "http/protobuf", "http/json":
		default:
			return bad("audit.otlp.protocol", "must be \"http/protobuf\" or \"http/json\" (found %q)", o.Protocol)
		}
		switch o.Compression {
		case "", "gzip", "none":
		default:
			return bad("audit.otlp.compression", "must be \"gzip\" or \"none\" (found %q)", o.Compression)
		}
		for field, v := range map[string]int{"audit.otlp.timeout_ms": o.TimeoutMS, "audit.otlp.max_batch": o.MaxBatch, "audit.otlp.max_backoff_s": o.MaxBackoffS} {
			if v < 0 {
				return bad(field, "must not be negative (found %d)", v)
			}
		}
	}
	if s := c.Audit.Syslog; s != nil {
		switch s.Network {
		case "", "unixgram", "unix", "udp", "tcp":
		default:
			return bad("audit.syslog.network", "must be \"unixgram\", \"unix\", \"udp\" or \"tcp\" (found %q)", s.Network)
		}
		if (s.Network == "udp" || s.Network == "tcp") && s.Address == "" {
			return bad("audit.syslog.address", "missing (host:port for %s)", s.Network)
		}
		if s.MaxMessageBytes < 0 || (s.MaxMessageBytes > 0 && s.MaxMessageBytes < 480) {
			return bad("audit.syslog.max_message_bytes", "must be at least 480 (RFC 5424 §6.1) (found %d)", s.MaxMessageBytes)
		}
	}
	if cp := c.Audit.Checkpoint; cp != nil {
		if cp.KeyFile == "" {
			return bad("audit.checkpoint.key_file", "missing (a signer key from `hookd audit keygen`)")
		}
		if cp.IntervalS < 0 {
			return bad("audit.checkpoint.interval_s", "must not be negative (found %d)", cp.IntervalS)
		}
	}
	if c.Audit.Retain < 0 {
		return bad("audit.retain", "must not be negative (found %d)", c.Audit.Retain)
	}
	for i, s := range c.Settings {
		if s == "" {
			return bad(fmt.Sprintf("settings[%d]", i), "empty path")
		}
	}
	return nil
}

// Override returns the per-hook settings for h: the first entry whose match equals h's ID,
// else the first whose match equals its command (as written or as a command line), else
// the zero value.
func (c *DaemonConfig) Override(h *settings.Handler) HookOverride {
	if c == nil || h == nil {
		return HookOverride{}
	}
	for _, o := range c.Hooks {
		if o.Match == h.ID {
			return o
		}
	}
	if h.Type == events.Command {
		line := h.CommandLine()
		for _, o := range c.Hooks {
			if o.Match == h.Command || o.Match == line {
				return o
			}
		}
	}
	return HookOverride{}
}

// strictDecoder decodes a JSON tree into tagged structs, rejecting unknown keys and
// wrong types with the field path, line and column.
type strictDecoder struct {
	path string
	data []byte
	at   map[string]*jsontree.Node // field path → node, for validation messages
}

func (sd *strictDecoder) fail(n *jsontree.Node, field, format string, args ...any) *settings.FileError {
	e := &settings.FileError{File: sd.path, Field: field, Err: fmt.Errorf(format, args...)}
	if n != nil {
		e.Line, e.Col = jsontree.LineCol(sd.data, n.Start)
	}
	return e
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func (sd *strictDecoder) decode(n *jsontree.Node, field string, v reflect.Value) error {
	if sd.at == nil {
		sd.at = map[string]*jsontree.Node{}
	}
	sd.at[field] = n
	switch v.Kind() {
	case reflect.Pointer:
		if n.Kind == jsontree.Null {
			v.Set(reflect.Zero(v.Type()))
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := sd.decode(n, field, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Struct:
		if n.Kind != jsontree.Object {
			return sd.fail(n, field, "must be an object (found %s)", n.What())
		}
		fields := map[string]int{}
		var names []string
		for i := 0; i < v.NumField(); i++ {
			tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			fields[tag] = i
			names = append(names, tag)
		}
		for i, k := range n.Keys {
			fi, ok := fields[k]
			if !ok {
				e := sd.fail(nil, join(field, k), "unknown field (known: %s)", strings.Join(names, ", "))
				e.Line, e.Col = jsontree.LineCol(sd.data, n.KeyOff[i])
				return e
			}
			if err := sd.decode(n.Vals[i], join(field, k), v.Field(fi)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != jsontree.Array {
			return sd.fail(n, field, "must be an array (found %s)", n.What())
		}
		s := reflect.MakeSlice(v.Type(), len(n.Elems), len(n.Elems))
		for i, e := range n.Elems {
			if err := sd.decode(e, fmt.Sprintf("%s[%d]", field, i), s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.String:
		if n.Kind != jsontree.String {
			return sd.fail(n, field, "must be a string (found %s)", n.What())
		}
		v.SetString(n.Str)
	case reflect.Bool:
		if n.Kind != jsontree.Bool {
			return sd.fail(n, field, "must be a boolean (found %s)", n.What())
		}
		v.SetBool(n.Boolean)
	case reflect.Int, reflect.Int64:
		if n.Kind != jsontree.Number {
			return sd.fail(n, field, "must be a number (found %s)", n.What())
		}
		i, err := n.Num.Int64()
		if err != nil || v.OverflowInt(i) {
			return sd.fail(n, field, "must be a whole number (found %s)", n.Num)
		}
		v.SetInt(i)
	default:
		return sd.fail(n, field, "unsupported field type %s", v.Type())
	}
	return nil
}
