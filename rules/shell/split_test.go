package shell

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hookd/hookd/rules/shell/bash"
	"mvdan.cc/sh/v3/syntax"
)

var splitTests = []struct {
	name string
	cmd  string
	want []string
	err  string // substring of the error; "" for success
}{
	{"simple", "ls -la", []string{"ls -la"}, ""},
	{"empty", "", []string{}, ""},
	{"blank and comment", "  # nothing\n", []string{}, ""},
	{"and", "make && make install", []string{"make", "make install"}, ""},
	{"or", "test -f x || touch x", []string{"test -f x", "touch x"}, ""},
	{"semicolon", "cd a; ls", []string{"cd a", "ls"}, ""},
	{"pipe", "cat f | grep x | wc -l", []string{"cat f", "grep x", "wc -l"}, ""},
	{"pipe stderr", "make |& tee log", []string{"make", "tee log"}, ""},
	{"background", "sleep 5 & echo hi", []string{"sleep 5", "echo hi"}, ""},
	{"newline", "echo a\necho b", []string{"echo a", "echo b"}, ""},
	{"crlf: bash keeps the carriage return", "echo a\r\necho b", []string{"echo a\r", "echo b"}, ""},
	{"no space around operators", "a&&b||c;d|e", []string{"a", "b", "c", "d", "e"}, ""},
	{"line continuation", "echo a \\\n  b", []string{"echo a b"}, ""},
	{"whitespace normalised", "ls    -la\t x", []string{"ls -la x"}, ""},
	{"double quotes keep operators", `echo "a && b; c | d"`, []string{`echo "a && b; c | d"`}, ""},
	{"single quotes keep operators", `echo 'a && b'`, []string{`echo 'a && b'`}, ""},
	{"escaped operator", `echo a \&\& b`, []string{`echo a \&\& b`}, ""},
	{"escaped quote in double quotes", `echo "a \" && b"`, []string{`echo "a \" && b"`}, ""},
	{"ansi-c quoting", `echo $'a\'; b'`, []string{`echo $'a\'; b'`}, ""},
	{"comment", "git status # && rm -rf /", []string{"git status"}, ""},
	{"hash inside word", "echo a#b", []string{"echo a#b"}, ""},
	{"assignment stripped", "FOO=1 BAR='x y' make", []string{"make"}, ""},
	{"assignment only", "FOO=1", []string{"FOO=1"}, ""},
	{"append assignment", "PATH+=:/x ls", []string{"ls"}, ""},
	{"array assignment", "a=(1 2 3); echo ok", []string{"a=(1 2 3)", "echo ok"}, ""},
	{"timeout", "timeout -s KILL -k 5 10s npm test", []string{"npm test"}, ""},
	{"timeout long opts", "timeout --signal=TERM --preserve-status 1.5m make", []string{"make"}, ""},
	{"time", "time -p make", []string{"make"}, ""},
	{"nice", "nice -n 19 make", []string{"make"}, ""},
	{"nice old style", "nice -10 make", []string{"make"}, ""},
	{"nohup", "nohup ./server &", []string{"./server"}, ""},
	{"stdbuf", "stdbuf -oL -eL tail -f log", []string{"tail -f log"}, ""},
	{"command", "command -p ls", []string{"ls"}, ""},
	{"command -v is not a wrapper", "command -v git", []string{"command -v git"}, ""},
	{"builtin", "builtin echo hi", []string{"echo hi"}, ""},
	{"noglob", "noglob git add *.go", []string{"git add *.go"}, ""},
	{"bare xargs", "ls | xargs rm", []string{"ls", "rm"}, ""},
	{"xargs with flags", "ls | xargs -0 -n1 rm", []string{"ls", "rm"}, ""},
	{"env", "env -i FOO=1 make", []string{"make"}, ""},
	{"nested wrappers", "A=1 time nohup nice -n 5 timeout 9 make", []string{"make"}, ""},
	{"wrapper alone", "nohup", []string{"nohup"}, ""},
	{"busybox applet", "busybox rm -rf x", []string{"rm -rf x"}, ""},
	{"busybox shell", "/bin/busybox sh -c 'rm x'", []string{"sh -c 'rm x'", "rm x"}, ""},
	{"busybox --list runs nothing", "busybox --list", []string{"busybox --list"}, ""},
	{"command substitution", "echo $(date +%s)", []string{"echo $(date +%s)", "date +%s"}, ""},
	{"backquotes", "echo `whoami`", []string{"echo `whoami`", "whoami"}, ""},
	{"escaped backquote inside backquotes", "echo `echo \\`id\\``", []string{"echo `echo \\`id\\``", "echo `id\\`", "id\\"}, ""},
	{"nested substitution", "a $(b $(c))", []string{"a $(b $(c))", "b $(c)", "c"}, ""},
	{"substitution in double quotes", `echo "now: $(date)"`, []string{`echo "now: $(date)"`, "date"}, ""},
	{"substitution in single quotes is text", `echo '$(date)'`, []string{`echo '$(date)'`}, ""},
	{"substitution with compound", "echo $(cd x && ls)", []string{"echo $(cd x && ls)", "cd x", "ls"}, ""},
	{"process substitution", "diff <(sort a) <(sort b)", []string{"diff <(sort a) <(sort b)", "sort a", "sort b"}, ""},
	{"arithmetic", "echo $((1+2*3))", []string{"echo $((1+2*3))"}, ""},
	{"arithmetic with substitution", "echo $(( $(wc -l < f) + 1 ))", []string{"echo $(( $(wc -l < f) + 1 ))", "arithmetic evaluates the output of `$(wc -l < f)` as code", "wc -l < f"}, ""},
	{"arithmetic with a number", "n=3; echo $(( n + 1 ))", []string{"n=3", "echo $(( n + 1 ))"}, ""},
	{"subshell in $( (", "echo $( (ls) )", []string{"echo $( (ls) )", "ls"}, ""},
	{"parameter expansion", "echo ${HOME:-/tmp}", []string{"echo ${HOME:-/tmp}"}, ""},
	{"parameter expansion with substitution", "echo ${X:-$(id)}", []string{"echo ${X:-$(id)}", "id"}, ""},
	{"subshell", "(cd /tmp && ls)", []string{"cd /tmp", "ls"}, ""},
	{"subshell redirect", "(make) > log", []string{"make", "> log"}, ""},
	{"brace group", "{ make; make test; }", []string{"make", "make test"}, ""},
	{"if", "if true; then make; else echo no; fi", []string{"true", "make", "echo no"}, ""},
	{"while", "while read l; do echo $l; done < f", []string{"read l", "echo $l"}, ""},
	{"for", "for f in $(ls); do rm $f; done", []string{"ls", "rm $f"}, ""},
	{"c-style for", "for ((i=0; i<3; i++)); do echo $i; done", []string{"echo $i"}, ""},
	{"arithmetic command", "(( x++ )) && echo y", []string{"echo y"}, ""},
	{"function", "f() { ls; }; f", []string{"ls", "f"}, ""},
	{"function keyword", "function f { ls; }", []string{"ls"}, ""},
	{"negation", "! grep -q x f", []string{"grep -q x f"}, ""},
	{"redirects kept and moved last", "2>/dev/null >out make -j4", []string{"make -j4 2> /dev/null > out"}, ""},
	{"fd dup", "make 2>&1", []string{"make 2>&1"}, ""},
	{"and-redirect", "make &> log", []string{"make &> log"}, ""},
	{"append and-redirect", "make &>> log", []string{"make &>> log"}, ""},
	{"clobber", "echo x >| f", []string{"echo x >| f"}, ""},
	{"here-string", "grep x <<< \"$v\"", []string{"grep x <<< \"$v\""}, ""},
	{"heredoc", "cat <<EOF\nrm -rf /\nEOF\necho after", []string{"cat << EOF", "echo after"}, ""},
	{"heredoc dash", "cat <<-EOF\n\trm -rf /\n\tEOF\nls", []string{"cat <<- EOF", "ls"}, ""},
	{"heredoc substitution", "cat <<EOF\n$(id)\nEOF", []string{"cat << EOF", "id"}, ""},
	{"heredoc quoted", "cat <<'EOF'\n$(id)\nEOF", []string{"cat << 'EOF'"}, ""},
	{"heredoc to eof", "cat <<EOF\nno end", nil, "unclosed here-document"},
	{"heredoc in pipeline", "cat <<EOF | sh\nrm x\nEOF", []string{"cat << EOF", "sh", "`sh` reads its script from a pipe"}, ""},
	{"case terminators outside case", "a;; b", nil, "can only be used in a case clause"},
	{"bash -c script", "bash -c 'ls && rm x'", []string{"bash -c 'ls && rm x'", "ls", "rm x"}, ""},
	{"sh with options and -c", "timeout 5 sh -ec \"make\"", []string{"sh -ec \"make\"", "make"}, ""},
	{"eval", `eval 'echo hi' \; id`, []string{`eval 'echo hi' \; id`, "echo hi", "id"}, ""},
	{"sh -c with expansion fails closed", "sh -c \"$X\"", []string{"sh -c \"$X\"", "script of `sh -c` is not a literal: `\"$X\"`"}, ""},
	{"sh script file is not -c", "sh build.sh -c", []string{"sh build.sh -c"}, ""},
	{"unparseable inner script fails closed", "bash -c 'echo \"x'", []string{"bash -c 'echo \"x'", "script of `bash -c` does not parse: reached EOF without closing quote `\"` (line 1, column 6)"}, ""},

	{"unterminated single", "echo 'abc", nil, "reached EOF without closing quote"},
	{"unterminated double", `echo "abc`, nil, "reached EOF without closing quote"},
	{"unterminated backquote", "echo `date", nil, "reached EOF without closing quote"},
	{"unterminated substitution", "echo $(date", nil, "without matching `$(`"},
	{"unterminated subshell", "(ls", nil, "without matching `(`"},
	{"unterminated brace", "echo ${X", nil, "without matching `${`"},
	{"stray close paren", "ls )", nil, "encountered `)`"},
	{"paren after words", "echo (a)", nil, "must be followed by `)`"},
	{"trailing backslash is a literal", "ls \\", []string{"ls \\"}, ""},
	{"redirect without target", "echo >", nil, "must be followed by a word"},
	{"redirect into operator", "echo > ;", nil, "must be followed by a word"},
	{"deep nesting", strings.Repeat("$(", 4000) + strings.Repeat(")", 4000), nil, "too deeply nested"},
	{"case statement", "case $x in a) rm -rf /;; esac", []string{"rm -rf /"}, ""},
}

