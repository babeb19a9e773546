package shell

import (
	"runtime/debug"
	"strings"
	"testing"
)

// postureTests pin the contract of docs/rules.md: each construct is either
// modelled (the program it runs is a view) or fails closed (a command is
// unresolved, with the construct named, and a hole stands for all of it),
// or the line is not analysed at all (Err).
var postureTests = []struct {
	name, cmd string
	view      string // a view that must be present ("" for none)
	why       string // a substring of some command's Unresolved ("" for none)
	err       string // a substring of Analysis.Err
}{
	// Bounds.
	{"5000 empty commands then rm", strings.Repeat(":;", 5000) + "rm -rf x", "", "more than 4096 commands", ""},
	{"deep subscripts", "echo $(( " + strings.Repeat("a[", 300000) + "1" + strings.Repeat("]", 300000) + " ))", "", "", "too deeply nested"},
	{"deep quoted payload parses", "cat <<'E'\n" + strings.Repeat("(((( [[[[ {{{{ ---- ||||\n", 20000) + "E\nrm -rf x", "rm -rf x", "", ""},
	{"over a MiB", strings.Repeat("x", 1<<20+1), "", "", "too long"},
	{"NUL byte", "ls\x00; rm -rf x", "", "", "NUL"},
	// Where mvdan and bash disagree.
	{"comment ending in a backslash", "ls # note \\\nrm -rf x", "rm -rf x", "", ""},
	{"carriage return before a comment", "echo a \r# ; rm -rf x", "rm -rf x", "", ""},
	{"carriage return is a word character", "rm\r -rf x", "rm\r -rf x", "", ""},
	{"coproc NAME cmd | …", "coproc rm -rf x | cat", "rm -rf x", "", ""},
	{"a shell as a coprocess reads a pipe", "coproc bash; echo 'rm -rf x' >&${COPROC[1]}", "", "reads its script from a pipe", ""},
	{"coproc X=1 cmd | …", "coproc LC_ALL=C env -i rm -f y | cat", "rm -f y", "", ""},
	{"coproc NAME { …; } | …", "coproc N { rm -f y; } | cat", "rm -f y", "", ""},
	{"here-document line continuation ends it early", "cat <<E\nfoo\nE\\\n\nrm -rf x\nE", "", "ends `<<E` early", ""},
	{"here-document line continuation elsewhere", "cat <<E\nfoo \\\nbar\nE\nls", "ls", "", ""},
	{"ANSI-C string ends at NUL", "$'rm\\0zz' -rf x", "rm -rf x", "", ""},
	// Names.
	{"env -", "env - rm -rf x", "rm -rf x", "", ""},
	{"partly literal name", "eval$x rm -rf x", "", "command name is not a literal: `eval$x`", ""},
	{"glob name", "/usr/bin/en? rm -rf x", "", "command name is not a literal", ""},
	{"environment variable name", "$EDITOR notes.txt", "\x00notes.txt", "command name is not a literal: `$EDITOR`", ""},
	{"environment shell -c", "$SHELL -c 'rm -rf /'", "rm -rf /", "command name is not a literal: `$SHELL`", ""},
	{"the shell's own executable", "/proc/self/exe -c 'rm -rf /'", "rm -rf /", "", ""},
	{"a process's executable", "/proc/$$/exe -c 'rm -rf /'", "rm -rf /", "", ""},
	{"a wrapper by a path from the environment", "\"$VENV/bin/env\" rm -rf /", "rm -rf /", "", ""},
	{"a program from a descriptor", "exec 3</usr/bin/rm; /dev/fd/3 -rf x", "", "open descriptor", ""},
	{"history expansion", "set -o history -H\n: rm -rf x\n!!:1*", "", "set -H", ""},
	{"environment shell behind a wrapper", "sudo $SHELL -c 'rm -rf /'", "rm -rf /", "command name is not a literal", ""},
	{"environment eval", "$X 'rm -rf /'", "rm -rf /", "command name is not a literal: `$X`", ""},
	{"environment wrapper", "\"$X\" rm -rf /", "rm -rf /", "command name is not a literal", ""},
	{"environment program, computed argument", "$X $(echo rm -rf /)", "\x00", "command name is not a literal", ""},
	{"xargs feeds a wrapper", "echo rm -rf x | xargs env", "", "takes its program from its input", ""},
	{"xargs appends", "echo x | xargs rm", "rm \x00", "", ""},
	{"taskset", "taskset 1 rm -rf x", "rm -rf x", "", ""},
	{"unshare starts a shell reading stdin", "unshare <<< 'rm -rf x'", "rm -rf x", "", ""},
	{"su starts a shell reading a pipe", "echo 'rm -rf x' | su root", "", "reads its script from a pipe", ""},
	{"sudo -s reads stdin", "sudo -s <<< 'rm -rf x'", "rm -rf x", "", ""},
	{"sudo alone reads nothing", "sudo <<< 'rm -rf x'", "", "", ""},
	{"sg GROUP starts a shell", "sg wheel <<< 'rm -rf x'", "rm -rf x", "", ""},
	{"env -S escapes", `env -S 'rm\_-rf\_x'`, "", "env -S", ""},
	{"env -S plain", `env -S 'rm -rf' x`, "rm -rf x", "", ""},
	{"array element as a name", "a=(rm -rf x); ${a[0]} -rf x", "", "command name is not a literal", ""},
	{"taskset -p runs nothing", "taskset -p 1 2", "", "", ""},
	{"chrt", "chrt -o 0 rm -rf x", "rm -rf x", "", ""},
	{"prlimit", "prlimit --nofile=10 rm -rf x", "rm -rf x", "", ""},
	{"setarch", "setarch x86_64 -R rm -rf x", "rm -rf x", "", ""},
	{"capsh", "capsh -- -c 'rm -rf x'", "rm -rf x", "", ""},
	{"sg", "sg wheel 'rm -rf x'", "rm -rf x", "", ""},
	{"ip netns exec", "ip netns exec n rm -rf x", "rm -rf x", "", ""},
	{"hash -p", "hash -p /bin/rm ls; ls -rf x", "rm -rf x", "", ""},
	{"hash -p unknown path", "hash -p \"$P\" ls; ls -rf x", "", "hash -p", ""},
	{"BASH_CMDS", "BASH_CMDS[ls]=/bin/rm; ls -rf x", "", "BASH_CMDS", ""},
	{"alias use", "alias ls=rm\nls -rf x", "rm", "may be an alias", ""},
	{"alias keyword", "alias fi=ls\nls", "", "keyword", ""},
	{"alias not a literal", "alias \"$a\"", "", "alias whose name is not a literal", ""},
	{"quoted name is no alias", "alias ls=rm\n\\ls -la", "ls -la", "", ""},
	// Variables.
	{"printf -v", "printf -v x rm; $x -rf x", "", "command name is not a literal: `$x`", ""},
	{"read -a", "read -a a <<< rm; ${a[0]} -rf x", "", "command name is not a literal", ""},
	{"IFS split", "IFS=_; c=rm_-rf_x; $c", "", "command name is not a literal: `$c`", ""},
	{"IFS= read keeps literal names", "while IFS= read -r l; do echo \"$l\"; done < f", "echo \"$l\"", "", ""},
	{"declare -l", "declare -l x=RM; $x -rf x", "", "command name is not a literal", ""},
	{"declare -l, then an assignment", "declare -l x; x=RM; $x -rf x", "", "command name is not a literal", ""},
	{"eval --", "eval -- 'rm -rf x'", "rm -rf x", "", ""},
	{"positional after set", "set -- rm; $1 -rf x", "", "command name is not a literal: `$1`", ""},
	{"$_", "echo rm; $_ -rf x", "", "command name is not a literal: `$_`", ""},
	{"default value", "${X:-rm} -rf x", "", "command name is not a literal", ""},
	{"literal assignment stays known", "x=rm; $x -rf x", "rm -rf x", "", ""},
	{"source --", "source -- /dev/stdin <<< 'rm -rf x'", "rm -rf x", "", ""},
	{"link to standard input", "ln -s /dev/stdin s; bash s <<< 'rm -rf x'", "rm -rf x", "", ""},
	{"exec'd descriptor", "exec 3<<< 'rm -rf x'; bash /dev/fd/3", "", "produced by a command", ""},
	{"exec'd standard input", "exec <<< 'rm -rf x'; bash", "rm -rf x", "", ""},
	// Code in data.
	{"arithmetic on a literal with a subscript", "x='a[$(rm -rf x)]'; echo $((x))", "", "arithmetic evaluates", ""},
	{"arithmetic on a command's output", "echo $(( $(echo 'a[$(rm -rf x)]') ))", "", "arithmetic evaluates the output", ""},
	{"arithmetic inside a string's arithmetic", "a=(1); echo ${a['$(( $(rm -rf x) ))']}", "", "arithmetic evaluates the output", ""},
	{"text after a string's expression", "x='1 a[$(rm -rf x)]'; echo $((x))", "", "cannot parse", ""},
	{"a string's expression mvdan cannot parse", "declare -i n; n='a[$(cat <<E\nfoo\nE\\\n\nrm -rf x\nE)]'", "", "cannot parse", ""},
	{"arithmetic on a number", "n=3; echo $(( n * 2 ))", "", "", ""},
	{"arithmetic on the environment", "echo $(( COLUMNS - 2 ))", "", "", ""},
	{"arithmetic on an integer", "i=0; (( i++ )); echo $(( i + 1 ))", "", "", ""},
	{"arithmetic on a value read", "read n; echo $(( n + 1 ))", "", "arithmetic evaluates `n`", ""},
	{"let with a quoted subscript", "let 'x=a[$(rm -rf x)]'", "", "arithmetic evaluates", ""},
	{"declare -i", "declare -i n; n='a[$(rm -rf x)]'", "", "arithmetic evaluates", ""},
	{"read into an integer", "declare -i n; read n <<< 'a[$(rm -rf x)]'", "", "integer variable", ""},
	{"printf -v into an integer", "typeset -i n; printf -v n %s 'a[$(rm -rf x)]'", "", "integer variable", ""},
	{"for over an integer", "declare -i n; for n in 'a[$(rm -rf x)]'; do :; done", "", "arithmetic evaluates", ""},
	{"integer array", "declare -ai a=('a[$(rm -rf x)]')", "", "arithmetic evaluates", ""},
	{"integer through a name reference", "declare -n r=n; declare -i n; r='a[$(rm -rf x)]'", "", "arithmetic evaluates", ""},
	{"[[ -eq ]] operand", "[[ 'a[$(rm -rf x)]' -eq 1 ]]", "", "arithmetic evaluates", ""},
	{"[[ -v ]]", "[[ -v 'a[$(rm -rf x)]' ]]", "", "subscript", ""},
	{"test -v", "test -v 'a[$(rm -rf x)]'", "", "subscript", ""},
	{"printf -v subscript", "printf -v 'a[$(rm -rf x)]' y", "", "subscript", ""},
	{"read subscript", "read 'a[$(rm -rf x)]' <<< y", "", "subscript", ""},
	{"unset subscript", "unset 'a[$(rm -rf x)]'", "", "subscript", ""},
	{"nameref", "declare -n r='a[$(rm -rf x)]'; echo $r", "", "subscript", ""},
	{"nameref without target", "declare -n r; r=x", "", "name reference", ""},
	{"indirection", "x='a[$(rm -rf x)]'; echo ${!x}", "", "subscript", ""},
	{"prompt expansion", "v='$(rm -rf x)'; echo ${v@P}", "", "as a prompt", ""},
	{"PS4", "PS4='$(rm -rf x)'; set -x; ls", "", "PS4", ""},
	{"mapfile -C", "mapfile -C 'rm -rf x #' -c 1 a < f", "rm -rf x", "", ""},
	{"compgen -C", "compgen -C 'rm -rf x' w", "rm -rf x", "", ""},
	{"compgen -W", "compgen -W '$(rm -rf x)' w", "rm -rf x", "", ""},
	{"fc", "set -o history; history -s 'rm -rf x'; fc -s", "", "history", ""},
	// Shell state.
	{"BASH_ENV", "BASH_ENV=/dev/stdin bash -c ls <<< 'rm -rf x'", "", "BASH_ENV", ""},
	{"env BASH_ENV", "env BASH_ENV=/tmp/f bash -c ls", "", "BASH_ENV", ""},
	{"--rcfile", "bash --rcfile <(echo rm -rf x) -i", "", "start-up file", ""},
	{"shopt compat", "shopt -s compat31; ls", "", "compat31", ""},
	{"shopt globstar is modelled", "shopt -s globstar; ls **/*.go", "ls **/*.go", "", ""},
	{"set -o posix", "set -o posix; ls", "", "posix", ""},
	{"set -euo pipefail is modelled", "set -euo pipefail; ls", "ls", "", ""},
	{"enable -f", "enable -f ./x.so ls; ls", "", "enable -f", ""},
	{"assignment to a name that is not a literal", "declare \"$n=1\"; ls", "", "not a literal", ""},
	{"locale string after TEXTDOMAIN", "TEXTDOMAIN=x; $\"rm\" -rf x", "", "command name is not a literal", ""},
	{"locale string", "$\"rm\" -rf x", "rm -rf x", "", ""},
	{"lone tilde after HOME", "HOME=/bin/rm; ~ -rf x", "", "command name is not a literal: `~`", ""},
	{"tilde path keeps its base", "~/bin/tool x", "tool x", "", ""},
}

