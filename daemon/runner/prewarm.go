package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/daemon/runner/osproc"
	"github.com/hookd/hookd/daemon/runner/reaper"
	"github.com/hookd/hookd/daemon/runner/zygote"
)

// Prewarming (issue 7): a hook process is started before its event arrives and left
// blocked reading stdin, so the interpreter's start-up is paid while the user is idle.
// When the event comes, the payload is written and stdin closed; from then on the process
// is supervised exactly like a cold one (same timeout, process-group kill, output caps).
//
// Correctness rests on four rules:
//
//   - A prewarmed process is started by Command(spec), the very function a cold start
//     uses, and is used only for an event whose key matches: sha256 over the hook's ID
//     and definition revision, command, args, shell, working directory and the whole
//     environment in order. Anything else spawns cold.
//   - A settings change that touches the hook changes its revision: the pool discards the
//     hook's processes when it first sees the new revision. The script file the command
//     names is fingerprinted (inode, size, mtime, ctime and, up to 64 KiB, a sha256)
//     before each process starts and checked when it is used; a mismatch discards the
//     key's processes and the event runs cold on the new file.
//   - By default only hooks that are safe by construction are prewarmed (analyzeCommand):
//     an interpreter running a script file that visibly reads stdin. hookd's own
//     configuration switches it per hook or globally, never a key in Claude Code's files.
//   - Every process has a goroutine in cmd.Wait from the moment it starts, so one that
//     dies while waiting is reaped at once (no zombies; its pipes are closed by Wait) and
//     replaced; the pool is bounded per key and in total, and idle processes are killed
//     after IdleTimeout.

// PrewarmPolicy is hookd's configuration for prewarming one hook.
type PrewarmPolicy int8

const (
	// PrewarmAuto prewarms a hook only when analyzeCommand finds it safe by construction.
	PrewarmAuto PrewarmPolicy = iota
	// PrewarmOff never prewarms the hook.
	PrewarmOff
	// PrewarmOn always prewarms the hook (the user vouches that it does nothing before
	// reading stdin).
	PrewarmOn
)

// PrewarmPolicyFor combines hookd's global "prewarm" with a hook's own: the hook's wins;
// unset everywhere means auto.
func PrewarmPolicyFor(global, hook *bool) PrewarmPolicy {
	for _, b := range []*bool{hook, global} {
		if b != nil {
			if *b {
				return PrewarmOn
			}
			return PrewarmOff
		}
	}
	return PrewarmAuto
}

func (p PrewarmPolicy) String() string {
	switch p {
	case PrewarmOff:
		return "off"
	case PrewarmOn:
		return "on"
	}
	return "auto"
}

// PoolOptions configure a Pool. Zero values take the defaults in brackets.
type PoolOptions struct {
	Logger *zap.Logger
	// PerKey is how many idle processes one key may keep [2]. The pool keeps as many as
	// the key's peak number of concurrent events, up to PerKey.
	PerKey int
	// Total bounds the idle and starting processes over all keys [32].
	Total int
	// IdleTimeout is how long an idle process may wait for an event before it is killed
	// [10m]. A key unused that long is forgotten.
	IdleTimeout time.Duration
	// WorkerIdleTimeout is the same for persistent workers [30m].
	WorkerIdleTimeout time.Duration
	// WaitDelay is ExecRunner.WaitDelay, for cold and warm processes alike [2s].
	WaitDelay time.Duration
	// DeathBackoff is the first delay before replacing a prewarmed process that died while
	// waiting; it doubles per consecutive death [100ms].
	DeathBackoff time.Duration
	// RefillDelay is how long a replacement waits before it starts, so that its start-up
	// (an interpreter's, often several threads' worth of CPU) does not compete with the
	// event that was just answered, nor with the events that follow it at once — in a
	// Claude Code session PostToolUse comes a few milliseconds after PreToolUse, and the
	// model's thinking time after that is where start-ups belong. Measured in a real
	// session (BENCHMARKS.md): 25 ms → 250 ms took six prewarmed Python hooks from ≈75
	// to ≈26 ms per event [250ms; negative: none].
	// The key's next event starts a waiting replacement at once.
	// Where spares boot in the background (background.go), a key whose events come closer
	// together than this gets its replacements at once.
	RefillDelay time.Duration
	// NoPrewarm runs every hook cold (workers still run as workers): for one-shot use such
	// as `hookd run`, where a prewarmed process would be started only to be killed.
	NoPrewarm bool
	// NoZygote serves Python hooks from the prewarm pool instead of forking them from a
	// zygote (docs/zygote.md).
	NoZygote bool
	// NoWarmAhead prewarms a safe Node hook only after its first event, as for other
	// hooks, not when its session starts (Warm).
	NoWarmAhead bool
	// NoBackground starts spares at normal priority, after RefillDelay, even where the
	// kernel would let them start at the lowest (background.go). Set by
	// HOOKD_PREWARM_BACKGROUND=off.
	NoBackground bool
	// NoMemoLookups runs a hook whose only substitution is a lookup such as $(npm root -g)
	// as written, not with the lookup's known answer in its place (lookup_memo.go). Set
	// by HOOKD_MEMO_LOOKUPS=off.
	NoMemoLookups bool
}

