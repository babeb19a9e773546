package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/daemon/runner/osproc"
	"github.com/hookd/hookd/daemon/runner/reaper"
)

// Persistent workers (issue 7; docs/workers.md). A hook that hookd's configuration marks
// "worker": true is started once and kept running; the daemon speaks a line protocol
// with it:
//
//   - hookd writes each event's payload to the worker's stdin as one line of compact
//     JSON (the same object a command hook reads from stdin; JSON has no raw newlines
//     once compacted);
//   - the worker answers on stdout with one line per event, in order:
//     {"exit_code":0,"stdout":"...","stderr":"..."} — what the hook would have exited
//     with and printed, so every Claude Code output form (exit 2 + stderr, JSON on
//     stdout, plain context) stays expressible. exit_code is required; stdout and stderr
//     default to "";
//   - the worker's own stderr is hookd's log, not part of any result.
//
// One event is in flight per worker at a time; others queue (their timeout runs while
// they wait). The worker's working directory and environment are those of the event that
// started it; per-event values are in the payload (cwd, session_id, ...).
//
// A worker that exits or breaks the protocol mid-event gives that event an error outcome
// (never an allow) and is restarted in the background after a backoff that doubles per
// consecutive failure (100 ms up to 30 s). A timeout kills the worker's process group and
// restarts it the same way. A settings change to the hook or an edit of its script file
// replaces the worker before the next event; a worker idle for WorkerIdleTimeout is
// stopped.

const (
	workerBackoffMax = 30 * time.Second
	workerStderrTail = 8 << 10
)

type workerSet struct {
	opts PoolOptions
	log  *zap.Logger

	mu     sync.Mutex
	m      map[string]*worker
	closed bool
	wg     sync.WaitGroup
	stop   chan struct{}

	started, crashes, timeouts, events, protocolErrors atomic.Uint64
}

func newWorkerSet(o PoolOptions) *workerSet {
	return &workerSet{opts: o, log: o.Logger.Named("worker"), m: map[string]*worker{}, stop: make(chan struct{})}
}

// worker is one hook's long-lived process. The fields after sem are owned by whoever
// holds sem (a token channel rather than a mutex so waiting can be abandoned).
type worker struct {
	set    *workerSet
	key    string
	hookID string
	rev    string
	sem    chan struct{}

	lastUse atomic.Int64 // unix nanos
	gone    atomic.Bool  // removed from the set; stop once idle

	spec      ProcSpec // the event that (re)started it: dir and env
	inst      *workerInst
	failures  int
	notBefore time.Time
	script    string
	fp        fileFP
}

// workerInst is one running process of a worker.
type workerInst struct {
	cmd     *exec.Cmd
	group   *osproc.Child // signals the group only while the process is unreaped
	stdin   *os.File
	stdout  *os.File
	lines   chan lineResult
	done    chan struct{} // closed when cmd.Wait returned
	quit    chan struct{} // closed by kill; ends the reader
	waitErr error
	stderr  *tailBuffer
}

type lineResult struct {
	line []byte
	err  error
}

// workerKey identifies a worker: the hook and its revision, command, args and shell —
// not the directory or environment, which come from the event that starts it. Unlike a
// prewarmed process, a worker stays one hook's: it serves one request at a time, and
// sharing it would change how that hook's events queue.
func workerKey(spec ProcSpec) string {
	s := spec
	s.Dir, s.Env, s.Prewarm, s.OutputCap = "", nil, PrewarmAuto, 0
	return specKey(s, true)
}

func (ws *workerSet) get(spec ProcSpec) (*worker, bool) {
	k := workerKey(spec)
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed {
		return nil, false
	}
	if spec.HookID != "" {
		for key, w := range ws.m {
			if w.hookID == spec.HookID && w.rev != spec.HookRev {
				delete(ws.m, key)
				ws.retire(w, "hook changed in settings")
			}
		}
	}
	w := ws.m[k]
	if w == nil {
		w = &worker{set: ws, key: k, hookID: spec.HookID, rev: spec.HookRev, sem: make(chan struct{}, 1)}
		ws.m[k] = w
	}
	w.lastUse.Store(time.Now().UnixNano())
	return w, true
}

