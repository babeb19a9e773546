package main

import (
	"io"
	"strconv"
	"time"

	"github.com/hookd/hookd/protocol/lite"
)

// hookc parses its command line by hand: package flag links reflect and fmt, whose
// initialisation every hookc start would pay. The grammar, the messages, the exit codes
// and the usage text are package flag's (ContinueOnError) for these eight flags;
// TestFlagsMatchPackageFlag checks them against a flag.FlagSet defined as hookc's was.

type options struct {
	socket     string
	stream     bool
	projectDir string
	timeout    time.Duration
	timeoutSet bool
	fallback   bool
	debug      bool
	harness    string
	version    bool
}

// flagSpec is one flag: its name, the word its usage line shows for the value ("" for a
// bool), its usage text and its default as package flag prints it ("" when zero).
type flagSpec struct {
	name, typ, usage, def string
	isBool                bool
}

// The flags in package flag's usage order (by name). The usage texts are what hookc's
// flag.FlagSet had, with package flag's `backquote` names already unquoted.
func flagSpecs(getenv func(string) string) []flagSpec {
	q := func(s string) string {
		if s == "" {
			return ""
		}
		return strconv.Quote(s)
	}
	debug := ""
	if getenv("HOOKC_DEBUG") != "" {
		debug = "true"
	}
	return []flagSpec{
		{name: "debug", usage: "print the decision id and timings on stderr (env HOOKC_DEBUG)", def: debug, isBool: true},
		{name: "fallback", typ: "hookd run", usage: "when the daemon is unreachable, run the event in-process with hookd run", def: "true", isBool: true},
		{name: "harness", typ: "string", usage: "the agent running this forwarder: claude-code, codex or gemini (default: detected from the payload; env HOOKD_HARNESS)", def: q(getenv("HOOKD_HARNESS"))},
		{name: "project-dir", typ: "string", usage: "project directory (default $CLAUDE_PROJECT_DIR)", def: q(getenv("CLAUDE_PROJECT_DIR"))},
		{name: "socket", typ: "string", usage: "daemon socket path (env " + lite.EnvSocket + ")", def: q(lite.SocketPath(getenv))},
		{name: "stream", usage: "print every frame as a JSON line instead of the hook output", isBool: true},
		{name: "timeout", typ: "duration", usage: "give up on the daemon after this long and fail closed (0: no limit); default: the event's default hook timeout less a tenth, at most 10 s (590s for most events); the installed forwarder passes its own hook timeout less that margin"},
		{name: "version", usage: "print hookc's version, commit, build date and the harness versions it was checked against, and exit", isBool: true},
	}
}

func usage(w io.Writer, getenv func(string) string) {
	b := []byte("usage: hookc [flags] < event.json\n\nForward one hook event to hookd and print the Claude Code hook output.\n\n")
	for _, f := range flagSpecs(getenv) {
		b = append(b, "  -"+f.name...)
		if f.typ != "" {
			b = append(b, " "+f.typ...)
		}
		b = append(b, "\n    \t"+f.usage...)
		if f.def != "" {
			b = append(b, " (default "+f.def+")"...)
		}
		b = append(b, '\n')
	}
	_, _ = w.Write(b)
}

// parseFlags parses args as flag.FlagSet.Parse with ContinueOnError would. When it
// returns ok false, hookc exits with code: 0 after -h/-help, 2 after a usage error (both
// have printed the usage on stderr).
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (o options, code int, ok bool) {
	o = options{
		socket:     lite.SocketPath(getenv),
		projectDir: getenv("CLAUDE_PROJECT_DIR"),
		fallback:   true,
		harness:    getenv("HOOKD_HARNESS"),
		debug:      getenv("HOOKC_DEBUG") != "",
	}
	fail := func(msg string) (options, int, bool) {
		_, _ = io.WriteString(stderr, msg+"\n")
		usage(stderr, getenv)
		return o, 2, false
	}
	for len(args) > 0 {
		s := args[0]
		if len(s) < 2 || s[0] != '-' {
			break
		}
		minuses := 1
		if s[1] == '-' {
			minuses++
			if len(s) == 2 { // "--" ends the flags
				break
			}
		}
		name := s[minuses:]
		if len(name) == 0 || name[0] == '-' || name[0] == '=' {
			return fail("bad flag syntax: " + s)
		}
		args = args[1:]
		value, hasValue := "", false
		for i := 1; i < len(name); i++ {
			if name[i] == '=' {
				value, hasValue, name = name[i+1:], true, name[:i]
				break
			}
		}
		var b *bool
		switch name {
		case "debug":
			b = &o.debug
		case "fallback":
			b = &o.fallback
		case "stream":
			b = &o.stream
		case "version":
			b = &o.version
		case "socket", "project-dir", "harness", "timeout":
		case "help", "h":
			usage(stderr, getenv)
			return o, 0, false
		default:
			return fail("flag provided but not defined: -" + name)
		}
		if b != nil {
			if !hasValue {
				*b = true
				continue
			}
			v, err := strconv.ParseBool(value)
			if err != nil {
				return fail("invalid boolean value " + strconv.Quote(value) + " for -" + name + ": parse error")
			}
			*b = v
			continue
		}
		if !hasValue && len(args) > 0 {
			value, hasValue, args = args[0], true, args[1:]
		}
		if !hasValue {
			return fail("flag needs an argument: -" + name)
		}
		switch name {
		case "socket":
			o.socket = value
		case "project-dir":
			o.projectDir = value
		case "harness":
			o.harness = value
		case "timeout":
			d, err := time.ParseDuration(value)
			if err != nil {
				return fail("invalid value " + strconv.Quote(value) + " for flag -timeout: parse error")
			}
			o.timeout, o.timeoutSet = d, true
		}
	}
	return o, 0, true
}