func (o *PoolOptions) defaults() {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.PerKey <= 0 {
		o.PerKey = 2
	}
	if o.Total <= 0 {
		o.Total = 32
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 10 * time.Minute
	}
	if o.WorkerIdleTimeout <= 0 {
		o.WorkerIdleTimeout = 30 * time.Minute
	}
	if o.DeathBackoff <= 0 {
		o.DeathBackoff = 100 * time.Millisecond
	}
	switch {
	case o.RefillDelay == 0:
		o.RefillDelay = 250 * time.Millisecond
	case o.RefillDelay < 0:
		o.RefillDelay = 0
	}
}

// maxIdleDeaths is how many prewarmed processes of one key may die in a row while
// waiting before the key is no longer prewarmed (until its hook or script changes, or
// the key is forgotten).
const maxIdleDeaths = 3

// Pool is a Runner that serves command hooks from prewarmed processes when it may, runs
// persistent workers for hooks configured as such, and otherwise starts processes cold
// with ExecRunner. It is safe for concurrent use; Close kills everything it started.
type Pool struct {
	opts    PoolOptions
	log     *zap.Logger
	cold    ExecRunner
	workers *workerSet
	zyg     *zygote.Manager         // nil with NoPrewarm or NoZygote
	bg      *osproc.SessionPriority // nil: spares start at normal priority (background.go)

	mu     sync.Mutex
	keys   map[string]*warmKey
	hooks  map[string]hookSeen      // HookID → the revision last seen
	owners map[string]*sessionOwner // session ID → its harness process (sessions.go)
	ended  map[string]time.Time     // session ID → when it ended; forgotten after IdleTimeout
	wake   *os.File                 // read end of a pipe whose write end Close closes
	wakeW  *os.File
	total  int // idle + starting processes over all keys
	closed bool
	wg     sync.WaitGroup // spawners, delayed refills, the janitor
	stop   chan struct{}

	stats poolStats
}

type hookSeen struct {
	rev  string
	seen time.Time
}

// warmKey is the state of one prewarm key. Guarded by Pool.mu except the immutable
// fields (key, spec, hookID).
type warmKey struct {
	key    string
	spec   ProcSpec // the template: everything but Stdin
	hookID string   // the first hook seen with this key (for logs)
	// session is the CLAUDE_CODE_SESSION_ID of the key's environment: its processes serve
	// that session only, and end with it (sessions.go).
	session string
	// hooks are the hooks (HookID → HookRev) whose events this key has served: hooks whose
	// processes would be identical share one key, so a process warmed after one hook's
	// event serves the next event of any of them.
	hooks map[string]string

	info     *scriptInfo // command analysis; nil until computed, reset when the script changes
	idle     []*warmProc // oldest first
	starting int
	inUse    int
	peak     int
	lastUse  time.Time
	// answered is when the key's latest event ended; quick is whether the event after it
	// came too soon for a replacement started after RefillDelay to be ready: sooner than
	// RefillDelay + boot (background.go: its replacement then starts at once). boot is how
	// long the key's latest background spare took from its start to waiting for its event.
	answered time.Time
	quick    bool
	boot     time.Duration
	kick     chan struct{} // closed (and cleared) to start replacements waiting out RefillDelay
	started  chan struct{} // closed (and cleared) when a start of this key finishes
	deaths   int           // consecutive deaths while idle
	disabled time.Time     // no prewarming for this key until then
	gone     bool          // removed from Pool.keys
}

// warmProc is one prewarmed process.
type warmProc struct {
	key   *warmKey
	p     *proc
	stdin io.WriteCloser
	fp    fileFP // of key.info.script when started
	ready time.Time
	state procState // guarded by Pool.mu
	// lowered is set before the spare is idle, read when an event takes it.
	lowered *osproc.Lowered // nil: started at normal priority (background.go)
}

type procState int8

const (
	stStarting procState = iota
	stIdle
	stTaken
	stDead // exited while starting or idle
	stDiscarded
)

