package shell

import (
	"strings"
)

// Wrapper commands run another command: `sudo rm x` runs rm, `find . -exec
// rm {} \;` runs rm, `su -c 'rm x'` runs a shell script. Each is described
// by data — its option grammar (which options take a value), the operands
// it takes before the wrapped command, and where scripts hide — and one
// option parser reads them all. An option a wrapper does not have makes
// what follows unknown: a hole (package rules fails closed on it).
//
// Option specs are space-separated items "s|long" (flag), "s|long=" (takes
// a value: glued, after '=', or the next word) and "s|long=?" (optional
// value: glued or after '=' only); either name may be empty ("|debug",
// "n="). Long options may be abbreviated to a unique prefix, as getopt_long
// allows. Options end at the first operand or "--" (all these tools stop
// there).

type wrapKind int

const (
	wrapPlain    wrapKind = iota // [opts] [operands] command…
	wrapEnv                      // env [opts] [NAME=VALUE…] [command…]; -S STRING
	wrapSudo                     // sudo [opts] [NAME=VALUE…] command…
	wrapCommand                  // command [-pvV] command…: -v/-V only describe
	wrapXargs                    // xargs [opts] [command…] (default echo); -I R
	wrapFind                     // find … -exec/-execdir/-ok/-okdir command… ; or +
	wrapSu                       // su [opts] [-] [user [args]] with -c STRING
	wrapRunuser                  // runuser -u USER [--] command… | su form
	wrapScriptC                  // script [opts] [file] with -c STRING
	wrapFlock                    // flock [opts] FILE (command… | -c STRING) | flock FD
	wrapWatch                    // watch [opts] command…: joined and run by sh -c (unless -x)
	wrapParallel                 // parallel [opts] command… ::: args
	wrapTrap                     // trap [-lp] [SCRIPT] SIGNAL…
	wrapNice                     // nice [-n N | -N] command…
	wrapOptional                 // [opts] [command…]: no command runs a shell or nothing
	wrapTimeout                  // timeout [opts] DURATION command…
)

type wrapper struct {
	kind     wrapKind
	opts     string
	operands int  // operands before the command (chroot NEWROOT)
	allow    bool // Claude Code looks through it for allow rules too (spec §8)

	short map[byte]*optSpec
	long  map[string]*optSpec
}

type optSpec struct {
	key string // the long name, or the short letter
	arg int    // 0 none, 1 required, 2 optional
}

const (
	argNone = iota
	argRequired
	argOptional
)

