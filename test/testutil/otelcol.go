package testutil

import "fmt"

// CollectorConfig is the configuration of the OpenTelemetry Collector the fleet tests and
// the export benchmark run (test/fleet/build-otelcol.sh): an OTLP/HTTP receiver on
// 127.0.0.1:port, a file exporter writing to out (flushing every flush when flush is not
// empty), and the collector's own telemetry off — its default metrics port (8888) would
// clash with anything else on the machine.
func CollectorConfig(port int, out, flush string) string {
	flushLine := ""
	if flush != "" {
		flushLine = "\n    flush_interval: " + flush
	}
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
exporters:
  file:
    path: %s%s
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [file]
`, port, out, flushLine)
}
