package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookd/hookd/cmd/hookd/internal/clix"
)

// TestMain lets the test binary stand in for hookd (HOOKD_TEST_AS_HOOKD=1), so that a
// shell can run it by name: the completion scripts call `hookd … --generate-bash-completion`.
func TestMain(m *testing.M) {
	if os.Getenv("HOOKD_TEST_AS_HOOKD") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// cliRun runs hookd's real command line as main does, returning stdout, stderr and the
// error main would print (nil: exit 0).
func cliRun(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	app := App()
	var out, errb bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errb
	err = app.Run(clix.Intersperse(app, append([]string{"hookd"}, args...)))
	return out.String(), errb.String(), err
}

func exitCodeOf(err error) int {
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

func TestMistypedCommandsAndFlagsSuggest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stauts"}, `unknown command "stauts"; did you mean "status"?`},
		{[]string{"valdiate"}, `did you mean "validate"?`},
		{[]string{"audit", "qurey"}, `audit: unknown command "qurey"; did you mean "query"?`},
		{[]string{"install", "claude-cod"}, `install: unknown command "claude-cod"; did you mean "claude-code"?`},
		{[]string{"status", "--jsn"}, `status: flag provided but not defined: -jsn; did you mean --json?`},
		{[]string{"--sockt", "/x", "status"}, `flag provided but not defined: -sockt; did you mean --socket?`},
		{[]string{"audit", "query", "--limt", "3"}, `audit query: flag provided but not defined: -limt; did you mean --limit?`},
		{[]string{"help", "stauts"}, `unknown command "stauts"; did you mean "status"?`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"` + "\nrun 'hookd --help' for the commands"}, // nothing close: no guess
	} {
		stdout, _, err := cliRun(t, tc.args...)
		if exitCodeOf(err) != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("hookd %s: exit %d, error %v; want exit 2 and %q", strings.Join(tc.args, " "), exitCodeOf(err), err, tc.want)
		}
		if strings.Contains(stdout, "USAGE:") {
			t.Errorf("hookd %s: printed the whole help:\n%s", strings.Join(tc.args, " "), stdout)
		}
	}
}

// A command's help lists its own flags and the global ones it reads, with their
// environment variables, and points at the rest; the global flags are not repeated on
// every command.
func TestCommandHelpListsOnlyItsFlags(t *testing.T) {
	help := func(args ...string) string {
		out, _, err := cliRun(t, append(args, "--help")...)
		if err != nil {
			t.Fatalf("hookd %s --help: %v", strings.Join(args, " "), err)
		}
		return out
	}
	options := func(out string) string { // the OPTIONS section alone
		_, rest, _ := strings.Cut(out, "\nOPTIONS:\n")
		sec, _, _ := strings.Cut(rest, "\n\n")
		return sec
	}
	if app := help(); !strings.Contains(app, "COMMANDS:") || !strings.Contains(app, "status") {
		t.Errorf("hookd --help:\n%s", app)
	}
	if out, _, err := cliRun(t, "-h"); err != nil || !strings.Contains(out, "COMMANDS:") {
		t.Errorf("hookd -h: %v\n%s", err, out)
	}
	if out, _, err := cliRun(t, "help"); err != nil || !strings.Contains(out, "COMMANDS:") {
		t.Errorf("hookd help: %v\n%s", err, out)
	}
	if out, _, err := cliRun(t, "help", "serve"); err != nil || !strings.Contains(out, "--grace") {
		t.Errorf("hookd help serve: %v\n%s", err, out)
	}
	serve := help("serve")
	if o := options(serve); !strings.Contains(o, "--grace") || strings.Contains(o, "--socket") || strings.Contains(o, "--state-dir") {
		t.Errorf("serve's OPTIONS are not just its own:\n%s", o)
	}
	for _, want := range []string{"GLOBAL OPTIONS it reads", "[$HOOKD_SOCKET]", "[$HOOKD_STATE_DIR]", "Every global option: hookd --help"} {
		if !strings.Contains(serve, want) {
			t.Errorf("hookd serve --help lacks %q:\n%s", want, serve)
		}
	}
	status := help("status")
	if strings.Contains(status, "--managed-dir") || strings.Contains(status, "--grace") || !strings.Contains(status, "--socket PATH") {
		t.Errorf("hookd status --help lists flags it does not read, or not --socket:\n%s", status)
	}
	query := help("audit", "query")
	if !strings.Contains(query, "--audit-dir DIR") || !strings.Contains(query, "[$HOOKD_AUDIT_DIR]") {
		t.Errorf("hookd audit query --help lacks the inherited --audit-dir:\n%s", query)
	}
	if events := help("events"); !strings.Contains(events, "Every global option: hookd --help") || strings.Contains(events, "--socket") {
		t.Errorf("hookd events --help:\n%s", events)
	}
}

