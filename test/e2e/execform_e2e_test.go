//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hookd/hookd/test/claudeapi"
)

// envDumpGuard writes its environment and argv into dir and denies commands containing
// "rm ", allowing the rest.
func envDumpGuard(dir, name string) string {
	return `f=$(mktemp ` + dir + `/` + name + `.XXXXXX)
env > "$f.env"
printf '%s\n' "$0" "$@" > "$f.argv"
in=$(cat)
case "$in" in
*'rm '*) echo '` + decide("deny", "no rm here") + `' ;;
*) echo '` + decide("allow", "fine") + `' ;;
esac`
}

// TestClaudeExecFormForwarder: `hookd install claude-code` asks the real Claude Code for
// its version (--claude, the auto form) and, 2.1.139 or later, writes exec-form
// forwarders ("command": hookc, "args": [...]). One session three ways — natively,
// through shell-form forwarders, through exec-form forwarders — must decide alike (an
// allowed and a denied Bash call, PostToolUse context from an exec-form hook); in the
// exec form Claude Code starts hookc itself, with no shell between (the witness names
// its parent), and the hooks hookd runs see the environment and argv they see natively
// (the shell form's /bin/sh adds PWD, which an exec-form hook never has natively).
func TestClaudeExecFormForwarder(t *testing.T) {
	t.Parallel()
	sc := &scenario{Name: "exec-form-forwarder",
		Hooks: []hook{
			{Name: "guard", Event: "PreToolUse", Matcher: "Bash", Scope: "user"},
			{Name: "post", Event: "PostToolUse", Matcher: "Bash", Scope: "user", Args: []string{}},
			// No shell anywhere on its way natively: what an exec-form hook really gets.
			{Name: "penv", Event: "PostToolUse", Matcher: "Bash", Scope: "user", Command: "/usr/bin/perl"},
		},
		Script: []claudeapi.Turn{bash("echo one"), bash("rm -rf nothing-here"), say("finished")},
		Counts: map[string]int{"guard": 2, "post": 1},
	}
	// Each run's hooks dump into a directory of their own.
	runs := map[string]*obs{}
	envs := map[string]map[string]map[string]string{} // mode → hook → NAME → value
	argvs := map[string][]string{}
	for _, mode := range []string{"native", "hookd", "exec"} {
		root := t.TempDir()
		sc.Hooks[0].Body = envDumpGuard(root, "guard")
		sc.Hooks[1].Body = "cat >/dev/null\n" + emit(ctx("PostToolUse", "exec-form-post-marker"), "", 0)
		sc.Hooks[2].Args = []string{"-e", perlEnvDump, root, "${CLAUDE_PROJECT_DIR}", "$HOME", "two words"}
		o := runClaude(t, sc, mode)
		runs[mode] = o
		envs[mode] = map[string]map[string]string{}
		for _, hook := range []string{"guard", "penv"} {
			files, _ := filepath.Glob(filepath.Join(root, hook+".*.env"))
			if len(files) == 0 {
				t.Fatalf("%s: the %s hook left no environment dump", mode, hook)
			}
			envs[mode][hook] = readEnv(t, files[0], o.root)
		}
		files, _ := filepath.Glob(filepath.Join(root, "penv.*.argv"))
		if len(files) > 0 {
			data, _ := os.ReadFile(files[0])
			argvs[mode] = strings.Split(strings.TrimSpace(strings.ReplaceAll(string(data), o.root, "$ROOT")), "\n")
		}
	}

	// The install asked the real binary and chose the exec form.
	exec := runs["exec"]
	out, _ := os.ReadFile(filepath.Join(exec.root, "install-user.txt"))
	if !regexp.MustCompile(`forwarders in the exec form: Claude Code 2\.1\.\d+ has the exec form`).Match(out) {
		t.Errorf("install did not choose the exec form from `claude --version`:\n%s", out)
	}
	settingsData, _ := os.ReadFile(filepath.Join(exec.root, "home", ".claude", "settings.json"))
	if !strings.Contains(string(settingsData), `"args": [`) || strings.Contains(string(settingsData), "hookc --timeout") {
		t.Errorf("settings hold no exec-form forwarder:\n%s", settingsData)
	}

	// Same decisions, same hook runs, the exec-form hook's context reached the model.
	for _, mode := range []string{"hookd", "exec"} {
		o, n := runs[mode], runs["native"]
		if len(o.Calls) != len(n.Calls) {
			t.Fatalf("%s: %d calls, native %d", mode, len(o.Calls), len(n.Calls))
		}
		for i := range n.Calls {
			if o.Calls[i].IsError != n.Calls[i].IsError || o.Calls[i].Decision != n.Calls[i].Decision || o.Calls[i].Result != n.Calls[i].Result {
				t.Errorf("%s call %d: %+v, native %+v", mode, i, o.Calls[i], n.Calls[i])
			}
		}
		for name, want := range sc.Counts {
			if o.Counts[name] != want {
				t.Errorf("%s: %s ran %d times, want %d", mode, name, o.Counts[name], want)
			}
		}
		if strings.Join(o.Model, "\n") != strings.Join(n.Model, "\n") {
			t.Errorf("%s: the model was told\n%s\nnatively\n%s", mode, strings.Join(o.Model, "\n"), strings.Join(n.Model, "\n"))
		}
		if !strings.Contains(strings.Join(o.Model, "\n"), "exec-form-post-marker") {
			t.Errorf("%s: the exec-form hook's context did not reach the model: %q", mode, o.Model)
		}
	}
	if !runs["native"].Calls[1].IsError || runs["native"].Calls[0].IsError {
		t.Errorf("want echo allowed and rm denied natively: %+v", runs["native"].Calls)
	}

	// Who started hookc: Claude Code itself in the exec form, a shell in the shell form.
	claude, _ := filepath.EvalSymlinks(bin.claude)
	shell, _ := filepath.EvalSymlinks("/bin/sh")
	for mode, want := range map[string]string{"exec": claude, "hookd": shell} {
		data, err := os.ReadFile(filepath.Join(runs[mode].root, "hookc-parents"))
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		parents := strings.Fields(string(data))
		if len(parents) == 0 {
			t.Fatalf("%s: hookc never ran", mode)
		}
		for _, p := range parents {
			if p != want {
				t.Errorf("%s form: hookc was started by %s, want %s", mode, p, want)
			}
		}
	}

	// The exec-form hook's argv: placeholders substituted as Claude Code does, nothing
	// else expanded.
	for _, mode := range []string{"hookd", "exec"} {
		if strings.Join(argvs[mode], "|") != strings.Join(argvs["native"], "|") {
			t.Errorf("%s: exec-form hook argv %q, native %q", mode, argvs[mode], argvs["native"])
		}
	}
	if got := strings.Join(argvs["native"], "|"); got != "$ROOT/proj|$HOME|two words" {
		t.Errorf("native exec-form argv %q", got)
	}

	// The environment of both hooks: the same names (and values, where they do not
	// depend on the run) natively and through exec-form forwarders.
	for _, hook := range []string{"guard", "penv"} {
		n, x := envs["native"][hook], envs["exec"][hook]
		if d := envDiff(n, x); d != "" {
			t.Errorf("%s hook: environment natively vs through exec-form forwarders:\n%s", hook, d)
		}
		if d := envDiff(n, envs["hookd"][hook]); d != "" {
			t.Logf("%s hook: environment natively vs through shell-form forwarders (the shell adds what an exec-form hook never has):\n%s", hook, d)
		}
	}
	if _, ok := envs["native"]["penv"]["PWD"]; ok {
		t.Errorf("natively an exec-form hook has PWD: Claude Code's exec form changed, revisit this test")
	}
	if _, ok := envs["hookd"]["penv"]["PWD"]; !ok {
		t.Logf("through shell-form forwarders the exec-form hook has no PWD either (the shell no longer adds it?)")
	}
}

