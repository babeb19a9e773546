package osproc

import (
	"errors"
	"sync"
	"syscall"
	"time"
)

// Session priority: a child that leads its own session (Setsid) can be started at the
// lowest CPU priority a session can have and given back the priority of a new session
// later, where the kernel schedules sessions as groups (SessionNiceWorks: Linux's
// sched_autogroup). The runner starts its prewarmed spares this way (docs/performance.md,
// "Spares boot in the background").
//
// Without CAP_SYS_ADMIN the kernel allows one change per 100 ms, machine-wide
// (SessionNiceRateLimited); SessionPriority keeps to that for this process's changes, and
// treats the kernel's EAGAIN (another process's change) the same way.

// LowestNice is the session priority a Lowered child runs at: the lowest.
const LowestNice = 19

// NiceInterval is how far apart rate-limited changes are made: the kernel's 100 ms and a
// few jiffies of margin.
const NiceInterval = 110 * time.Millisecond

// IdlePoll is how often a Lowered child is checked for having started (RestoreWhenIdle).
const IdlePoll = 20 * time.Millisecond

// ErrLater means the kernel's rate limit refuses the change now; Wait says for how long.
var ErrLater = errors.New("session priority change rate-limited")

// SessionPriority makes every change of a child session's priority.
type SessionPriority struct {
	mu      sync.Mutex
	limited bool      // SessionNiceRateLimited
	next    time.Time // no change before this (limited only)
}

// NewSessionPriority returns the changer, or nil where changing a session's priority
// would move nothing (SessionNiceWorks is false).
func NewSessionPriority() *SessionPriority {
	if !SessionNiceWorks() {
		return nil
	}
	return &SessionPriority{limited: SessionNiceRateLimited()}
}

// Limited reports whether changes are rate limited.
func (g *SessionPriority) Limited() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limited
}

// SetLimited makes g keep to the rate limit (tests: as an unprivileged process would).
func (g *SessionPriority) SetLimited() {
	g.mu.Lock()
	g.limited = true
	g.mu.Unlock()
}

// Defer makes g treat the next d as refused (tests: as after another process's change).
func (g *SessionPriority) Defer(d time.Duration) {
	g.mu.Lock()
	g.next = time.Now().Add(d)
	g.mu.Unlock()
}

// Wait is how long until a change may be made (0: now).
func (g *SessionPriority) Wait() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.limited {
		return 0
	}
	return max(0, time.Until(g.next))
}

// set sets c's session priority, or returns ErrLater while the rate limit refuses it.
func (g *SessionPriority) set(c *Child, nice int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.limited && time.Now().Before(g.next) {
		return ErrLater
	}
	err := c.SetSessionNice(nice)
	if g.limited && (err == nil || errors.Is(err, syscall.EAGAIN)) {
		g.next = time.Now().Add(NiceInterval)
	}
	if errors.Is(err, syscall.EAGAIN) {
		return ErrLater
	}
	return err
}

// Lowered is a child whose session runs at LowestNice until Restore.
type Lowered struct {
	g     *SessionPriority
	c     *Child
	mu    sync.Mutex
	niced bool
}

// Lower puts c's session at LowestNice, or returns nil if that cannot be done now (the
// rate limit, or c is gone): c then runs at its normal priority.
func (g *SessionPriority) Lower(c *Child) *Lowered {
	if g == nil || g.set(c, LowestNice) != nil {
		return nil
	}
	return &Lowered{g: g, c: c, niced: true}
}

// Niced reports whether l's session still runs at LowestNice.
func (l *Lowered) Niced() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.niced
}

// Restore gives l's session a new session's priority (0) now, or returns ErrLater, or
// the error that made it impossible (the child is gone).
func (l *Lowered) Restore() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.niced {
		return nil
	}
	if err := l.g.set(l.c, 0); err != nil {
		return err
	}
	l.niced = false
	return nil
}

// RestoreLater restores l as soon as the rate limit allows; it gives up when done or stop
// is closed (the child exited; the caller is closing). A failure other than the rate
// limit is returned: the child still runs at the low priority.
func (l *Lowered) RestoreLater(done, stop <-chan struct{}) error {
	for {
		err := l.Restore()
		if !errors.Is(err, ErrLater) {
			return err
		}
		t := time.NewTimer(l.g.Wait() + time.Millisecond)
		select {
		case <-t.C:
		case <-done:
			t.Stop()
			return nil
		case <-stop:
			t.Stop()
			return nil
		}
	}
}

// RestoreWhenIdle restores l once the child is asleep with the same CPU time at two
// checks in a row (it waits for its input), or after limit, unless it is restored
// otherwise first or done or stop is closed. The error is RestoreLater's.
func (l *Lowered) RestoreWhenIdle(limit time.Duration, done, stop <-chan struct{}) error {
	var last uint64
	asleepBefore := false
	t := time.NewTicker(IdlePoll)
	defer t.Stop()
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-t.C:
		case <-done:
			return nil
		case <-stop:
			return nil
		}
		if !l.Niced() {
			return nil
		}
		asleep, ticks, err := Idle(l.c.Pid())
		if err != nil {
			return nil // exited: nothing to restore; or cannot be told: restored when taken
		}
		if (asleep && asleepBefore && ticks == last) || time.Now().After(deadline) {
			return l.RestoreLater(done, stop)
		}
		asleepBefore, last = asleep, ticks
	}
}