// wrappers is the table. allow marks the wrappers Claude Code strips before
// matching allow rules (timeout, time, nice, nohup, stdbuf, command,
// builtin, noglob, bare xargs); hookd looks through all of them for deny
// and ask rules.
var wrappers = map[string]*wrapper{
	"env": {kind: wrapEnv, opts: "i|ignore-environment 0|null u|unset= C|chdir= S|split-string= v|debug P= " +
		"|block-signal=? |default-signal=? |ignore-signal=? |list-signal-handling"},
	"sudo": {kind: wrapSudo, opts: "A|askpass b|background E|preserve-env=? e|edit H|set-home i|login K|remove-timestamp " +
		"k|reset-timestamp l|list n|non-interactive P|preserve-groups S|stdin s|shell V|version v|validate N|no-update " +
		"B|bell C|close-from= D|chdir= g|group= h|host= p|prompt= R|chroot= r|role= t|type= T|command-timeout= " +
		"U|other-user= u|user="},
	"doas":     {kind: wrapSudo, opts: "L n s C= u="},
	"su":       {kind: wrapSu, opts: "c|command= |session-command= f|fast g|group= G|supp-group= l|login m|preserve-environment p P|pty s|shell= w|whitelist-environment="},
	"runuser":  {kind: wrapRunuser, opts: "c|command= |session-command= f|fast g|group= G|supp-group= l|login m|preserve-environment p P|pty s|shell= u|user= w|whitelist-environment="},
	"setpriv":  {kind: wrapPlain, opts: "d|dump |nnp |no-new-privs |ambient-caps= |inh-caps= |bounding-set= |clear-groups |groups= |keep-groups |init-groups |regid= |reuid= |rgid= |ruid= |egid= |euid= |securebits= |pdeathsig= |selinux-label= |apparmor-profile= |landlock-access= |landlock-rule= |reset-env"},
	"nice":     {kind: wrapNice, allow: true, opts: "n|adjustment="},
	"ionice":   {kind: wrapOptional, opts: "c|class= n|classdata= p|pid P|pgid u|uid t|ignore"},
	"nohup":    {kind: wrapPlain, allow: true},
	"setsid":   {kind: wrapPlain, opts: "c|ctty f|fork w|wait"},
	"stdbuf":   {kind: wrapPlain, allow: true, opts: "i|input= o|output= e|error="},
	"timeout":  {kind: wrapTimeout, allow: true, opts: "f|foreground p|preserve-status v|verbose k|kill-after= s|signal="},
	"time":     {kind: wrapPlain, allow: true, opts: "a|append f|format= o|output= p|portability q|quiet v|verbose"},
	"command":  {kind: wrapCommand, allow: true, opts: "p v V"},
	"builtin":  {kind: wrapPlain, allow: true},
	"noglob":   {kind: wrapPlain, allow: true},
	"exec":     {kind: wrapOptional, opts: "c l a="},
	"xargs":    {kind: wrapXargs, allow: true, opts: "0|null a|arg-file= d|delimiter= E= e|eof=? I= i|replace=? L|max-lines= l=? n|max-args= P|max-procs= s|max-chars= x|exit r|no-run-if-empty t|verbose p|interactive o|open-tty |process-slot-var= |show-limits"},
	"parallel": {kind: wrapParallel, opts: "j|jobs= k|keep-order n|max-args= N= X m q|quote a|arg-file= I= i|replace=? |pipe 0|null d|delimiter= v|verbose |eta |bar |progress |halt= |dry-run S|sshlogin= u|ungroup |line-buffer |tag |tagstring= |timeout= |retries= |joblog= |results= |colsep= C= |shellquote |will-cite |no-notice |nice= |delay= |memfree= |load= r|no-run-if-empty |group |files |tmpdir= |workdir= |env= E="},
	"flock":    {kind: wrapFlock, opts: "s|shared x|exclusive e u|unlock n|nb|nonblock w|timeout|wait= E|conflict-exit-code= o|close F|no-fork |verbose c|command="},
	"watch":    {kind: wrapWatch, opts: "b|beep c|color C|no-color d|differences=? e|errexit g|chgexit n|interval= p|precise t|no-title w|no-wrap x|exec q|equexit= r|no-rerun s|shotsfmt="},
	"nsenter":  {kind: wrapOptional, opts: "a|all t|target= m|mount=? u|uts=? i|ipc=? n|net=? p|pid=? U|user=? C|cgroup=? T|time=? G|setgid= S|setuid= |preserve-credentials r|root=? w|wd=? W|wdns= e|env F|no-fork Z|follow-context c|join-cgroup |user-parent |keep-caps"},
	"unshare":  {kind: wrapOptional, opts: "m|mount=? u|uts=? i|ipc=? n|net=? p|pid=? U|user=? C|cgroup=? T|time=? f|fork |kill-child=? |mount-proc=? r|map-root-user c|map-current-user |map-user= |map-group= |map-users= |map-groups= |map-auto |propagation= |setgroups= R|root= w|wd= S|setuid= G|setgid= |monotonic= |boottime= l|load-interp= |keep-caps"},
	"chroot":   {kind: wrapOptional, operands: 1, opts: "|groups= |userspec= |skip-chdir"},
	"strace": {kind: wrapOptional, opts: "c C d D f F h i k n q r t T v V w x y z Z e= o= p= P= s= S= u= a= b= E= I= O= X= U= " +
		"|summary-only |summary |debug |daemonize=? |follow-forks |output-separately |instruction-pointer |stack-trace |syscall-number " +
		"|quiet=? |relative-timestamps=? |absolute-timestamps=? |timestamps=? |syscall-times=? |no-abbrev |verbose= |raw= " +
		"|decode-fds=? |decode-pids=? |trace= |trace-fds= |signal= |status= |inject= |fault= |output= |attach= |string-limit= " +
		"|summary-sort-by= |user= |columns= |env= |seccomp-bpf |kill-on-exit |always-show-pid |successful-only |failed-only"},
	"ltrace": {kind: wrapOptional, opts: "b c C D= e= f F= h i l= L n= o= p= r s= S t T u= w= x= a= A= " +
		"|demangle |library= |output= |align= |indent= |config="},
	"script": {kind: wrapScriptC, opts: "a|append c|command= E|echo= e|return f|flush F|force I|log-in= O|log-out= B|log-io= T|log-timing= m|logging-format= o|output-limit= q|quiet t|timing=?"},
	"trap":   {kind: wrapTrap, opts: "l p P"},
	"find":   {kind: wrapFind},
	// busybox APPLET args runs the applet (busybox rm x, busybox sh -c …);
	// --list, --help, --show and --install [-s] [DIR] run none.
	"busybox": {kind: wrapPlain, opts: "|list |list-full |help |show= |install s"},
}