type poolStats struct {
	hits, misses, fallbacks, spawned, discarded, died, reaped, evicted, spawnErrors atomic.Uint64
	forked, zygoteCold, rerunCold                                                   atomic.Uint64
	background, lateRestores, unready                                               atomic.Uint64
}

// NewPool returns a pool; call Close when done.
func NewPool(o PoolOptions) *Pool {
	// Spares boot in the background where they can (background.go).
	var bg *osproc.SessionPriority
	if !o.NoPrewarm && !o.NoBackground && BackgroundStarts() {
		bg = osproc.NewSessionPriority()
		if bg != nil && os.Getenv("HOOKD_PREWARM_BACKGROUND") == "limited" {
			bg.SetLimited() // as an unprivileged daemon is, whatever this one's privileges
		}
	}
	o.defaults()
	// HOOKD_PREWARM_AHEAD=off: no safe Node hook is prewarmed before its first event
	// (Warm); the corpus benchmark's comparison row, and a way out. HOOKD_MEMO_LOOKUPS=off:
	// lookups run at every event, as written (lookup_memo.go).
	o.NoWarmAhead = o.NoWarmAhead || !WarmAhead()
	o.NoMemoLookups = o.NoMemoLookups || !MemoLookups()
	p := &Pool{
		opts: o, log: o.Logger, cold: ExecRunner{WaitDelay: o.WaitDelay}, bg: bg,
		keys: map[string]*warmKey{}, hooks: map[string]hookSeen{}, stop: make(chan struct{}),
		owners: map[string]*sessionOwner{}, ended: map[string]time.Time{},
	}
	p.workers = newWorkerSet(o)
	// HOOKD_ZYGOTE=off serves Python hooks from the prewarm pool instead (docs/zygote.md):
	// a way out, and the session benchmark's comparison row. Where forking a warm
	// interpreter is not safe by default (macOS: osproc.ForkWarmInterpreters), the prewarm
	// pool always serves them.
	if os.Getenv("HOOKD_ZYGOTE") == "off" || !osproc.ForkWarmInterpreters {
		o.NoZygote = true
	}
	if !o.NoPrewarm && !o.NoZygote {
		log := o.Logger
		// HOOKD_ZYGOTE_PREFAULT=off turns the spares' pre-faulting off (docs/zygote.md): the
		// benchmark compares both in one run; a way out should it ever cost more than it saves.
		p.zyg = zygote.New(zygote.Options{IdleTimeout: o.IdleTimeout, NoPrefault: os.Getenv("HOOKD_ZYGOTE_PREFAULT") == "off",
			Logf:  func(f string, a ...any) { log.Sugar().Debugf(f, a...) },
			Track: reaper.Track, Untrack: reaper.Untrack})
	}
	p.wg.Add(1)
	go p.janitor()
	return p
}

// Run runs spec as a persistent worker, from a prewarmed process, or cold.
func (p *Pool) Run(ctx context.Context, spec ProcSpec) ProcResult {
	if spec.Worker {
		return p.workers.run(ctx, spec)
	}
	if !p.opts.NoMemoLookups {
		spec = memoLookups(spec, false)
	}
	if spec.Prewarm == PrewarmOff || p.opts.NoPrewarm {
		return p.cold.Run(ctx, spec)
	}
	start := time.Now()
	if res, ok, python := p.runZygote(ctx, spec, start); ok {
		return res
	} else if python {
		// A Python launcher the zygote could not serve this time (still starting, the event
		// differs from what it models, or the zygote died under it): cold, in the time
		// left, never a prewarmed process as well.
		p.stats.zygoteCold.Add(1)
		return p.runColdRest(ctx, spec, start)
	}
	wk := p.key(spec, false)
	if wk == nil {
		return p.cold.Run(ctx, spec)
	}
	wp := p.take(ctx, wk)
	if wp != nil {
		if res, ok := p.use(ctx, wp, spec, start); ok {
			p.stats.hits.Add(1)
			p.release(wk, true)
			return res
		}
		p.stats.fallbacks.Add(1)
	} else {
		p.stats.misses.Add(1)
	}
	res := p.cold.Run(ctx, spec)
	p.release(wk, false)
	return res
}

