package wrap

import (
	"strings"
	"testing"
)

// word is a literal word, or a hole when it starts with '$'.
type word struct{ s string }

func (w *word) Single() (string, bool) { return w.s, !strings.HasPrefix(w.s, "$") }
func (w *word) Source() string         { return w.s }
func (w *word) Known() bool            { return !strings.HasPrefix(w.s, "$") }
func (w *word) MaySplit() bool         { return strings.HasPrefix(w.s, "$(") }

func words(line string) []*word {
	var ws []*word
	for _, f := range strings.Fields(line) {
		ws = append(ws, &word{f})
	}
	return ws
}

func TestPeel(t *testing.T) {
	tests := []struct {
		line   string
		cmd    string // the first command run, words joined
		script string // the first script, "" for none
		bad    bool
	}{
		{line: "env - rm x", cmd: "rm x"},
		{line: "env -i FOO=1 rm x", cmd: "rm x"},
		{line: "taskset 1 rm x", cmd: "rm x"},
		{line: "taskset -p 1 2"},
		{line: "chrt -o 0 rm x", cmd: "rm x"},
		{line: "prlimit --nofile=4 rm x", cmd: "rm x"},
		{line: "setarch x86_64 -R rm x", cmd: "rm x"},
		{line: "linux32 rm x", cmd: "rm x"},
		{line: "capsh --drop=all -- -c rm", cmd: "bash -c rm"},
		{line: "sg wheel rm x", script: "rm x"},
		{line: "ip -n x netns exec ns rm x", cmd: "rm x"},
		{line: "xargs rm", cmd: "rm <input>"},
		{line: "script -q -c ls out -c rm", script: "ls"},
		{line: "timeout --frobnicate 5 rm x", bad: true},
		{line: "timeout $(echo) 5 rm x", bad: true},
		{line: "valgrind --tool=memcheck rm x", cmd: "rm x"},
	}
	for _, tt := range tests {
		ws := words(tt.line)
		w := Lookup(ws[0].s)
		if w == nil {
			t.Errorf("%q: not a wrapper", tt.line)
			continue
		}
		u := Peel(w, ws[0].s, ws)
		if (u.Bad != "") != tt.bad {
			t.Errorf("%q: bad %q", tt.line, u.Bad)
			continue
		}
		cmd := ""
		if len(u.Cmds) > 0 {
			c := u.Cmds[0]
			var parts []string
			if c.Prepend != "" {
				parts = append(parts, c.Prepend)
			}
			for _, x := range c.Words {
				parts = append(parts, x.s)
			}
			if c.AppendInput {
				parts = append(parts, "<input>")
			}
			cmd = strings.Join(parts, " ")
		}
		if cmd != tt.cmd {
			t.Errorf("%q: command %q, want %q", tt.line, cmd, tt.cmd)
		}
		script := ""
		if len(u.Scripts) > 0 {
			script = u.Scripts[0].Text
		}
		if script != tt.script {
			t.Errorf("%q: script %q, want %q", tt.line, script, tt.script)
		}
	}
}

func TestParseShellCall(t *testing.T) {
	for line, want := range map[string]string{
		"bash -c x":          "-c",
		"bash --rcfile f -i": "bad",
		"bash -O compat31":   "bad",
		"bash -O globstar f": "file",
		"bash -k -c x":       "bad",
		"bash $(x)":          "bad",
		"sh":                 "stdin",
		"bash --version":     "none",
	} {
		ws := words(line)
		sc := ParseShellCall(ws[0].s, ws)
		got := "file"
		switch {
		case sc.Bad != "":
			got = "bad"
		case sc.NoRun:
			got = "none"
		case sc.DashC:
			got = "-c"
		case sc.Stdin:
			got = "stdin"
		}
		if got != want {
			t.Errorf("%q: %s, want %s (%+v)", line, got, want, sc)
		}
	}
}
