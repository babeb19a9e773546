//go:build unix

package conformance

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite events/harness/testdata/codex-<version>/ from HOOKD_CODEX_BIN")

// codexPin is the Codex version the install script pins.
func codexPin(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "e2e", "install-harnesses.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`HOOKD_CODEX_VERSION:-([0-9][0-9.]*)\}`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no Codex pin in test/e2e/install-harnesses.sh")
	}
	return string(m[1])
}

// TestCodexSchemas is the Codex half of `make conformance`: the hook schemas in the pinned
// Codex binary (HOOKD_CODEX_BIN) against hookd's copies in
// events/harness/testdata/codex-<pin>/. With -update it rewrites the copies.
func TestCodexSchemas(t *testing.T) {
	bin := os.Getenv("HOOKD_CODEX_BIN")
	if bin == "" {
		if os.Getenv("HOOKD_CONFORMANCE") != "" {
			t.Fatal("HOOKD_CODEX_BIN is not set: make conformance installs the pinned Codex (test/e2e/install-harnesses.sh codex) and passes its path")
		}
		t.Skip("SKIPPED: HOOKD_CODEX_BIN not set; the Codex schema check runs in `make conformance`")
	}
	pin := codexPin(t)
	if out, err := exec.Command(bin, "--version").Output(); err != nil || !strings.Contains(string(out), pin) {
		t.Fatalf("%s --version = %q (%v), want the pinned %s", bin, out, err, pin)
	}
	want, err := ExtractCodexSchemas(readBinary(t, bin))
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	dir := filepath.Join("..", "..", "events", "harness", "testdata", "codex-"+pin)
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range want {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	have := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		have[filepath.Base(f)] = b
	}
	if p := DiffSchemas(want, have); len(p) > 0 {
		t.Fatalf("hookd's copies of Codex %s's hook schemas (%s) are not the binary's:\n  %s\nRe-extract: go test ./test/conformance -run TestCodexSchemas -update (with HOOKD_CODEX_BIN), then review the diff.",
			pin, dir, strings.Join(p, "\n  "))
	}
	t.Logf("Codex %s: %d hook schemas, identical to %s", pin, len(want), dir)
}

// TestExtractCodexSchemas: the extractor on a fragment laid out as the binary lays the
// schemas out, and its failure on text without them.
func TestExtractCodexSchemas(t *testing.T) {
	frag := "xx\x00{\n  \"$schema\": \"http://json-schema.org/draft-07/schema#\",\n  \"additionalProperties\": false,\n" +
		"  \"properties\": {\"b\": {\"type\": \"string\"}, \"a\": {\"type\": \"boolean\"}},\n  \"title\": \"stop.command.output\",\n  \"type\": \"object\"\n}\x00yy" +
		"{\n  \"$schema\": \"x\",\n  \"title\": \"stop.command.input\"\n}"
	got, err := ExtractCodexSchemas([]byte(frag))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n \"$schema\": \"http://json-schema.org/draft-07/schema#\",\n \"additionalProperties\": false,\n \"properties\": {\n  \"a\": {\n   \"type\": \"boolean\"\n  },\n  \"b\": {\n   \"type\": \"string\"\n  }\n },\n \"title\": \"stop.command.output\",\n \"type\": \"object\"\n}\n"
	if string(got["stop.output.json"]) != want || len(got) != 2 {
		t.Errorf("extracted %d schemas; stop.output.json:\n%s", len(got), got["stop.output.json"])
	}
	if _, err := ExtractCodexSchemas([]byte("nothing")); err == nil || !strings.Contains(err.Error(), "layout changed") {
		t.Errorf("no schemas: %v", err)
	}
	if p := DiffSchemas(got, map[string][]byte{"stop.output.json": []byte(`{"title":"other"}`), "old.output.json": nil}); len(p) != 3 {
		t.Errorf("diff: %q", p)
	}
}