// key returns spec's key state, creating it, or nil when spec is not to be prewarmed.
// It also applies the settings-change rule: a new revision of a hook discards the
// processes of its older revisions. An event (wait false) never waits for a lookup the
// analysis needs (`$(npm root -g)`: prewarm_subst.go): while it runs, events run cold.
func (p *Pool) key(spec ProcSpec, wait bool) *warmKey {
	k := prewarmKey(spec)
	now := time.Now()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	if spec.HookID != "" {
		if seen, ok := p.hooks[spec.HookID]; ok && seen.rev != spec.HookRev {
			for _, wk := range p.keys {
				if rev, ok := wk.hooks[spec.HookID]; ok && rev != spec.HookRev {
					p.dropKeyLocked(wk, "hook changed in settings")
				}
			}
		}
		p.hooks[spec.HookID] = hookSeen{rev: spec.HookRev, seen: now}
	}
	wk := p.keys[k]
	if wk == nil {
		tmpl := spec
		tmpl.Stdin = nil
		tmpl.Env = slices.Clone(spec.Env)
		tmpl.Args = slices.Clone(spec.Args)
		wk = &warmKey{key: k, spec: tmpl, hookID: spec.HookID, hooks: map[string]string{}, session: LookupEnv(spec.Env, "CLAUDE_CODE_SESSION_ID")}
		p.keys[k] = wk
	}
	if spec.HookID != "" {
		wk.hooks[spec.HookID] = spec.HookRev
	}
	wk.lastUse = now
	if !wait && !wk.answered.IsZero() {
		wk.quick = now.Sub(wk.answered) < p.opts.RefillDelay+wk.boot
	}
	info := wk.info
	p.mu.Unlock()

	// A key that is prewarmed checks its script fully (stat and hash) on every event; one
	// that is not only needs to notice an edit that might make it eligible (stat).
	if info == nil || !info.fresh(spec.Prewarm == PrewarmOn || info.safe) {
		// Analysis reads files: outside the lock. Two first events may both do it.
		info = analyzeFor(spec, wait)
		if info.pending {
			return nil
		}
		p.mu.Lock()
		if wk.info != nil && wk.info.script != "" && !wk.info.same(info) {
			p.discardIdleLocked(wk, "script changed")
			wk.deaths, wk.disabled = 0, time.Time{}
		}
		wk.info = info
		p.mu.Unlock()
	}
	if spec.Prewarm == PrewarmAuto && !info.safe {
		return nil
	}
	return wk
}

// take removes and returns an idle process of wk whose script is unchanged, or nil. It
// counts wk as in use until release. When the key's replacement is still being started
// (events back to back), it waits for it: that start is already under way, so it cannot
// be slower than starting a process cold.
func (p *Pool) take(ctx context.Context, wk *warmKey) *warmProc {
	p.mu.Lock()
	defer p.mu.Unlock()
	wk.inUse++
	wk.peak = max(wk.peak, wk.inUse)
	for waited := false; ; waited = true {
		for len(wk.idle) > 0 {
			wp := wk.idle[0]
			if wp.p.exited() {
				p.diedLocked(wp)
				continue
			}
			if wk.info != nil && wk.info.script != "" && !wk.info.matches(wp.fp) {
				p.discardIdleLocked(wk, "script changed")
				return nil
			}
			wk.idle = wk.idle[1:]
			p.total--
			wp.state = stTaken
			return wp
		}
		if waited || wk.starting == 0 {
			return nil
		}
		if wk.kick != nil { // a replacement waiting out RefillDelay: start it now
			close(wk.kick)
			wk.kick = nil
		}
		if wk.started == nil {
			wk.started = make(chan struct{})
		}
		ch := wk.started
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		p.mu.Lock()
	}
}

// pipeAtomic is the most a first write to a fresh pipe can carry without blocking
// (POSIX PIPE_BUF; Linux pipes hold at least one 4 KiB page).
const pipeAtomic = 4096

// use hands the event to a prewarmed process and supervises it like a cold one. It
// reports false, having killed the process, when the process was gone before it could
// receive the payload: it never saw the event, and the caller runs it cold.
func (p *Pool) use(ctx context.Context, wp *warmProc, spec ProcSpec, start time.Time) (ProcResult, bool) {
	if !p.restoreForEvent(wp) {
		return ProcResult{}, false
	}
	payload := spec.Stdin
	n := min(len(payload), pipeAtomic)
	if n > 0 {
		if _, err := wp.stdin.Write(payload[:n]); err != nil {
			// EPIPE: no reader left, so nothing of the payload was consumed.
			wp.p.kill()
			return ProcResult{}, false
		}
	}
	if rest := payload[n:]; len(rest) > 0 {
		// The remainder blocks until the hook reads it; a hook that never does is killed by
		// its timeout, which breaks the pipe and ends this goroutine.
		go func() {
			_, _ = wp.stdin.Write(rest)
			_ = wp.stdin.Close()
		}()
	} else {
		_ = wp.stdin.Close()
	}
	return wp.p.supervise(ctx, spec.Timeout, start), true
}

