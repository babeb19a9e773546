package rules

import (
	"math/rand/v2"
	"path"
	"strings"
	"testing"

	"github.com/hookd/hookd/rules/shell"
	"github.com/hookd/hookd/rules/shell/bash"
	"mvdan.cc/sh/v3/syntax"
)

// The differential generator builds Bash commands in which a program NAME
// runs — NAME spelled many ways, behind wrappers, inside scripts inside
// scripts, inside every compound construct — and checks that a
// Bash(NAME:*) deny rule denies each one. mvdan.cc/sh's syntax tree is the
// outside oracle: every generated command must parse, and the tree must
// show NAME (or an unknowable command word) in a simple command, so the
// generator cannot drift into commands where NAME does not run.

type choices interface{ IntN(n int) int }

// byteChoices drives the generator from fuzz input.
type byteChoices struct {
	b []byte
	i int
}

func (c *byteChoices) IntN(n int) int {
	if c.i >= len(c.b) {
		return 0
	}
	v := int(c.b[c.i])
	c.i++
	return v % n
}

// nameForms spell NAME as a command word; %s is NAME, and every form runs
// it in bash.
var nameForms = []func(n string) string{
	func(n string) string { return n },
	func(n string) string { return "/bin/" + n },
	func(n string) string { return "/usr/bin/" + n },
	func(n string) string { return "./../../bin/" + n },
	func(n string) string { return "~/../bin/" + n },
	func(n string) string { return `"` + n + `"` },
	func(n string) string { return `'` + n + `'` },
	func(n string) string { return `\` + n },
	func(n string) string { return n[:1] + `\` + n[1:] },
	func(n string) string { return n[:1] + `''` + n[1:] },
	func(n string) string { return `"` + n[:1] + `"` + n[1:] },
	func(n string) string { return `$'` + n + `'` },
	func(n string) string { return `$'\x` + hex2(n[0]) + `'` + n[1:] },
	func(n string) string { return "$(printf " + n + ")" },
	func(n string) string { return `"$(echo ` + n + `)"` },
	func(n string) string { return "${UNSET_VAR_X:-" + n + "}" },
	func(n string) string { return "/bin/" + n[:1] + "?" + n[2:] },
	func(n string) string { return "`echo " + n + "`" },
	func(n string) string { return "$EMPTY_VAR_X " + n },
}

func hex2(b byte) string {
	const h = "0123456789abcdef"
	return string([]byte{h[b>>4], h[b&15]})
}

// varForms run NAME through a variable; they are statements, used only
// where a statement fits.
var varForms = []func(n, args string) string{
	func(n, a string) string { return "{ x=" + n + "; $x " + a + "; }" },
	func(n, a string) string { return "{ export X=" + n + "; $X " + a + "; }" },
	func(n, a string) string { return "{ declare x=" + n + "; \"$x\" " + a + "; }" },
	func(n, a string) string { return "{ x=echo; x=" + n + "; ${x} " + a + "; }" },
	func(n, a string) string { return "{ x=" + n[:1] + "; x+=" + n[1:] + "; $x " + a + "; }" },
	func(n, a string) string { return "{ x=echo; if true; then x=" + n + "; fi; $x " + a + "; }" },
	func(n, a string) string { return "{ x=echo; read x; $x " + a + "; }" },
	func(n, a string) string { return "X=" + n + " bash -c '$X " + a + "'" },
}

// wrappersGen are prefixes after which a command follows as words.
var wrappersGen = []string{
	"env ", "env -i ", "env -u HOME ", "/usr/bin/env ", "env FOO=1 ", "sudo ", "sudo -u root ", "/usr/bin/sudo -n ",
	"doas ", "nice ", "nice -n 5 ", "nice -10 ", "/usr/bin/nice ", "ionice -c 3 ", "nohup ", "/usr/bin/nohup ",
	"setsid -f ", "/usr/bin/setsid ", "stdbuf -o0 ", "/usr/bin/stdbuf -oL -eL ", "timeout 5 ", "timeout -s KILL 5 ",
	"timeout --signal=TERM -k 2 1m ", "/usr/bin/timeout 5 ", "time ", "time -p ", "/usr/bin/time -v ", "command ",
	"command -p ", "exec ", "exec -a foo ", "xargs ", "xargs -0 ", "xargs -I{} ", "xargs -n 1 -P 4 ", "/usr/bin/xargs ",
	"flock /tmp/l ", "flock -w 5 /tmp/l ", "watch ", "watch -n 1 ", "nsenter -t 1 -m ", "unshare -r ", "unshare --fork --pid ",
	"chroot / ", "strace -f ", "strace -o /tmp/t ", "ltrace ", "setpriv --nnp ", "runuser -u nobody -- ", "builtin command ",
	"busybox ", "/bin/busybox ",
}

// scriptWrappers run a quoted script.
var scriptWrappers = []func(q string) string{
	func(q string) string { return "bash -c " + q },
	func(q string) string { return "sh -c " + q },
	func(q string) string { return "bash -o pipefail -c " + q },
	func(q string) string { return "bash -euc " + q },
	func(q string) string { return "bash -c -- " + q },
	func(q string) string { return "/bin/sh -c " + q + " argv0" },
	func(q string) string { return "zsh -c " + q },
	func(q string) string { return "dash -c " + q },
	func(q string) string { return "su -c " + q },
	func(q string) string { return "su - root -c " + q },
	func(q string) string { return "runuser root -c " + q },
	func(q string) string { return "script -qc " + q + " /dev/null" },
	func(q string) string { return "flock /tmp/l -c " + q },
	func(q string) string { return "trap " + q + " EXIT" },
	func(q string) string { return "eval " + q },
	func(q string) string { return "env -S " + q },
	func(q string) string { return "bash -s <<< " + q },
	func(q string) string { return "sh <<< " + q },
	func(q string) string { return "bash /dev/stdin <<< " + q },
	func(q string) string { return ". /dev/stdin <<< " + q },
	func(q string) string { return "echo " + q + " | sh" },
	func(q string) string { return "xargs sh -c " + q + " _" },
	func(q string) string { return "find . -exec sh -c " + q + " \\;" },
}

// constructs place a command C somewhere it runs.
var constructs = []string{
	"C", "true && C", "false || C", "true; C", "echo | { C; }", "{ C; } | cat", "( C )", "{ C; }", "if true; then C; fi",
	"if C; then :; fi", "if false; then :; else C; fi", "case a in a) C;; esac", "while C; do break; done",
	"until C; do :; done", "for i in 1; do C; done", "for ((i=0; i<1; i++)); do C; done", "f() { C; }; f",
	"function g { C; }; g", "time C", "time { C; }", "coproc { C; }", "{ ! { C; }; }", "[[ $( C ) ]]", "echo $((1 + $( C )))",
	"echo $( C )", "echo \"$( C )\"", "cat <(C)", "tee >(C)", "x=$( C )", "C & wait", "C > /dev/null 2>&1", "C 2>&1 | tee log",
	"select x in a; do C; done", "echo ${X:-$( C )}", "declare y=$( C )", "local z=$( C )",
	"[ -n \"$( C )\" ]", "((n = $( C )))",
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// genCommand builds a command in which name runs.
func genCommand(c choices, name string, depth int) string {
	args := []string{"x", "-rf /tmp/x", "", "--force a b", "http://example.com/x"}[c.IntN(5)]
	var cmd string
	switch k := c.IntN(10); {
	case depth > 0 && k < 3:
		// A script inside a script.
		inner := genCommand(c, name, depth-1)
		cmd = scriptWrappers[c.IntN(len(scriptWrappers))](quote(inner))
	case depth > 0 && k < 5:
		inner := genCommand(c, name, depth-1)
		cmd = strings.ReplaceAll(constructs[c.IntN(len(constructs))], "C", inner)
	case k < 6:
		cmd = varForms[c.IntN(len(varForms))](name, args)
	default:
		cmd = strings.TrimSpace(nameForms[c.IntN(len(nameForms))](name) + " " + args)
		for n := c.IntN(3); n > 0; n-- {
			cmd = wrappersGen[c.IntN(len(wrappersGen))] + cmd
		}
		if k == 9 {
			// Assignments only count in front of the whole command.
			cmd = []string{"FOO=1 ", "PATH=/usr/bin:$PATH ", "LD_PRELOAD= "}[c.IntN(3)] + cmd
		}
		if first, _, _ := strings.Cut(cmd, " "); c.IntN(4) == 0 && !strings.Contains(first, "=") {
			// find execs the word itself: an assignment there is a program name.
			cmd = "find . -name '*.tmp' -exec " + cmd + " {} \\;"
		}
	}
	if depth > 0 && c.IntN(3) == 0 {
		cmd = strings.ReplaceAll(constructs[c.IntN(len(constructs))], "C", cmd)
	}
	return cmd
}

// oracleMayRun reports whether, by mvdan's syntax tree, name may run in
// src: some simple command (also inside literal strings that parse as
// scripts, to a depth of 6) has a word whose literal text is name or a path
// ending in it, or a word whose value cannot be known statically.
func oracleMayRun(src, name string, depth int) (bool, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return false, err
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			for _, w := range n.Args {
				lit, dyn := oracleLit(w)
				if dyn || lit == name || path.Base(lit) == name {
					found = true
					return false
				}
				if depth > 0 && strings.ContainsAny(lit, " \t\n;|&\"'\\$`*?[{") {
					if ok, _ := oracleMayRun(lit, name, depth-1); ok {
						found = true
						return false
					}
				}
			}
			for _, a := range n.Assigns {
				if a.Value != nil {
					if lit, _ := oracleLit(a.Value); strings.Contains(lit, name) {
						found = true // X=rm bash -c '$X …'
					}
				}
			}
		case *syntax.Redirect:
			for _, w := range []*syntax.Word{n.Word, n.Hdoc} {
				if w == nil {
					continue
				}
				if lit, _ := oracleLit(w); depth > 0 && lit != "" {
					if ok, _ := oracleMayRun(lit, name, depth-1); ok {
						found = true
					}
				}
			}
		}
		return true
	})
	return found, nil
}

