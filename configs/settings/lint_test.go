package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lintOne parses content as the project file of a fresh project and returns its
// warnings as "LEVEL field: message" lines.
func lintOne(t *testing.T, proj, content string) []string {
	t.Helper()
	path := filepath.Join(proj, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(FileRef{Path: path, Kind: KindProject}, []byte(content), "")
	if err != nil {
		t.Fatalf("%s: %v", content, err)
	}
	var out []string
	for _, w := range f.Warnings {
		level := "warning"
		if w.IsError() {
			level = "error"
		}
		out = append(out, level+" "+w.Field+": "+w.Message)
	}
	return out
}

// One case per typo class of issue 29: each is an error-level finding (validate exits 1)
// that names the field and, where a known name is close, the one meant.
func TestLintTypoClasses(t *testing.T) {
	proj := t.TempDir()
	script := filepath.Join(proj, ".claude", "hooks", "guard.sh")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(proj, "notes.txt")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	hook := func(event, matcher, cmd string) string {
		return `{"hooks":{"` + event + `":[{"matcher":"` + matcher + `","hooks":[{"type":"command","command":"` + cmd + `"}]}]}}`
	}
	for _, tc := range []struct {
		name, content string
		want          string // "" = no finding at all
	}{
		{"unknown event", hook("PreToolUze", "Bash", "true"), "error hooks.PreToolUze: unknown hook event; did you mean PreToolUse?"},
		{"event in wrong case", hook("pretooluse", "Bash", "true"), "error hooks.pretooluse: unknown hook event: event names are case-sensitive; did you mean PreToolUse?"},
		{"unknown event, nothing close", hook("WhenTheMoonIsFull", "", "true"), "error hooks.WhenTheMoonIsFull: unknown hook event (not one of"},
		{"rule tool misspelt", `{"permissions":{"deny":["Bassh(rm *)"]}}`, `error permissions.deny[0]: "Bassh": unknown tool; did you mean Bash?`},
		{"rule tool in wrong case", `{"permissions":{"ask":["bash(git push *)"]}}`, `error permissions.ask[0]: "bash": tool names are case-sensitive: did you mean Bash?`},
		{"rule tool unknown, nothing close", `{"permissions":{"allow":["Frobnicator"]}}`, `warning permissions.allow[0]: "Frobnicator": no tool of Claude Code 2.1.332 is called Frobnicator`},
		{"MCP rule with one underscore", `{"permissions":{"deny":["mcp_github__delete_repo"]}}`, `error permissions.deny[0]: "mcp_github__delete_repo": MCP tool names start with "mcp__", two underscores (did you mean "mcp__github__delete_repo"?)`},
		{"MCP rule in upper case", `{"permissions":{"deny":["MCP__github"]}}`, `error permissions.deny[0]: "MCP__github": MCP tool names start with "mcp__" in lower case`},
		{"matcher misspelt", hook("PreToolUse", "Bassh", "true"), `error hooks.PreToolUse[0].matcher: "Bassh": unknown tool; did you mean Bash?`},
		{"matcher list with a typo", hook("PostToolUse", "Edit|Wrte", "true"), `error hooks.PostToolUse[0].matcher: "Wrte": unknown tool; did you mean Write?`},
		{"if in wrong case", `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"true","if":"bash(git *)"}]}]}}`, `error hooks.PreToolUse[0].hooks[0].if: "bash": tool names are case-sensitive: did you mean Bash?`},
		{"program missing", hook("Stop", "", "/nonexistent/guard.sh --strict"), "error hooks.Stop[0].hooks[0].command: program /nonexistent/guard.sh does not exist: the hook can never run"},
		{"project script missing", hook("Stop", "", `\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/gaurd.sh`), "error hooks.Stop[0].hooks[0].command: program " + filepath.Join(proj, ".claude", "hooks", "gaurd.sh") + " does not exist"},
		{"interpreter's script missing", hook("Stop", "", "python3 -u $CLAUDE_PROJECT_DIR/.claude/hooks/check.py"), "error hooks.Stop[0].hooks[0].command: script " + filepath.Join(proj, ".claude", "hooks", "check.py") + " does not exist (python3 is given it to run)"},
		{"relative script missing", hook("Stop", "", "bash .claude/hooks/nope.sh"), "error hooks.Stop[0].hooks[0].command: script " + filepath.Join(proj, ".claude", "hooks", "nope.sh") + " does not exist (bash is given it to run)"},
		{"missing after env assignments and exec", hook("Stop", "", "FOO=1 exec env -i BAR=2 /nonexistent/x"), "error hooks.Stop[0].hooks[0].command: program /nonexistent/x does not exist"},
		{"exec form", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/nonexistent/py","args":["${CLAUDE_PROJECT_DIR}/x.py"]}]}]}}`, "error hooks.Stop[0].hooks[0].command: program /nonexistent/py does not exist"},
		{"not executable", hook("Stop", "", notExec), "error hooks.Stop[0].hooks[0].command: program " + notExec + " is not executable"},

		// What is fine, or cannot be known without a shell, says nothing.
		{"existing project script", hook("PreToolUse", "Bash", `\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh`), ""},
		{"existing script via bash", hook("PreToolUse", "Edit|Write", "bash $CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh"), ""},
		{"regex matcher", hook("PreToolUse", "Bas.*", "true"), ""},
		{"MCP matcher and rules", `{"permissions":{"deny":["mcp__github__delete_repo","mcp__fs","Task(reviewer)","NotebookRead"]},"hooks":{"PreToolUse":[{"matcher":"mcp__github__create_issue|Read","hooks":[{"type":"command","command":"true"}]}]}}`, ""},
		{"unknown variable", hook("Stop", "", "$MY_HOOKS/guard.sh"), ""},
		{"python -c", hook("Stop", "", "python3 -c 'import sys'"), ""},
		{"builtin first", hook("Stop", "", "cd /nonexistent && ./x"), ""},
		{"a bare name (PATH is validate's)", hook("Stop", "", "nosuchprogram --x"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lintOne(t, proj, tc.content)
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("findings for %s:\n%s", tc.content, strings.Join(got, "\n"))
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("findings for %s:\n%s\nwant one starting with:\n%s", tc.content, strings.Join(got, "\n"), tc.want)
			}
		})
	}
}