// release ends one use of wk and starts replacements in the background so the key's
// next event finds a warm process.
func (p *Pool) release(wk *warmKey, warm bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	wk.inUse--
	if warm {
		wk.deaths = 0
	}
	wk.answered = time.Now()
	p.refillLocked(wk, p.refillDelayLocked(wk))
}

// refillLocked starts processes for wk, after delay, until it has as many idle or
// starting as it wants.
func (p *Pool) refillLocked(wk *warmKey, delay time.Duration) {
	if p.closed || wk.gone || time.Now().Before(wk.disabled) || p.sessionOverLocked(wk) {
		return
	}
	if wk.info == nil || (wk.spec.Prewarm == PrewarmAuto && !wk.info.safe) {
		return
	}
	want := min(max(wk.peak, 1), p.opts.PerKey)
	for len(wk.idle)+wk.starting < want {
		if p.total >= p.opts.Total && !p.evictLocked(wk) {
			return
		}
		wk.starting++
		p.total++
		p.wg.Add(1)
		var kick chan struct{}
		if delay > 0 || (p.bg != nil && p.bg.Limited()) {
			// Created here, under the lock, so that an event arriving before the goroutine
			// runs can still hurry it.
			if wk.kick == nil {
				wk.kick = make(chan struct{})
			}
			kick = wk.kick
		}
		go p.spawn(wk, delay, kick)
		p.watchLocked(wk)
	}
}

// evictLocked kills an idle process of the least recently used key other than wk, if
// that key was used before wk was. It reports whether it made room.
func (p *Pool) evictLocked(wk *warmKey) bool {
	var victim *warmKey
	for _, k := range p.keys {
		if k != wk && len(k.idle) > 0 && k.lastUse.Before(wk.lastUse) && (victim == nil || k.lastUse.Before(victim.lastUse)) {
			victim = k
		}
	}
	if victim == nil {
		return false
	}
	wp := victim.idle[0]
	victim.idle = victim.idle[1:]
	p.total--
	wp.state = stDiscarded
	wp.p.kill()
	p.stats.evicted.Add(1)
	return true
}

// spawn starts one prewarmed process for wk (counted in wk.starting and p.total), after
// delay unless the key's next event asks for it sooner.
func (p *Pool) spawn(wk *warmKey, delay time.Duration, kick <-chan struct{}) {
	defer p.wg.Done()
	hurry := p.pause(delay, kick)
	// In the background, in turn under the rate limit — unless an event waits for it.
	for p.bg != nil && !hurry {
		d := p.bg.Wait()
		if d == 0 {
			break
		}
		hurry = p.pause(d, kick)
	}
	p.mu.Lock()
	if p.closed || wk.gone || p.sessionOverLocked(wk) {
		wk.starting--
		p.total--
		if wk.started != nil {
			close(wk.started)
			wk.started = nil
		}
		p.mu.Unlock()
		return
	}
	info := wk.info
	p.mu.Unlock()
	wp := &warmProc{key: wk}
	if info != nil && info.script != "" {
		wp.fp = fingerprint(info.script)
	}
	var err error
	cmd, err := Command(wk.spec)
	if err == nil {
		wp.stdin, err = cmd.StdinPipe()
	}
	if err == nil {
		wp.p, err = startProc(cmd, wk.spec.OutputCap, p.opts.WaitDelay, wk.spec.KeepGroup, func() { p.exited(wp) })
	}
	if err == nil && !hurry {
		p.background(wp)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	wk.starting--
	if wk.started != nil {
		close(wk.started)
		wk.started = nil
	}
	if err != nil {
		p.total--
		p.stats.spawnErrors.Add(1)
		// The cold path reports the error to the event; do not retry in a loop.
		wk.disabled = time.Now().Add(p.opts.IdleTimeout)
		p.log.Warn("cannot prewarm hook", zap.String("hook", wk.hookID), zap.Error(err))
		return
	}
	p.stats.spawned.Add(1)
	switch {
	case wp.state == stDead: // exited before we got here
		p.total--
		p.idleDeathLocked(wp)
	case p.closed || wk.gone:
		p.total--
		wp.state = stDiscarded
		wp.p.kill()
	default:
		wp.state, wp.ready = stIdle, time.Now()
		wk.idle = append(wk.idle, wp)
	}
}

// pause waits d (none if d <= 0); it reports true, early, when kick is closed (an event
// waits for the process: it starts now, at normal priority) or the pool closes (the
// caller then starts nothing).
func (p *Pool) pause(d time.Duration, kick <-chan struct{}) (hurry bool) {
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-kick:
	case <-p.stop:
	}
	return true
}