func TestIntersperse(t *testing.T) {
	app := App()
	for _, tc := range []struct{ in, want []string }{
		{[]string{"validate", "a.json", "--debug"}, []string{"validate", "--debug", "a.json"}},
		{[]string{"validate", "a.json", "--settings", "b.json", "c.json"}, []string{"validate", "--settings", "b.json", "a.json", "c.json"}},
		{[]string{"audit", "show", "ID", "--json", "--socket=/s"}, []string{"audit", "show", "--json", "--socket=/s", "ID"}},
		{[]string{"--debug", "audit", "--audit-dir", "/d", "show", "ID", "--audit-dir", "/e"}, []string{"--debug", "audit", "--audit-dir", "/d", "show", "--audit-dir", "/e", "ID"}},
		// After "--" nothing moves; an unknown flag stays for urfave/cli to report; "-" is an argument.
		{[]string{"validate", "--", "a.json", "--strict"}, []string{"validate", "--", "a.json", "--strict"}},
		{[]string{"validate", "a.json", "--nope"}, []string{"validate", "a.json", "--nope"}},
		{[]string{"audit", "verify", "-", "--json"}, []string{"audit", "verify", "--json", "-"}},
		{[]string{"stat", "--generate-bash-completion"}, []string{"stat", "--generate-bash-completion"}},
		{[]string{"validate", "a.json", "--debug", "--generate-bash-completion"}, []string{"validate", "--debug", "a.json", "--generate-bash-completion"}},
	} {
		got := clix.Intersperse(app, append([]string{"hookd"}, tc.in...))[1:]
		if !slices.Equal(got, tc.want) {
			t.Errorf("intersperse(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// asHookd runs this test binary as hookd (TestMain) with args.
func asHookd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), "HOOKD_TEST_AS_HOOKD=1")
	out, err := cmd.Output()
	return string(out), err
}

func TestCompletion(t *testing.T) {
	// urfave/cli answers the scripts' question: the words that can come next. (It reads
	// os.Args, so this runs as a process of its own.)
	out, err := asHookd(t, "aud", "--generate-bash-completion")
	if err != nil || !strings.Contains(out, "audit\n") || !strings.Contains(out, "status\n") {
		t.Fatalf("hookd --generate-bash-completion: %v\n%s", err, out)
	}
	out, err = asHookd(t, "audit", "--generate-bash-completion")
	if err != nil || !strings.Contains(out, "query\n") || strings.Contains(out, "status\n") {
		t.Fatalf("hookd audit --generate-bash-completion: %v\n%s", err, out)
	}
	out, err = asHookd(t, "audit", "query", "--ev", "--generate-bash-completion")
	if err != nil || !strings.Contains(out, "--event\n") {
		t.Fatalf("hookd audit query --ev --generate-bash-completion: %v\n%s", err, out)
	}
	fish, _, err := cliRun(t, "completion", "fish")
	if err != nil || !strings.Contains(fish, "complete -c hookd") || !strings.Contains(fish, "'status'") {
		t.Fatalf("hookd completion fish: %v\n%s", err, fish)
	}
	if _, _, err := cliRun(t, "completion", "tcsh"); exitCodeOf(err) != 2 {
		t.Errorf("hookd completion tcsh: %v, want a usage error", err)
	}

	// The bash script, run by bash, completes through this binary standing in for hookd.
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH: the bash script was not run (the answers above were checked)")
	}
	script, _, err := cliRun(t, "completion", "bash")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(dir, "hookd")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c.bash"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "--norc", "-c", `source "$1"; COMP_WORDS=(hookd audit qu); COMP_CWORD=2; _hookd_bash_autocomplete; printf '%s\n' "${COMPREPLY[@]}"`, "bash", filepath.Join(dir, "c.bash"))
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOOKD_TEST_AS_HOOKD=1")
	got, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != "query" {
		t.Fatalf("bash completion of `hookd audit qu`: %v\n%s", err, got)
	}
}
