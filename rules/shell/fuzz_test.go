package shell

import (
	"github.com/hookd/hookd/rules/shell/bash"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzSplit checks the package's promises on any input: Analyze and Split
// never panic and agree; a command that could not be resolved carries a
// hole and no Strict view; and, with mvdan's own syntax tree as the outside
// oracle, every simple command whose name is a plain literal is seen: some
// view (or the whole line) is, or with its holes filled in could be, that
// name alone or followed by a space. That last property is what a refusing
// pattern `NAME *` relies on; package rules checks it end to end through
// its Bash(…) deny rules (FuzzBashOracle, FuzzDifferential).
func FuzzSplit(f *testing.F) {
	for _, tt := range splitTests {
		f.Add(tt.cmd)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		a := Analyze(cmd)
		cmds, err := Split(cmd)
		if (err != nil) != (a.Err != nil) {
			t.Fatalf("Split error %v, Analyze error %v", err, a.Err)
		}
		if err != nil {
			if cmds != nil || len(a.Commands) != 0 {
				t.Fatalf("%q: commands and an error", cmd)
			}
			if !strings.HasPrefix(err.Error(), "shell: ") {
				t.Fatalf("error %q lacks the shell: prefix", err)
			}
			return
		}
		if len(cmds) != len(a.Commands) {
			t.Fatalf("Split lists %d commands, Analyze %d", len(cmds), len(a.Commands))
		}
		for i, c := range a.Commands {
			if cmds[i] != c.Text {
				t.Fatalf("Split[%d] = %q, Analyze says %q", i, cmds[i], c.Text)
			}
			if len(c.Views) == 0 {
				t.Fatalf("%q: command %q has no view", cmd, c.Text)
			}
			if c.Unresolved != "" {
				if len(c.Strict) != 0 {
					t.Fatalf("%q: unresolved command %q has Strict views %q", cmd, c.Text, c.Strict)
				}
				if !hasHole(c.Views) {
					t.Fatalf("%q: unresolved command %q (%s) has no hole in its views", cmd, c.Text, c.Unresolved)
				}
			}
		}
		if strings.ContainsRune(cmd, '\r') {
			return // mvdan reads a carriage return as a blank, bash (and hookd) as a word character: no oracle here (the real-bash oracle covers it)
		}
		fl, perr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
		if perr != nil {
			return // parsed within Analyze's own limits but not by a fresh parser: nothing to compare
		}
		bash.FixCoprocs(fl) // bash's reading of `coproc NAME cmd | …` (parse.go)
		syntax.Walk(fl, func(n syntax.Node) bool {
			ce, ok := n.(*syntax.CallExpr)
			if !ok || len(ce.Args) == 0 {
				return true
			}
			name := ce.Args[0].Lit()
			if name == "" || strings.ContainsAny(name, "\\*?[]{}()=:\"' \t\n\r!#$&;<>|`~") {
				return true
			}
			if !seen(a, name) {
				t.Fatalf("mvdan sees %q run in %q, but no view of %q could start with it", name, cmd, cmds)
			}
			return true
		})
	})
}

func hasHole(vs []View) bool {
	for _, v := range vs {
		if strings.IndexByte(v.Text, Hole) >= 0 {
			return true
		}
	}
	return false
}

// seen reports whether the whole line or some view could be name, or name
// and a space and more, once its holes are filled in.
func seen(a *Analysis, name string) bool {
	if couldStart(a.Full, name) {
		return true
	}
	for _, c := range a.Commands {
		for _, v := range c.Views {
			if couldStart(v.Text, name) {
				return true
			}
		}
	}
	return false
}

// couldStart walks v against "name ": a hole can produce whatever is left,
// so reaching one before a mismatch is enough.
func couldStart(v, name string) bool {
	t := name + " "
	i := 0
	for ; i < len(v) && i < len(t); i++ {
		if v[i] == Hole {
			return true
		}
		if v[i] != t[i] {
			return false
		}
	}
	return i == len(t) || i == len(name) && i == len(v)
}

// deepOpeners and deepClosers nest a command: deepOpeners[i] + C +
// deepClosers[i] runs C.
var deepOpeners = []string{"$(", "(", "{ ", "if true; then ", "while true; do ", "case a in a) ", "\"$(", "`", "time ",
	"! ", "true && ", "true | ", "f() { ", "[[ $(", "echo $(( a[$(", "bash -c '", "eval '", "x=$(", "cat <(", "for i in 1; do "}
var deepClosers = []string{")", ")", "; }", "; fi", "; break; done", ";; esac", ")\"", "`", "", "", "", "", "; }; f", ") ]]",
	") ] ))", "'", "'", ")", ")", "; done"}

// FuzzDeep drives deep and wide generators from fuzz input: a command made
// of layers of nesting (chosen per layer, any depth the input asks for,
// well past the bounds) behind a run of repeated commands (any width, past
// the 4,096 bound), around an rm. Analyze must answer within a 64 MiB
// stack, and unless the line is refused outright, rm must be seen or
// something must be unresolved.
func FuzzDeep(f *testing.F) {
	f.Add([]byte{0, 200, 1}, uint16(300), uint16(0))
	f.Add([]byte{14}, uint16(40000), uint16(0))
	f.Add([]byte{3, 4, 5}, uint16(5000), uint16(4097))
	f.Add([]byte{10, 11}, uint16(60000), uint16(100))
	f.Add([]byte{15, 15, 15, 8}, uint16(300), uint16(3)) // CI, 2026-11-28: three bash -c ' layers
	old := debug.SetMaxStack(64 << 20)
	defer debug.SetMaxStack(old)
	f.Fuzz(func(t *testing.T, layers []byte, depth, width uint16) {
		if len(layers) == 0 || len(layers) > 16 {
			return
		}
		var open strings.Builder
		var closers []string
		per := int(depth)/len(layers) + 1
		quoted := map[string]bool{}
		for _, l := range layers {
			i := int(l) % len(deepOpeners)
			n := per
			if q := deepClosers[i]; q == "'" || q == "`" {
				// Quotes do not nest without escaping: a second layer
				// closed by the same quote ends the first, and what
				// follows is no longer the nested command. In
				// bash -c 'bash -c 'rm -rf x'' the script is "bash -c
				// bash" and "rm -rf x" only its unused $1 (real bash
				// reads stdin and never runs rm), so one layer of each.
				if quoted[q] {
					continue
				}
				quoted[q] = true
				n = 1
			}
			for k := 0; k < n && open.Len() < 1<<20; k++ {
				open.WriteString(deepOpeners[i])
				closers = append(closers, deepClosers[i])
			}
		}
		slices.Reverse(closers)
		cmd := strings.Repeat(":;", int(width)) + open.String() + "rm -rf x" + strings.Join(closers, "")
		a := Analyze(cmd)
		if a.Err != nil {
			return
		}
		for _, c := range a.Commands {
			if c.Unresolved != "" {
				return
			}
		}
		if !seen(a, "rm") {
			t.Fatalf("rm is neither seen nor unresolved in %.200q…", cmd)
		}
	})
}
