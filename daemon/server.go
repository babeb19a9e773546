package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/protocol/lite"
)

// ErrAlreadyRunning is returned by Listen when another daemon answers on the socket.
var ErrAlreadyRunning = errors.New("another hookd is already serving this socket")

// server serves the protocol on a Unix socket.
type server struct {
	engine          *engine
	Log             *zap.Logger
	MaxRequestBytes int
	// Reload is called for OpReload requests; it returns a summary. nil: the engine's
	// store reloads every file (New sets Watcher.Reload, which also re-checks its watches).
	Reload func(ctx context.Context) protocol.ReloadSummary
	// Status answers OpStatus requests. nil: the engine's part only (New sets
	// Daemon.Status, which adds the runner pool and the decision log).
	Status func() protocol.Status
	// AllowUIDs are served besides the daemon's own uid and root (tests use none).
	AllowUIDs []int
	// Limits (configs.LimitsConfig); zero values mean no limit.
	MaxConnsPerUID   int
	ReadTimeout      time.Duration // for the rest of a request line once its first byte arrived
	IdleTimeout      time.Duration // for the first byte of the next request line
	MaxInFlightBytes int64         // request bytes held across all connections

	perUID        map[int]int
	slots         chan struct{} // large-request slots (largeRequest)
	inFlightBytes int64
	lastFree      time.Time

	ln      *net.UnixListener
	path    string
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closing bool
	busy    int // requests being handled
}

// Listen creates the socket: the parent directory 0700 (if missing), the socket 0600.
// The directory must be owned by the daemon's uid (or root) and not writable by group
// or others (protocol.CheckSocketDir): in a directory others can write, another user
// could bind the name first or swap the socket later, and clients would refuse it
// anyway. An existing directory is never chmodded. A non-socket at path is an error and
// left alone; a stale socket is removed only after dialing it proves no daemon answers
// (STYLE §5).
func (s *server) Listen(path string) error {
	if max := lite.PathsHere(os.Getenv).MaxSocketPath; len(path) > max {
		return fmt.Errorf("socket path %q is %d bytes; Unix sockets allow at most %d here", path, len(path), max)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating socket directory: %w", err)
	}
	if err := protocol.CheckSocketDir(dir); err != nil {
		return fmt.Errorf("refusing to serve on %s: %w (hookd serves only from a directory it owns that group and others cannot write: choose another --socket, or fix the directory)", path, err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return fmt.Errorf("refusing to serve on %s: it exists and is not a socket (mode %s); hookd does not remove it", path, fi.Mode())
		}
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return fmt.Errorf("%w (%s)", ErrAlreadyRunning, path)
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("removing stale socket: %w", err)
		}
	}
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return err
	}
	s.ln, s.path = ln, path
	s.conns = map[net.Conn]struct{}{}
	return nil
}

// Serve accepts connections until ctx is done, then drains and returns:
//
//   - the socket stops accepting at once;
//   - events already being handled keep running, with their hooks, for up to grace;
//   - a request that arrives during the drain (on a kept connection) is answered with
//     a "shutting_down" error frame — never run, never answered "none" — which hookc
//     turns into its fail-closed answer;
//   - idle connections do not hold the drain up: it ends as soon as no event is in
//     flight, and then every connection is closed;
//   - when grace runs out, the remaining events' hooks are cancelled (context cause
//     ErrShutdown): their callers get the fail-closed answer and the records say
//     not_delivered "shutdown". Serve returns at most about a second after that.
func (s *server) Serve(ctx context.Context, grace time.Duration) error {
	if s.MaxRequestBytes <= 0 {
		s.MaxRequestBytes = protocol.DefaultMaxRequestBytes
	}
	// Large requests are read a few at a time: as many as fit the budget twice over at
	// the payload limit (at least one).
	nslots := 1
	if s.MaxInFlightBytes > 0 {
		nslots = max(1, int(s.MaxInFlightBytes/int64(2*s.MaxRequestBytes)))
	} else {
		nslots = 1 << 16
	}
	s.slots = make(chan struct{}, nslots)
	// Requests run on hard, not ctx: a stop signal must not cancel hooks in flight.
	hard, kill := context.WithCancelCause(context.Background())
	defer kill(nil)
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.ln.Close()
	}()
	s.accept(ctx, hard)
	s.drain(grace, kill)
	return nil
}