// exited runs on wp's reaping goroutine once its process is gone.
func (p *Pool) exited(wp *warmProc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch wp.state {
	case stStarting:
		wp.state = stDead // spawn accounts for it
	case stIdle:
		p.diedLocked(wp)
	}
}

// diedLocked removes an idle process that exited while waiting for its event.
func (p *Pool) diedLocked(wp *warmProc) {
	wk := wp.key
	if i := slices.Index(wk.idle, wp); i >= 0 {
		wk.idle = slices.Delete(wk.idle, i, i+1)
		p.total--
	}
	wp.state = stDead
	p.idleDeathLocked(wp)
}

// idleDeathLocked decides what a death while waiting means. A process that exited 0
// without its event never waited for stdin: it ran the hook's work early, so the key is
// not prewarmed again. Any other death (killed, crashed at start-up) is replaced after a
// backoff, until maxIdleDeaths in a row.
func (p *Pool) idleDeathLocked(wp *warmProc) {
	wk := wp.key
	p.stats.died.Add(1)
	wk.deaths++
	code := -1
	if wp.p != nil && wp.p.cmd.ProcessState != nil {
		code = wp.p.cmd.ProcessState.ExitCode()
	}
	if code == 0 || wk.deaths >= maxIdleDeaths {
		wk.disabled = time.Now().Add(p.opts.IdleTimeout)
		p.log.Warn("prewarmed hook exited before its event arrived; no longer prewarming it",
			zap.String("hook", wk.hookID), zap.String("command", wk.spec.Command), zap.Int("exit_code", code),
			zap.Int("deaths_in_a_row", wk.deaths))
		return
	}
	if p.closed || wk.gone || time.Since(wk.lastUse) > p.opts.IdleTimeout {
		return
	}
	delay := p.opts.DeathBackoff << (wk.deaths - 1)
	p.log.Debug("prewarmed hook died while waiting; replacing it", zap.String("hook", wk.hookID),
		zap.Int("exit_code", code), zap.Duration("after", delay))
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
			p.mu.Lock()
			p.refillLocked(wk, 0)
			p.mu.Unlock()
		case <-p.stop:
		}
	}()
}

// discardIdleLocked kills wk's idle processes.
func (p *Pool) discardIdleLocked(wk *warmKey, why string) {
	for _, wp := range wk.idle {
		wp.state = stDiscarded
		wp.p.kill()
		p.total--
		p.stats.discarded.Add(1)
	}
	if len(wk.idle) > 0 {
		p.log.Debug("prewarmed processes discarded", zap.String("hook", wk.hookID), zap.Int("count", len(wk.idle)), zap.String("why", why))
	}
	wk.idle = nil
}

// dropKeyLocked discards wk's processes and forgets it; processes it is still starting
// are killed by spawn.
func (p *Pool) dropKeyLocked(wk *warmKey, why string) {
	p.discardIdleLocked(wk, why)
	wk.gone = true
	delete(p.keys, wk.key)
	if wk.kick != nil { // spares waiting out RefillDelay: let them see it now
		close(wk.kick)
		wk.kick = nil
	}
}

// janitor kills processes idle for longer than IdleTimeout and forgets unused keys.
func (p *Pool) janitor() {
	defer p.wg.Done()
	every := min(max(p.opts.IdleTimeout/4, 50*time.Millisecond), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		p.reapIdle(time.Now())
		p.workers.reapIdle(time.Now())
	}
}

func (p *Pool) reapIdle(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, wk := range p.keys {
		keep := wk.idle[:0]
		for _, wp := range wk.idle {
			if now.Sub(wp.ready) > p.opts.IdleTimeout {
				wp.state = stDiscarded
				wp.p.kill()
				p.total--
				p.stats.reaped.Add(1)
				continue
			}
			keep = append(keep, wp)
		}
		clear(wk.idle[len(keep):])
		wk.idle = keep
		if len(wk.idle) == 0 && wk.starting == 0 && wk.inUse == 0 && now.Sub(wk.lastUse) > p.opts.IdleTimeout {
			wk.gone = true
			delete(p.keys, wk.key)
		}
	}
	for id, seen := range p.hooks {
		if now.Sub(seen.seen) > p.opts.IdleTimeout {
			delete(p.hooks, id)
		}
	}
	for id, at := range p.ended {
		if now.Sub(at) > p.opts.IdleTimeout {
			delete(p.ended, id)
		}
	}
}

