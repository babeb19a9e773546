// Command hookc forwards one hook event to hookd and answers as a hook.
//
// A harness runs hookc as its hook command: the event JSON arrives on stdin, hookc sends
// it to the daemon over the Unix socket together with its own environment (so hooks run
// with the PATH, virtualenv and CLAUDE_* variables the harness gave it), and prints the
// merged answer as a hook output: JSON on stdout and exit code 0, or exit 2 with the reason
// on stderr where only exit 2 expresses the outcome. The daemon renders the answer in the
// format of the harness named by --harness (Claude Code, Codex CLI, Gemini CLI); exit 2 is
// the fail-closed signal all three read as "block".
//
// Fail safe: if the daemon cannot be reached, hookc runs the event through the same
// engine in-process (`hookd run`); if even that fails, it blocks the event with a reason
// (exit 2) rather than letting it through. A hook runner that is down never reads as an
// allow.
//
// hookc imports only the standard library and hookd's protocol package: it is started for
// every hook event, so its start-up time is the product.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/hookd/hookd/protocol"
)

// Without --timeout, hookc gives up on the daemon a little before Claude Code's default
// timeout for the event's hooks (protocol.ForwarderTimeout of protocol.DefaultHookTimeout:
// 590 s for most events, 27 s for UserPromptSubmit): when Claude Code times a hook out,
// the tool runs; when hookc gives up first, it answers fail-closed. A daemon that accepts
// but never answers (at its fd limit, wedged) must not turn into an allow. The forwarder
// `hookd install` writes passes --timeout derived from its own handler timeout.

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type options struct {
	socket     string
	stream     bool
	projectDir string
	timeout    time.Duration
	fallback   bool
	debug      bool
	harness    string
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hookc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.socket, "socket", protocol.DefaultSocketPath(), "daemon socket path (env "+protocol.EnvSocket+")")
	fs.BoolVar(&o.stream, "stream", false, "print every frame as a JSON line instead of the hook output")
	fs.StringVar(&o.projectDir, "project-dir", os.Getenv("CLAUDE_PROJECT_DIR"), "project directory (default $CLAUDE_PROJECT_DIR)")
	fs.DurationVar(&o.timeout, "timeout", 0, "give up on the daemon after this long and fail closed (0: no limit); default: the event's default hook timeout less a tenth, at most 10 s (590s for most events); the installed forwarder passes its own hook timeout less that margin")
	fs.BoolVar(&o.fallback, "fallback", true, "when the daemon is unreachable, run the event in-process with `hookd run`")
	fs.StringVar(&o.harness, "harness", os.Getenv("HOOKD_HARNESS"), "the agent running this forwarder: claude-code, codex or gemini (default: detected from the payload; env HOOKD_HARNESS)")
	fs.BoolVar(&o.debug, "debug", os.Getenv("HOOKC_DEBUG") != "", "print the decision id and timings on stderr (env HOOKC_DEBUG)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: hookc [flags] < event.json\n\nForward one hook event to hookd and print the Claude Code hook output.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	payload, err := io.ReadAll(io.LimitReader(stdin, protocol.DefaultMaxRequestBytes+1))
	if err != nil {
		return failClosed(stdout, stderr, nil, "hookc: reading the event from stdin: "+err.Error())
	}
	if len(payload) > protocol.DefaultMaxRequestBytes {
		return failClosed(stdout, stderr, payload, fmt.Sprintf("hookc: event payload exceeds %d bytes", protocol.DefaultMaxRequestBytes))
	}
	timeoutSet := false
	fs.Visit(func(f *flag.Flag) { timeoutSet = timeoutSet || f.Name == "timeout" })
	if !timeoutSet {
		o.timeout = protocol.ForwarderTimeout(protocol.DefaultHookTimeout(protocol.PeekEventName(payload)))
	}
	start := time.Now()
	ctx := context.Background()
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	req := &protocol.Request{
		V: protocol.Version, EventText: string(payload), Env: os.Environ(), ProjectDir: o.projectDir, Harness: o.harness,
		Options: protocol.Options{Client: "hookc", ResultOnly: !o.stream},
	}
	var onLine func([]byte, protocol.FrameType)
	if o.stream {
		onLine = func(line []byte, _ protocol.FrameType) { _, _ = stdout.Write(append(line, '\n')) }
	}
	res, err := forward(ctx, o.socket, req, onLine)
	var perr *protocol.Error
	switch {
	case err == nil:
		if o.debug {
			fmt.Fprintf(stderr, "hookc: decision_id=%s revision=%.12s exit=%d took=%s\n", res.DecisionID, res.Revision, res.ExitCode, time.Since(start).Round(time.Microsecond))
		}
		if o.stream {
			return res.ExitCode
		}
		return res.Render(stdout, stderr)
	case errors.Is(err, protocol.ErrUnreachable),
		errors.As(err, &perr) && perr.Code == protocol.CodeUnsupportedVersion:
		if errors.Is(err, protocol.ErrUntrustedSocket) {
			// Always said: someone else may be listening where hookd should be.
			fmt.Fprintf(stderr, "hookc: %v; nothing was sent to it\n", err)
		}
		if !o.fallback {
			return failClosed(stdout, stderr, payload, "hookc: "+err.Error())
		}
		if o.debug {
			fmt.Fprintf(stderr, "hookc: daemon unreachable (%v); running in-process\n", err)
		}
		return inProcess(ctx, payload, o, stdout, stderr)
	default:
		return failClosed(stdout, stderr, payload, "hookc: "+err.Error())
	}
}