// perlEnvDump, as `perl -e perlEnvDump DIR ARGS...`, reads stdin and writes its
// environment and ARGS into DIR/penv.PID.{env,argv}.
const perlEnvDump = `my $d = shift; local $/; my $in = <STDIN>;
open my $e, ">", "$d/penv.$$.env" or die; print $e "$_=$ENV{$_}\n" for sort keys %ENV; close $e;
open my $a, ">", "$d/penv.$$.argv" or die; print $a "$_\n" for @ARGV; close $a;`

var runVaries = regexp.MustCompile(`^(CLAUDE_CODE_SESSION_ID|CLAUDE_PID|CLAUDE_CODE_MESSAGING_SOCKET|CLAUDE_CODE_MESSAGING_TOKEN|CLAUDE_CODE_CHILD_NOTES_DIR|ANTHROPIC_BASE_URL)$`)

// readEnv reads `env` output: NAME → value, the run's root replaced by $ROOT.
func readEnv(t *testing.T, path, root string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" || strings.HasPrefix(k, "HOOKD_") { // hookd mode's Claude Code has HOOKD_SOCKET etc.
			continue
		}
		if runVaries.MatchString(k) {
			v = "<varies>"
		}
		out[k] = strings.ReplaceAll(v, root, "$ROOT")
	}
	return out
}

// envDiff lists the variables two environments disagree on.
func envDiff(a, b map[string]string) string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var d []string
	for _, k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		switch {
		case !oka:
			d = append(d, "+ "+k+"="+vb)
		case !okb:
			d = append(d, "- "+k+"="+va)
		case va != vb:
			d = append(d, "~ "+k+": "+va+" → "+vb)
		}
	}
	return strings.Join(d, "\n")
}