func init() {
	for _, w := range wrappers {
		w.compile()
	}
}

func (w *wrapper) compile() {
	w.short, w.long = map[byte]*optSpec{}, map[string]*optSpec{}
	for _, item := range strings.Fields(w.opts) {
		arg := argNone
		switch {
		case strings.HasSuffix(item, "=?"):
			arg, item = argOptional, strings.TrimSuffix(item, "=?")
		case strings.HasSuffix(item, "="):
			arg, item = argRequired, strings.TrimSuffix(item, "=")
		}
		names := strings.Split(item, "|")
		key := names[len(names)-1]
		if key == "" {
			key = names[0]
		}
		s := &optSpec{key: key, arg: arg}
		for i, n := range names {
			switch {
			case n == "":
			case i == 0 && len(n) == 1:
				w.short[n[0]] = s
			default:
				w.long[n] = s
			}
		}
	}
}

// optHit is one option found on a command line.
type optHit struct {
	key   string
	val   string
	word  *cword // the word holding the value, when it is a whole word
	known bool   // val is known
}

// parseOpts reads options from ws[i:] and returns them with the index of
// the first operand. bad names an option the wrapper does not have.
func (w *wrapper) parseOpts(name string, ws []*cword, i int) (hits []optHit, next int, bad string) {
	for i < len(ws) {
		a, ok := ws[i].single()
		if !ok {
			if strings.HasPrefix(ws[i].src, "-") {
				return hits, i, "option of `" + name + "` is not a literal: `" + ws[i].src + "`"
			}
			return hits, i, "" // an unknown operand: the caller decides
		}
		switch {
		case a == "--":
			return hits, i + 1, ""
		case strings.HasPrefix(a, "--"):
			n, v, hasV := strings.Cut(a[2:], "=")
			s := w.longOpt(n)
			if s == nil {
				return hits, i, "unknown option `" + a + "` of `" + name + "`"
			}
			h := optHit{key: s.key, val: v, known: true}
			switch {
			case s.arg == argRequired && !hasV:
				if i+1 >= len(ws) {
					return hits, i, "option `" + a + "` of `" + name + "` lacks its value"
				}
				i++
				h.word = ws[i]
				h.val, h.known = ws[i].single()
			case s.arg == argNone && hasV:
				return hits, i, "option `" + a + "` of `" + name + "` takes no value"
			}
			hits = append(hits, h)
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			j := 1
			for j < len(a) {
				s := w.short[a[j]]
				if s == nil {
					return hits, i, "unknown option `-" + a[j:j+1] + "` of `" + name + "`"
				}
				h := optHit{key: s.key, known: true}
				if s.arg != argNone {
					if j+1 < len(a) {
						h.val = a[j+1:]
					} else if s.arg == argRequired {
						if i+1 >= len(ws) {
							return hits, i, "option `-" + a[j:j+1] + "` of `" + name + "` lacks its value"
						}
						i++
						h.word = ws[i]
						h.val, h.known = ws[i].single()
					}
					hits = append(hits, h)
					break
				}
				hits = append(hits, h)
				j++
			}
			i++
		default:
			return hits, i, ""
		}
	}
	return hits, i, ""
}