func TestSplit(t *testing.T) {
	for _, tt := range splitTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Split(tt.cmd)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Split(%q) = %q, %v; want error containing %q", tt.cmd, got, err, tt.err)
				}
				if !strings.HasPrefix(err.Error(), "shell: ") {
					t.Errorf("error %q lacks the shell: prefix", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Split(%q): %v", tt.cmd, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Split(%q)\n got  %q\n want %q", tt.cmd, got, tt.want)
			}
		})
	}
}

// TestViews pins the Strict views and some Views behind Split for the cases
// where they differ from the Split text.
func TestViews(t *testing.T) {
	tests := []struct {
		cmd       string
		allow     []string // views of the first subcommand
		denyAlso  []string // must be among the deny views of the first subcommand
		writes    []string
		hasExpand bool
	}{
		{cmd: "PATH=/x ls", allow: []string{"PATH=/x ls"}, denyAlso: []string{"ls"}},
		{cmd: "FOO=1 ls", allow: []string{"FOO=1 ls", "ls"}, denyAlso: []string{"ls"}},
		{cmd: "xargs -0 rm", allow: []string{"xargs -0 rm"}, denyAlso: []string{"rm"}},
		{cmd: "npm test > out 2>&1", allow: []string{"npm test > out"}, denyAlso: []string{"npm test", "npm test > out 2>&1"}, writes: []string{"out"}},
		{cmd: "echo x > /dev/null", allow: []string{"echo x"}},
		{cmd: `"rm" -rf '/'`, allow: []string{`"rm" -rf '/'`}, denyAlso: []string{"rm -rf /"}},
		{cmd: "/usr/bin/rm x", allow: []string{"/usr/bin/rm x"}, denyAlso: []string{"rm x"}},
		{cmd: "echo hi >> \"$LOG\"", allow: []string{`echo hi >> "$LOG"`}, hasExpand: true},
		{cmd: "tee -a ~/.bashrc < x", allow: []string{"tee -a ~/.bashrc < x"}, denyAlso: []string{"tee -a ~/.bashrc"}},
		{cmd: "cat > 'my file.txt'", allow: []string{"cat > 'my file.txt'"}, writes: []string{"my file.txt"}},
		{cmd: "echo >&2 hi", allow: []string{"echo hi"}},
		{cmd: "echo hi >&out.txt", allow: []string{"echo hi >& out.txt"}, writes: []string{"out.txt"}},
	}
	for _, tt := range tests {
		a := Analyze(tt.cmd)
		if a.Err != nil || len(a.Commands) == 0 {
			t.Errorf("%q: err=%v subs=%d", tt.cmd, a.Err, len(a.Commands))
			continue
		}
		if got := a.Commands[0].Strict; !reflect.DeepEqual(got, tt.allow) {
			t.Errorf("%q: allow views = %q, want %q", tt.cmd, got, tt.allow)
		}
		for _, d := range tt.denyAlso {
			if !slices.Contains(denyStrings(a.Commands[0].Views), d) {
				t.Errorf("%q: deny views %q lack %q", tt.cmd, a.Commands[0].Views, d)
			}
		}
		if !reflect.DeepEqual(a.Writes, tt.writes) {
			t.Errorf("%q: writes = %q, want %q", tt.cmd, a.Writes, tt.writes)
		}
		if a.Expands != tt.hasExpand {
			t.Errorf("%q: expand = %v, want %v", tt.cmd, a.Expands, tt.hasExpand)
		}
	}
}