// oracleLit concatenates the literal parts of a word with quotes removed
// the simple way; dyn reports any expansion.
func oracleLit(w *syntax.Word) (lit string, dyn bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(strings.ReplaceAll(p.Value, `\`, ""))
			if strings.ContainsAny(p.Value, "*?[") {
				dyn = true
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				dyn = true // decoded by hookd; the oracle stays simple
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				} else {
					dyn = true
				}
			}
		default:
			dyn = true
		}
	}
	return b.String(), dyn
}

var genNames = []string{"rm", "curl", "git", "dd", "nc"}

// checkGenerated asserts the deny rule for name denies cmd.
func checkGenerated(t testing.TB, cmd, name string) {
	t.Helper()
	ok, err := oracleMayRun(cmd, name, 6)
	if err != nil {
		t.Fatalf("generator bug: mvdan cannot parse %q: %v", cmd, err)
	}
	if !ok {
		t.Fatalf("generator bug: by mvdan's tree %s cannot run in %q", name, cmd)
	}
	r, err := Parse("Bash("+name+":*)", Deny, projectOrigin)
	if err != nil {
		t.Fatal(err)
	}
	res := Resolve(DecisionAllow, NewSet([]*Rule{r}), Call{Tool: "Bash", Input: map[string]any{"command": cmd}, Cwd: "/proj", Home: "/home/u"})
	if res.Final != DecisionDeny {
		t.Fatalf("%s can run in %q, but deny rule %s gives %q", name, cmd, r.Text, res.Final)
	}
}

// TestDifferentialGenerated runs 12,000 generated commands (a few seconds);
// issue 10 asks for at least 10,000 with no miss.
func TestDifferentialGenerated(t *testing.T) {
	n := 12000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(10, 2026))
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		name := genNames[rng.IntN(len(genNames))]
		cmd := genCommand(rng, name, 1+rng.IntN(3))
		if rng.IntN(8) == 0 {
			// A here-document body only ends at a line of its own, so it is
			// only ever the outermost layer.
			cmd = "cat <<EOF\n$( " + cmd + " )\nEOF"
		}
		seen[cmd] = true
		checkGenerated(t, cmd, name)
	}
	if len(seen) < n/2 {
		t.Fatalf("only %d distinct commands out of %d", len(seen), n)
	}
	t.Logf("%d commands, %d distinct, 0 misses", n, len(seen))
}

// FuzzDifferential drives the generator with fuzz input.
func FuzzDifferential(f *testing.F) {
	for i := 0; i < 64; i++ {
		f.Add([]byte{byte(i), byte(i * 7), byte(i * 13), byte(i * 31), 3, 1, 4, 1, 5, 9, 2, 6})
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &byteChoices{b: b}
		name := genNames[c.IntN(len(genNames))]
		cmd := genCommand(c, name, 1+c.IntN(3))
		checkGenerated(t, cmd, name)
	})
}

// FuzzBashOracle: for any input mvdan parses, every simple command whose
// command word is a plain literal is denied by a deny rule naming it, and
// nothing panics. Seeded with the forms and the conformance table
// (package shell's FuzzSplit is seeded with its Split table).
func FuzzBashOracle(f *testing.F) {
	for _, fm := range loadForms(f) {
		f.Add(fm.Command)
	}
	for _, c := range loadConformance(f) {
		if cmd, ok := c.Call.Input["command"].(string); ok {
			f.Add(cmd)
		}
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		subs, err := shell.Split(cmd)
		if err != nil {
			if subs != nil {
				t.Fatal("subcommands and an error")
			}
			r, _ := Parse("Bash(definitely-not-a-command-xyz)", Deny, projectOrigin)
			if m := NewSet([]*Rule{r}).Evaluate(Call{Tool: "Bash", Input: map[string]any{"command": cmd}}); m.Decision != DecisionDeny || !m.FailClosed {
				t.Fatalf("unparseable %q: deny rule did not fail closed: %+v", cmd, m)
			}
			return
		}
		if strings.ContainsRune(cmd, '\r') {
			return // mvdan reads a carriage return as a blank, bash (and hookd) as a word character: no oracle here (the real-bash oracle covers it)
		}
		fl, perr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
		if perr != nil {
			return // hookd parsed it within its own limits; nothing to compare
		}
		var names []string
		bash.FixCoprocs(fl) // bash's reading of `coproc NAME cmd | …` (docs/rules.md)
		syntax.Walk(fl, func(n syntax.Node) bool {
			if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
				if lit := ce.Args[0].Lit(); lit != "" && !strings.ContainsAny(lit, "\\*?[]{}()=:\"' \t\n\r!#$&;<>|`~") {
					names = append(names, lit)
				}
			}
			return true
		})
		for _, n := range names {
			r, err := Parse("Bash("+n+":*)", Deny, projectOrigin)
			if err != nil {
				continue
			}
			if m := NewSet([]*Rule{r}).Evaluate(Call{Tool: "Bash", Input: map[string]any{"command": cmd}}); m.Decision != DecisionDeny {
				t.Fatalf("mvdan sees %q run in %q, but %s does not deny it", n, cmd, r.Text)
			}
		}
	})
}