// longOpt finds a long option by exact name or unique prefix.
func (w *wrapper) longOpt(n string) *optSpec {
	if s := w.long[n]; s != nil {
		return s
	}
	if n == "" {
		return nil
	}
	var found *optSpec
	for name, s := range w.long {
		if strings.HasPrefix(name, n) {
			if found != nil && found != s {
				return nil // ambiguous
			}
			found = s
		}
	}
	return found
}

// unwrapped is what peeling one wrapper found.
type unwrapped struct {
	cmds    [][]*cword // commands it runs (the wrapped command; find's -exec clauses)
	scripts []innerScript
	bad     string // what could not be resolved; deny/ask fail closed
	strict  bool   // the exact grammar Claude Code strips for allow rules
	replace string // words containing this are filled in at run time (xargs -I, find {})
}

// innerScript is a shell script a command runs.
type innerScript struct {
	label   string // "bash -c", "su -c", "eval", …
	word    *cword // the word holding it, nil when text is set
	text    string
	known   bool
	current bool // runs in the current shell (eval, source): its assignments count
	trap    bool // runs later, at an unknown time (trap)
	bad     string
}

// peel looks through wrapper w named name at ws[0].
func (w *wrapper) peel(name string, ws []*cword) unwrapped {
	var u unwrapped
	if w.kind == wrapNice {
		// nice -10 cmd: the historic form, a number glued to the dash.
		for len(ws) > 1 {
			a, _ := ws[1].single()
			if len(a) < 2 || a[0] != '-' || !isDigits(a[1:]) {
				break
			}
			ws = append([]*cword{ws[0]}, ws[2:]...)
		}
	}
	hits, i, bad := w.parseOpts(name, ws, 1)
	if bad != "" {
		u.bad = bad
		return u
	}
	has := func(key string) (optHit, bool) {
		for _, h := range hits {
			if h.key == key {
				return h, true
			}
		}
		return optHit{}, false
	}
	script := func(label string, h optHit) {
		s := innerScript{label: label, word: h.word, text: h.val, known: h.known}
		if h.word == nil {
			s.known = true
		}
		u.scripts = append(u.scripts, s)
	}
	rest := ws[i:]
	u.strict = w.allow && len(hits) == 0
	switch w.kind {
	case wrapPlain, wrapOptional:
		if len(rest) < w.operands {
			return u
		}
		rest = rest[w.operands:]
		if w.allow {
			u.strict = true
			if name == "stdbuf" || name == "time" {
				u.strict = len(rest) > 0
			}
		}
		if len(rest) > 0 {
			u.cmds = append(u.cmds, rest)
		}
	case wrapNice:
		u.strict = true
		if len(rest) > 0 {
			u.cmds = append(u.cmds, rest)
		}
	case wrapTimeout:
		u.strict = true
		if len(rest) == 0 {
			return u
		}
		if d, ok := rest[0].single(); !ok || !isDuration(d) {
			u.strict = false
		}
		if len(rest) > 1 {
			u.cmds = append(u.cmds, rest[1:])
		}
	case wrapCommand:
		if _, v := has("v"); v {
			return u
		}
		if _, v := has("V"); v {
			return u
		}
		u.strict = true
		if len(rest) > 0 {
			u.cmds = append(u.cmds, rest)
		}
	case wrapEnv, wrapSudo:
		for len(rest) > 0 && isAssignWord(rest[0]) {
			rest = rest[1:]
		}
		if h, ok := has("split-string"); ok {
			// env -S 'rm -rf' x: the string is split into words and
			// prepended; read it as a script with the rest appended.
			s := innerScript{label: "env -S", known: h.known, text: h.val}
			if h.word == nil {
				s.known = true
			}
			for _, r := range rest {
				s.text += " " + r.src
				if !r.known() {
					s.known = false
				}
			}
			u.scripts = append(u.scripts, s)
			return u
		}
		if w.kind == wrapSudo {
			if _, e := has("edit"); e {
				return u // sudo -e edits files, runs no command
			}
		}
		if len(rest) > 0 {
			u.cmds = append(u.cmds, rest)
		}
	case wrapXargs:
		u.strict = len(hits) == 0
		u.replace = ""
		if h, ok := has("I"); ok {
			u.replace = h.val
		} else if h, ok := has("replace"); ok {
			u.replace = h.val
			if u.replace == "" {
				u.replace = "{}"
			}
		}
		if len(rest) == 0 {
			return u // runs echo
		}
		u.cmds = append(u.cmds, rest)
	case wrapParallel:
		var tmpl []*cword
		for _, r := range rest {
			if v, _ := r.single(); v == ":::" || v == "::::" || v == ":::+" || v == "::::+" {
				break
			}
			tmpl = append(tmpl, r)
		}
		if len(tmpl) == 0 {
			u.bad = "`parallel` runs commands read from its input"
			return u
		}
		s := innerScript{label: "parallel", known: true}
		for _, t := range tmpl {
			v, ok := t.single()
			if !ok || strings.Contains(v, "{") {
				s.known = false
			}
			if s.text != "" {
				s.text += " "
			}
			s.text += v
		}
		u.scripts = append(u.scripts, s)
	case wrapFind:
		for j := 1; j < len(ws); j++ {
			a, _ := ws[j].single()
			switch a {
			case "-exec", "-execdir", "-ok", "-okdir":
				k := j + 1
				for k < len(ws) {
					if t, _ := ws[k].single(); t == ";" || t == "+" {
						break
					}
					k++
				}
				if k > j+1 {
					u.cmds = append(u.cmds, ws[j+1:k])
				}
				j = k
			}
		}
		u.replace = "{}"
	case wrapSu, wrapRunuser:
		if h, ok := has("user"); ok && w.kind == wrapRunuser && h.val != "" {
			if _, c := has("command"); !c {
				if len(rest) > 0 {
					u.cmds = append(u.cmds, rest)
				}
				return u
			}
		}
		// Options may also follow the user name (su - root -c 'cmd').
		for j := 0; j < len(rest); j++ {
			if a, _ := rest[j].single(); strings.HasPrefix(a, "-") && a != "-" {
				more, _, bad := w.parseOpts(name, rest, j)
				if bad != "" {
					u.bad = bad
					return u
				}
				hits = append(hits, more...)
				break
			}
		}
		for _, k := range []string{"command", "session-command"} {
			if h, ok := has(k); ok {
				script(name+" -c", h)
			}
		}
	case wrapScriptC:
		if h, ok := has("command"); ok {
			script("script -c", h)
		}
	case wrapFlock:
		if h, ok := has("command"); ok {
			script("flock -c", h)
			return u
		}
		if len(rest) < 2 {
			return u // flock FD: no command
		}
		if a, _ := rest[1].single(); a == "-c" || a == "--command" {
			if len(rest) < 3 {
				u.bad = "`flock -c` lacks its command"
				return u
			}
			v, ok := rest[2].single()
			u.scripts = append(u.scripts, innerScript{label: "flock -c", word: rest[2], text: v, known: ok})
			return u
		}
		u.cmds = append(u.cmds, rest[1:])
	case wrapWatch:
		if len(rest) == 0 {
			return u
		}
		if _, x := has("exec"); x {
			u.cmds = append(u.cmds, rest)
			return u
		}
		// watch joins its arguments and runs them with sh -c.
		s := innerScript{label: "watch", known: true}
		for _, r := range rest {
			v, ok := r.single()
			if !ok {
				s.known = false
			}
			if s.text != "" {
				s.text += " "
			}
			s.text += v
		}
		u.scripts = append(u.scripts, s)
	case wrapTrap:
		if len(hits) > 0 || len(rest) == 0 {
			return u // trap -p / -l / trap: list only
		}
		v, ok := rest[0].single()
		if ok && (v == "-" || v == "" || len(rest) == 1 && isSignal(v)) {
			return u // reset or ignore a signal
		}
		// The handler runs later, in this shell.
		u.scripts = append(u.scripts, innerScript{label: "trap", word: rest[0], text: v, known: ok, trap: true, current: true})
	}
	return u
}

