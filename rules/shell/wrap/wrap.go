// Package wrap knows the commands that run other commands — sudo, env,
// timeout, xargs, find -exec, taskset, capsh, … — by their option grammars,
// and shells by theirs: Peel says what a wrapper runs (commands, scripts)
// or why it cannot tell, ParseShellCall where a shell takes its script
// from. It works on any Word type the caller evaluates (package shell's),
// and imports only package bash.
package wrap

import (
	"strings"

	"github.com/hookd/hookd/rules/shell/bash"
)

// Word is a word of a command line as the caller evaluated it.
type Word interface {
	comparable
	// Single returns the word's value when it is known and unique.
	Single() (string, bool)
	// Source returns the word as written.
	Source() string
	// Known reports whether every value the word may take is known.
	Known() bool
	// MaySplit reports whether the word may become any number of words at
	// run time (an unquoted expansion of text the command chose, a glob).
	MaySplit() bool
}

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
	wrapSetarch                  // setarch [ARCH] [opts] [command…]
	wrapCapsh                    // capsh [--opt[=v]…] [-- bash-args… | == capsh-args…]
	wrapSg                       // sg [-] [GROUP [-c] COMMAND]: COMMAND run by sh -c
	wrapArch                     // arch (macOS) [-ARCH | -arch ARCH | -e N=V | -d N | -c]… command…
	wrapIP                       // ip [opts] netns exec NAME command…
	wrapEntr                     // entr [opts] command…; -s: a script run by $SHELL -c
)