// accept serves each connection on its own goroutine, with hard as the requests' context,
// until ctx is done.
func (s *server) accept(ctx, hard context.Context) {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.Log.Error("accept failed", zap.Error(err))
			time.Sleep(50 * time.Millisecond)
			continue
		}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.serveConn(hard, c)
		}()
	}
}

// drain waits for the events in flight (not for idle connections) up to grace, then
// cancels the rest (cause ErrShutdown) and closes every connection.
func (s *server) drain(grace time.Duration, kill context.CancelCauseFunc) {
	deadline := time.Now().Add(grace)
	for s.inFlight() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.inFlight(); n > 0 {
		s.Log.Warn("shutdown grace period ended; cancelling the hooks still running", zap.Int("events", n), zap.Duration("grace", grace))
		kill(ErrShutdown)
		// Cancelled hooks are killed by their runner; their fail-closed answers and
		// records follow. Bounded: SIGTERM exits within grace + 1 s.
		stop := time.Now().Add(800 * time.Millisecond)
		for s.inFlight() > 0 && time.Now().Before(stop) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(150 * time.Millisecond):
		s.Log.Error("connections still being served at exit", zap.Int("events", s.inFlight()))
	}
}

// begin counts a request in unless the server is draining.
func (s *server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.busy++
	return true
}

func (s *server) end() {
	s.mu.Lock()
	s.busy--
	s.mu.Unlock()
}

func (s *server) inFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy
}

// peer returns the connecting process's credentials (peerCred: SO_PEERCRED on Linux,
// LOCAL_PEERCRED and LOCAL_PEERPID on macOS).
func peer(c *net.UnixConn) (Caller, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Caller{}, err
	}
	var uid, pid int
	var cerr error
	if err := raw.Control(func(fd uintptr) { uid, pid, cerr = peerCred(int(fd)) }); err != nil {
		return Caller{}, err
	}
	if cerr != nil {
		return Caller{}, cerr
	}
	return Caller{UID: uid, PID: pid}, nil
}

func (s *server) allowed(uid int) bool {
	if uid == os.Getuid() || uid == 0 {
		return true
	}
	for _, u := range s.AllowUIDs {
		if u == uid {
			return true
		}
	}
	return false
}

// connWriter serialises frames from concurrently finishing hooks onto one connection.
type connWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error
}

func (cw *connWriter) write(f *protocol.Frame) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.err != nil {
		return
	}
	if err := protocol.WriteFrame(cw.w, f); err != nil {
		cw.err = err
		return
	}
	cw.err = cw.w.Flush()
}

func (s *server) serveConn(ctx context.Context, c *net.UnixConn) {
	cw := &connWriter{w: bufio.NewWriterSize(c, 8<<10)}
	caller, ok := s.admit(c, cw)
	if !ok {
		return
	}
	defer s.dropConn(caller.UID)
	br := &budgetReader{r: c, s: s}
	if s.ReadTimeout > 0 {
		// The request's own deadline starts with its first byte, so an idle connection
		// (a harness between turns) is bounded by IdleTimeout, a half-sent request by
		// ReadTimeout.
		br.started = func() { _ = c.SetReadDeadline(time.Now().Add(s.ReadTimeout)) }
	}
	defer br.release()
	lr := protocol.NewLineReader(br, protocol.MaxRequestLine(s.MaxRequestBytes))
	for {
		br.release()
		switch {
		case lr.Buffered() > 0 && s.ReadTimeout > 0:
			// A pipelined next request is already partly here.
			_ = c.SetReadDeadline(time.Now().Add(s.ReadTimeout))
		case s.IdleTimeout > 0:
			_ = c.SetReadDeadline(time.Now().Add(s.IdleTimeout))
		case s.ReadTimeout > 0:
			_ = c.SetReadDeadline(time.Now().Add(s.ReadTimeout))
		}
		line, err := lr.ReadLine()
		if err != nil {
			if !s.readFailed(err, c, br, caller, cw) {
				return
			}
			continue
		}
		_ = c.SetReadDeadline(time.Time{})
		if len(line) > 0 && !s.serveLine(ctx, c, line, caller, cw) {
			return
		}
	}
}

