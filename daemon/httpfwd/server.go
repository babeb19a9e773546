// Package httpfwd is hookd's HTTP forwarder endpoint for Claude Code's http hooks
// (docs/http-forwarder.md): a loopback HTTP server that authenticates each request with
// the user's token and answers the event through the engine (the daemon engine's HandleHTTP).
package httpfwd

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/jsonobj"
	"github.com/hookd/hookd/protocol"
)

// Handler answers one event posted to the forwarder (the daemon's engine).
type Handler interface {
	HandleHTTP(ctx context.Context, payload []byte) (*protocol.Result, *events.Event, error)
}

// HTTPServer is hookd's HTTP forwarder endpoint for Claude Code (docs/http-forwarder.md):
// Claude Code's http hooks POST the event JSON to settings.HTTPForwarderPath on a loopback
// address, and the 2xx JSON body answers like a command hook's stdout (spec §4.2). It
// saves the exec of hookc per event.
//
// Every request must carry "Authorization: Bearer <Token>" (compared in constant time);
// anything else is answered 401 and logged, without reading the body. The Host header
// must name a loopback IP (a page in a browser reaching 127.0.0.1 through DNS rebinding
// sends its own host name). Bodies over MaxRequestBytes get 413, a request whose headers
// and body do not arrive within the read timeouts is cut off, methods other than POST get
// 405 and other paths 404. The event runs with the environment its session's
// SessionStart sent through hookc (the engine's HandleHTTP).
type HTTPServer struct {
	Engine Handler
	Log    *zap.Logger
	// CallerGone and Shutdown are the context causes the engine reads (daemon.ErrCallerGone,
	// daemon.ErrShutdown): Claude Code hung up, or hookd's grace period ended.
	CallerGone, Shutdown error
	// Token is the per-user secret (configs/install.HTTPEndpoint).
	Token           string
	MaxRequestBytes int
	// ReadHeaderTimeout bounds the headers, ReadTimeout the whole request with its body,
	// IdleTimeout a kept-alive connection between requests. Zero: 5 s, 30 s, 120 s.
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// MaxConns bounds the owner's open connections (0: 256); more are closed at once.
	// MaxPending bounds connections whose peer is not known to be the owner and that have
	// not yet sent the token (0: 512): when full, the oldest of them is closed to make
	// room. HeadTimeout is how long such a connection has, from its accept, to send a
	// complete request head (0: 2 s). See gate.
	MaxConns, MaxPending int
	HeadTimeout          time.Duration

	ln   *gate
	srv  *http.Server
	hard context.Context
	kill context.CancelCauseFunc
	mu   sync.Mutex
	busy int
}

// Listen binds addr, which must be a loopback IP literal with a port ("127.0.0.1:21000").
// A port someone else holds is an error naming it: another program (or another user's
// hookd) listening there would receive the events Claude Code sends.
func (s *HTTPServer) Listen(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("http forwarder address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("http forwarder address %q: hookd serves http only on a loopback IP (127.0.0.1 or ::1)", addr)
	}
	if len(s.Token) < 32 {
		return errors.New("http forwarder: the token is missing or shorter than 32 characters")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("http forwarder: cannot listen on %s (%w); if another program holds the port, Claude Code's http hooks reach it instead of hookd — stop it, or choose another port with `hookd install claude-code --transport http --http-port N`", addr, err)
	}
	s.ln = newGate(ln, s.Log, orInt(s.MaxConns, 256), orInt(s.MaxPending, 512), or(s.HeadTimeout, 2*time.Second))
	return nil
}

// Adopt serves on a TCP listener a service manager created (daemon.Options.HTTPListener)
// instead of binding one, with Listen's checks: a loopback IP, a token, and — when want,
// the endpoint Claude Code's hooks post to, names a port — that very address. Connections
// go through the same gate as on a port hookd binds (peer uid, head deadline, pools).
func (s *HTTPServer) Adopt(ln *net.TCPListener, want string) error {
	got := ln.Addr().(*net.TCPAddr)
	if !got.IP.IsLoopback() {
		return fmt.Errorf("http forwarder: the service manager passed %s; hookd serves http only on a loopback IP (127.0.0.1 or ::1)", got)
	}
	if len(s.Token) < 32 {
		return errors.New("http forwarder: the token is missing or shorter than 32 characters")
	}
	if want != "" {
		w, err := net.ResolveTCPAddr("tcp", want)
		if err != nil {
			return fmt.Errorf("http forwarder address %q: %w", want, err)
		}
		if w.Port != 0 && (w.Port != got.Port || !w.IP.Equal(got.IP)) {
			return fmt.Errorf("http forwarder: the service manager passed %s, but Claude Code's hooks post to %s: make them agree (`hookd service install` again)", got, want)
		}
	}
	s.ln = newGate(ln, s.Log, orInt(s.MaxConns, 256), orInt(s.MaxPending, 512), or(s.HeadTimeout, 2*time.Second))
	return nil
}