type Wrapper struct {
	kind     wrapKind
	opts     string
	operands int    // operands before the command (chroot NEWROOT)
	allow    bool   // Claude Code looks through it for allow rules too (spec §8)
	noRun    string // option keys after which nothing runs (taskset -p PID)
	// shell: with no command the wrapper starts a shell (unshare, su, …),
	// which reads its script from standard input; for sudo and doas only
	// with -s or -i.
	shell   bool
	anyLong bool // any --name or --name=value is an option (valgrind, firejail)

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
var wrappers = map[string]*Wrapper{
	"env": {kind: wrapEnv, opts: "i|ignore-environment 0|null u|unset= C|chdir= S|split-string= v|debug P= " +
		"|block-signal=? |default-signal=? |ignore-signal=? |list-signal-handling"},
	"sudo": {kind: wrapSudo, shell: true, opts: "A|askpass b|background E|preserve-env=? e|edit H|set-home i|login K|remove-timestamp " +
		"k|reset-timestamp l|list n|non-interactive P|preserve-groups S|stdin s|shell V|version v|validate N|no-update " +
		"B|bell C|close-from= D|chdir= g|group= h|host= p|prompt= R|chroot= r|role= t|type= T|command-timeout= " +
		"U|other-user= u|user="},
	"doas":     {kind: wrapSudo, shell: true, opts: "L n s C= u="},
	"su":       {kind: wrapSu, shell: true, opts: "c|command= |session-command= f|fast g|group= G|supp-group= l|login m|preserve-environment p P|pty s|shell= w|whitelist-environment="},
	"runuser":  {kind: wrapRunuser, shell: true, opts: "c|command= |session-command= f|fast g|group= G|supp-group= l|login m|preserve-environment p P|pty s|shell= u|user= w|whitelist-environment="},
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
	"nsenter":  {kind: wrapOptional, shell: true, opts: "a|all t|target= m|mount=? u|uts=? i|ipc=? n|net=? p|pid=? U|user=? C|cgroup=? T|time=? G|setgid= S|setuid= |preserve-credentials r|root=? w|wd=? W|wdns= e|env F|no-fork Z|follow-context c|join-cgroup |user-parent |keep-caps"},
	"unshare":  {kind: wrapOptional, shell: true, opts: "m|mount=? u|uts=? i|ipc=? n|net=? p|pid=? U|user=? C|cgroup=? T|time=? f|fork |kill-child=? |mount-proc=? r|map-root-user c|map-current-user |map-user= |map-group= |map-users= |map-groups= |map-auto |propagation= |setgroups= R|root= w|wd= S|setuid= G|setgid= |monotonic= |boottime= l|load-interp= |keep-caps"},
	"chroot":   {kind: wrapOptional, shell: true, operands: 1, opts: "|groups= |userspec= |skip-chdir"},
	"strace": {kind: wrapOptional, opts: "c C d D f F h i k n q r t T v V w x y z Z e= o= p= P= s= S= u= a= b= E= I= O= X= U= " +
		"|summary-only |summary |debug |daemonize=? |follow-forks |output-separately |instruction-pointer |stack-trace |syscall-number " +
		"|quiet=? |relative-timestamps=? |absolute-timestamps=? |timestamps=? |syscall-times=? |no-abbrev |verbose= |raw= " +
		"|decode-fds=? |decode-pids=? |trace= |trace-fds= |signal= |status= |inject= |fault= |output= |attach= |string-limit= " +
		"|summary-sort-by= |user= |columns= |env= |seccomp-bpf |kill-on-exit |always-show-pid |successful-only |failed-only"},
	"ltrace": {kind: wrapOptional, opts: "b c C D= e= f F= h i l= L n= o= p= r s= S t T u= w= x= a= A= " +
		"|demangle |library= |output= |align= |indent= |config="},
	"script": {kind: wrapScriptC, shell: true, opts: "a|append c|command= E|echo= e|return f|flush F|force I|log-in= O|log-out= B|log-io= T|log-timing= m|logging-format= o|output-limit= q|quiet t|timing=?"},
	"trap":   {kind: wrapTrap, opts: "l p P"},
	"find":   {kind: wrapFind},
	// busybox APPLET args runs the applet (busybox rm x, busybox sh -c …);
	// --list, --help, --show and --install [-s] [DIR] run none.
	"busybox": {kind: wrapPlain, opts: "|list |list-full |help |show= |install s"},
	"toybox":  {kind: wrapPlain, opts: "|help |version"},

	// util-linux, procps, shadow, systemd, libcap and the like: the
	// programs whose job is to run the command in their arguments.
	"taskset": {kind: wrapPlain, operands: 1, noRun: "pid help version", opts: "a|all-tasks p|pid c|cpu-list h|help V|version"},
	"chrt": {kind: wrapPlain, operands: 1, noRun: "pid max help version", opts: "b|batch d|deadline f|fifo i|idle o|other r|rr " +
		"R|reset-on-fork T|sched-runtime= P|sched-period= D|sched-deadline= a|all-tasks m|max p|pid v|verbose h|help V|version"},
	"prlimit": {kind: wrapPlain, noRun: "pid help version", opts: "p|pid= o|output= |noheadings |raw |verbose h|help V|version " +
		"c|core=? d|data=? e|nice=? f|fsize=? i|sigpending=? l|memlock=? m|rss=? n|nofile=? q|msgqueue=? r|rtprio=? " +
		"s|stack=? t|cpu=? u|nproc=? v|as=? x|locks=? y|rttime=?"},
	"setarch": {kind: wrapSetarch, noRun: "list help version", opts: setarchOpts},
	"systemd-run": {kind: wrapPlain, noRun: "help version shell", opts: "h|help |version |no-ask-password |user H|host= M|machine= " +
		"|scope u|unit= p|property= |description= |slice= |slice-inherit |no-block r|remain-after-exit |wait |send-sighup " +
		"|service-type= |uid= |gid= |nice= |working-directory= d|same-dir E|setenv= t|pty P|pipe q|quiet G|collect S|shell " +
		"|path-property= |socket-property= |on-active= |on-boot= |on-startup= |on-unit-active= |on-unit-inactive= " +
		"|on-calendar= |on-timezone-change |on-clock-change |timer-property= |system |expand-environment= |json= |job-mode="},
	"run0": {kind: wrapPlain, shell: true, noRun: "help version", opts: "u|user= g|group= |nice= D|chdir= |setenv= |unit= |property= " +
		"|description= |slice= |slice-inherit |background= |pty |pipe |shell-prompt-prefix= |via-shell |machine= |no-ask-password h|help |version"},
	"capsh":            {kind: wrapCapsh},
	"sg":               {kind: wrapSg},
	"fakeroot":         {kind: wrapPlain, shell: true, noRun: "help version", opts: "l|lib= |faked= i= s= u|unknown-is-real b= h|help v|version"},
	"valgrind":         {kind: wrapPlain, anyLong: true, opts: "h q|quiet v|verbose"},
	"dbus-run-session": {kind: wrapPlain, noRun: "help version", opts: "|config-file= |dbus-daemon= |help |version"},
	"numactl": {kind: wrapPlain, noRun: "hardware show help", opts: "a|all i|interleave= m|membind= N|cpunodebind= C|physcpubind= " +
		"l|localalloc p|preferred= P|preferred-many= b|balancing H|hardware s|show S|shm= f|file= L|length= M|mode= o|offset= " +
		"T|strict u|touch V|verify y|policy= w|weighted-interleave= |huge h|help"},
	"cgexec":    {kind: wrapPlain, opts: "g= h |sticky r|root="},
	"pkexec":    {kind: wrapPlain, noRun: "help version", opts: "|user= |disable-internal-agent |keep-cwd |help |version"},
	"eatmydata": {kind: wrapPlain},
	"nocache":   {kind: wrapPlain, opts: "n= h"},
	"unbuffer":  {kind: wrapPlain, opts: "p"},
	"firejail":  {kind: wrapPlain, shell: true, anyLong: true},
	"sshpass":   {kind: wrapPlain, noRun: "h V", opts: "f= d= p= e P= h V v"},
	"xvfb-run": {kind: wrapPlain, noRun: "help", opts: "a|auto-servernum e|error-file= f|auth-file= n|server-num= l|listen-tcp " +
		"p|xauth-protocol= s|server-args= w|wait= h|help"},
	"gosu":         {kind: wrapPlain, operands: 1},
	"su-exec":      {kind: wrapPlain, operands: 1},
	"chpst":        {kind: wrapPlain, opts: "u= U= b= e= /= n= l= L= m= d= o= p= f= c= v P 0 1 2"},
	"setuidgid":    {kind: wrapPlain, operands: 1, opts: "s"},
	"envuidgid":    {kind: wrapPlain, operands: 1},
	"envdir":       {kind: wrapPlain, operands: 1},
	"softlimit":    {kind: wrapPlain, opts: "a= c= d= f= l= m= o= p= r= s= t="},
	"caffeinate":   {kind: wrapOptional, opts: "d i m s u t= w="},
	"sandbox-exec": {kind: wrapPlain, opts: "f= n= p= D="},
	"arch":         {kind: wrapArch},
	"torsocks": {kind: wrapPlain, noRun: "shell help version", opts: "u|user= p|pass= a|address= P|port= i|isolate d|debug q|quiet " +
		"|shell h|help |version"},
	"proxychains":  {kind: wrapPlain, opts: "q f="},
	"proxychains4": {kind: wrapPlain, opts: "q f="},
	"chronic":      {kind: wrapPlain, opts: "e v"},
	"ifne":         {kind: wrapPlain, opts: "n"},
	"entr":         {kind: wrapEntr, opts: "a c d n p r s z"},
	"ip":           {kind: wrapIP},
}

const setarchOpts = "B|32bit F|fdpic-funcptrs I|short-inode L|addr-compat-layout R|addr-no-randomize S|whole-seconds " +
	"T|sticky-timeouts X|read-implies-exec Z|mmap-page-zero 3|3gb |4gb |uname-2.6 v|verbose |list h|help V|version"

func init() {
	// setarch's architecture names are programs of their own.
	for _, a := range []string{"linux32", "linux64", "i386", "i486", "i586", "i686", "athlon", "x86_64", "uname26",
		"aarch64", "arm64", "ppc", "ppc64", "ppc64le", "s390", "s390x", "sparc", "sparc64", "mips", "mips64", "parisc"} {
		wrappers[a] = &Wrapper{kind: wrapPlain, noRun: "help version list", opts: setarchOpts}
	}
}

func init() {
	for _, w := range wrappers {
		w.compile()
	}
}

func (w *Wrapper) compile() {
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
type optHit[W Word] struct {
	key     string
	val     string
	word    W    // the word holding the value, when it is a whole word
	hasWord bool // word is set
	known   bool // val is known
}

// parseOpts reads options from ws[i:] and returns them with the index of
// the first operand. bad names an option the wrapper does not have.
func parseOpts[W Word](w *Wrapper, name string, ws []W, i int) (hits []optHit[W], next int, bad string) {
	for i < len(ws) {
		a, ok := ws[i].Single()
		if !ok {
			if strings.HasPrefix(ws[i].Source(), "-") {
				return hits, i, "option of `" + name + "` is not a literal: `" + ws[i].Source() + "`"
			}
			return hits, i, "" // an unknown operand: the caller decides
		}
		switch {
		case a == "--":
			return hits, i + 1, ""
		case strings.HasPrefix(a, "--") && w.anyLong:
			hits = append(hits, optHit[W]{key: a, known: true})
			i++
		case strings.HasPrefix(a, "--"):
			n, v, hasV := strings.Cut(a[2:], "=")
			s := w.longOpt(n)
			if s == nil {
				return hits, i, "unknown option `" + a + "` of `" + name + "`"
			}
			h := optHit[W]{key: s.key, val: v, known: true}
			switch {
			case s.arg == argRequired && !hasV:
				if i+1 >= len(ws) {
					return hits, i, "option `" + a + "` of `" + name + "` lacks its value"
				}
				i++
				h.word, h.hasWord = ws[i], true
				h.val, h.known = ws[i].Single()
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
				h := optHit[W]{key: s.key, known: true}
				if s.arg != argNone {
					if j+1 < len(a) {
						h.val = a[j+1:]
					} else if s.arg == argRequired {
						if i+1 >= len(ws) {
							return hits, i, "option `-" + a[j:j+1] + "` of `" + name + "` lacks its value"
						}
						i++
						h.word, h.hasWord = ws[i], true
						h.val, h.known = ws[i].Single()
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
func (w *Wrapper) longOpt(n string) *optSpec {
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

// Unwrapped is what peeling one wrapper found.
type Unwrapped[W Word] struct {
	Cmds    []Cmd[W] // commands it runs (the wrapped command; find's -exec clauses)
	Scripts []Script[W]
	Bad     string   // what could not be resolved; deny/ask fail closed
	Strict  bool     // the exact grammar Claude Code strips for allow rules
	Replace string   // words containing this are filled in at run time (xargs -I, find {})
	Assigns []string // NAME=VALUE operands (env, sudo): the program's environment
	// Shell: no command was given and the wrapper starts a shell, which
	// reads its script from standard input.
	Shell bool
}

// Cmd is a command a wrapper runs.
type Cmd[W Word] struct {
	Prepend string // a program the wrapper puts first (capsh -- args: bash)
	Words   []W
	// AppendInput: words read at run time are appended (xargs): the
	// command may take its program, or a wrapper's command, from there.
	AppendInput bool
}

// Script is a shell script a command runs.
type Script[W Word] struct {
	Label   string // "bash -c", "su -c", "eval", …
	Word    W      // the word holding it, when HasWord
	HasWord bool
	Text    string
	Known   bool
	Current bool // runs in the current shell (eval, source): its assignments count
	Trap    bool // runs later, at an unknown time (trap)
	Args    bool // run with arguments ($1, … are text the command chose)
	Bad     string
}

// peel looks through wrapper w named name at ws[0].
func Peel[W Word](w *Wrapper, name string, ws []W) Unwrapped[W] {
	u := peel(w, name, ws)
	if u.Bad != "" {
		return u
	}
	// A word before the command that may split into any number of words
	// (or none) may be any option or operand: what runs is unknown.
	end := len(ws)
	if w.kind != wrapFind && len(u.Cmds) > 0 && len(u.Cmds[0].Words) > 0 {
		for i := range ws {
			if ws[i] == u.Cmds[0].Words[0] {
				end = i
				break
			}
		}
	}
	for _, x := range ws[1:end] {
		if x.MaySplit() {
			return Unwrapped[W]{Bad: "an argument of `" + name + "` is computed at run time and may be any number of words: `" + x.Source() + "`"}
		}
	}
	return u
}

func peel[W Word](w *Wrapper, name string, ws []W) (u Unwrapped[W]) {
	if w.kind == wrapNice {
		// nice -10 cmd: the historic form, a number glued to the dash.
		for len(ws) > 1 {
			a, _ := ws[1].Single()
			if len(a) < 2 || a[0] != '-' || !bash.IsDigits(a[1:]) {
				break
			}
			ws = append([]W{ws[0]}, ws[2:]...)
		}
	}
	switch w.kind {
	case wrapCapsh, wrapSg, wrapArch, wrapIP:
		return peelSpecial(w, name, ws)
	case wrapSetarch:
		// setarch ARCH [opts] command: the architecture comes first.
		if len(ws) > 1 {
			if a, ok := ws[1].Single(); ok && !strings.HasPrefix(a, "-") {
				ws = append([]W{ws[0]}, ws[2:]...)
			}
		}
	}
	hits, i, bad := parseOpts(w, name, ws, 1)
	if bad != "" {
		u.Bad = bad
		return u
	}
	has := func(key string) (optHit[W], bool) {
		for _, h := range hits {
			if h.key == key {
				return h, true
			}
		}
		return optHit[W]{}, false
	}
	for _, k := range strings.Fields(w.noRun) {
		if _, ok := has(k); ok {
			return u
		}
	}
	defer func() {
		if w.shell && len(u.Cmds) == 0 && len(u.Scripts) == 0 && u.Bad == "" {
			_, s := has("shell")
			_, i := has("login")
			_, ds := has("s")
			u.Shell = w.kind != wrapSudo || s || i || ds
		}
	}()
	script := func(label string, h optHit[W]) {
		s := Script[W]{Label: label, Word: h.word, HasWord: h.hasWord, Text: h.val, Known: h.known}
		if !h.hasWord {
			s.Known = true
		}
		u.Scripts = append(u.Scripts, s)
	}
	rest := ws[i:]
	u.Strict = w.allow && len(hits) == 0
	switch w.kind {
	case wrapEntr:
		if _, s := has("s"); s && len(rest) > 0 {
			v, ok := rest[0].Single()
			u.Scripts = append(u.Scripts, Script[W]{Label: "entr -s", Word: rest[0], HasWord: true, Text: v, Known: ok})
			return u
		}
		if len(rest) > 0 {
			u.Cmds = append(u.Cmds, Cmd[W]{Words: rest})
		}
	case wrapPlain, wrapOptional, wrapSetarch:
		if len(rest) < w.operands {
			return u
		}
		rest = rest[w.operands:]
		if w.allow {
			u.Strict = true
			if name == "stdbuf" || name == "time" {
				u.Strict = len(rest) > 0
			}
		}
		if len(rest) > 0 {
			u.Cmds = append(u.Cmds, Cmd[W]{Words: rest})
		}
	case wrapNice:
		u.Strict = true
		if len(rest) > 0 {
			u.Cmds = append(u.Cmds, Cmd[W]{Words: rest})
		}
	case wrapTimeout:
		u.Strict = true
		if len(rest) == 0 {
			return u
		}
		if d, ok := rest[0].Single(); !ok || !isDuration(d) {
			u.Strict = false
		}
		if len(rest) > 1 {
			u.Cmds = append(u.Cmds, Cmd[W]{Words: rest[1:]})
		}
	case wrapCommand:
		if _, v := has("v"); v {
			return u
		}
		if _, v := has("V"); v {
			return u
		}
		u.Strict = true
		if len(rest) > 0 {
			u.Cmds = append(u.Cmds, Cmd[W]{Words: rest})
		}
	case wrapEnv, wrapSudo:
		if w.kind == wrapEnv && len(rest) > 0 {
			// GNU env: a lone "-" is -i.
			if a, ok := rest[0].Single(); ok && a == "-" {
				rest = rest[1:]
			}
		}
		for len(rest) > 0 && isAssignWord(rest[0]) {
			v, ok := rest[0].Single()
			if !ok {
				v = rest[0].Source()
			}
			u.Assigns = append(u.Assigns, v)
			rest = rest[1:]
		}
		if h, ok := has("split-string"); ok {
			// env -S 'rm -rf' x: the string is split into words and
			// prepended; read it as a script with the rest appended.
			s := Script[W]{Label: "env -S", Known: h.known, Text: h.val}
			if !h.hasWord {
				s.Known = true
			}
			if s.Known && strings.ContainsAny(h.val, "\\$") {
				// env's own escapes (\_ separates words, \c ends the string)
				// and ${VAR} are not the shell's: not read as a script.
				u.Bad = "`env -S` string with escapes or ${VAR}, which env expands itself: `" + h.val + "`"
				return u
			}
			for _, r := range rest {
				s.Text += " " + r.Source()
				if !r.Known() {
					s.Known = false
				}
			}
			u.Scripts = append(u.Scripts, s)
			return u
		}
		if w.kind == wrapSudo {
			if _, e := has("edit"); e {
				return u // sudo -e edits files, runs no command
			}
		}
		if len(rest) > 0 {
			u.Cmds = append(u.Cmds, Cmd[W]{Words: rest})
		}
	case wrapXargs:
		u.Strict = len(hits) == 0
		u.Replace = ""
		if h, ok := has("I"); ok {
			u.Replace = h.val
		} else if h, ok := has("replace"); ok {
			u.Replace = h.val
			if u.Replace == "" {
				u.Replace = "{}"
			}
		}
		if len(rest) == 0 {
			return u // runs echo
		}
		// The words read from the input are appended: the command may take
		// its name, or a wrapper's command, from there.
		u.Cmds = append(u.Cmds, Cmd[W]{Words: rest, AppendInput: u.Replace == ""})
	case wrapParallel:
		var tmpl []W
		for _, r := range rest {
			if v, _ := r.Single(); v == ":::" || v == "::::" || v == ":::+" || v == "::::+" {
				break
			}
			tmpl = append(tmpl, r)
		}
		if len(tmpl) == 0 {
			u.Bad = "`parallel` runs commands read from its input"
			return u
		}
		s := joined("parallel", tmpl)
		if strings.Contains(s.Text, "{") {
			s.Known = false // a replacement string: text from the input
		}
		u.Scripts = append(u.Scripts, s)
	case wrapFind:
		for j := 1; j < len(ws); j++ {
			a, _ := ws[j].Single()
			switch a {
			case "-exec", "-execdir", "-ok", "-okdir":
				k := j + 1
				for k < len(ws) {
					if t, _ := ws[k].Single(); t == ";" || t == "+" {
						break
					}
					k++
				}
				if k > j+1 {
					u.Cmds = append(u.Cmds, Cmd[W]{Words: ws[j+1 : k]})
				}
				j = k
			}
		}
		u.Replace = "{}"
	case wrapSu, wrapRunuser:
		if h, ok := has("user"); ok && w.kind == wrapRunuser && h.val != "" {
			if _, c := has("command"); !c {
				if len(rest) > 0 {
					u.Cmds = append(u.Cmds, Cmd[W]{Words: rest})
				}
				return u
			}
		}
		// Options may also follow the user name (su - root -c 'cmd').
		for j := 0; j < len(rest); j++ {
			if a, _ := rest[j].Single(); strings.HasPrefix(a, "-") && a != "-" {
				more, _, bad := parseOpts(w, name, rest, j)
				if bad != "" {
					u.Bad = bad
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
		// util-linux script permutes its arguments (getopt without '+'):
		// options may follow the file operand, and any -c may be the one
		// that runs.
		for j := 0; j < len(rest); j++ {
			a, ok := rest[j].Single()
			switch {
			case !ok && strings.HasPrefix(rest[j].Source(), "-"):
				u.Bad = "option of `script` is not a literal: `" + rest[j].Source() + "`"
				return u
			case a == "--":
				j = len(rest)
			case ok && len(a) > 1 && a[0] == '-':
				more, next, bad := parseOpts(w, name, rest, j)
				if bad != "" {
					u.Bad = bad
					return u
				}
				hits = append(hits, more...)
				j = next - 1
			}
		}
		for _, h := range hits {
			if h.key == "command" {
				script("script -c", h)
			}
		}
	case wrapFlock:
		if h, ok := has("command"); ok {
			script("flock -c", h)
			return u
		}
		if len(rest) < 2 {
			return u // flock FD: no command
		}
		if a, _ := rest[1].Single(); a == "-c" || a == "--command" {
			if len(rest) < 3 {
				u.Bad = "`flock -c` lacks its command"
				return u
			}
			v, ok := rest[2].Single()
			u.Scripts = append(u.Scripts, Script[W]{Label: "flock -c", Word: rest[2], HasWord: true, Text: v, Known: ok})
			return u
		}
		u.Cmds = append(u.Cmds, Cmd[W]{Words: rest[1:]})
	case wrapWatch:
		if len(rest) == 0 {
			return u
		}
		if _, x := has("exec"); x {
			u.Cmds = append(u.Cmds, Cmd[W]{Words: rest})
			return u
		}
		// watch joins its arguments and runs them with sh -c.
		u.Scripts = append(u.Scripts, joined("watch", rest))
	case wrapTrap:
		if len(hits) > 0 || len(rest) == 0 {
			return u // trap -p / -l / trap: list only
		}
		v, ok := rest[0].Single()
		if ok && (v == "-" || v == "" || len(rest) == 1 && isSignal(v)) {
			return u // reset or ignore a signal
		}
		// The handler runs later, in this shell.
		u.Scripts = append(u.Scripts, Script[W]{Label: "trap", Word: rest[0], HasWord: true, Text: v, Known: ok, Trap: true, Current: true})
	}
	return u
}

// peelSpecial handles the wrappers whose grammar is not options, operands
// and a command.
func peelSpecial[W Word](w *Wrapper, name string, ws []W) Unwrapped[W] {
	var u Unwrapped[W]
	switch w.kind {
	case wrapCapsh:
		// Every option is --name or --name=value; "--" runs /bin/bash (or
		// --shell) with the rest as its arguments, "==" runs capsh again.
		for i := 1; i < len(ws); i++ {
			a, ok := ws[i].Single()
			switch {
			case !ok:
				u.Bad = "option of `capsh` is not a literal: `" + ws[i].Source() + "`"
				return u
			case a == "--":
				u.Cmds = append(u.Cmds, Cmd[W]{Prepend: "bash", Words: ws[i+1:]})
				return u
			case a == "==":
				u.Cmds = append(u.Cmds, Cmd[W]{Words: append([]W{ws[0]}, ws[i+1:]...)})
				return u
			case strings.HasPrefix(a, "--shell="):
				u.Bad = "`capsh " + a + "` runs a shell hookd does not know"
				return u
			case !strings.HasPrefix(a, "--"):
				u.Bad = "unknown option `" + a + "` of `capsh`"
				return u
			}
		}
	case wrapSg:
		// sg [-] GROUP [-c] COMMAND: the command is a string for /bin/sh -c.
		rest := ws[1:]
		if len(rest) > 0 {
			if a, _ := rest[0].Single(); a == "-" {
				rest = rest[1:]
			}
		}
		if len(rest) < 2 {
			u.Shell = len(rest) == 1 // sg GROUP: a shell
			return u
		}
		rest = rest[1:]
		if a, _ := rest[0].Single(); a == "-c" {
			rest = rest[1:]
		}
		if len(rest) > 0 {
			u.Scripts = append(u.Scripts, joined("sg", rest))
		}
	case wrapArch:
		// macOS arch(1): -x86_64, -arm64, -arch NAME, -e NAME=VALUE, -d NAME, -c, -32, -64.
		i := 1
		for ; i < len(ws); i++ {
			a, ok := ws[i].Single()
			if !ok {
				if strings.HasPrefix(ws[i].Source(), "-") {
					u.Bad = "option of `arch` is not a literal: `" + ws[i].Source() + "`"
					return u
				}
				break
			}
			if a == "-arch" || a == "-e" || a == "-d" {
				i++
				continue
			}
			if !strings.HasPrefix(a, "-") {
				break
			}
		}
		if i < len(ws) {
			u.Cmds = append(u.Cmds, Cmd[W]{Words: ws[i:]})
		}
	case wrapIP:
		// ip [opts] netns exec NAME command… (ip accepts unique prefixes;
		// any prefix is taken here, and -all needs no NAME).
		all := false
		for i := 1; i+1 < len(ws); i++ {
			a, _ := ws[i].Single()
			if a == "-all" || a == "-a" {
				all = true
			}
			b, _ := ws[i+1].Single()
			if len(a) >= 3 && strings.HasPrefix("netns", a) && b != "" && strings.HasPrefix("exec", b) {
				j := i + 2
				if !all {
					j++
				}
				if j < len(ws) {
					u.Cmds = append(u.Cmds, Cmd[W]{Words: ws[j:]})
				}
				return u
			}
		}
	}
	return u
}

// isSignal reports whether s names a signal (trap SIGINT resets it).
func isSignal(s string) bool {
	if bash.IsDigits(s) {
		return true
	}
	s = strings.TrimPrefix(strings.ToUpper(s), "SIG")
	switch s {
	case "EXIT", "ERR", "DEBUG", "RETURN", "HUP", "INT", "QUIT", "TERM", "KILL", "USR1", "USR2", "PIPE", "ALRM", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "WINCH":
		return true
	}
	return false
}

// joined is the script a wrapper makes of its words joined with spaces
// (watch, parallel, sg), unknown when a word is not a literal.
func joined[W Word](label string, ws []W) Script[W] {
	s := Script[W]{Label: label, Known: true}
	for _, r := range ws {
		v, ok := r.Single()
		if !ok {
			s.Known, s.Word, s.HasWord = false, r, true
		}
		s.Text = strings.TrimPrefix(s.Text+" "+v, " ")
	}
	return s
}

// isAssignWord reports whether w is NAME=value (env and sudo operands).
func isAssignWord[W Word](w W) bool {
	v, ok := w.Single()
	if !ok {
		v = w.Source()
	}
	eq := strings.IndexByte(v, '=')
	return eq > 0 && bash.IsName(v[:eq])
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
// Shells run a script given to them.
var Shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true}

// shellArgOpts are the options of bash-like shells that take a value.
var shellArgOpts = map[string]bool{"-o": true, "+o": true, "-O": true, "+O": true}

var shellLongFlags = map[string]bool{"--norc": true, "--noprofile": true, "--login": true, "--posix": true,
	"--noediting": true, "--restricted": true, "--verbose": true, "--debugger": true, "--dump-strings": true,
	"--dump-po-strings": true, "--help": true, "--version": true, "--pretty-print": true}

// shellScript says where a shell invocation takes its script from.
type ShellCall[W Word] struct {
	DashC     bool // -c: the script is the first operand
	Script    W    // -c's operand, or the script file operand (when HasScript)
	HasScript bool
	Stdin     bool // the script is read from standard input
	Bad       string
	NoRun     bool // --version, --help, -n: runs nothing
	Operand   int
	Args      bool // words follow the script: $0, $1, …
}

// parseShell reads a shell's options: bash -o pipefail -ec 'script' name args…
func ParseShellCall[W Word](name string, ws []W) ShellCall[W] {
	var sc ShellCall[W]
	i := 1
	forceStdin := false
	for i < len(ws) {
		a, ok := ws[i].Single()
		if !ok {
			if strings.HasPrefix(ws[i].Source(), "-") || strings.HasPrefix(ws[i].Source(), "+") || ws[i].MaySplit() {
				sc.Bad = "option of `" + name + "` is not a literal: `" + ws[i].Source() + "`"
				return sc
			}
			break
		}
		if a == "--" || a == "-" {
			i++
			break
		}
		if a == "--rcfile" || a == "--init-file" {
			sc.Bad = "`" + name + " " + a + "` reads a start-up file, a script hookd does not read"
			return sc
		}
		if shellArgOpts[a] {
			if bad := shellOptValue(name, a, ws, i+1); bad != "" {
				sc.Bad = bad
				return sc
			}
			i += 2
			continue
		}
		if a == "--posix" {
			sc.Bad = "`" + name + " --posix` reads the script in POSIX mode"
			return sc
		}
		if strings.HasPrefix(a, "--") {
			if a == "--help" || a == "--version" {
				sc.NoRun = true
			}
			if !shellLongFlags[a] {
				sc.Bad = "unknown option `" + a + "` of `" + name + "`"
				return sc
			}
			i++
			continue
		}
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') {
			for _, c := range a[1:] {
				switch {
				case c == 'c' && a[0] == '-':
					sc.DashC = true
				case c == 's' && a[0] == '-':
					forceStdin = true
				case c == 'n' && a[0] == '-':
					sc.NoRun = true // syntax check only
				case c == 'o' || c == 'O':
					if bad := shellOptValue(name, string(a[0])+string(c), ws, i+1); bad != "" {
						sc.Bad = bad
						return sc
					}
					i++ // its value is the next word
				case c == 'k':
					sc.Bad = "`" + name + " -k` reads assignments anywhere on a command line"
					return sc
				case strings.ContainsRune("abefhmptuvxBCEPTilr", c):
				default:
					sc.Bad = "unknown option `" + string(a[0]) + string(c) + "` of `" + name + "`"
					return sc
				}
			}
			i++
			continue
		}
		break
	}
	sc.Operand = i
	switch {
	case sc.DashC:
		if i < len(ws) {
			sc.Script, sc.HasScript = ws[i], true
			sc.Args = i+2 < len(ws) // $0 is ws[i+1]; $1 on are arguments
		} else {
			sc.Bad = "`" + name + " -c` takes its script from input hookd cannot see"
		}
	case forceStdin || i >= len(ws):
		sc.Stdin = true
	default:
		sc.Script, sc.HasScript = ws[i], true
		if v, ok := ws[i].Single(); ok && bash.IsStdinPath(v) {
			var zero W
			sc.Script, sc.HasScript, sc.Stdin = zero, false, true
		}
	}
	return sc
}

// shellOptValue checks the value of a shell's -o/-O option: one that
// changes how bash reads the script makes it unresolved.
func shellOptValue[W Word](name, opt string, ws []W, i int) string {
	if i >= len(ws) {
		return ""
	}
	v, ok := ws[i].Single()
	switch {
	case !ok:
		return "option `" + opt + " " + ws[i].Source() + "` of `" + name + "` is not a literal"
	case (opt == "-o" || opt == "+o") && !bash.SetHarmless[v]:
		return "`" + name + " " + opt + " " + v + "` changes how bash reads the script"
	case (opt == "-O" || opt == "+O") && !bash.ShoptHarmless[v]:
		return "`" + name + " " + opt + " " + v + "` changes how bash reads the script"
	}
	return ""
}

// Lookup returns the wrapper named name (a base name), or nil.
func Lookup(name string) *Wrapper { return wrappers[name] }
