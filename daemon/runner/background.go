package runner

import (
	"time"

	"github.com/hookd/hookd/daemon/runner/osproc"
)

// Spares boot in the background (docs/performance.md, "Spares boot in the background"):
// where osproc.SessionPriority works, a spare starts at once at the lowest session
// priority and gets a native hook's back once it waits for its event, or at the latest
// when an event takes it, before the event is written; if that fails it is killed and the
// event runs cold. Elsewhere spares start at normal priority after RefillDelay.

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
