package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/configs/settings"
)

// Issue 29: each typo class makes `hookd validate` exit non-zero with a suggestion —
// one case per class, through the real command line.
func TestValidateTypoClasses(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "guard-bash"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	write := func(t *testing.T, content string) string {
		p := filepath.Join(t.TempDir(), "settings.json")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hook := func(event, matcher, cmd string) string {
		return `{"hooks":{"` + event + `":[{"matcher":"` + matcher + `","hooks":[{"type":"command","command":"` + cmd + `"}]}]}}`
	}
	for _, tc := range []struct{ name, content, want string }{
		{"unknown event", hook("PreToolUze", "Bash", "guard-bash"), "hooks.PreToolUze: unknown hook event; did you mean PreToolUse?"},
		{"event in wrong case", hook("posttooluse", "Bash", "guard-bash"), "event names are case-sensitive; did you mean PostToolUse?"},
		{"rule tool misspelt", `{"permissions":{"deny":["Bassh(rm -rf *)"]}}`, `permissions.deny[0]: "Bassh": unknown tool; did you mean Bash?`},
		{"rule tool in wrong case", `{"permissions":{"deny":["bash(rm -rf *)"]}}`, `permissions.deny[0]: "bash": tool names are case-sensitive: did you mean Bash?`},
		{"MCP rule malformed", `{"permissions":{"deny":["mcp_github__delete_repo"]}}`, `did you mean "mcp__github__delete_repo"?`},
		{"matcher misspelt", hook("PreToolUse", "Bassh", "guard-bash"), `hooks.PreToolUse[0].matcher: "Bassh": unknown tool; did you mean Bash?`},
		{"missing program (path)", hook("Stop", "", "/nonexistent/hooks/guard.sh"), "hooks.Stop[0].hooks[0].command: program /nonexistent/hooks/guard.sh does not exist"},
		{"missing program (PATH)", hook("Stop", "", "gaurd-bash --strict"), `program "gaurd-bash" is not on PATH (` + bin + `); did you mean guard-bash?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := cliRun(t, "validate", write(t, tc.content))
			if exitCodeOf(err) != 1 || !strings.Contains(out, "  error: ") || !strings.Contains(out, tc.want) {
				t.Errorf("hookd validate: exit %d (%v)\n%s\nwant exit 1 and an error containing %q", exitCodeOf(err), err, out, tc.want)
			}
		})
	}

	// hookd's own configuration: a hooks[].match that matches no hook of the hierarchy.
	t.Run("hooks[].match matches nothing", func(t *testing.T) {
		root := t.TempDir()
		proj := filepath.Join(root, "proj")
		if err := os.MkdirAll(filepath.Join(proj, ".claude"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proj, ".claude", "settings.json"), []byte(hook("PreToolUse", "Bash", "guard-bash --deny")), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(root, "config.json")
		if err := os.WriteFile(cfg, []byte(`{"hooks":[{"match":"guard-bash --deny","on_timeout":"deny"},{"match":"guard-bash --dney","prewarm":true}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _, err := cliRun(t, "validate", "--config", cfg, "--project", proj, "--user-dir", filepath.Join(root, "u"), "--managed-dir", filepath.Join(root, "m"), "--state-dir", filepath.Join(root, "s"))
		want := `hooks[1].match "guard-bash --dney" matches no hook`
		if exitCodeOf(err) != 1 || !strings.Contains(out, want) || !strings.Contains(out, `did you mean "guard-bash --deny"?`) || strings.Contains(out, "hooks[0].match") {
			t.Errorf("hookd validate: exit %d (%v)\n%s\nwant exit 1 and %q with a suggestion, and nothing about hooks[0]", exitCodeOf(err), err, out, want)
		}
	})

	// A warning (an unknown tool, nothing close) passes, and fails with --strict.
	t.Run("--strict", func(t *testing.T) {
		p := write(t, `{"permissions":{"allow":["Frobnicator"]}}`)
		if out, _, err := cliRun(t, "validate", p); err != nil || !strings.Contains(out, "  warning: ") {
			t.Errorf("hookd validate: %v\n%s", err, out)
		}
		if _, _, err := cliRun(t, "validate", p, "--strict"); exitCodeOf(err) != 1 || !strings.Contains(err.Error(), "1 warning(s) (--strict)") {
			t.Errorf("hookd validate --strict: %v", err)
		}
	})

	// And a clean file passes.
	if out, _, err := cliRun(t, "validate", write(t, hook("PreToolUse", "Bash|Edit", "guard-bash"))); err != nil || strings.Contains(out, "error") {
		t.Errorf("clean file: %v\n%s", err, out)
	}
}

// A bare program name is looked up on the PATH validate is given, with a suggestion from
// the names there.
func TestLintCommandsOnPath(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"guard", "ruff"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	proj := t.TempDir()
	path := filepath.Join(proj, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := settings.ParseFile(settings.FileRef{Path: path, Kind: settings.KindProject}, []byte(`{"hooks":{"Stop":[{"hooks":[
		{"type":"command","command":"guard --x"},
		{"type":"command","command":"gaurd --x"},
		{"type":"command","command":"FOO=1 nosuch"},
		{"type":"command","command":"ruff","args":["check"]}]}]}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	ws := lintOnPath([]*settings.File{f}, bin)
	var got []string
	for _, w := range ws {
		got = append(got, w.Field+": "+w.Message)
	}
	want := []string{
		`hooks.Stop[0].hooks[1].command: program "gaurd" is not on PATH (` + bin + `); did you mean guard?`,
		`hooks.Stop[0].hooks[2].command: program "nosuch" is not on PATH (` + bin + `)`,
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], want[0]) || !strings.HasPrefix(got[1], want[1]) || !ws[0].IsError() {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// validate checks a harness's own hook file like every settings file (issue 24, defect 2:
// a malformed ~/.codex/hookd.json passed with exit 0): the error names file, line and
// column, and the exit code is 1.
func TestValidateHarnessHookFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	project := filepath.Join(home, "proj")
	codex := filepath.Join(home, ".codex", "hookd.json")
	if err := os.MkdirAll(filepath.Dir(codex), 0o755); err != nil {
		t.Fatal(err)
	}
	validate := func() (string, error) {
		app := App()
		var out bytes.Buffer
		app.Writer, app.ErrWriter = &out, &out
		err := app.Run([]string{"hookd", "--managed-dir", filepath.Join(home, "managed"), "validate", "--project", project})
		return out.String(), err
	}

	good := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"guard.sh"}]}]}}`
	if err := os.WriteFile(codex, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := validate(); err != nil || !strings.Contains(out, codex+": ok (harness, 1 handlers") {
		t.Fatalf("valid file: %v\n%s", err, out)
	}

	bad := "{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash\",\n  \"hooks\":[{\"type\":\"command\",\"command\":[\"guard.sh\"]}]}]}}"
	if err := os.WriteFile(codex, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := validate()
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != 1 {
		t.Fatalf("malformed file: error %v, want exit 1\n%s", err, out)
	}
	if want := codex + ":2:40: hooks.PreToolUse[0].hooks[0].command: must be a string"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}