// isSignal reports whether s names a signal (trap SIGINT resets it).
func isSignal(s string) bool {
	if isDigits(s) {
		return true
	}
	s = strings.TrimPrefix(strings.ToUpper(s), "SIG")
	switch s {
	case "EXIT", "ERR", "DEBUG", "RETURN", "HUP", "INT", "QUIT", "TERM", "KILL", "USR1", "USR2", "PIPE", "ALRM", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "WINCH":
		return true
	}
	return false
}

// isAssignWord reports whether w is NAME=value (env and sudo operands).
func isAssignWord(w *cword) bool {
	v, ok := w.single()
	if !ok {
		v = w.src
	}
	eq := strings.IndexByte(v, '=')
	return eq > 0 && isName(v[:eq])
}

// isDuration matches timeout(1) durations: 10, 2.5, 5s, 1m, 1h, 1d.
func isDuration(s string) bool {
	if n := len(s); n > 0 && strings.IndexByte("smhd", s[n-1]) >= 0 {
		s = s[:n-1]
	}
	if s == "" || s == "." || strings.Count(s, ".") > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return true
}

// shells run a script: bash|sh|… -c STRING, or one read from a file, a
// here-document, a here-string, /dev/stdin or a pipe.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true}

// shellOpts are the options of bash-like shells that take a value.
var shellArgOpts = map[string]bool{"-o": true, "+o": true, "-O": true, "+O": true, "--rcfile": true, "--init-file": true}

