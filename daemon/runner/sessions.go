package runner

import (
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
//   - Session (the daemon calls it for every event) learns, from the first event of a session, the harness process it runs
//     in (the caller's nearest ancestor that is neither hookc nor a shell) and watches it.
//   - When that process exits, or the session's SessionEnd arrives, the
//     session's idle spares are killed at once (not after IdleTimeout), a spare still
//     waiting out RefillDelay is never started, and no spare is started for the session
//     again; a spare whose delay ends finds the harness gone first (spawn checks).
//
// A session none of whose events came with a caller pid (http events have none; the hookc
// event that brought an http session's environment has one) keeps the old behaviour: its
// spares end by IdleTimeout.

// ownerPoll is how often a session's harness process is checked while it has spares.
const ownerPoll = 250 * time.Millisecond

// forwarderNames are the processes between a harness and hookd that are not the harness:
// hookc itself, and the shell of a shell-form forwarder.
var forwarderNames = map[string]bool{"hookc": true, "sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true}

// sessionOwner is the harness process of a session: a pid and its start time, which a
// recycled pid does not share.
type sessionOwner struct {
	pid   int
	start uint64
}

// harnessOf is the process that caller (an event's sender) runs for: caller itself when it
// is the harness (a client speaking the socket protocol), else its nearest ancestor that is
// not hookc or a shell. ok is false when the chain cannot be read.
func harnessOf(caller int) (sessionOwner, bool) {
	pid := caller
	for range 4 {
		ppid, comm, err := osproc.Parent(pid)
		if err != nil {
			return sessionOwner{}, false
		}
		if !forwarderNames[comm] {
			start, err := osproc.StartTime(pid)
			return sessionOwner{pid, start}, err == nil && pid > 1
		}
		pid = ppid
	}
	return sessionOwner{}, false
}

// Session records that an event of session came from the process caller (0: not known):
// the first such event ties the session's spares to its harness process. ended says the
// event is the session's SessionEnd.
func (p *Pool) Session(session string, caller int, ended bool) {
	if ended {
		p.endSession(session)
		return
	}
	p.noteSession(session, caller)
}

func (p *Pool) noteSession(session string, caller int) {
	if session == "" || caller <= 0 || p.opts.NoPrewarm {
		return
	}
	p.mu.Lock()
	_, known := p.owners[session]
	_, over := p.ended[session]
	p.mu.Unlock()
	if known || over {
		return
	}
	o, ok := harnessOf(caller)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, known := p.owners[session]; known || p.closed {
		return
	}
	p.owners[session] = o
	p.wg.Add(1)
	go p.watchOwner(session, o)
}

// watchOwner ends session when its harness process exits.
func (p *Pool) watchOwner(session string, o sessionOwner) {
	defer p.wg.Done()
	t := time.NewTicker(ownerPoll)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		p.mu.Lock()
		gone := p.owners[session] != o
		p.mu.Unlock()
		if gone { // ended otherwise (SessionEnd)
			return
		}
		if !osproc.Running(o.pid, o.start) {
			p.endSession(session)
			return
		}
	}
}

// endSession ends session's spares: its idle processes are killed, those waiting to start
// never start, and the session gets none again.
func (p *Pool) endSession(session string) {
	if session == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endSessionLocked(session)
}

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
	if o, ok := p.owners[wk.session]; ok && !osproc.Running(o.pid, o.start) {
		p.endSessionLocked(wk.session)
		return true
	}
	return false
}
