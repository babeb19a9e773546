package daemon

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs"
	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/daemon/audit/otlp"
	"github.com/hookd/hookd/daemon/audit/syslog"
)

// exportDrain is how long shutdown waits for exporters to send what the log holds
// beyond their cursors; the rest goes out after the next start.
const exportDrain = 5 * time.Second

// startExporters attaches the configured exporters (audit.otlp, audit.syslog) to l and
// starts them. The returned stop function cancels them and waits for their last
// attempt; call it after the log is closed, so that the final records are shipped too.
func startExporters(cfg configs.AuditConfig, l *audit.Log, log *zap.Logger) (func(), error) {
	var sinks []struct {
		name string
		sink audit.Sink
		max  int
		back time.Duration
	}
	if o := cfg.OTLP; o != nil {
		res, err := parseKV(o.Resource)
		if err != nil {
			return nil, fmt.Errorf("audit.otlp.resource: %w", err)
		}
		hdr, err := parseKV(o.Headers)
		if err != nil {
			return nil, fmt.Errorf("audit.otlp.headers: %w", err)
		}
		e, err := otlp.New(otlp.Config{Endpoint: o.Endpoint, Protocol: o.Protocol, Headers: hdr,
			Timeout: time.Duration(o.TimeoutMS) * time.Millisecond, Compression: o.Compression,
			Resource: res, ServiceVersion: Version})
		if err != nil {
			return nil, fmt.Errorf("audit.otlp: %w", err)
		}
		rc := e.Config()
		log.Info("exporting decisions over OTLP", zap.String("endpoint", rc.Endpoint), zap.String("protocol", rc.Protocol))
		sinks = append(sinks, struct {
			name string
			sink audit.Sink
			max  int
			back time.Duration
		}{"otlp", e, o.MaxBatch, time.Duration(o.MaxBackoffS) * time.Second})
	}
	if s := cfg.Syslog; s != nil {
		sk, err := newSyslogSink(s)
		if err != nil {
			return nil, fmt.Errorf("audit.syslog: %w", err)
		}
		sinks = append(sinks, struct {
			name string
			sink audit.Sink
			max  int
			back time.Duration
		}{"syslog", sk, 0, 0})
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range sinks {
		sh, err := audit.NewShipper(audit.ShipperOptions{Name: s.name, Path: l.Path(), Sink: s.sink,
			MaxBatch: s.max, MaxBackoff: s.back, Logger: log.Named("export")})
		if err != nil {
			cancel()
			return nil, err
		}
		if err := sh.Start(); err != nil {
			// Run retries; the log keeps the records meanwhile.
			log.Error("audit export cannot read the decision log yet", zap.String("exporter", s.name), zap.Error(err))
		}
		l.AddShipper(sh)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh.Run(ctx, exportDrain)
		}()
	}
	return func() { cancel(); wg.Wait() }, nil
}

// parseKV parses "k=v,k2=v2".
func parseKV(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%q is not key=value", part)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

func newSyslogSink(s *configs.SyslogConfig) (audit.Sink, error) {
	return syslog.New(syslog.Config{Network: s.Network, Address: s.Address, Facility: s.Facility,
		AppName: s.AppName, MaxMessage: s.MaxMessageBytes})
}