// retire stops w once no event is using it. The caller has removed it from the set.
func (ws *workerSet) retire(w *worker, why string) {
	w.gone.Store(true)
	ws.wg.Add(1)
	go func() {
		defer ws.wg.Done()
		w.sem <- struct{}{}
		w.killLocked(why)
		<-w.sem
	}()
}

func (ws *workerSet) run(ctx context.Context, spec ProcSpec) ProcResult {
	start := time.Now()
	w, ok := ws.get(spec)
	if !ok {
		return ProcResult{ExitCode: -1, StartErr: errors.New("hookd is shutting down"), Duration: time.Since(start)}
	}
	ws.events.Add(1)
	var timer <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timer = t.C
	}
	fail := func(res ProcResult) ProcResult { res.Duration = time.Since(start); return res }
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		return fail(ProcResult{ExitCode: -1, Cancelled: true})
	case <-timer:
		return fail(ProcResult{ExitCode: -1, TimedOut: true})
	}
	defer func() { <-w.sem }()
	if w.gone.Load() {
		return fail(ProcResult{ExitCode: -1, StartErr: errors.New("worker replaced by a settings change; retry")})
	}
	w.spec = spec
	w.spec.Stdin = nil

	if w.inst != nil && w.script != "" && fingerprint(w.script) != w.fp {
		w.killLocked("script changed")
	}
	if w.inst != nil && w.inst.exited() {
		w.reapedLocked()
	}
	if w.inst == nil {
		if wait := time.Until(w.notBefore); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return fail(ProcResult{ExitCode: -1, Cancelled: true})
			case <-timer:
				t.Stop()
				return fail(ProcResult{ExitCode: -1, TimedOut: true})
			}
		}
		if err := w.startLocked(); err != nil {
			w.failedLocked()
			return fail(ProcResult{ExitCode: -1, StartErr: err})
		}
	}
	inst := w.inst
	select {
	case l := <-inst.lines: // a line nobody asked for: the stream is out of step
		ws.protocolErrors.Add(1)
		w.killLocked("unsolicited output")
		w.failedLocked()
		return fail(ProcResult{ExitCode: -1, StartErr: fmt.Errorf("persistent worker wrote output between events (%s); restarting it", describeLine(l))})
	default:
	}

	var line bytes.Buffer
	if err := json.Compact(&line, spec.Stdin); err != nil {
		return fail(ProcResult{ExitCode: -1, StartErr: fmt.Errorf("event payload is not JSON: %w", err)})
	}
	line.WriteByte('\n')
	if spec.Timeout > 0 {
		_ = inst.stdin.SetWriteDeadline(start.Add(spec.Timeout))
	} else {
		_ = inst.stdin.SetWriteDeadline(time.Time{})
	}
	unhook := context.AfterFunc(ctx, func() { _ = inst.stdin.SetWriteDeadline(time.Now()) })
	_, werr := inst.stdin.Write(line.Bytes())
	unhook()

	var res lineResult
	switch {
	case werr != nil && ctx.Err() != nil:
		return w.abortLocked(fail(ProcResult{ExitCode: -1, Cancelled: true}), "cancelled")
	case werr != nil && errors.Is(werr, os.ErrDeadlineExceeded):
		ws.timeouts.Add(1)
		return w.abortLocked(fail(ProcResult{ExitCode: -1, TimedOut: true}), "timed out")
	case werr != nil:
		res.err = werr
	default:
		select {
		case res = <-inst.lines:
		case <-inst.done:
			select { // the answer may have been written just before the exit
			case res = <-inst.lines:
			default:
				res.err = io.EOF
			}
		case <-timer:
			ws.timeouts.Add(1)
			return w.abortLocked(fail(ProcResult{ExitCode: -1, TimedOut: true}), "timed out")
		case <-ctx.Done():
			return w.abortLocked(fail(ProcResult{ExitCode: -1, Cancelled: true}), "cancelled")
		}
	}
	if res.err != nil {
		ws.crashes.Add(1)
		w.killLocked("crashed")
		status := exitStatus(inst.cmd, inst.waitErr)
		w.failedLocked()
		r := fail(ProcResult{ExitCode: -1, Stderr: inst.stderr.Bytes(),
			StartErr: fmt.Errorf("persistent worker stopped mid-event (%s); restarting it", status)})
		return r
	}
	out, err := decodeWorkerResult(res.line, spec.OutputCap)
	if err != nil {
		ws.protocolErrors.Add(1)
		w.killLocked("protocol error")
		w.failedLocked()
		return fail(ProcResult{ExitCode: -1, StartErr: err})
	}
	w.failures = 0
	out.Duration = time.Since(start)
	return out
}