// admit checks a new connection's peer: its credentials can be read, its uid may use the
// daemon, and it holds fewer connections than the limit. A refusal is an error frame.
func (s *server) admit(c *net.UnixConn, cw *connWriter) (Caller, bool) {
	caller, err := peer(c)
	if err != nil {
		s.Log.Warn("cannot read peer credentials; refusing connection", zap.Error(err))
		cw.write(&protocol.Frame{Type: protocol.FrameError, V: protocol.Version, Error: protocol.Errorf(protocol.CodeForbidden, "cannot verify peer credentials")})
		return caller, false
	}
	if !s.allowed(caller.UID) {
		s.Log.Warn("connection from another user refused", zap.Int("uid", caller.UID), zap.Int("pid", caller.PID))
		cw.write(&protocol.Frame{Type: protocol.FrameError, V: protocol.Version,
			Error: protocol.Errorf(protocol.CodeForbidden, "uid %d may not use this daemon (it serves uid %d and root)", caller.UID, os.Getuid())})
		return caller, false
	}
	if !s.addConn(caller.UID) {
		s.Log.Warn("connection refused: too many connections for this uid", zap.Int("uid", caller.UID), zap.Int("pid", caller.PID), zap.Int("limit", s.MaxConnsPerUID))
		cw.write(&protocol.Frame{Type: protocol.FrameError, V: protocol.Version,
			Error: protocol.Errorf(protocol.CodeBusy, "uid %d already holds %d connections (limits.max_connections_per_uid)", caller.UID, s.MaxConnsPerUID)})
		return caller, false
	}
	return caller, true
}

// readFailed answers a request line that could not be read; it reports whether the
// connection goes on.
func (s *server) readFailed(err error, c *net.UnixConn, br *budgetReader, caller Caller, cw *connWriter) bool {
	switch {
	case errors.Is(err, protocol.ErrLineTooLong):
		cw.write(&protocol.Frame{Type: protocol.FrameError, V: protocol.Version,
			Error: protocol.Errorf(protocol.CodeTooLarge, "request line exceeds the %d-byte limit", protocol.MaxRequestLine(s.MaxRequestBytes))})
		return true
	case errors.Is(err, errBudget):
		s.Log.Warn("request refused: request bytes in flight at the limit", zap.Int("pid", caller.PID), zap.Int64("limit", s.MaxInFlightBytes))
		cw.write(&protocol.Frame{Type: protocol.FrameError, V: protocol.Version,
			Error: protocol.Errorf(protocol.CodeBusy, "hookd is holding %d bytes of requests (limits.max_inflight_request_bytes); try again", s.MaxInFlightBytes)})
		// Let the caller finish sending (discarded, uncharged) so that closing does
		// not reset the connection and lose the error frame it is about to read.
		br.release()
		_ = c.CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, _ = io.Copy(io.Discard, c)
	case errors.Is(err, os.ErrDeadlineExceeded):
		if br.charged > 0 {
			s.Log.Warn("half-sent request timed out; closing the connection", zap.Int("pid", caller.PID), zap.Int64("bytes", br.charged), zap.Duration("timeout", s.ReadTimeout))
			cw.write(&protocol.Frame{Type: protocol.FrameError, V: protocol.Version,
				Error: protocol.Errorf(protocol.CodeBadRequest, "request line not completed within %v (limits.request_read_timeout_ms)", s.ReadTimeout)})
		}
	case !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed):
		s.Log.Debug("connection read failed", zap.Error(err))
	}
	return false
}

