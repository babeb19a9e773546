package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/hookd/hookd/daemon/runner/zygote"
)

// Python hooks are forked from a warm interpreter (package zygote, docs/zygote.md) when
// their command is a launcher zygote.FromCommand recognises. Such a hook never uses the
// prewarm pool: while its zygote starts, and whenever the zygote cannot serve an event
// exactly (zygote.ErrFallback: nothing ran), the event runs cold.

// runZygote runs spec forked from a zygote. ok is false when nothing ran and the caller
// must run spec another way; eligible reports whether spec is a Python launcher at all.
func (p *Pool) runZygote(ctx context.Context, spec ProcSpec) (res ProcResult, ok, eligible bool) {
	if p.zyg == nil {
		return ProcResult{}, false, false
	}
	zs, err := zygote.FromCommand(spec.Command, spec.Args, spec.Env, spec.Dir)
	if err != nil {
		return ProcResult{}, false, false
	}
	start := time.Now()
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
	c, err := p.zyg.Start(zs, inR, outW, errW)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return ProcResult{}, false, true
	}
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
		t := time.NewTimer(time.Until(start.Add(spec.Timeout)))
		defer t.Stop()
		timer = t.C
	}
	trackGroup(c.Pid)
	defer untrackGroup(c.Pid)
	select {
	case <-c.Done():
		if !spec.KeepGroup {
			c.Kill() // what the hook left running (the zygote put the child in its own group)
		}
	case <-timer:
		timedOut = true
		c.Kill()
		<-c.Done()
	case <-ctx.Done():
		cancelled = true
		c.Kill()
		<-c.Done()
	}
	if timedOut || cancelled {
		c.Kill() // grandchildren in the group
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
	res = ProcResult{
		Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
		StdoutTruncated: stdout.truncated, StderrTruncated: stderr.truncated,
		TimedOut: timedOut, Cancelled: cancelled, Duration: time.Since(start), ExitCode: code,
	}
	if code < 0 {
		res.ExitCode = 128 - code // killed by signal -code, as exitCode reports a cold one
	}
	if rerr != nil {
		res.ExitCode, res.StartErr = -1, rerr
	}
	p.stats.forked.Add(1)
	return res, true, true
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
