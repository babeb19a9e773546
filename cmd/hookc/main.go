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
// allow. It is never quiet about it either: `hookd run --fallback REASON` records the
// reason in the decision log and adds it to the answer as a systemMessage, which Claude
// Code shows the user, and hookc prints one line on stderr (for a terminal, a log, and
// Claude Code's transcript) — except beside an exit-2 answer, whose stderr is the block
// reason the model reads.
//
// hookc is started for every hook event, so its start-up is the product: it imports only
// the standard library and protocol/lite, hookd's wire contract without encoding/json,
// reflect, net, context or fmt (docs/performance.md, "hookc"). It parses its flags by hand
// (flags.go, checked against package flag by a test), and starts no goroutine on the way
// of an answered event: it waits for the answer in the runtime's poller (lite.Conn), where
// a blocking read would keep the runtime's sysmon thread polling.
package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"github.com/hookd/hookd/protocol/lite"
)

// Without --timeout, hookc gives up on the daemon a little before Claude Code's default
// timeout for the event's hooks (lite.ForwarderTimeout of lite.DefaultHookTimeout:
// 590 s for most events, 27 s for UserPromptSubmit): when Claude Code times a hook out,
// the tool runs; when hookc gives up first, it answers fail-closed. A daemon that accepts
// but never answers (at its fd limit, wedged) must not turn into an allow. The forwarder
// `hookd install` writes passes --timeout derived from its own handler timeout.

func main() {
	os.Exit(run(os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr))
}

func run(args, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	getenv := lite.Getenv(environ)
	o, code, ok := parseFlags(args, getenv, stderr)
	if !ok {
		return code
	}
	if o.version {
		_, _ = io.WriteString(stdout, lite.BuildInfo().Text("hookc"))
		return 0
	}
	// One large buffer for stdin and one for the request (later the answer): a fresh
	// process touches a page per size class it allocates from, and large objects come
	// zeroed from the OS, paged in only as they are written.
	payload, err := readAll(stdin, make([]byte, 0, 64<<10), lite.DefaultMaxRequestBytes+1)
	if err != nil {
		return failClosed(stdout, stderr, nil, "hookc: reading the event from stdin: "+err.Error())
	}
	if len(payload) > lite.DefaultMaxRequestBytes {
		return failClosed(stdout, stderr, payload, "hookc: event payload exceeds "+strconv.Itoa(lite.DefaultMaxRequestBytes)+" bytes")
	}
	if !o.timeoutSet {
		o.timeout = lite.ForwarderTimeout(lite.DefaultHookTimeout(lite.PeekEventName(payload)))
	}
	start := time.Now()
	var deadline time.Time
	if o.timeout > 0 {
		deadline = start.Add(o.timeout)
	}
	req := &lite.EventRequest{EventText: unsafe.String(unsafe.SliceData(payload), len(payload)), Env: environ, ProjectDir: o.projectDir,
		Harness: o.harness, Client: lite.Client("hookc"), ResultOnly: !o.stream}
	var onLine func([]byte)
	if o.stream {
		onLine = func(line []byte) { _, _ = stdout.Write(append(line, '\n')) }
	}
	res, err := forward(deadline, o.socket, req, onLine)
	var perr *lite.Error
	switch {
	case err == nil:
		if o.debug {
			io.WriteString(stderr, "hookc: decision_id="+res.DecisionID+" revision="+runes(res.Revision, 12)+
				" exit="+strconv.Itoa(res.ExitCode)+" took="+time.Since(start).Round(time.Microsecond).String()+"\n")
		}
		if o.stream {
			return res.ExitCode
		}
		return res.Render(stdout, stderr)
	case errors.Is(err, lite.ErrUnreachable),
		errors.As(err, &perr) && perr.Code == lite.CodeUnsupportedVersion:
		if errors.Is(err, lite.ErrUntrustedSocket) {
			// Always said: someone else may be listening where hookd should be.
			io.WriteString(stderr, "hookc: "+err.Error()+"; nothing was sent to it\n")
		}
		if !o.fallback {
			return failClosed(stdout, stderr, payload, "hookc: "+err.Error())
		}
		return inProcess(deadline, payload, o, getenv, err.Error(), stdout, stderr)
	default:
		return failClosed(stdout, stderr, payload, "hookc: "+err.Error())
	}
}

