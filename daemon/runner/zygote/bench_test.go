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

func benchSpec(b *testing.B) (*Manager, Spec) {
	m, spec := setup(b)
	os.WriteFile(filepath.Join(spec.Dir, "guard.py"), []byte(guard), 0o644)
	spec.Script = "guard.py"
	if err := m.Preload(spec); err != nil {
		b.Fatal(err)
	}
	return m, spec
}

var payload = []byte(`{"tool_name":"Bash","tool_input":{"command":"ls -la"}}`)

// BenchmarkGuardForked is one PreToolUse event of an unmodified Python guard forked from
// a zygote, back to back.
func BenchmarkGuardForked(b *testing.B) {
	m, spec := benchSpec(b)
	b.ResetTimer()
	for range b.N {
		if o := forked(b, m, spec, payload); o.code != 0 {
			b.Fatalf("%+v", o)
		}
	}
}

// BenchmarkGuardCold is the same event with the interpreter started per event.
func BenchmarkGuardCold(b *testing.B) {
	_, spec := benchSpec(b)
	b.ResetTimer()
	for range b.N {
		if o := coldB(b, spec, payload); o.code != 0 {
			b.Fatalf("%+v", o)
		}
	}
}