// resultLine is the part of a result frame hookc renders. Decoding into it instead of
// protocol.Frame spares a fresh process most of encoding/json's first-use cost.
type resultLine struct {
	Result *struct {
		DecisionID string          `json:"decision_id"`
		Revision   string          `json:"revision"`
		Output     json.RawMessage `json:"output"`
		Stdout     string          `json:"stdout"`
		Stderr     string          `json:"stderr"`
		ExitCode   int             `json:"exit_code"`
	} `json:"result"`
}

func forward(ctx context.Context, socket string, req *protocol.Request, onLine func([]byte, protocol.FrameType)) (*protocol.Result, error) {
	c, err := protocol.DialSync(socket, 0) // ctx's deadline, if any, applies in DoRaw
	if err != nil {
		return nil, err
	}
	defer c.Close()
	line, err := c.DoRaw(ctx, req, onLine)
	if err != nil {
		return nil, err
	}
	var rl resultLine
	if err := json.Unmarshal(line, &rl); err != nil || rl.Result == nil {
		return nil, fmt.Errorf("daemon answered without a result: %s", line)
	}
	r := rl.Result
	return &protocol.Result{DecisionID: r.DecisionID, Revision: r.Revision, Output: r.Output,
		Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode}, nil
}

// inProcess runs `hookd run --stream` and renders its result frame itself, so that any
// failure of the fallback (hookd missing, a crash, an invalid configuration) is told
// apart from a rendered answer and fails closed.
func inProcess(ctx context.Context, payload []byte, o options, stdout, stderr io.Writer) int {
	bin := hookdBinary()
	if bin == "" {
		return failClosed(stdout, stderr, payload, "hookc: hookd is unreachable and no hookd binary was found for the in-process fallback (set HOOKD_BIN)")
	}
	args := []string{"run", "--stream"}
	if o.projectDir != "" {
		args = append(args, "--project-dir", o.projectDir)
	}
	if o.harness != "" {
		args = append(args, "--harness", o.harness)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run() // the exit code is the rendered one; the result frame is what counts
	lr := protocol.NewLineReader(&out, 0)
	var res *protocol.Result
	for {
		line, err := lr.ReadLine()
		if err != nil {
			break
		}
		var f protocol.Frame
		if json.Unmarshal(line, &f) != nil {
			continue
		}
		if o.stream {
			_ = protocol.WriteFrame(stdout, &f)
		}
		if f.Type == protocol.FrameResult && f.Result != nil {
			res = f.Result
		}
	}
	if res == nil {
		msg := bytes.TrimSpace(errb.Bytes())
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		if len(msg) == 0 {
			// Nothing on stderr (it could not even start, or died by a signal): the
			// reason is how it ended, never an empty string.
			msg = []byte(fmt.Sprintf("%s: %v", bin, runErr))
			if runErr == nil {
				msg = []byte(bin + ": exited without a result")
			}
		}
		return failClosed(stdout, stderr, payload, fmt.Sprintf("hookc: hookd is unreachable and the in-process fallback failed: %s", msg))
	}
	if o.stream {
		return res.ExitCode
	}
	return res.Render(stdout, stderr)
}

// hookdBinary finds hookd: $HOOKD_BIN, else next to hookc, else on PATH.
func hookdBinary() string {
	if b := os.Getenv("HOOKD_BIN"); b != "" {
		return b
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "hookd")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath("hookd"); err == nil {
		return p
	}
	return ""
}

func failClosed(stdout, stderr io.Writer, payload []byte, reason string) int {
	return protocol.FailClosed(protocol.EventName(payload), reason).Render(stdout, stderr)
}