func TestPosture(t *testing.T) {
	for _, tt := range postureTests {
		t.Run(tt.name, func(t *testing.T) {
			a := Analyze(tt.cmd)
			if tt.err != "" {
				if a.Err == nil || !strings.Contains(a.Err.Error(), tt.err) {
					t.Fatalf("Err = %v, want %q", a.Err, tt.err)
				}
				return
			}
			if a.Err != nil {
				t.Fatalf("Err = %v", a.Err)
			}
			var whys []string
			found := tt.view == ""
			for _, c := range a.Commands {
				if c.Unresolved != "" {
					whys = append(whys, c.Unresolved)
					if !hasHole(c.Views) || len(c.Strict) != 0 {
						t.Errorf("unresolved %q: views %q strict %q", c.Unresolved, c.Views, c.Strict)
					}
				}
				for _, v := range c.Views {
					if v.Text == tt.view {
						found = true
					}
				}
			}
			if !found {
				t.Errorf("no view %q in %s", tt.view, dump(a))
			}
			switch {
			case tt.why == "" && len(whys) > 0:
				t.Errorf("unresolved %q, want none", whys)
			case tt.why != "" && !strings.Contains(strings.Join(whys, "\n"), tt.why):
				t.Errorf("unresolved %q, want %q", whys, tt.why)
			}
		})
	}
}

