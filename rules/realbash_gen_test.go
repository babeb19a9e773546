package rules

import (
	"math/rand/v2"
	"strings"
)

// The generator of the real-bash oracle. Every case is built around an rm
// of the canaries (@X@, @Y@, @D@: absolute paths filled in per slot),
// spelled, wrapped, nested and quoted in one of many ways — the forms of
// issues 10 and 27 and their combinations — or is a benign command that
// should run no rm (to measure what the analysis denies for nothing).
// Whether rm really ran is for bash to say: the generator does not need to
// be right, only varied.

type genCase struct {
	cmd    string
	family string
	benign bool
}

type oracleGen struct {
	r *rand.Rand
}

func newOracleGen(r *rand.Rand) *oracleGen { return &oracleGen{r: r} }

func (g *oracleGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *oracleGen) next() genCase {
	if g.r.IntN(10) == 0 {
		return genCase{cmd: g.pick(benignCommands), family: "benign", benign: true}
	}
	fam := ""
	cmd := g.cmd(1+g.r.IntN(3), &fam)
	return genCase{cmd: cmd, family: fam}
}

// rmArgs are what the generated rm removes.
var rmArgs = []string{"-f @X@", "-rf @D@", "@X@ @Y@", "-f -- @Y@", "-r -f @D@ @X@", "@X@"}

// rmNames spell rm as a command word.
var rmNames = []string{
	"rm", "/bin/rm", "/usr/bin/rm", "\"rm\"", "'rm'", "\\rm", "r\\m", "r''m", "\"r\"m", "$'rm'", "$'\\x72m'",
	"$'\\162\\155'", "$'rm\\0zz'", "$'r\\u006d'", "{rm,-f,@X@}", "$(printf rm)", "\"$(echo rm)\"", "`echo rm`",
	"${UNSET_X:-rm}", "${UNSET_X-rm}", "/usr/bin/r?", "/usr/bin/r[m]", "/usr/bin/r*m", "$EMPTY rm",
	"./../../../../../../usr/bin/rm", "/usr/./bin/../bin/rm", "//usr//bin//rm", "$\"rm\"", "r$EMPTY'm'",
}

// wrappersOracle are prefixes after which a command follows as words, as
// they run as nobody without a terminal (strace, valgrind and
// dbus-run-session cost a second each: the mvdan differential and the unit
// tests cover them).
var wrappersOracle = []string{
	"env ", "env -i ", "env - ", "env -u HOME ", "/usr/bin/env ", "env FOO=1 ", "env -S 'rm' ", "nice ", "nice -n 5 ",
	"nice -10 ", "nohup ", "setsid ", "setsid -w ", "stdbuf -o0 ", "timeout 5 ", "timeout -s KILL 5 ", "time ",
	"time -p ", "command ", "command -p ", "builtin command ", "exec ", "exec -a foo ", "xargs ", "xargs -0 ",
	"flock @D@ ", "taskset 1 ", "taskset -c 0 ", "chrt -o 0 ", "prlimit --nofile=100 ", "prlimit ", "setarch x86_64 ",
	"setarch x86_64 -R ", "linux64 ", "linux32 ", "fakeroot ", "ionice -c 3 ", "setpriv --nnp ", "script -qc ",
	"/usr/bin/nice ", "/usr/bin/timeout 1 ", "sg nogroup ", "unshare ",
	"env -C / ", "env --chdir=/ ", "env -- ",
}

