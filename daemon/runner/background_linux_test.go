package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/runner/osproc"
)

// backgroundPool is a pool whose spares boot in the background; the kernel must
// schedule sessions as groups (sched_autogroup), as CI's and most Linux kernels do.
func backgroundPool(t *testing.T) *Pool {
	t.Helper()
	if !osproc.SessionNiceWorks() {
		t.Skip("this kernel does not schedule sessions as groups (sched_autogroup off or absent): spares start at normal priority, which the other prewarm tests cover")
	}
	p := newTestPool(t, PoolOptions{})
	if p.bg == nil {
		t.Fatal("spares do not boot in the background although the kernel supports it")
	}
	return p
}

// spinningSpec is a hook that keeps a CPU busy (never asleep) until the file go exists,
// then reads its event and prints its session's scheduling group, as the kernel reports
// it to the hook itself.
func spinningSpec(dir string) ProcSpec {
	return ProcSpec{
		Command: `while [ ! -e go ]; do :; done; cat >/dev/null; cat /proc/self/autogroup`,
		Dir:     dir, Env: testEnv(dir), Timeout: 30 * time.Second, Prewarm: PrewarmOn, HookID: "h", HookRev: "1",
	}
}

func TestSpareBootsInBackground(t *testing.T) {
	dir := t.TempDir()
	t.Run("spins itself", func(t *testing.T) { bootsInBackground(t, spinningSpec(dir)) })
	// /bin/sh -c runs the command as its child and waits for it (dash does not exec it), as
	// for every hook written as a plain command: the shell is asleep in wait4 while the
	// command starts up. Until session 6 that counted as waiting for the event, and every
	// such spare got its priority back ~40 ms after it started.
	dir2 := t.TempDir()
	spec := spinningSpec(dir2)
	spec.Command = `/bin/sh -c 'while [ ! -e go ]; do :; done'; cat >/dev/null; cat /proc/self/autogroup`
	t.Run("its child spins", func(t *testing.T) { bootsInBackground(t, spec) })
}

func bootsInBackground(t *testing.T, spec ProcSpec) {
	p := backgroundPool(t)
	dir := spec.Dir
	p.Warm(spec)
	pid := waitIdle(t, p, 1)[0]
	// While it starts (spins) its session runs at the lowest priority...
	waitSessionNice(t, pid, osproc.LowestNice, "the spare's session at nice 19")
	time.Sleep(5 * osproc.IdlePoll) // still spinning: not restored
	if n, err := osproc.SessionNice(pid); err != nil || n != osproc.LowestNice {
		t.Fatalf("spinning spare's session nice = %d, %v; want %d until it waits for its event", n, err, osproc.LowestNice)
	}
	// ...and once it waits for its event, at a natively started hook's.
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitSessionNice(t, pid, 0, "the waiting spare's session back at nice 0")
	// The key learnt how long its start-up took (the pace rule adds it to RefillDelay).
	poll(t, 10*time.Second, "the key's start-up time recorded", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		wk := p.keys[prewarmKey(spec)]
		return wk != nil && wk.boot > 0
	})
	spec.Stdin = []byte("{}")
	res := p.Run(context.Background(), spec)
	if !strings.HasSuffix(strings.TrimSpace(string(res.Stdout)), "nice 0") || res.ExitCode != 0 {
		t.Fatalf("hook ran with %q (exit %d, stderr %q); want its session at nice 0", res.Stdout, res.ExitCode, res.Stderr)
	}
	if st := p.Stats().Prewarm; st.Hits != 1 || st.Background < 1 || st.LateRestores != 0 || st.Unready != 0 {
		t.Fatalf("stats %+v: want 1 hit, background starts, no late restore, none taken still starting", st)
	}
}

// An event that takes a spare still starting gives it a native hook's priority before
// the hook sees the event.
func TestSpareTakenWhileStartingRunsAtNativePriority(t *testing.T) {
	p := backgroundPool(t)
	dir := t.TempDir()
	spec := spinningSpec(dir)
	p.Warm(spec)
	pid := waitIdle(t, p, 1)[0]
	waitSessionNice(t, pid, osproc.LowestNice, "the spare's session at nice 19")
	spec.Stdin = []byte("{}")
	start := time.Now()
	takeSpinning(t, p, spec, pid)
	if st := p.Stats().Prewarm; st.Hits != 1 || st.Unready != 1 {
		t.Fatalf("stats %+v: want the spare used, taken still starting", st)
	}
	// Its replacement started at once, and the key's start-up counts as at least as long
	// as this spare had run when the event took it.
	p.mu.Lock()
	wk := p.keys[prewarmKey(spec)]
	quick, boot := wk.quick, wk.boot
	p.mu.Unlock()
	if !quick || boot <= 0 || boot > time.Since(start)+time.Minute {
		t.Fatalf("after a spare taken still starting: quick %v, boot %v; want quick and a start-up time", quick, boot)
	}
}

