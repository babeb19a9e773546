package daemon

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStartsWarm: what `hookd install` asks before it gives a file the env-only
// SessionStart forwarder — the analysis the pool applies, from the hooks' directory, on
// the events whose hooks a session's start prepares.
func TestStartsWarm(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"guard.js": "const ev = JSON.parse(require('fs').readFileSync(0, 'utf8'))\n",
		"quiet.js": "console.log('reads nothing')\n",
		"guard.py": "import json, sys\njson.load(sys.stdin)\n",
		"guard.sh": "cat >/dev/null\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		event, command string
		args           []string
		want           bool
	}{
		{"PreToolUse", "node guard.js", nil, true},
		{"PreToolUse", "node", []string{"guard.js"}, true}, // exec form
		{"Stop", `node "$CLAUDE_PROJECT_DIR"/guard.js`, nil, true},
		{"SessionEnd", "node guard.js", nil, false},   // once per session: nothing to prepare
		{"PreToolUse", "node quiet.js", nil, false},   // does not visibly read stdin
		{"PreToolUse", "bash guard.sh", nil, false},   // shells are not prewarmed by default
		{"PreToolUse", "python3 guard.py", nil, true}, // the zygote (Linux)
		{"PreToolUse", "node missing.js", nil, false},
	} {
		if got := StartsWarm(c.event, c.command, c.args, dir); got != c.want {
			t.Errorf("%s %q %q: %v, want %v", c.event, c.command, c.args, got, c.want)
		}
	}
}