func denyStrings(vs []View) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Text
	}
	return out
}

// wordValues evaluates the second word of "echo WORD".
func wordValues(t *testing.T, word string) []string {
	t.Helper()
	src := "echo " + word
	s, err := bash.Parse(src)
	if err != nil {
		t.Fatalf("%q: %v", word, err)
	}
	ev := wordEval{src: src, env: newVarEnv(), facts: newFacts(), cr: s.CR}
	return ev.word(s.File.Stmts[0].Cmd.(*syntax.CallExpr).Args[1]).vals
}

func TestWordValues(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{`'a b'`, "a b"},
		{`"a \"b\" \$x \n"`, `a "b" $x \n`},
		{`a\ b`, "a b"},
		{`$'x'`, "x"},
		{`"$HOME"/x`, "\x00/x"},
		{`$'\x72m'`, "rm"},
		{`$'\162\155'`, "rm"},
		{`$'a\'b'`, "a'b"},
		{`$'\n\t\\'`, "\n\t\\"},
		{`$'\xZZ'`, `\xZZ`},
		{`r''m`, "rm"},
		{`\rm`, "rm"},
		{`/bin/r?`, "/bin/r\x00"},
		{`/bin/r[m]`, "/bin/r\x00"},
		{`$(printf rm)`, "\x00"},
		{`"$(echo rm)"`, "\x00"},
		{`${x:-rm}`, "\x00"},
	}
	for _, tt := range tests {
		if got := wordValues(t, tt.in); len(got) != 1 || got[0] != tt.want {
			t.Errorf("value of %q = %q, want %q", tt.in, got, tt.want)
		}
	}
}