// Under the rate limit, an event that takes a spare before its priority could be given
// back still runs it; the change follows as soon as the limit allows.
func TestSpareTakenUnderRateLimit(t *testing.T) {
	p := backgroundPool(t)
	p.bg.SetLimited() // as for an unprivileged daemon
	dir := t.TempDir()
	spec := spinningSpec(dir) // never asleep before the event: not given back early
	spec.Stdin = []byte("{}")
	p.Warm(spec)
	pid := waitIdle(t, p, 1)[0]
	poll(t, 10*time.Second, "the spare niced", func() bool { return p.isNicedPID(pid) })
	// Another process changed some session's priority just now, as far as the gate knows.
	p.bg.Defer(300 * time.Millisecond)
	takeSpinning(t, p, spec, pid)
	if st := p.Stats().Prewarm; st.Hits != 1 || st.LateRestores != 1 {
		t.Fatalf("stats %+v: want the spare used, its change back late once", st)
	}
}

// takeSpinning runs an event on the spinning spare pid (spinningSpec): the event takes it
// while it still spins, its session gets nice 0 before the hook reads the event, and the
// hook itself then reads nice 0 from /proc/self/autogroup.
func takeSpinning(t *testing.T, p *Pool, spec ProcSpec, pid int) {
	t.Helper()
	done := make(chan ProcResult, 1)
	go func() { done <- p.Run(context.Background(), spec) }()
	waitSessionNice(t, pid, 0, "the taken spare's session at nice 0")
	if err := os.WriteFile(filepath.Join(spec.Dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if !strings.HasSuffix(strings.TrimSpace(string(res.Stdout)), "nice 0") || res.ExitCode != 0 {
		t.Fatalf("hook ran with %q (exit %d, stderr %q); want its session at nice 0", res.Stdout, res.ExitCode, res.Stderr)
	}
}

// waitSessionNice waits until pid's session runs at nice (what names the wait).
func waitSessionNice(t *testing.T, pid, nice int, what string) {
	t.Helper()
	poll(t, 10*time.Second, what, func() bool {
		n, err := osproc.SessionNice(pid)
		return err == nil && n == nice
	})
}

// isNicedPID reports whether the idle spare pid still runs at the low priority.
func (p *Pool) isNicedPID(pid int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, wk := range p.keys {
		for _, wp := range wk.idle {
			if wp.p.cmd.Process.Pid == pid {
				return wp.lowered != nil && wp.lowered.Niced()
			}
		}
	}
	return false
}

// A key whose events come closer together than RefillDelay plus its start-up time gets its
// replacement at once; one whose events are further apart (the model's time between them)
// after the delay, so that it starts while the harness waits rather than beside its work.
func TestRefillDelayFollowsTheEventsPace(t *testing.T) {
	p := backgroundPool(t)
	dir := t.TempDir()
	spec := ProcSpec{Command: "cat >/dev/null", Dir: dir, Env: testEnv(dir), Timeout: 10 * time.Second, Prewarm: PrewarmOn, HookID: "h", HookRev: "1"}
	wk := p.key(spec, false)
	p.mu.Lock()
	first := p.refillDelayLocked(wk)
	p.mu.Unlock()
	if first != p.opts.RefillDelay {
		t.Fatalf("first event: delay %v, want RefillDelay %v", first, p.opts.RefillDelay)
	}
	// The key's start-up time counts: events 1.5 × RefillDelay apart are too close for a
	// spare that takes RefillDelay to start up after waiting out the delay.
	p.mu.Lock()
	wk.boot = p.opts.RefillDelay
	wk.answered = time.Now().Add(-3 * p.opts.RefillDelay / 2)
	p.mu.Unlock()
	p.key(spec, false)
	p.mu.Lock()
	boot := p.refillDelayLocked(wk)
	wk.boot = 0
	p.mu.Unlock()
	if boot != 0 {
		t.Fatalf("events 1.5 × RefillDelay apart, start-up RefillDelay: delay %v, want 0", boot)
	}
	for _, c := range []struct {
		since time.Duration
		want  time.Duration
	}{
		{time.Millisecond, 0},                         // a burst
		{time.Hour, p.opts.RefillDelay},               // the model's time between events
		{p.opts.RefillDelay / 10, 0},                  // faster than the delay
		{10 * p.opts.RefillDelay, p.opts.RefillDelay}, // slower
	} {
		p.mu.Lock()
		wk.answered = time.Now().Add(-c.since)
		p.mu.Unlock()
		p.key(spec, false) // the next event arrives
		p.mu.Lock()
		got := p.refillDelayLocked(wk)
		p.mu.Unlock()
		if got != c.want {
			t.Errorf("event %v after the last answer: delay %v, want %v", c.since, got, c.want)
		}
	}
	// A warm (wait true) is no event: it leaves the pace alone.
	p.mu.Lock()
	wk.answered = time.Now()
	p.mu.Unlock()
	p.key(spec, true)
	p.mu.Lock()
	got := p.refillDelayLocked(wk)
	warm := p.warmDelay()
	p.bg = nil // where spares cannot boot in the background: always the delay
	fg, fgWarm := p.refillDelayLocked(wk), p.warmDelay()
	p.mu.Unlock()
	if got != p.opts.RefillDelay || fg != p.opts.RefillDelay {
		t.Fatalf("after a warm: %v; without background starts: %v; want %v", got, fg, p.opts.RefillDelay)
	}
	// A spare warmed ahead of the first event starts at once in the background.
	if warm != 0 || fgWarm != p.opts.RefillDelay {
		t.Fatalf("warm delay %v in the background, %v without; want 0 and %v", warm, fgWarm, p.opts.RefillDelay)
	}
}