// Close kills every idle process and worker and waits for the pool's goroutines.
// In-flight events finish on their own processes.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	var procs []*proc
	for _, wk := range p.keys {
		for _, wp := range wk.idle {
			procs = append(procs, wp.p)
		}
		p.dropKeyLocked(wk, "daemon stopping")
	}
	close(p.stop)
	if p.wakeW != nil {
		_ = p.wakeW.Close() // wakes the harness watchers (sessions.go)
	}
	p.mu.Unlock()
	p.wg.Wait()
	if p.wake != nil {
		_ = p.wake.Close()
	}
	p.workers.close()
	if p.zyg != nil {
		p.zyg.Close()
	}
	for _, pr := range procs {
		select {
		case <-pr.done:
		case <-time.After(5 * time.Second):
		}
	}
}

// Stats are the pool's counters and gauges, for `hookd status`. Their fields are those of
// protocol.PrewarmStatus, protocol.WorkerStatus and protocol.ZygoteStatus, field for field:
// the daemon converts each part by type (runner imports no hookd package), which is why
// PrewarmStats, WorkerStats and ZygoteStats are exported.
type Stats struct {
	Prewarm PrewarmStats
	Workers WorkerStats
	Zygote  ZygoteStats
}

// ZygoteStats describe the Python zygotes (protocol.ZygoteStatus says what each counts).
type ZygoteStats struct {
	Enabled                                         bool
	Forked, RanCold, Started, Died, Lost, Fallbacks uint64
	RerunCold, Refused, Unresponsive                uint64
	Zygotes                                         int
	LastFallback                                    string
	Populated, Prefaulted, ChildFaults, Exited      uint64
	ChildCPUMs                                      float64
	EventFaults, Reported                           uint64
}

// PrewarmStats describe prewarmed processes (protocol.PrewarmStatus says what each counts).
type PrewarmStats struct {
	Hits, Misses, Fallbacks, Spawned, SpawnErrors, Discarded, DiedWaiting, ReapedIdle, Evicted uint64
	Background, LateRestores, Unready                                                          uint64
	Idle, Starting, Keys, PerKey, Total                                                        int
	IdleTimeout                                                                                string
}

// WorkerStats describe persistent workers (protocol.WorkerStatus says what each counts).
type WorkerStats struct {
	Workers                                            int
	Started, Events, Crashes, Timeouts, ProtocolErrors uint64
}

// Stats reports the pool's counters and gauges.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	idle, starting := 0, 0
	for _, wk := range p.keys {
		idle += len(wk.idle)
		starting += wk.starting
	}
	keys := len(p.keys)
	p.mu.Unlock()
	s := &p.stats
	return Stats{
		Prewarm: PrewarmStats{
			Hits: s.hits.Load(), Misses: s.misses.Load(), Fallbacks: s.fallbacks.Load(),
			Spawned: s.spawned.Load(), SpawnErrors: s.spawnErrors.Load(), Discarded: s.discarded.Load(),
			DiedWaiting: s.died.Load(), ReapedIdle: s.reaped.Load(), Evicted: s.evicted.Load(),
			Background: s.background.Load(), LateRestores: s.lateRestores.Load(), Unready: s.unready.Load(),
			Idle: idle, Starting: starting, Keys: keys,
			PerKey: p.opts.PerKey, Total: p.opts.Total, IdleTimeout: p.opts.IdleTimeout.String(),
		},
		Workers: p.workers.stats(),
		Zygote:  p.zygoteStats(),
	}
}

// IdlePIDs returns the process IDs of the idle prewarmed processes (for tests and
// benchmarks that wait for the pool to settle).
func (p *Pool) IdlePIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pids []int
	for _, wk := range p.keys {
		for _, wp := range wk.idle {
			pids = append(pids, wp.p.cmd.Process.Pid)
		}
	}
	return pids
}

// prewarmKey is the identity a prewarmed process must share with an event to serve it:
// sha256 over everything that makes the process what it is — the command, args (or their
// absence: shell form), shell, working directory, the environment exactly and in order,
// the output cap and group handling it was started with — and the prewarm policy it was
// started under. Not the hook: two hooks whose commands would start identical processes
// (a Write and an Edit matcher running the same script) share their warm processes; a
// process cannot tell which hook's event it is given.
func prewarmKey(spec ProcSpec) string {
	return specKey(spec, false)
}

// specKey hashes spec's process identity, and the hook's ID and revision if withHook.
func specKey(spec ProcSpec, withHook bool) string {
	h := sha256.New()
	put := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	if withHook {
		put("hook")
		put(spec.HookID)
		put(spec.HookRev)
	}
	put(spec.Command)
	if spec.Args == nil {
		put("shell-form")
	} else {
		put("exec-form " + strconv.Itoa(len(spec.Args)))
		for _, a := range spec.Args {
			put(a)
		}
	}
	put(spec.Shell)
	put(spec.Dir)
	put(strconv.Itoa(len(spec.Env)))
	for _, e := range spec.Env {
		put(e)
	}
	put(strconv.Itoa(spec.OutputCap))
	put(strconv.FormatBool(spec.KeepGroup))
	put(spec.Prewarm.String())
	return hex.EncodeToString(h.Sum(nil))
}