// abortLocked kills the worker after a timeout or cancellation and restarts it.
func (w *worker) abortLocked(res ProcResult, why string) ProcResult {
	w.killLocked(why)
	w.failedLocked()
	return res
}

// decodeWorkerResult parses one result line, applying the output cap.
func decodeWorkerResult(line []byte, capN int) (ProcResult, error) {
	var r struct {
		ExitCode *int   `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return ProcResult{}, fmt.Errorf("persistent worker wrote an invalid result line (%s): %v; restarting it", describeLine(lineResult{line: line}), err)
	}
	if r.ExitCode == nil {
		return ProcResult{}, fmt.Errorf("persistent worker's result has no exit_code (%s); restarting it", describeLine(lineResult{line: line}))
	}
	if capN <= 0 {
		capN = DefaultOutputCap
	}
	res := ProcResult{ExitCode: *r.ExitCode, Stdout: []byte(r.Stdout), Stderr: []byte(r.Stderr)}
	if len(res.Stdout) > capN {
		res.Stdout, res.StdoutTruncated = res.Stdout[:capN], true
	}
	if len(res.Stderr) > capN {
		res.Stderr, res.StderrTruncated = res.Stderr[:capN], true
	}
	return res, nil
}

func describeLine(l lineResult) string {
	if l.err != nil {
		return l.err.Error()
	}
	s := string(bytes.TrimSpace(l.line))
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// startLocked starts the worker's process with w.spec's command, directory and
// environment.
func (w *worker) startLocked() error {
	spec := w.spec
	cmd, err := Command(spec)
	if err != nil {
		return err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	inst := &workerInst{
		cmd: cmd, stdin: inW, stdout: outR,
		lines: make(chan lineResult, 1), done: make(chan struct{}), quit: make(chan struct{}),
		stderr: &tailBuffer{max: workerStderrTail, log: w.set.log.With(zap.String("hook", w.hookID))},
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, inst.stderr
	cmd.WaitDelay = w.set.opts.WaitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = 2 * time.Second
	}
	if w.script == "" || w.fp != fingerprint(w.script) {
		info := analyze(spec)
		w.script = info.script
	}
	if w.script != "" {
		w.fp = fingerprint(w.script) // before the start: an edit after this is seen
	}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return err
	}
	w.set.started.Add(1)
	pid := cmd.Process.Pid
	inst.group = osproc.NewChild(pid)
	reaper.Track(pid, nil)
	go func() {
		inst.waitErr = inst.group.Reap(false, cmd.Wait)
		reaper.Untrack(pid)
		close(inst.done)
	}()
	go inst.read(maxResultLine(spec.OutputCap))
	w.inst = inst
	w.set.log.Info("worker started", zap.String("hook", w.hookID), zap.Int("pid", cmd.Process.Pid))
	return nil
}

// maxResultLine bounds one result line: both streams at the cap, JSON-escaped.
func maxResultLine(capN int) int {
	if capN <= 0 {
		capN = DefaultOutputCap
	}
	return 2*6*capN + 64<<10
}

// read delivers result lines until the stream ends or the instance is killed.
func (inst *workerInst) read(limit int) {
	br := bufio.NewReaderSize(inst.stdout, 64<<10)
	for {
		var line []byte
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			line = append(line, chunk...)
			if err != bufio.ErrBufferFull {
				break
			}
			if len(line) > limit {
				err = fmt.Errorf("result line longer than %d bytes", limit)
				break
			}
		}
		if err != nil && len(line) > 0 && err == io.EOF {
			err = fmt.Errorf("result line not terminated by a newline before the worker exited")
		}
		select {
		case inst.lines <- lineResult{line: line, err: err}:
		case <-inst.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

func (inst *workerInst) exited() bool {
	select {
	case <-inst.done:
		return true
	default:
		return false
	}
}

// killLocked stops the current process, if any, and waits for it to be reaped.
func (w *worker) killLocked(why string) {
	inst := w.inst
	if inst == nil {
		return
	}
	w.inst = nil
	inst.group.KillGroup()
	close(inst.quit)
	inst.stdin.Close()
	select {
	case <-inst.done:
	case <-time.After(10 * time.Second):
		w.set.log.Error("worker did not exit after SIGKILL", zap.String("hook", w.hookID))
	}
	inst.stdout.Close()
	w.set.log.Info("worker stopped", zap.String("hook", w.hookID), zap.String("why", why),
		zap.String("status", exitStatus(inst.cmd, inst.waitErr)))
}

// reapedLocked handles a process that exited between events.
func (w *worker) reapedLocked() {
	w.set.crashes.Add(1)
	w.killLocked("exited between events")
	w.failedLocked()
}

// failedLocked records a failure and schedules a restart after the backoff.
func (w *worker) failedLocked() {
	w.failures++
	d := min(w.set.opts.DeathBackoff<<min(w.failures-1, 20), workerBackoffMax)
	w.notBefore = time.Now().Add(d)
	ws := w.set
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed || w.gone.Load() {
		return
	}
	ws.wg.Add(1)
	go func() {
		defer ws.wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ws.stop:
			return
		}
		select {
		case w.sem <- struct{}{}:
		case <-ws.stop:
			return
		}
		defer func() { <-w.sem }()
		if w.inst != nil || w.gone.Load() || time.Now().Before(w.notBefore) {
			return
		}
		if err := w.startLocked(); err != nil {
			ws.log.Warn("worker restart failed", zap.String("hook", w.hookID), zap.Error(err))
			w.failures++
			w.notBefore = time.Now().Add(min(ws.opts.DeathBackoff<<min(w.failures-1, 20), workerBackoffMax))
		}
	}()
}

// reapIdle stops workers unused for WorkerIdleTimeout.
func (ws *workerSet) reapIdle(now time.Time) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for k, w := range ws.m {
		if now.Sub(time.Unix(0, w.lastUse.Load())) > ws.opts.WorkerIdleTimeout {
			delete(ws.m, k)
			ws.retire(w, "idle")
		}
	}
}

func (ws *workerSet) close() {
	ws.mu.Lock()
	if ws.closed {
		ws.mu.Unlock()
		return
	}
	ws.closed = true
	close(ws.stop)
	for k, w := range ws.m {
		delete(ws.m, k)
		ws.retire(w, "daemon stopping")
	}
	ws.mu.Unlock()
	ws.wg.Wait()
}

func (ws *workerSet) stats() WorkerStats {
	ws.mu.Lock()
	n := len(ws.m)
	ws.mu.Unlock()
	return WorkerStats{
		Workers: n, Started: ws.started.Load(), Events: ws.events.Load(), Crashes: ws.crashes.Load(),
		Timeouts: ws.timeouts.Load(), ProtocolErrors: ws.protocolErrors.Load(),
	}
}

// tailBuffer keeps the last max bytes written and logs each complete line.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	partial []byte
	log     *zap.Logger
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.log.Info("worker stderr", zap.ByteString("line", t.partial[:i]))
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > t.max {
		t.log.Info("worker stderr", zap.ByteString("line", t.partial))
		t.partial = nil
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}
