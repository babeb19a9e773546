package runner

import (
	"os"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/daemon/runner/osproc"
)

// Spares end with their session (issue 26). A prewarmed process's key includes its whole
// environment, and Claude Code gives every hook its session's CLAUDE_CODE_SESSION_ID: the
// spare started after a session's event can serve that session's next event and no other.
// After the session's last event it can serve nothing. That one spare per prewarmed hook
// and session cannot be foreseen when the last event is answered — any event may be the
// last — but hookd need not start it, nor keep it, once the session is over:
//
//   - Session (the daemon calls it for every event) learns, from the session's first event
//     that comes with a caller pid, the harness process the session runs in: the caller's
//     nearest ancestor that is neither hookc nor a shell.
//   - Once the session has a spare, that process is watched: on Linux through a pidfd, so
//     its exit is seen at once; elsewhere every ownerPoll.
//   - When the harness exits, or the session's SessionEnd arrives, the session's idle
//     spares are killed at once (not after IdleTimeout), a spare still waiting out
//     RefillDelay never starts, and no spare is started for the session again; a spare
//     whose delay ends checks the harness before it starts.
//
// A session none of whose events came with a caller pid (http events have none; the hookc
// event that brought an http session's environment has one) keeps the old behaviour: its
// spares end by IdleTimeout.

// ownerPoll is how often a session's harness process is checked where no pidfd tells of
// its exit (macOS; Linux before 5.3).
const ownerPoll = 250 * time.Millisecond

// pollOwners makes the watchers poll as they do on macOS: tests run that path on Linux.
var pollOwners atomic.Bool

// forwarderNames are the processes between a harness and hookd that are not the harness:
// hookc itself, and the shell of a shell-form forwarder.
var forwarderNames = map[string]bool{"hookc": true, "sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true}

// sessionOwner is the harness process of a session: a pid and its start time, which a
// recycled pid does not share.
type sessionOwner struct {
	pid      int
	start    uint64
	watching bool // a watchOwner runs for it (guarded by Pool.mu)
}

// harnessOf is the process that caller (an event's sender) runs for: caller itself when it
// is the harness (a client speaking the socket protocol), else its nearest ancestor that is
// not hookc or a shell. ok is false when the chain cannot be read.
func harnessOf(caller int) (*sessionOwner, bool) {
	pid := caller
	for range 4 {
		ppid, comm, err := osproc.Parent(pid)
		if err != nil {
			return nil, false
		}
		if !forwarderNames[comm] {
			start, err := osproc.StartTime(pid)
			return &sessionOwner{pid: pid, start: start}, err == nil && pid > 1
		}
		pid = ppid
	}
	return nil, false
}

// Session records that an event of session came from the process caller (0: not known):
// the first such event ties the session's spares to its harness process. ended says the
// event is the session's SessionEnd.
func (p *Pool) Session(session string, caller int, ended bool) {
	if session == "" || p.opts.NoPrewarm {
		return
	}
	if ended {
		p.mu.Lock()
		p.endSessionLocked(session)
		p.mu.Unlock()
		return
	}
	if caller <= 0 {
		return
	}
	p.mu.Lock()
	_, known := p.owners[session]
	_, over := p.ended[session]
	p.mu.Unlock()
	if known || over {
		return
	}
	o, ok := harnessOf(caller) // reads /proc: outside the lock
	if !ok {
		return
	}
	p.mu.Lock()
	if _, known := p.owners[session]; !known && !p.closed {
		p.owners[session] = o
	}
	p.mu.Unlock()
}

// watchLocked starts watching wk's session's harness, once, when the session gets a spare.
func (p *Pool) watchLocked(wk *warmKey) {
	o := p.owners[wk.session]
	if o == nil || o.watching || p.closed {
		return
	}
	if p.wake == nil {
		r, w, err := os.Pipe() // closed by Close: wakes every pidfd wait
		if err != nil {
			return
		}
		p.wake, p.wakeW = r, w
	}
	o.watching = true
	p.wg.Add(1)
	go p.watchOwner(wk.session, o, int(p.wake.Fd()))
}

// watchOwner ends session when its harness process exits, or returns when the pool
// closes or the session ended otherwise (SessionEnd).
func (p *Pool) watchOwner(session string, o *sessionOwner, wake int) {
	defer p.wg.Done()
	h, err := osproc.OpenHandle(o.pid)
	if err != nil || !osproc.Running(o.pid, o.start) || pollOwners.Load() { // no pidfd, or not the process meant
		h.Close()
		h = osproc.NoHandle
	}
	defer func() { h.Close() }()
	for {
		if h.Valid() {
			if !h.WaitExit(wake) { // woken because the pool closes, or poll failed: poll from now on
				h.Close()
				h = osproc.NoHandle
			}
		} else {
			t := time.NewTimer(ownerPoll)
			select {
			case <-p.stop:
			case <-t.C:
			}
			t.Stop()
		}
		p.mu.Lock()
		if p.closed || p.owners[session] != o {
			p.mu.Unlock()
			return
		}
		if !osproc.Running(o.pid, o.start) {
			p.endSessionLocked(session)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}

// endSessionLocked ends session's spares: its idle processes are killed, those waiting to
// start never start, and the session gets none again.
func (p *Pool) endSessionLocked(session string) {
	delete(p.owners, session)
	p.ended[session] = time.Now()
	n := 0
	for _, wk := range p.keys {
		if wk.session == session {
			n += len(wk.idle) + wk.starting
			p.dropKeyLocked(wk, "session ended")
		}
	}
	if n > 0 {
		p.log.Debug("session ended: its prewarmed processes discarded", zap.String("session_id", session), zap.Int("count", n))
	}
}

// sessionOverLocked reports whether wk's session has ended, ending it when its harness
// process is found gone.
func (p *Pool) sessionOverLocked(wk *warmKey) bool {
	if wk.session == "" {
		return false
	}
	if _, over := p.ended[wk.session]; over {
		return true
	}
	if o := p.owners[wk.session]; o != nil && !osproc.Running(o.pid, o.start) {
		p.endSessionLocked(wk.session)
		return true
	}
	return false
}
