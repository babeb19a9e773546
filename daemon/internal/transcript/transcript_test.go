package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/protocol"
)

func TestVersion(t *testing.T) {
	dir := t.TempDir()
	var e Versions
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	codex := write("codex.jsonl", `{"timestamp":"t","type":"session_meta","payload":{"cli_version":"0.169.0","originator":"codex_exec"}}`+"\n")
	claude := write("claude.jsonl", `{"type":"summary","summary":"x"}`+"\n"+`{"type":"user","version":"2.1.330","sessionId":"s"}`+"\n")
	big := write("big.jsonl", `{"type":"user","message":"`+strings.Repeat("a", 70<<10)+`"}`+"\n"+`{"version":"9"}`+"\n")
	for _, c := range []struct{ harness, path, want string }{
		{protocol.HarnessCodex, codex, "0.169.0"},
		{protocol.HarnessClaudeCode, claude, "2.1.330"},
		{protocol.HarnessClaudeCode, codex, ""},
		{protocol.HarnessClaudeCode, big, ""},
		{protocol.HarnessClaudeCode, filepath.Join(dir, "absent.jsonl"), ""},
		{protocol.HarnessClaudeCode, "relative.jsonl", ""},
	} {
		p := `{"transcript_path":"` + c.path + `"}`
		if got := e.Version(c.harness, []byte(p)); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.harness, filepath.Base(c.path), got, c.want)
		}
	}
	// Cached: the answer survives the file's removal.
	_ = os.Remove(codex)
	if got := e.Version(protocol.HarnessCodex, []byte(`{"transcript_path":"`+codex+`"}`)); got != "0.169.0" {
		t.Errorf("cached version lost: %q", got)
	}
}