// scriptWrappersOracle run a quoted script: those of the mvdan differential
// (differential_test.go) and more.
var scriptWrappersOracle = append(append([]func(q string) string(nil), scriptWrappers...),
	func(q string) string { return "flock @D@ -c " + q },
	func(q string) string { return "trap -- " + q + " EXIT" },
	func(q string) string { return "builtin eval " + q },
	func(q string) string { return "command eval " + q },
	func(q string) string { return "source -- /dev/stdin <<< " + q },
	func(q string) string { return "echo " + q + " | bash -s" },
	func(q string) string { return "xargs sh -c " + q + " _ <<< x" },
	func(q string) string { return "find @D@ -maxdepth 0 -exec sh -c " + q + " \\;" },
	func(q string) string { return "sg nogroup " + q },
	func(q string) string { return "capsh -- -c " + q },
	func(q string) string { return "compgen -C " + q + " x" },
	func(q string) string { return "mapfile -C " + q + " -c 1 a <<< x" },
	func(q string) string { return "exec 3<<< " + q + "; bash /dev/fd/3" },
	func(q string) string { return "exec <<< " + q + "; bash" },
	func(q string) string { return "ln -s /dev/stdin s; bash s <<< " + q },
	func(q string) string { return "ln -sf /dev/stdin s; source s <<< " + q },
	func(q string) string { return "BASH_ENV=/dev/stdin bash -c : <<< " + q },
	func(q string) string { return "ENV=/dev/stdin sh -i <<< : 2>/dev/null <<< " + q },
	func(q string) string { return "bash --rcfile /dev/stdin -i <<< " + q },
	func(q string) string { return "set -o history; history -s " + q + "; fc -s" },
	func(q string) string { return "bash <<'E'\n" + unquote(q) + "\nE" },
	func(q string) string { return "bash <<E\n" + unquote(q) + "\nE" },
)

// unquote undoes quote for here-documents.
func unquote(q string) string {
	return strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(q, "'"), "'"), `'\''`, "'")
}

// constructsOracle place a command C somewhere it runs: those of the mvdan
// differential and more.
var constructsOracle = append(append([]string(nil), constructs...),
	"if false; then :; elif C; then :; fi", "case a in (a) C;; esac", "function h() ( C ); h",
	"coproc { C; }; wait", "coproc C | cat; wait", "coproc NAME { C; }; wait", "! C", "tee >(C) </dev/null",
	"C 2>&1 | tee /dev/null", "select x in a; do C; break; done <<< 1", "f() { local z=$( C ); }; f",
	"ls # note \\\nC", "ls #\\\nC", "echo a \r# ; C", "C\r", "echo `C`", "echo \"`C`\"", "{ C\n}", "C; exit",
	"trap 'C' EXIT", "command_not_found_handle() { C; }; nosuchcommand", "set -e; C", "cat <<E\n$( C )\nE",
	":;:;:;:;:;:;:;:;:;:; C", "until ! C; do :; done", "C | true", "true | C", "C |& cat", "exec 2>&1; C",
)

