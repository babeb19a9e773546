//go:build unix

package conformance

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hookd/hookd/configs/settings/tools"
)

// TestConformanceTools (part of `make conformance`): the linter's tool names
// (tools.ClaudeCode and ClaudeCodeToolAliases, which `hookd validate` checks rules,
// `if` filters and matchers against) are the pinned binary's own. A tool a new release adds
// fails here, naming it, instead of becoming a false "unknown tool" finding.
func TestConformanceTools(t *testing.T) {
	bin := os.Getenv("HOOKD_CLAUDE_BIN")
	if bin == "" {
		if os.Getenv("HOOKD_CONFORMANCE") != "" {
			t.Fatal("HOOKD_CLAUDE_BIN is not set: make conformance passes the pinned Claude Code's path")
		}
		t.Skip("SKIPPED: HOOKD_CLAUDE_BIN not set; the tool-name drift check runs in `make conformance`")
	}
	names, aliases, err := ExtractTools(readBinary(t, bin))
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	var problems []string
	for _, n := range names {
		if !slices.Contains(tools.ClaudeCode, n) {
			problems = append(problems, "tool "+n+" is missing from tools.ClaudeCode (configs/settings/tools/tools.go)")
		}
	}
	for _, n := range tools.ClaudeCode {
		if !slices.Contains(names, n) {
			problems = append(problems, "tools.ClaudeCode has "+n+", which the binary no longer lists")
		}
	}
	if !maps.Equal(aliases, tools.Aliases) {
		problems = append(problems, "tools.Aliases differs from the binary's map")
	}
	if len(problems) > 0 {
		t.Fatalf("the linter's tool names are not the binary's (%s):\n  %s", bin, strings.Join(problems, "\n  "))
	}
	t.Logf("%d tool names and %d aliases, as the linter has them", len(names), len(aliases))
}

func TestExtractTools(t *testing.T) {
	frag := `x=1;var Qq=["Agent","Bash","Read"],Zz={Task:"Agent",KillShell:"TaskStop"},y=2`
	tools, aliases, err := ExtractTools([]byte(frag))
	if err != nil || strings.Join(tools, ",") != "Agent,Bash,Read" || len(aliases) != 2 || aliases["KillShell"] != "TaskStop" {
		t.Fatalf("ExtractTools: %v %v %v", tools, aliases, err)
	}
	if _, _, err := ExtractTools([]byte(`nothing`)); err == nil || !strings.Contains(err.Error(), "layout changed") {
		t.Errorf("no anchor: %v", err)
	}
}
