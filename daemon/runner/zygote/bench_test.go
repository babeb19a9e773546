package zygote

import (
	"os"
	"path/filepath"
	"testing"
)

const guard = `import json, sys, re
data = json.load(sys.stdin)
cmd = data.get("tool_input", {}).get("command", "")
if re.search(r"rm\s+-rf\s+/", cmd):
    print("blocked", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
`

func benchSpec(b *testing.B, o Options) (*Manager, Spec) {
	m, spec := setupWith(b, o)
	os.WriteFile(filepath.Join(spec.Dir, "guard.py"), []byte(guard), 0o644)
	spec.Script = "guard.py"
	if err := m.Preload(spec); err != nil {
		b.Fatal(err)
	}
	return m, spec
}

var payload = []byte(`{"tool_name":"Bash","tool_input":{"command":"ls -la"}}`)

// BenchmarkGuardForked is one PreToolUse event of an unmodified Python guard forked from
// a zygote, back to back; BenchmarkGuardForkedNoPrefault the same with the spares'
// pre-faulting off. Besides time per event they report each child's minor page faults
// and CPU time over its whole life (as a spare too), the faults it took once its spare was
// ready (the event's path and its exit), and the pages its spare populated.
func BenchmarkGuardForked(b *testing.B)           { benchForked(b, Options{}) }
func BenchmarkGuardForkedNoPrefault(b *testing.B) { benchForked(b, Options{NoPrefault: true}) }

func benchForked(b *testing.B, opts Options) {
	m, spec := benchSpec(b, opts)
	for range 3 { // the first events learn what children write
		forked(b, m, spec, payload)
	}
	before := m.Stats.Get()
	b.ResetTimer()
	for range b.N {
		if o := forked(b, m, spec, payload); o.code != 0 {
			b.Fatalf("%+v", o)
		}
	}
	b.StopTimer()
	after := m.Stats.Get()
	if n := float64(after.Exited - before.Exited); n > 0 {
		b.ReportMetric(float64(after.ChildFaults-before.ChildFaults)/n, "faults/child")
		b.ReportMetric(float64((after.ChildCPU-before.ChildCPU).Microseconds())/n/1000, "cpu-ms/child")
		b.ReportMetric(float64(after.Populated-before.Populated)/n, "populated/child")
	}
	if n := float64(after.Reported - before.Reported); n > 0 {
		b.ReportMetric(float64(after.EventFaults-before.EventFaults)/n, "event-faults/child")
	}
}

// BenchmarkGuardCold is the same event with the interpreter started per event.
func BenchmarkGuardCold(b *testing.B) {
	_, spec := benchSpec(b, Options{})
	b.ResetTimer()
	for range b.N {
		if o := coldB(b, spec, payload); o.code != 0 {
			b.Fatalf("%+v", o)
		}
	}
}
