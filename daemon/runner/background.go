package runner

import (
	"time"

	"github.com/hookd/hookd/daemon/runner/osproc"
)

// Spares boot in the background (docs/performance.md, "Spares boot in the background"):
// where osproc.SessionPriority works, a spare starts with its session at the lowest
// priority and gets a native hook's back once it — its whole process tree — waits for its
// event, or at the latest when an event takes it, before the event is written; if that
// fails it is killed and the event runs cold. A spare warmed ahead of its hook's first
// event starts at once (warmDelay); a replacement at once when, at the key's pace, one
// started after RefillDelay would not be ready for its next event, else after the delay
// (refillDelayLocked). Elsewhere spares start at normal priority after RefillDelay.

// refillDelayLocked is the delay before wk's replacement starts. Where spares boot in the
// background, a key whose latest event came sooner after the one before than RefillDelay
// plus the key's start-up time (wk.quick: a burst of tool calls, a fast model, a start-up
// slowed by the harness's own work) gets its replacement at once, at the low priority:
// after the delay it would not be ready for the next event. A key whose events are further
// apart keeps the delay — the replacement then starts while the harness waits for the
// model, when the CPUs are idle, rather than beside the harness's own work right after the
// answer, which even at the lowest priority slows it (another thread on the same core,
// caches, memory). Measured side by side, with 500 ms of model time the delay gave
// 1.06–1.07× against 1.01–1.04× starting at once; with an instant model the two were
// within noise of each other (BENCHMARKS.md, session 6).
func (p *Pool) refillDelayLocked(wk *warmKey) time.Duration {
	if p.bg != nil && wk.quick {
		return 0
	}
	return p.opts.RefillDelay
}

// idleRestoreLimit bounds how long a spare that never waits for its event keeps the low
// priority.
const idleRestoreLimit = time.Minute

// background lowers a just-started spare's priority until it waits for its event.
func (p *Pool) background(wp *warmProc) {
	l := p.bg.Lower(wp.p.group)
	if l == nil {
		return
	}
	wp.lowered = l
	p.stats.background.Add(1)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if l.RestoreWhenIdle(idleRestoreLimit, wp.p.done, p.stop) != nil {
			wp.p.kill() // not what the hook would be natively
			return
		}
		p.mu.Lock()
		// Given its priority back as it waits for its event, not taken: how long the key's
		// start-up took (as seen by checks osproc.IdlePoll apart). Not where it cannot be
		// told (osproc.Idle's ErrUnsupported: it stays low until taken).
		if took := time.Since(wp.ready); wp.state == stIdle && !l.Niced() && !wp.p.exited() && took < idleRestoreLimit {
			wp.key.boot = took
		}
		p.mu.Unlock()
	}()
}

// restoreForEvent gives wp a native hook's priority as an event takes it; false: wp was
// killed and must not run it. Under the rate limit the change follows (LateRestores).
func (p *Pool) restoreForEvent(wp *warmProc) bool {
	l := wp.lowered
	if l == nil {
		return true
	}
	if l.Niced() {
		// Still starting up: the next replacement starts at once, and the key's start-up
		// took at least this long.
		p.stats.unready.Add(1)
		p.mu.Lock()
		wp.key.quick = true
		wp.key.boot = max(wp.key.boot, time.Since(wp.ready))
		p.mu.Unlock()
	}
	switch err := l.Restore(); err {
	case nil:
		return true
	case osproc.ErrLater:
		p.stats.lateRestores.Add(1)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if l.RestoreLater(wp.p.done, p.stop) != nil {
				wp.p.kill()
			}
		}()
		return true
	default:
		wp.p.kill()
		return false
	}
}

// warmDelay is the delay before a spare warmed ahead of its hook's first event starts
// (Pool.Warm): none where spares boot in the background — the session's first events
// often come sooner than RefillDelay (the first tool call of a fast turn) — else
// RefillDelay, as for a replacement.
func (p *Pool) warmDelay() time.Duration {
	if p.bg != nil {
		return 0
	}
	return p.opts.RefillDelay
}