// attacks are the forms, with C a command that runs rm and R an
// rm command line whose parts may be split up.
var attacks = []func(g *oracleGen, c string) string{
	func(g *oracleGen, c string) string { return strings.Repeat(":;", 2048+g.r.IntN(3000)) + c },
	func(g *oracleGen, c string) string { return "hash -p /usr/bin/rm ls; ls " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "hash -p /usr/bin/rm ls\nls " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "BASH_CMDS[ls]=/usr/bin/rm; ls " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string {
		return "shopt -s expand_aliases\nalias ls=rm\nls " + g.pick(rmArgs)
	},
	func(g *oracleGen, c string) string {
		return "shopt -s expand_aliases\nalias s='command ' l=rm\ns l " + g.pick(rmArgs)
	},
	func(g *oracleGen, c string) string {
		return "shopt -s expand_aliases; alias x=" + quote(c) + "\nx"
	},
	func(g *oracleGen, c string) string { return "printf -v x rm; $x " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "printf -v x %s rm; \"$x\" " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "read -a a <<< rm; ${a[0]} " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "read x <<< rm; $x " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "mapfile -t a <<< rm; ${a[0]} " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string {
		return "IFS=_; c=rm_" + strings.ReplaceAll(g.pick(rmArgs), " ", "_") + "; $c"
	},
	func(g *oracleGen, c string) string { return "x='a[$(" + c + ")]'; echo $((x))" },
	func(g *oracleGen, c string) string { return "echo $(( $(echo 'a[$(" + c + ")]') ))" },
	func(g *oracleGen, c string) string { return "x='a[$(" + c + ")]'; (( x ))" },
	func(g *oracleGen, c string) string { return "let " + quote("x=a[$("+c+")]") },
	func(g *oracleGen, c string) string { return "declare -i n; n=" + quote("a[$("+c+")]") },
	func(g *oracleGen, c string) string { return "[[ " + quote("a[$("+c+")]") + " -eq 1 ]]" },
	func(g *oracleGen, c string) string { return "x=" + quote("a[$("+c+")]") + "; [[ $x -gt 0 ]]" },
	func(g *oracleGen, c string) string { return "[[ -v " + quote("a[$("+c+")]") + " ]]" },
	func(g *oracleGen, c string) string { return "test -v " + quote("a[$("+c+")]") },
	func(g *oracleGen, c string) string { return "printf -v " + quote("a[$("+c+")]") + " x" },
	func(g *oracleGen, c string) string { return "read " + quote("a[$("+c+")]") + " <<< x" },
	func(g *oracleGen, c string) string { return "a=(1); unset " + quote("a[$("+c+")]") },
	func(g *oracleGen, c string) string { return "declare -n r=" + quote("a[$("+c+")]") + "; echo $r" },
	func(g *oracleGen, c string) string { return "v=" + quote("$("+c+")") + "; echo ${v@P}" },
	func(g *oracleGen, c string) string { return "PS4=" + quote("$("+c+")") + "; set -x; :" },
	func(g *oracleGen, c string) string { return "x=" + quote("a[$("+c+")]") + "; echo ${!x}" },
	func(g *oracleGen, c string) string { return "a=(1); echo ${a[" + quote("$("+c+")") + "]}" },
	func(g *oracleGen, c string) string { return "x=" + quote("a[$("+c+")]") + "; echo ${y:x:1}" },
	func(g *oracleGen, c string) string { return "echo rm " + g.pick(rmArgs) + " | xargs env" },
	func(g *oracleGen, c string) string { return "echo rm " + g.pick(rmArgs) + " | xargs nice" },
	func(g *oracleGen, c string) string { return "echo " + g.pick(rmArgs) + " | xargs rm" },
	func(g *oracleGen, c string) string { return "echo rm | xargs -I{} {} " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "echo rm; $_ " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "declare -l x=RM; $x " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "x=RM; ${x,,} " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "x=arm; ${x:1} " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "x=ls; ${x/ls/rm} " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "y=rm; x=y; ${!x} " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "set -- rm " + g.pick(rmArgs) + "; \"$@\"" },
	func(g *oracleGen, c string) string { return "set -- rm; $1 " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "bash -c '$1 " + g.pick(rmArgs) + "' _ rm" },
	func(g *oracleGen, c string) string { return "f() { \"$@\"; }; f rm " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "a=(rm " + g.pick(rmArgs) + "); \"${a[@]}\"" },
	func(g *oracleGen, c string) string { return "HOME=/usr/bin/rm; ~ " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "eval$EMPTY " + quote(c) },
	func(g *oracleGen, c string) string { return "/usr/bin/en? " + c },
	func(g *oracleGen, c string) string { return "ev''al " + quote(c) },
	func(g *oracleGen, c string) string { return "\"e\"val " + quote(c) },
	func(g *oracleGen, c string) string { return "coproc " + c + " | cat; wait" },
	func(g *oracleGen, c string) string { return "coproc rm " + g.pick(rmArgs) + " |& cat; wait" },
	func(g *oracleGen, c string) string { return "enable -n echo; " + c },
	func(g *oracleGen, c string) string { return "TEXTDOMAIN=x; $\"rm\" " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "x=$(printf '\\x72\\x6d'); $x " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "eval \"r\"\"m\" " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "x=r; y=m; $x$y " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "x=r; \"${x}m\" " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "for c in rm; do $c " + g.pick(rmArgs) + "; done" },
	func(g *oracleGen, c string) string { return "case rm in *) x=rm;; esac; $x " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string {
		return "x=ls; x=rm $x " + g.pick(rmArgs) + "; $x " + g.pick(rmArgs)
	},
	func(g *oracleGen, c string) string { return "exec {fd}<<<" + quote(c) + "; bash /dev/fd/$fd" },
	func(g *oracleGen, c string) string { return "$(echo " + quote(c) + ")" },
	func(g *oracleGen, c string) string { return "`echo " + quote(c) + "`" },
	func(g *oracleGen, c string) string { return "compgen -W " + quote("$("+c+")") + " x" },
	func(g *oracleGen, c string) string { return "shopt -s extglob; " + c },
	func(g *oracleGen, c string) string { return "shopt -u interactive_comments; echo # ; " + c },
	func(g *oracleGen, c string) string { return "set -k; " + c },
	func(g *oracleGen, c string) string { return "POSIXLY_CORRECT=1; " + c },
	func(g *oracleGen, c string) string { return "x=rm\n$x " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "echo $'\\x72m " + g.pick(rmArgs) + "' | bash" },
	func(g *oracleGen, c string) string { return "IFS=: read -r a b <<< 'rm:" + g.pick(rmArgs) + "'; $a $b" },
	func(g *oracleGen, c string) string { return "timeout $(echo -k 1) 5 rm " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "find @D@ $(echo -exec rm " + g.pick(rmArgs) + " ';')" },
	func(g *oracleGen, c string) string { return "bash $(echo -c rm) _ " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "env $(echo rm) " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "script -qc script -qc $EMPTY " + c },
	func(g *oracleGen, c string) string { return "coproc LC_ALL=C " + c + " | cat; wait" },
	func(g *oracleGen, c string) string { return "((" + c + ") )" },
	func(g *oracleGen, c string) string { return "echo $((" + c + ") )" },
	func(g *oracleGen, c string) string { return "/proc/self/exe -c " + quote(c) },
	func(g *oracleGen, c string) string { return "/proc/$$/exe -c " + quote(c) },
	func(g *oracleGen, c string) string { return "$SHELL -c " + quote(c) },
	func(g *oracleGen, c string) string { return "$BASH " + quote(c) + " 2>/dev/null; $BASH -c " + quote(c) },
	func(g *oracleGen, c string) string { return "exec 3</usr/bin/rm; /dev/fd/3 " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "set -o history -H\n: rm " + g.pick(rmArgs) + "\n!!:1*" },
	func(g *oracleGen, c string) string { return "\"$HOME\"/../../../../../../../usr/bin/env " + c },
	func(g *oracleGen, c string) string {
		return "coproc bash; echo " + quote(c) + " >&${COPROC[1]}; exec {COPROC[1]}>&-; wait"
	},
	func(g *oracleGen, c string) string { return "cat <<E >/dev/null\nfoo\nE\\\n\n" + c + "\nE" },
	func(g *oracleGen, c string) string { return "cat <<-E >/dev/null\n\tfoo\n\tE\\\n\n" + c + "\nE" },
	func(g *oracleGen, c string) string { return "cat <<'E E' >/dev/null\nfoo\nE E\n" + c },
	func(g *oracleGen, c string) string { return "cat <<E >/dev/null; " + c + "\nbody\nE" },
	func(g *oracleGen, c string) string { return "cat <<\\E >/dev/null\nE\n" + c },
	func(g *oracleGen, c string) string { return "f() { cat; } <<E >/dev/null\nE\n" + c },
	func(g *oracleGen, c string) string { return "echo `cat <<E\nE\n`; " + c },
	func(g *oracleGen, c string) string {
		return "env -S 'rm\\_" + strings.ReplaceAll(g.pick(rmArgs), " ", "\\_") + "'"
	},
	func(g *oracleGen, c string) string { return "X=rm env -S '${X} " + g.pick(rmArgs) + "'" },
	func(g *oracleGen, c string) string { return "a=(rm " + g.pick(rmArgs) + "); ${a[0]} " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string {
		return "declare -i n; " + g.pick([]string{"read n <<< ", "printf -v n %s ", "mapfile n <<< ", "n+="}) + quote("a[$("+c+")]")
	},
	func(g *oracleGen, c string) string {
		return "declare -i n; for n in " + quote("a[$("+c+")]") + "; do :; done"
	},
	func(g *oracleGen, c string) string { return "declare -ai a=(" + quote("a[$("+c+")]") + ")" },
	func(g *oracleGen, c string) string {
		return "declare -n r=n; declare -i n; r=" + quote("a[$("+c+")]")
	},
	func(g *oracleGen, c string) string { return "eval -- " + quote(c) },
	func(g *oracleGen, c string) string { return "declare -l x; x=RM; $x " + g.pick(rmArgs) },
	func(g *oracleGen, c string) string { return "unshare <<< " + quote(c) },
	func(g *oracleGen, c string) string { return "true && !(" + c + ")" },
	func(g *oracleGen, c string) string { return "echo " + quote(c) + " | sg nogroup" },
	func(g *oracleGen, c string) string { return "x=" + quote("1 a[$("+c+")]") + "; echo $((x))" },
	func(g *oracleGen, c string) string { return "a=(1); echo ${a[" + quote("$(( $("+c+") ))") + "]}" },
	func(g *oracleGen, c string) string {
		return "declare -i n; n=" + quote("a[$(cat <<E >/dev/null\nfoo\nE\\\n\n"+c+"\nE)]")
	},
}

// benignCommands run no rm (an rm word where it does not run).
var benignCommands = []string{
	"ls -la @D@", "echo rm -rf @X@", "grep -r rm @D@ || true", "git --version", "cat @X@", "printf '%s\\n' rm",
	"x=rm; echo $x", "echo 'rm -rf @X@'", "test -e @X@ && echo yes", "find @D@ -name f", "wc -l @X@ @Y@",
	"for f in @X@ @Y@; do echo $f; done", "[ -f @X@ ]", "echo $((1 + 2))", "n=3; echo $(( n * 2 ))",
	"sort @X@ | uniq -c", "echo \"$HOME\"", "cd @D@ && ls", "which rm || true", "type rm", "command -v rm",
	"echo ${PATH%%:*}", "awk '{print $1}' @X@", "sed -n 1p @X@", "head -n1 @X@ && tail -n1 @Y@", "date +%s",
	"while IFS= read -r l; do echo \"$l\"; done < @X@", "cat <<'E'\nrm -rf @X@\nE", "true # rm -rf @X@",
	"echo a; echo b && echo c || echo d", "[[ -n $HOME ]] && echo ok", "env | sort | head -3", "echo $(echo ok)",
}

// cmd builds a command that runs rm (probably), depth levels deep.
func (g *oracleGen) cmd(depth int, fam *string) string {
	var c string
	switch k := g.r.IntN(12); {
	case depth > 0 && k < 3:
		inner := g.cmd(depth-1, fam)
		c = scriptWrappersOracle[g.r.IntN(len(scriptWrappersOracle))](quote(inner))
		*fam += "/script"
	case depth > 0 && k < 5:
		inner := g.cmd(depth-1, fam)
		c = strings.ReplaceAll(g.pick(constructsOracle), "C", inner)
		*fam += "/construct"
	case depth > 0 && k < 7:
		inner := g.cmd(depth-1, fam)
		i := g.r.IntN(len(attacks))
		c = attacks[i](g, inner)
		*fam += "/attack" + itoa(i)
	default:
		c = strings.TrimSpace(g.pick(rmNames) + " " + g.pick(rmArgs))
		for n := g.r.IntN(3); n > 0; n-- {
			c = g.pick(wrappersOracle) + c
		}
		if g.r.IntN(6) == 0 {
			c = g.pick([]string{"FOO=1 ", "PATH=/usr/bin:$PATH ", "LC_ALL=C "}) + c
		}
		*fam += "/simple"
	}
	return c
}

func itoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoa(i/10) + d[i%10:i%10+1]
}