var shellLongFlags = map[string]bool{"--norc": true, "--noprofile": true, "--login": true, "--posix": true,
	"--noediting": true, "--restricted": true, "--verbose": true, "--debugger": true, "--dump-strings": true,
	"--dump-po-strings": true, "--help": true, "--version": true, "--pretty-print": true}

// shellScript says where a shell invocation takes its script from.
type shellCall struct {
	dashC   bool   // -c: the script is the first operand
	script  *cword // -c's operand, or the script file operand
	stdin   bool   // the script is read from standard input
	bad     string
	noRun   bool // --version, --help, -n: runs nothing
	operand int
}

// parseShell reads a shell's options: bash -o pipefail -ec 'script' name args…
func parseShellCall(name string, ws []*cword) shellCall {
	var sc shellCall
	i := 1
	forceStdin := false
	for i < len(ws) {
		a, ok := ws[i].single()
		if !ok {
			if strings.HasPrefix(ws[i].src, "-") || strings.HasPrefix(ws[i].src, "+") {
				sc.bad = "option of `" + name + "` is not a literal: `" + ws[i].src + "`"
				return sc
			}
			break
		}
		if a == "--" || a == "-" {
			i++
			break
		}
		if shellArgOpts[a] {
			i += 2
			continue
		}
		if strings.HasPrefix(a, "--") {
			if a == "--help" || a == "--version" {
				sc.noRun = true
			}
			if !shellLongFlags[a] {
				sc.bad = "unknown option `" + a + "` of `" + name + "`"
				return sc
			}
			i++
			continue
		}
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') {
			for _, c := range a[1:] {
				switch {
				case c == 'c' && a[0] == '-':
					sc.dashC = true
				case c == 's' && a[0] == '-':
					forceStdin = true
				case c == 'n' && a[0] == '-':
					sc.noRun = true // syntax check only
				case c == 'o' || c == 'O':
					i++ // its value is the next word
				case strings.ContainsRune("abefhkmptuvxBCEHPTilr", c):
				default:
					sc.bad = "unknown option `" + string(a[0]) + string(c) + "` of `" + name + "`"
					return sc
				}
			}
			i++
			continue
		}
		break
	}
	sc.operand = i
	switch {
	case sc.dashC:
		if i < len(ws) {
			sc.script = ws[i]
		} else {
			sc.bad = "`" + name + " -c` takes its script from input hookd cannot see"
		}
	case forceStdin || i >= len(ws):
		sc.stdin = true
	default:
		sc.script = ws[i]
		if v, ok := ws[i].single(); ok && isStdinPath(v) {
			sc.script, sc.stdin = nil, true
		}
	}
	return sc
}

// isStdinPath reports whether a script file operand is standard input.
func isStdinPath(p string) bool {
	switch p {
	case "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-":
		return true
	}
	return false
}

// isFDPath reports whether p is a file descriptor path (/dev/fd/63, what
// <(…) expands to): what it holds comes from a command.
func isFDPath(p string) bool {
	for _, pre := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if rest, ok := strings.CutPrefix(p, pre); ok && isDigits(rest) {
			return true
		}
	}
	return false
}
