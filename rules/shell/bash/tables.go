package bash

import "strings"

// IsArithNumber reports whether s is an integer constant bash accepts:
// decimal, 0x hex, 0 octal, or base#digits.
func IsArithNumber(s string) bool {
	if s == "" {
		return false
	}
	if i := strings.IndexByte(s, '#'); i > 0 {
		if !IsDigits(s[:i]) || i+1 >= len(s) {
			return false
		}
		for _, c := range []byte(s[i+1:]) {
			if !IsNameByte(c) && c != '@' {
				return false
			}
		}
		return true
	}
	if s[0] < '0' || s[0] > '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !IsNameByte(c) {
			return false
		}
	}
	return true
}

// IsStdinPath reports whether a script file operand is standard input.
func IsStdinPath(p string) bool {
	switch p {
	case "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-":
		return true
	}
	return false
}

// IsFDPath reports whether p is a file descriptor path (/dev/fd/63, what
// <(…) expands to): what it holds comes from a command.
func IsFDPath(p string) bool {
	for _, pre := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if rest, ok := strings.CutPrefix(p, pre); ok && IsDigits(rest) {
			return true
		}
	}
	return false
}

// UnescapeHeredoc removes the backslashes that are escapes in the body of
// an unquoted here-document.
func UnescapeHeredoc(s string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\$`\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ReservedWords are bash's reserved words: an alias with such a name, or
// one that could be any name, changes how bash parses what follows.
var ReservedWords = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true,
	"esac": true, "for": true, "select": true, "while": true, "until": true, "do": true, "done": true, "in": true,
	"function": true, "time": true, "{": true, "}": true, "!": true, "[[": true, "]]": true, "coproc": true}

// ShoptHarmless are the shopt options the analysis models whatever their
// value: glob options (globs are holes), history, completion and job
// options a non-interactive shell ignores, lastpipe (a pipeline's last
// command is read as maybe running in this shell already), and
// expand_aliases (aliases are modelled as if always expanded).
var ShoptHarmless = map[string]bool{"autocd": true, "cdable_vars": true, "cdspell": true, "checkhash": true,
	"checkjobs": true, "checkwinsize": true, "cmdhist": true, "complete_fullquote": true, "direxpand": true,
	"dirspell": true, "dotglob": true, "execfail": true, "expand_aliases": true, "extglob": true, "extquote": true,
	"failglob": true, "force_fignore": true, "globasciiranges": true, "globskipdots": true, "globstar": true,
	"gnu_errfmt": true, "histappend": true, "histreedit": true, "histverify": true, "hostcomplete": true,
	"huponexit": true, "inherit_errexit": true, "lastpipe": true, "lithist": true, "localvar_inherit": true,
	"localvar_unset": true, "mailwarn": true, "no_empty_cmd_completion": true, "nocaseglob": true,
	"nocasematch": true, "noexpand_translation": true, "nullglob": true, "patsub_replacement": true, "progcomp": true,
	"progcomp_alias": true, "promptvars": true, "shift_verbose": true, "sourcepath": true, "varredir_close": true,
	"xpg_echo": true, "assoc_expand_once": true, "extdebug": true, "login_shell": true, "restricted_shell": true}

// SetHarmless are the set -o options the analysis models whatever their
// value (posix and keyword change how bash reads the script).
var SetHarmless = map[string]bool{"allexport": true, "braceexpand": true, "emacs": true, "errexit": true,
	"errtrace": true, "functrace": true, "hashall": true, "history": true, "ignoreeof": true,
	"interactive-comments": true, "monitor": true, "noclobber": true, "noexec": true, "noglob": true, "nolog": true,
	"notify": true, "nounset": true, "onecmd": true, "physical": true, "pipefail": true, "privileged": true,
	"verbose": true, "vi": true, "xtrace": true}

// SetFlagsHarmless are set's one-letter options in the same sense.
const SetFlagsHarmless = "abefhmnptuvxBCEPT"