// serveLine decodes one request line and answers it; it reports whether the connection
// goes on.
func (s *server) serveLine(ctx context.Context, c *net.UnixConn, line []byte, caller Caller, cw *connWriter) bool {
	req, err := protocol.DecodeRequest(line)
	if err != nil {
		s.Log.Warn("malformed request", zap.Error(err), zap.Int("pid", caller.PID))
		f := protocol.ErrorFrame("", err)
		cw.write(&f)
		return true
	}
	if len(req.Event) > s.MaxRequestBytes {
		// The payload's own size, as hookc counts it: its escaping does not count.
		f := protocol.ErrorFrame(req.ID, protocol.Errorf(protocol.CodeTooLarge, "event payload is %d bytes; the limit is %d (max_request_bytes)", len(req.Event), s.MaxRequestBytes))
		cw.write(&f)
		return true
	}
	caller.Client = req.Options.Client
	s.engine.clients.Note(req.Options.Client, time.Now())
	if !s.begin() {
		// Draining: say so explicitly. Answering "none", or closing without a word,
		// would let a guard's event through.
		f := protocol.ErrorFrame(req.ID, protocol.Errorf(protocol.CodeShuttingDown, "hookd is shutting down; the event was not run"))
		cw.write(&f)
		return cw.err == nil
	}
	s.handleWatched(ctx, c, req, caller, cw)
	s.end()
	return cw.err == nil
}

// errBudget: the request bytes in flight across connections reached MaxInFlightBytes.
var errBudget = errors.New("request bytes in flight at the limit")

// budgetReader charges what a connection reads against the server's in-flight budget
// until release (after the request it held is answered).
type budgetReader struct {
	r       io.Reader
	s       *server
	charged int64
	slot    bool   // holds a large-request slot
	started func() // called when the first bytes of a request arrive (after release)
}

// largeRequest is where a request stops being small: past it, a connection needs one
// of the server's large-request slots to read on. Without slots, many large requests
// arriving at once would each hold part of the budget and all starve; with them, a few
// are read to the end and answered while the rest wait (up to the read timeout, then
// "busy").
const largeRequest = 64 << 10

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.charged >= largeRequest && !b.slot {
		if !b.s.acquireSlot() {
			return 0, errBudget
		}
		b.slot = true
	}
	n, err := b.r.Read(p)
	if n > 0 {
		if !b.s.charge(int64(n)) {
			return 0, errBudget
		}
		if b.charged == 0 && b.started != nil {
			b.started()
		}
		b.charged += int64(n)
	}
	return n, err
}

// release returns the charged bytes; after a large request it also hands the freed heap
// back to the OS (at most once a second), so memory goes down when the burst ends.
func (b *budgetReader) release() {
	if b.slot {
		<-b.s.slots
		b.slot = false
	}
	if b.charged == 0 {
		return
	}
	big := b.charged >= 1<<20
	b.s.mu.Lock()
	b.s.inFlightBytes -= b.charged
	free := big && b.s.inFlightBytes == 0 && time.Since(b.s.lastFree) > time.Second
	if free {
		b.s.lastFree = time.Now()
	}
	b.s.mu.Unlock()
	b.charged = 0
	if free {
		go debug.FreeOSMemory()
	}
}

