package runner

import (
	"time"

	"github.com/hookd/hookd/daemon/runner/osproc"
)

// Spares boot in the background (docs/performance.md, "Spares boot in the background"):
// where osproc.SessionPriority works, a spare starts at once at the lowest session
// priority and gets a native hook's back once it waits for its event, or at the latest
// when an event takes it, before the event is written; if that fails it is killed and the
// event runs cold. A key whose events come closer together than RefillDelay gets its
// replacement at once; others after the delay (refillDelayLocked). Elsewhere spares start
// at normal priority after RefillDelay.

// refillDelayLocked is the delay before wk's replacement starts. Where spares boot in the
// background, a key whose events come closer together than RefillDelay (a burst of tool
// calls, a fast model) gets its replacement at once, at the low priority: after the delay
// its next event would find none started. A key whose events are further apart keeps the
// delay — the replacement then starts while the harness waits for the model, when the
// CPUs are idle, rather than beside the harness's own work right after the answer, which
// even at the lowest priority slows it (a core's other hardware thread, caches, memory):
// measured with 500 ms of model time, cc-starter 1.05× with the delay against 1.01×
// starting at once (BENCHMARKS.md).
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
		}
	}()
}

// restoreForEvent gives wp a native hook's priority as an event takes it; false: wp was
// killed and must not run it. Under the rate limit the change follows (LateRestores).
func (p *Pool) restoreForEvent(wp *warmProc) bool {
	l := wp.lowered
	if l == nil {
		return true
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
