package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/hookd/hookd/protocol/lite"
)

// stdFlags is hookc's command line as a flag.FlagSet, exactly as hookc defined it before
// it parsed flags by hand: the oracle for parseFlags.
func stdFlags(getenv func(string) string, stderr *bytes.Buffer) (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet("hookc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.socket, "socket", lite.SocketPath(getenv), "daemon socket path (env "+lite.EnvSocket+")")
	fs.BoolVar(&o.stream, "stream", false, "print every frame as a JSON line instead of the hook output")
	fs.StringVar(&o.projectDir, "project-dir", getenv("CLAUDE_PROJECT_DIR"), "project directory (default $CLAUDE_PROJECT_DIR)")
	fs.DurationVar(&o.timeout, "timeout", 0, "give up on the daemon after this long and fail closed (0: no limit); default: the event's default hook timeout less a tenth, at most 10 s (590s for most events); the installed forwarder passes its own hook timeout less that margin")
	fs.BoolVar(&o.fallback, "fallback", true, "when the daemon is unreachable, run the event in-process with `hookd run`")
	fs.StringVar(&o.harness, "harness", getenv("HOOKD_HARNESS"), "the agent running this forwarder: claude-code, codex or gemini (default: detected from the payload; env HOOKD_HARNESS)")
	fs.BoolVar(&o.version, "version", false, "print hookc's version, commit, build date and the harness versions it was checked against, and exit")
	fs.BoolVar(&o.debug, "debug", getenv("HOOKC_DEBUG") != "", "print the decision id and timings on stderr (env HOOKC_DEBUG)")
	fs.Usage = func() {
		stderr.WriteString("usage: hookc [flags] < event.json\n\nForward one hook event to hookd and print the Claude Code hook output.\n\n")
		fs.PrintDefaults()
	}
	return fs, &o
}

func TestFlagsMatchPackageFlag(t *testing.T) {
	envs := [][]string{
		nil,
		{"HOOKD_SOCKET=/s/x.sock", "CLAUDE_PROJECT_DIR=/p \"q\"", "HOOKD_HARNESS=codex", "HOOKC_DEBUG=1"},
		{"XDG_RUNTIME_DIR=/run/user/7", "HOME=/h"},
		{"HOME=/h", "HOME=/h2"},
		{"TMPDIR=/t"},
	}
	argvs := [][]string{
		{}, {"-h"}, {"--help"}, {"-help=x"}, {"-x"}, {"--nope=1"}, {"-"}, {"--"}, {"--", "-debug"}, {"---x"}, {"-=x"}, {"--=x"},
		{"-debug"}, {"-debug=false"}, {"-debug=maybe"}, {"--fallback=false"}, {"-fallback", "false"}, {"-stream", "-stream=0"},
		{"-socket"}, {"-socket", "/a/b"}, {"--socket=/a=b"}, {"-socket=", "x"}, {"-project-dir", "/p", "-harness", "gemini"},
		{"-timeout", "2s"}, {"-timeout=0"}, {"--timeout", "1.5h3m"}, {"-timeout", "soon"}, {"-timeout"}, {"-timeout", "-debug"},
		{"positional", "-debug"}, {"-debug", "positional", "-x"}, {"-harness"}, {"-debug=T", "-fallback=F", "-stream=1"},
		{"--version"}, {"-version=false", "-debug"}, {"-version", "-x"},
	}
	for _, env := range envs {
		getenv := lite.Getenv(env)
		for _, args := range argvs {
			var gotErr, wantErr bytes.Buffer
			got, code, ok := parseFlags(args, getenv, &gotErr)
			fs, want := stdFlags(getenv, &wantErr)
			err := fs.Parse(args)
			wantCode, wantOK := 0, err == nil
			if err != nil && !errors.Is(err, flag.ErrHelp) {
				wantCode = 2
			}
			fs.Visit(func(f *flag.Flag) { want.timeoutSet = want.timeoutSet || f.Name == "timeout" })
			if ok != wantOK || code != wantCode || gotErr.String() != wantErr.String() {
				t.Fatalf("env %q args %q: ok %v code %d stderr\n%s\npackage flag: ok %v code %d stderr\n%s", env, args, ok, code, gotErr.String(), wantOK, wantCode, wantErr.String())
			}
			if ok && got != *want {
				t.Fatalf("env %q args %q: %+v, package flag %+v", env, args, got, *want)
			}
		}
	}
}

func TestGetenvMatchesEnvironSemantics(t *testing.T) {
	get := lite.Getenv([]string{"A=1", "AB=2", "A=3", "EMPTY=", "NOEQ"})
	for k, want := range map[string]string{"A": "3", "AB": "2", "EMPTY": "", "NOEQ": "", "B": ""} {
		if got := get(k); got != want {
			t.Errorf("getenv(%q) = %q, want %q", k, got, want)
		}
	}
}

func TestRunesMatchesFmt(t *testing.T) {
	for _, s := range []string{"", "abc", "0123456789ab", "0123456789abcdef", "ééééééééééééééé", "\xff\xfe0123456789abc", "日本語日本語日本語日本語日本語"} {
		if got, want := runes(s, 12), fmt.Sprintf("%.12s", s); got != want {
			t.Errorf("runes(%q, 12) = %q, fmt %q", s, got, want)
		}
	}
}