// readAll is io.ReadAll of at most limit bytes, into b.
func readAll(r io.Reader, b []byte, limit int) ([]byte, error) {
	for len(b) < limit {
		if len(b) == cap(b) {
			nb := make([]byte, len(b), 2*cap(b)+64<<10)
			copy(nb, b)
			b = nb
		}
		n, err := r.Read(b[len(b):min(cap(b), limit)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// runes is fmt's %.Ns: s cut to at most n runes.
func runes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// forward sends the event and reads the answer up to its terminal frame, calling onLine
// (if non-nil) for every frame's line, the terminal one included. Errors read as
// protocol.Client.DoRaw's: a timeout says "context deadline exceeded: …".
func forward(deadline time.Time, socket string, req *lite.EventRequest, onLine func([]byte)) (*lite.Result, error) {
	c, err := lite.Dial(socket)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(deadline)
	ctxErr := func(err error) error {
		if c.Expired() {
			return errors.New("context deadline exceeded: " + err.Error())
		}
		return err
	}
	buf := lite.AppendEventRequest(nil, req)
	err = c.Write(buf)
	c.SetBuffer(buf[:0]) // the request's buffer reads the answer
	if err != nil {
		// The daemon may have answered and closed before reading (a refused peer): its
		// error frame says why, which beats "broken pipe".
		c.SetDeadline(time.Now().Add(time.Second))
		if line, ferr := c.ReadLine(lite.MaxFrameBytes); ferr == nil {
			if a := lite.DecodeAnswer(line); a.Head && a.Type == lite.FrameError {
				return nil, a.Err()
			}
		}
		c.SetDeadline(deadline)
		return nil, ctxErr(errors.New("sending request: " + err.Error()))
	}
	for {
		line, err := c.ReadLine(lite.MaxFrameBytes)
		if err != nil {
			return nil, ctxErr(errors.New("reading frame: " + err.Error()))
		}
		if onLine != nil {
			onLine(line)
		}
		a := lite.DecodeAnswer(line)
		if !a.Terminal() {
			continue
		}
		if err := a.Err(); err != nil {
			return nil, err
		}
		if a.Result == nil {
			return nil, errors.New("daemon answered without a result: " + string(line))
		}
		return a.Result, nil
	}
}

// inProcess runs `hookd run --stream` and renders its result frame itself, so that any
// failure of the fallback (hookd missing, a crash, an invalid configuration) is told
// apart from a rendered answer and fails closed. With --stream, the frames hookd run
// writes are passed on as they are (they are protocol frames hookd encoded).
func inProcess(deadline time.Time, payload []byte, o options, getenv func(string) string, why string, stdout, stderr io.Writer) int {
	bin := hookdBinary(getenv)
	if bin == "" {
		return failClosed(stdout, stderr, payload, "hookc: hookd is unreachable and no hookd binary was found for the in-process fallback (set HOOKD_BIN)")
	}
	args := []string{bin, "run", "--stream", "--fallback", why}
	if o.projectDir != "" {
		args = append(args, "--project-dir", o.projectDir)
	}
	if o.harness != "" {
		args = append(args, "--harness", o.harness)
	}
	out, errb, runErr := runHookd(deadline, bin, args, payload, getenv)
	var res *lite.Result
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		a := lite.DecodeAnswer(line)
		if !a.Head {
			continue
		}
		if o.stream {
			_, _ = stdout.Write(append(line, '\n'))
		}
		if a.Type == lite.FrameResult && a.Result != nil {
			res = a.Result
		}
	}
	if res == nil {
		msg := bytes.TrimSpace(errb)
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		if len(msg) == 0 {
			// Nothing on stderr (it could not even start, or died by a signal): the
			// reason is how it ended, never an empty string.
			msg = []byte(bin + ": exited without a result")
			if runErr != nil {
				msg = []byte(bin + ": " + runErr.Error())
			}
		}
		return failClosed(stdout, stderr, payload, "hookc: hookd is unreachable and the in-process fallback failed: "+string(msg))
	}
	code := res.ExitCode
	if !o.stream {
		code = res.Render(stdout, stderr)
	}
	if code != 2 {
		io.WriteString(stderr, "hookc: "+why+"; answered in-process (hookd run), slower and unshared: start the daemon with `hookd serve`\n")
	}
	return code
}

// runHookd runs bin with args and payload on stdin, and returns its stdout, its stderr
// and how it ended as os/exec's Cmd.Run would report it: nil, "exit status N",
// "signal: killed", a start error, or "context deadline exceeded" when it was killed at
// the deadline. os/exec itself is not linked for this rare path: it costs every hookc
// start its package initialisation.
func runHookd(deadline time.Time, bin string, args []string, payload []byte, getenv func(string) string) (stdout, stderr []byte, err error) {
	path, err := lookPath(bin, getenv)
	if err != nil {
		return nil, nil, err
	}
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return nil, nil, errors.New("context deadline exceeded")
	}
	var pipes [3][2]*os.File // stdin, stdout, stderr: {read end, write end}
	for i := range pipes {
		r, w, perr := os.Pipe()
		if perr != nil {
			for _, p := range pipes[:i] {
				p[0].Close()
				p[1].Close()
			}
			return nil, nil, perr
		}
		pipes[i] = [2]*os.File{r, w}
	}
	p, err := os.StartProcess(path, args, &os.ProcAttr{Files: []*os.File{pipes[0][0], pipes[1][1], pipes[2][1]}})
	pipes[0][0].Close()
	pipes[1][1].Close()
	pipes[2][1].Close()
	if err != nil {
		pipes[0][1].Close()
		pipes[1][0].Close()
		pipes[2][0].Close()
		return nil, nil, err
	}
	killed := make(chan bool, 1)
	if !deadline.IsZero() {
		t := time.AfterFunc(time.Until(deadline), func() { killed <- p.Kill() == nil })
		defer t.Stop()
	}
	go func() {
		_, _ = pipes[0][1].Write(payload) // a hookd that exits without reading is not an error
		pipes[0][1].Close()
	}()
	errc := make(chan []byte, 1)
	go func() {
		b, _ := readAll(pipes[2][0], nil, 1<<30)
		pipes[2][0].Close()
		errc <- b
	}()
	stdout, _ = readAll(pipes[1][0], nil, 1<<30)
	pipes[1][0].Close()
	stderr = <-errc
	state, err := p.Wait()
	select {
	case k := <-killed:
		if k && err == nil {
			return stdout, stderr, errors.New("context deadline exceeded")
		}
	default:
	}
	if err == nil && !state.Success() {
		err = errors.New(state.String())
	}
	return stdout, stderr, err
}

// lookPath is os/exec's: a name with a slash is used as is, a bare name is searched on
// PATH (a hit in a relative PATH entry is refused, like exec.ErrDot).
func lookPath(file string, getenv func(string) string) (string, error) {
	for i := 0; i < len(file); i++ {
		if file[i] == '/' {
			return file, nil
		}
	}
	for _, dir := range filepath.SplitList(getenv("PATH")) {
		p := filepath.Join(dir, file)
		if !executable(p) {
			continue
		}
		if !filepath.IsAbs(p) {
			return "", errors.New("exec: " + strconv.Quote(file) + ": cannot run executable found relative to current directory")
		}
		return p, nil
	}
	return "", errors.New("exec: " + strconv.Quote(file) + ": executable file not found in $PATH")
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	return syscall.Access(p, 1) == nil || fi.Mode()&0o111 != 0
}

// hookdBinary finds hookd: $HOOKD_BIN, else next to hookc, else on PATH.
func hookdBinary(getenv func(string) string) string {
	if b := getenv("HOOKD_BIN"); b != "" {
		return b
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "hookd")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	if p, err := lookPath("hookd", getenv); err == nil {
		return p
	}
	return ""
}

func failClosed(stdout, stderr io.Writer, payload []byte, reason string) int {
	return lite.FailClosed(lite.EventName(payload), reason).Render(stdout, stderr)
}