// Stats are what the connection gate refused since Listen.
func (s *HTTPServer) Stats() GateStats { return s.ln.stats() }

func orInt(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// Addr is the address the server listens on (after Listen).
func (s *HTTPServer) Addr() string { return s.ln.Addr().String() }

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Serve answers requests until ctx is done, then stops accepting and lets requests in
// flight finish for up to grace; hooks still running then are cancelled (ErrShutdown) and
// their callers get the fail-closed answer.
func (s *HTTPServer) Serve(ctx context.Context, grace time.Duration) error {
	if s.MaxRequestBytes <= 0 {
		s.MaxRequestBytes = protocol.DefaultMaxRequestBytes
	}
	s.hard, s.kill = context.WithCancelCause(context.Background())
	defer s.kill(nil)
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: or(s.ReadHeaderTimeout, 5*time.Second),
		ReadTimeout:       or(s.ReadTimeout, 30*time.Second),
		// No WriteTimeout: the answer waits for the hooks (up to their own timeouts).
		IdleTimeout:    or(s.IdleTimeout, 120*time.Second),
		MaxHeaderBytes: 32 << 10,
		ErrorLog:       zap.NewStdLog(s.Log.Named("net/http")),
		ConnContext:    connContext,
	}
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(s.ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		s.Log.Warn("http forwarder: shutdown grace period ended; cancelling the hooks still running")
		s.kill(s.Shutdown)
		c2, cancel2 := context.WithTimeout(context.Background(), time.Second)
		defer cancel2()
		_ = s.srv.Shutdown(c2)
		_ = s.srv.Close()
	}
	<-done
	return nil
}

// Close stops listening (for a server that never served).
func (s *HTTPServer) Close() error {
	if s.ln != nil {
		return s.ln.Close()
	}
	return nil
}

func (s *HTTPServer) fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

// ServeHTTP handles one request.
func (s *HTTPServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	authorized := s.authorized(r)
	if gc := connOf(r.Context()); gc != nil {
		wasPending := gc.pending.Load()
		switch {
		case authorized && !s.ln.authenticate(gc):
			w.Header().Set("Connection", "close")
			s.ln.full.Add(1)
			s.fail(w, http.StatusServiceUnavailable, "hookd: too many connections")
			return
		case authorized && wasPending:
			// Now trusted: the request's body gets the usual time, not what is left of
			// the head deadline.
			_ = gc.SetReadDeadline(time.Now().Add(or(s.ReadTimeout, 30*time.Second)))
		case !authorized && wasPending:
			// One try per unauthenticated connection: it holds a slot only this long.
			w.Header().Set("Connection", "close")
		}
	}
	if r.URL.Path != settings.HTTPForwarderPath {
		s.fail(w, http.StatusNotFound, "not found")
		return
	}
	if !authorized {
		s.Log.Warn("http forwarder: request refused: missing or wrong token", zap.String("remote", r.RemoteAddr),
			zap.String("method", r.Method), zap.Bool("authorization_header", r.Header.Get("Authorization") != ""))
		w.Header().Set("WWW-Authenticate", `Bearer realm="hookd"`)
		s.fail(w, http.StatusUnauthorized, "hookd: unauthorized")
		return
	}
	if host, _, err := net.SplitHostPort(r.Host); err != nil || net.ParseIP(host) == nil || !net.ParseIP(host).IsLoopback() {
		s.Log.Warn("http forwarder: request refused: Host is not a loopback address", zap.String("host", r.Host), zap.String("remote", r.RemoteAddr))
		s.fail(w, http.StatusMisdirectedRequest, "hookd: Host must be a loopback address")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.fail(w, http.StatusMethodNotAllowed, "hookd: POST the event JSON")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(s.MaxRequestBytes)))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.Log.Warn("http forwarder: event payload over the limit", zap.Int64("limit", mbe.Limit))
			s.fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("hookd: event payload exceeds %d bytes (max_request_bytes)", mbe.Limit))
			return
		}
		s.Log.Debug("http forwarder: reading the body failed", zap.Error(err))
		s.fail(w, http.StatusBadRequest, "hookd: reading the request body: "+err.Error())
		return
	}
	if !s.begin() {
		s.fail(w, http.StatusServiceUnavailable, "hookd is shutting down; the event was not run")
		return
	}
	defer s.end()
	// Hooks run on the server's own context: Claude Code hanging up (it timed the hook
	// out) cancels them as ErrCallerGone; hookd's shutdown only after its grace period.
	ctx, cancel := context.WithCancelCause(s.hard)
	defer cancel(nil)
	stop := context.AfterFunc(r.Context(), func() { cancel(s.CallerGone) })
	defer stop()
	res, ev, err := s.Engine.HandleHTTP(ctx, body)
	if err != nil {
		s.Log.Warn("http forwarder: event refused", zap.Error(err))
		s.fail(w, http.StatusBadRequest, "hookd: "+err.Error())
		return
	}
	out, lost := HTTPAnswer(ev, res)
	if lost != "" {
		s.Log.Info("http forwarder: part of the answer has no http form", zap.String("event", ev.Name), zap.String("decision_id", res.DecisionID), zap.String("lost", lost))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Hookd-Decision-Id", res.DecisionID)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

func (s *HTTPServer) authorized(r *http.Request) bool {
	got := r.Header.Values("Authorization")
	if len(got) != 1 {
		return false
	}
	want := "Bearer " + s.Token
	return subtle.ConstantTimeCompare([]byte(got[0]), []byte(want)) == 1
}

func (s *HTTPServer) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hard.Err() != nil {
		return false
	}
	s.busy++
	return true
}