// acquireSlot waits for a large-request slot, up to the read timeout (5 s without one).
func (s *server) acquireSlot() bool {
	wait := s.ReadTimeout
	if wait <= 0 {
		wait = 5 * time.Second
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case s.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

func (s *server) charge(n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.MaxInFlightBytes > 0 && s.inFlightBytes+n > s.MaxInFlightBytes {
		return false
	}
	s.inFlightBytes += n
	return true
}

func (s *server) addConn(uid int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perUID == nil {
		s.perUID = map[int]int{}
	}
	if s.MaxConnsPerUID > 0 && s.perUID[uid] >= s.MaxConnsPerUID {
		return false
	}
	s.perUID[uid]++
	return true
}

func (s *server) dropConn(uid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perUID[uid]--; s.perUID[uid] <= 0 {
		delete(s.perUID, uid)
	}
}

// handleWatched handles one request with a context that is cancelled (cause
// ErrCallerGone) if the caller hangs up before the answer: its hooks are killed and the
// decision is recorded as not delivered, instead of running on for nobody.
func (s *server) handleWatched(ctx context.Context, c *net.UnixConn, req *protocol.Request, caller Caller, cw *connWriter) {
	if req.Op != "" && req.Op != protocol.OpEvent {
		s.handle(ctx, req, caller, cw)
		return
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		watchHangup(c, done, func() { cancel(ErrCallerGone) })
	}()
	s.handle(rctx, req, caller, cw)
	close(done)
	watch.Wait()
}

// watchHangup polls c for the peer hanging up (POLLHUP; poll does not
// consume data, so a pipelined next request stays unread) until done is closed.
func watchHangup(c *net.UnixConn, done <-chan struct{}, gone func()) {
	raw, err := c.SyscallConn()
	if err != nil {
		return
	}
	for {
		select {
		case <-done:
			return
		default:
		}
		hung := false
		cerr := raw.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd), Events: hangupEvents}}
			n, err := unix.Poll(fds, 0)
			// POLLHUP: the peer closed (a Unix stream socket reports it then); a peer that
			// only shut down its writing half (POLLRDHUP) still waits for the answer.
			hung = err == nil && n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
		})
		if cerr != nil {
			return
		}
		if hung {
			gone()
			return
		}
		select {
		case <-done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *server) handle(ctx context.Context, req *protocol.Request, caller Caller, cw *connWriter) {
	defer func() {
		// One bad request must never take the daemon down.
		if r := recover(); r != nil {
			s.Log.Error("panic while handling request", zap.Any("panic", r), zap.Stack("stack"))
			f := protocol.ErrorFrame(req.ID, protocol.Errorf(protocol.CodeInternal, "internal error: %v", r))
			cw.write(&f)
		}
	}()
	switch req.Op {
	case protocol.OpPing:
		data, _ := json.Marshal(protocol.Ping{Versions: []int{protocol.Version}, Daemon: Version, PID: os.Getpid()})
		cw.write(&protocol.Frame{Type: protocol.FrameResult, V: protocol.Version, ID: req.ID, Data: data})
	case protocol.OpStatus:
		var st protocol.Status
		if s.Status != nil {
			st = s.Status()
		} else {
			st = s.engine.Status()
		}
		data, _ := json.Marshal(st)
		cw.write(&protocol.Frame{Type: protocol.FrameResult, V: protocol.Version, ID: req.ID, Data: data})
	case protocol.OpReload:
		var summary protocol.ReloadSummary
		if s.Reload != nil {
			summary = s.Reload(ctx)
		} else {
			summary = s.engine.Store().Reload(ctx, "request")
		}
		data, _ := json.Marshal(summary)
		cw.write(&protocol.Frame{Type: protocol.FrameResult, V: protocol.Version, ID: req.ID, Data: data})
	default:
		var emit func(*protocol.Frame)
		if !req.Options.ResultOnly {
			emit = cw.write
		}
		res, err := s.engine.Handle(ctx, req, caller, emit)
		if err != nil {
			s.Log.Warn("event refused", zap.Error(err))
			f := protocol.ErrorFrame(req.ID, err)
			cw.write(&f)
			return
		}
		cw.write(&protocol.Frame{Type: protocol.FrameResult, V: protocol.Version, ID: req.ID, Result: res})
	}
}
