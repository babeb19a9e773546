package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/daemon/runner/reaper"
	"github.com/hookd/hookd/daemon/runner/zygote"
)

// Python hooks are forked from a warm interpreter (package zygote, docs/zygote.md) when
// their command is a launcher zygote.FromCommand recognises. Such a hook never uses the
// prewarm pool: while its zygote starts, and whenever the zygote cannot serve an event
// exactly (zygote.ErrFallback: nothing ran), the event runs cold.

// runZygote runs spec forked from a zygote. ok is false when the hook did not run there to
// an answer and the caller must run it another way (cold, in the time left): nothing ran
// (zygote.ErrFallback), or the zygote died or stopped answering while the hook ran and the
// hook was killed (zygote.ErrLost). eligible reports whether spec is a Python launcher.
func (p *Pool) runZygote(ctx context.Context, spec ProcSpec, start time.Time) (res ProcResult, ok, eligible bool) {
	if p.zyg == nil {
		return ProcResult{}, false, false
	}
	zs, err := zygote.FromCommand(spec.Command, spec.Args, spec.Env, spec.Dir)
	if err != nil {
		return ProcResult{}, false, false
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return ProcResult{}, false, true
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return ProcResult{}, false, true
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return ProcResult{}, false, true
	}
	var deadline time.Time
	if spec.Timeout > 0 {
		deadline = start.Add(spec.Timeout)
	}
	c, err := p.zyg.Start(zs, inR, outW, errW, zygote.RunOptions{Deadline: deadline, KeepGroup: spec.KeepGroup})
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		if errors.Is(err, zygote.ErrRefused) {
			// A FIFO, device or socket as the script: refused like such a settings file,
			// never read — a cold run would wait on it until the timeout.
			return ProcResult{ExitCode: -1, StartErr: err, Duration: time.Since(start)}, true, true
		}
		return ProcResult{}, false, true
	}
	defer c.Close()
	capN := spec.OutputCap
	if capN <= 0 {
		capN = DefaultOutputCap
	}
	stdout, stderr := &capBuffer{max: capN}, &capBuffer{max: capN}
	var drained sync.WaitGroup
	drained.Add(2)
	go func() { defer drained.Done(); _, _ = io.Copy(stdout, outR) }()
	go func() { defer drained.Done(); _, _ = io.Copy(stderr, errR) }()
	go func() {
		// A hook that never reads a large payload blocks this write until it is killed,
		// which breaks the pipe.
		_, _ = inW.Write(spec.Stdin)
		_ = inW.Close()
	}()

	var timedOut, cancelled bool
	var timer <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timer = t.C
	}
	reaper.Track(c.Pid, c.Alive)
	defer reaper.Untrack(c.Pid)
	// When the child exits, the zygote — its parent — kills what it left in its group
	// (unless KeepGroup) before it reaps it: nothing is signalled from here then. A
	// timeout or cancellation kills the group while the child runs (Child.Kill: through
	// its pidfd, or by the zygote).
	select {
	case <-c.Done():
	case <-timer:
		timedOut = true
		c.Stop()
	case <-ctx.Done():
		cancelled = true
		c.Stop()
	}
	// Output pipes may be held open by grandchildren that outlived the hook: wait at most
	// WaitDelay for them, as exec.Cmd does for a cold hook.
	wd := p.opts.WaitDelay
	if wd <= 0 {
		wd = 2 * time.Second
	}
	done := make(chan struct{})
	go func() { drained.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wd):
	}
	outR.Close()
	errR.Close()
	<-done
	code, rerr := c.Result()
	if errors.Is(rerr, zygote.ErrFallback) {
		// The child failed to set itself up before the hook's first line: nothing ran.
		return ProcResult{}, false, true
	}
	if errors.Is(rerr, zygote.ErrLost) && !timedOut && !cancelled {
		// Its zygote died (or was stopped for not answering) under it: the hook was killed
		// before it answered. Run again, cold, in the time left (docs/zygote.md).
		p.stats.rerunCold.Add(1)
		p.log.Warn("python zygote died while a forked hook ran; running the hook again cold",
			zap.String("hook", spec.HookID), zap.String("command", spec.Command))
		return ProcResult{}, false, true
	}
	res = ProcResult{
		Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
		StdoutTruncated: stdout.truncated, StderrTruncated: stderr.truncated,
		TimedOut: timedOut, Cancelled: cancelled, Duration: time.Since(start), ExitCode: code,
	}
	if code < 0 {
		res.ExitCode = 128 - code // killed by signal -code, as exitCode reports a cold one
	}
	if rerr != nil && !timedOut && !cancelled {
		res.ExitCode, res.StartErr = -1, rerr
	}
	p.stats.forked.Add(1)
	return res, true, true
}

// runColdRest runs spec cold in what is left of its timeout since start (a forked run that
// did not answer used some of it); nothing left is a timeout, a cancelled ctx a
// cancellation.
func (p *Pool) runColdRest(ctx context.Context, spec ProcSpec, start time.Time) ProcResult {
	if ctx.Err() != nil {
		return ProcResult{ExitCode: -1, Cancelled: true, Duration: time.Since(start)}
	}
	if spec.Timeout > 0 {
		spec.Timeout -= time.Since(start)
		if spec.Timeout <= 0 {
			return ProcResult{ExitCode: -1, TimedOut: true, Duration: time.Since(start)}
		}
	}
	res := p.cold.Run(ctx, spec)
	res.Duration = time.Since(start)
	return res
}

// warmZygote starts spec's zygote and pre-imports its script's standard-library imports:
// side-effect free, so it may happen before the hook's event has fired (SessionStart).
func (p *Pool) warmZygote(spec ProcSpec) bool {
	if p.zyg == nil {
		return false
	}
	zs, err := zygote.FromCommand(spec.Command, spec.Args, spec.Env, spec.Dir)
	if err != nil {
		return false
	}
	p.zyg.Warm(zs)
	return true
}