func (s *HTTPServer) end() {
	s.mu.Lock()
	s.busy--
	s.mu.Unlock()
}

// HTTPAnswer is the 2xx body that says res to Claude Code over http (spec §4.2: parsed
// like a command hook's stdout). What only a command hook can say has to be said in JSON
// or is lost, which lost describes (for the log):
//
//   - exit 2 on an event that can block becomes its JSON block: PreToolUse (and
//     PreModelSwitch) a permissionDecision deny, other events with a top-level decision a
//     decision:"block" with the reason; on events without a JSON block (TeammateIdle,
//     TaskCompleted, Elicitation: the installer keeps them on hookc) it is lost;
//   - plain stdout (context on SessionStart and the prompt events, PreCompact's
//     instructions, WorktreeCreate's path — all kept on hookc) and the stderr of an exit-2
//     notice on an event that cannot block are lost.
func HTTPAnswer(ev *events.Event, res *protocol.Result) (body []byte, lost string) {
	var top jsonobj.Object
	if len(res.Output) > 0 && string(res.Output) != "null" {
		o, err := jsonobj.Parse(res.Output)
		if err == nil {
			top = o
		}
	}
	var lostParts []string
	if res.Stdout != "" {
		lostParts = append(lostParts, "plain stdout")
	}
	if res.ExitCode == 2 {
		reason := strings.TrimSpace(res.Stderr)
		if res.Block != nil && res.Block.Reason != "" {
			reason = res.Block.Reason
		}
		switch {
		case !ev.CanBlock:
			lostParts = append(lostParts, "an exit-2 notice: "+reason)
		case ev.Name == "PreToolUse" || ev.Name == "PreModelSwitch":
			hso := jsonobj.Object{}
			if raw, ok := top.Lookup("hookSpecificOutput"); ok {
				if o, err := jsonobj.Parse(raw); err == nil {
					hso = o
				}
			}
			hso = hso.Set("hookEventName", ev.Name).Set("permissionDecision", "deny").Set("permissionDecisionReason", reason).Without("updatedInput")
			top = top.SetRaw("hookSpecificOutput", hso.JSON())
		case ev.Name == "PermissionRequest":
			// Exit 2 is not honoured there (spec §4.4); the JSON already says everything.
		case ev.Honoured(events.FDecision):
			top = top.Set("decision", "block").Set("reason", reason)
		default:
			lostParts = append(lostParts, "an exit-2 block with no JSON form on "+ev.Name+": "+reason)
		}
	}
	if len(top) == 0 {
		return []byte("{}"), strings.Join(lostParts, "; ")
	}
	return top.JSON(), strings.Join(lostParts, "; ")
}