func dump(a *Analysis) string {
	var b strings.Builder
	for _, c := range a.Commands {
		b.WriteString("\n  " + c.Text)
		for _, v := range c.Views {
			b.WriteString("\n    view " + strings.ReplaceAll(v.Text, "\x00", "<?>"))
		}
		if c.Unresolved != "" {
			b.WriteString("\n    unresolved " + c.Unresolved)
		}
	}
	return b.String()
}

// TestDeepInputsBounded: inputs of every shape the parser and the walkers
// recurse on, at the size limit, are answered within a 64 MiB stack (the
// default is 1 GiB; the test fails with a fatal stack overflow if a bound
// is missing).
func TestDeepInputsBounded(t *testing.T) {
	old := debug.SetMaxStack(64 << 20)
	defer debug.SetMaxStack(old)
	for name, src := range deepShapes(1<<20 - 64) {
		a := Analyze(src)
		if a.Err == nil && len(a.Commands) == 0 {
			t.Errorf("%s: no error and no command", name)
		}
	}
}

// deepShapes builds inputs of about n bytes nesting one construct.
func deepShapes(n int) map[string]string {
	rep := func(open, mid, close string) string {
		k := (n - len(mid)) / (len(open) + len(close))
		return strings.Repeat(open, k) + mid + strings.Repeat(close, k)
	}
	return map[string]string{
		"colons":     strings.Repeat(":;", n/2),
		"and":        strings.Repeat("true && ", n/8) + "rm x",
		"pipe":       strings.Repeat("true | ", n/7) + "rm x",
		"subscript":  "echo $(( " + rep("a[", "1", "]") + " ))",
		"ternary":    "echo $(( " + strings.Repeat("a?b:", n/4) + "1 ))",
		"assign":     "echo $(( " + strings.Repeat("a=", n/2) + "1 ))",
		"power":      "echo $(( " + strings.Repeat("2**", n/3) + "1 ))",
		"unary":      "echo $(( " + strings.Repeat("- ", n/2) + "1 ))",
		"not":        "echo $(( " + strings.Repeat("!", n) + "1 ))",
		"if":         rep("if true; then ", "rm x", "; fi"),
		"while":      rep("while true; do ", "rm x", "; done"),
		"case":       rep("case a in a) ", "rm x", ";; esac"),
		"time":       strings.Repeat("time ", n/5) + "rm x",
		"test not":   "[[ " + strings.Repeat("! ", n/2) + "x ]]",
		"test and":   "[[ " + strings.Repeat("x && ", n/5) + "x ]]",
		"parens":     rep("(", "rm x", ")"),
		"braces":     rep("{ ", "rm x", "; }"),
		"substs":     rep("$(", "rm x", ")"),
		"quoted":     rep(`"$(`, "rm x", `)"`),
		"backquotes": strings.Repeat("`", n),
		"params":     "echo " + rep("${x:-", "rm", "}"),
		"functions":  strings.Repeat("f() ", n/4) + "{ rm x; }",
		"words":      "echo " + strings.Repeat("a ", n/2),
		"array":      "a=(" + strings.Repeat("x ", n/2) + ")",
		"braceexp":   "echo " + strings.Repeat("{a,b}", n/5),
		"bangs":      "echo $(( " + rep("(", "1", ")") + " ))",
		"hidden":     "echo \"$(echo \")\"" + rep("$(echo \")\"", "rm x", ")"),
	}
}

// splitTests: a word computed at run time that may split into any number
// of words shifts a wrapper's arguments: what runs is unknown.
func TestSplitWordsBeforeTheCommand(t *testing.T) {
	for _, cmd := range []string{
		"timeout $(echo -k 1) 5 rm -rf x", "su $(echo -c rm)", "find . $(echo -exec rm -rf x ';')",
		"bash $(echo -c rm)", "script -qc script -qc $EMPTY rm -f -- y", "env $(echo rm) -rf x", "nice * -rf x",
		"xargs $(echo -I{} rm) {}",
	} {
		a := Analyze(cmd)
		unresolved := false
		for _, c := range a.Commands {
			if c.Unresolved != "" && hasHole(c.Views) {
				unresolved = true
			}
		}
		if !unresolved && !seen(a, "rm") {
			t.Errorf("%q: rm neither seen nor unresolved:%s", cmd, dump(a))
		}
	}
	// Quoted, the same expansion is one word and the command is resolved.
	a := Analyze(`timeout "$(echo 5)" rm -rf x`)
	if !seen(a, "rm") {
		t.Errorf("quoted duration: rm not seen:%s", dump(a))
	}
}