// exitStatus describes how a process ended, for messages.
func exitStatus(cmd *exec.Cmd, err error) string {
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + ws.Signal().String()
		}
		return fmt.Sprintf("exit status %d", cmd.ProcessState.ExitCode())
	}
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return err.Error()
	}
	return "exited"
}

// StartsWarm reports whether a Pool with default options prepares spec ahead of its first
// event (Warm): a Python hook the zygote serves, or a Node hook safe by construction
// (scriptInfo.warmAhead). `hookd install` asks it (through daemon.StartsWarm) to decide
// whether Claude Code should tell hookd when a session starts.
func StartsWarm(spec ProcSpec) bool {
	if spec.Worker || spec.Prewarm == PrewarmOff {
		return false
	}
	if osproc.ForkWarmInterpreters && os.Getenv("HOOKD_ZYGOTE") != "off" {
		if _, err := zygote.FromCommand(spec.Command, spec.Args, spec.Env, spec.Dir); err == nil {
			return true
		}
	}
	return spec.Prewarm == PrewarmOn || (WarmAhead() && analyze(spec).warmAhead())
}

// WarmAhead reports whether safe Node hooks are prewarmed when their session starts:
// unless HOOKD_PREWARM_AHEAD=off.
func WarmAhead() bool { return os.Getenv("HOOKD_PREWARM_AHEAD") != "off" }

// BackgroundStarts reports whether spares may start in the background where the kernel
// allows it (background.go): unless HOOKD_PREWARM_BACKGROUND=off. "limited" keeps to the
// rate limit an unprivileged daemon has even with CAP_SYS_ADMIN (the corpus bench's row).
func BackgroundStarts() bool { return os.Getenv("HOOKD_PREWARM_BACKGROUND") != "off" }

// Warm implements Warmer. It prepares, ahead of a hook's first event, only what is free of
// side effects beyond the hook's own start-up:
//
//   - the zygote of a Python hook (an interpreter importing standard-library modules; no
//     line of the hook runs);
//   - a prewarmed process of a Node hook that the analysis finds safe by construction (a
//     script, or -e code, that visibly reads stdin): its start-up is requiring modules,
//     which writes nothing, and is exactly what every later event of the hook prewarms
//     anyway. The one difference is that it runs even if the session never fires the
//     hook; the spare then ends with the session (sessions.go);
//   - a prewarmed process of any hook configured "prewarm": true.
//
// Other safe hooks — Python served by the prewarm pool (macOS, HOOKD_ZYGOTE=off: its
// imports write __pycache__), Ruby — are prewarmed after their first event, for the next
// (release).
func (p *Pool) Warm(spec ProcSpec) {
	if spec.Worker || spec.Prewarm == PrewarmOff || p.opts.NoPrewarm {
		return
	}
	if p.warmZygote(spec) {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		if !p.opts.NoMemoLookups {
			// Waiting for the lookups' answers, so that the spare is the command its events
			// will run.
			spec = memoLookups(spec, true)
		}
		if wk := p.key(spec, true); wk != nil {
			p.mu.Lock()
			if spec.Prewarm == PrewarmOn || (wk.info.warmAhead() && !p.opts.NoWarmAhead) {
				p.refillLocked(wk, p.warmDelay())
			}
			p.mu.Unlock()
		}
	}()
}

func (p *Pool) zygoteStats() ZygoteStats {
	z := ZygoteStats{Enabled: p.zyg != nil, Forked: p.stats.forked.Load(), RanCold: p.stats.zygoteCold.Load(), RerunCold: p.stats.rerunCold.Load()}
	if p.zyg != nil {
		m := p.zyg.Stats.Get()
		z.Started, z.Died, z.Lost, z.Fallbacks, z.LastFallback = m.Started, m.Died, m.Lost, m.Fallbacks, m.LastFallback
		z.Refused, z.Unresponsive = m.Refused, m.Unresponsive
		z.Populated, z.Prefaulted, z.ChildFaults, z.Exited = m.Populated, m.Prefaulted, m.ChildFaults, m.Exited
		z.ChildCPUMs = float64(m.ChildCPU.Microseconds()) / 1000
		z.EventFaults, z.Reported = m.EventFaults, m.Reported
		z.Zygotes = len(p.zyg.ZygotePIDs())
	}
	return z
}
