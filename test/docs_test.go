package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Doc excerpts of command output come from real output. TestReadmeQuickStart runs the
// README's quick start — its five lines as written, but for `make build` (the test's
// binaries stand in for bin/) and a scratch directory for /tmp/hookd-qs — and checks what
// they print against the output block the README shows after them (times and decision ids
// vary; everything else must match).
func TestReadmeQuickStart(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	_, quick, ok := strings.Cut(text, "## Quick start\n")
	if !ok {
		t.Fatal("README has no Quick start section")
	}
	script := fenced(t, quick, "```sh\n")
	_, after, ok := strings.Cut(quick, "<!-- quickstart-output -->\n")
	if !ok {
		t.Fatal("README's quick start has no <!-- quickstart-output --> block")
	}
	want := fenced(t, after, "```\n")
	if n := strings.Count(strings.TrimSpace(script), "\n") + 1; n != 5 {
		t.Errorf("the quick start is %d lines, not five", n)
	}

	scratch := filepath.Join(t.TempDir(), "qs")
	binDir := filepath.Dir(bins.hookd)
	if filepath.Dir(bins.hookc) != binDir {
		t.Fatalf("hookd and hookc are built into different directories: %s, %s", bins.hookd, bins.hookc)
	}
	run := strings.Replace(script, "make build && ", "", 1)
	run = strings.ReplaceAll(run, "bin/", binDir+"/")
	run = strings.ReplaceAll(run, "/tmp/hookd-qs", scratch)
	cmd := exec.Command("timeout", "120", "bash", "-c", run)
	cmd.Dir = ".."
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the quick start failed: %v\n%s", err, out)
	}
	vary := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  [0-9A-Z]{26}`)
	norm := func(s string) string { return vary.ReplaceAllString(strings.TrimSpace(s), "TIME  ID") }
	if norm(string(out)) != norm(want) {
		t.Errorf("the quick start prints\n%s\nthe README shows\n%s", out, want)
	}
}

// fenced is the body of the first fenced block in s that opens with fence.
func fenced(t *testing.T, s, fence string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, fence)
	if !ok {
		t.Fatalf("no %q block", strings.TrimSpace(fence))
	}
	body, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("unterminated fenced block")
	}
	return body
}

// The tests docs/reliability.md, docs/platforms.md and docs/zygote.md name as the proof of
// a sentence exist: a renamed or deleted test would leave the sentence unproven.
func TestDocsNameRealTests(t *testing.T) {
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".." || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
				defined[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(Test\\w+)`")
	for _, doc := range []string{"reliability.md", "platforms.md", "zygote.md"} {
		b, err := os.ReadFile(filepath.Join("..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range named.FindAllStringSubmatch(string(b), -1) {
			n++
			if !defined[m[1]] {
				t.Errorf("docs/%s names %s, which no test file defines", doc, m[1])
			}
		}
		if n == 0 {
			t.Errorf("docs/%s names no test", doc)
		}
	}
}
