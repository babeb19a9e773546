package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs"
	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/daemon/httpfwd"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/daemon/store"
	"github.com/hookd/hookd/protocol"
)

// Options configure a Daemon: what `hookd serve` and `hookd run` read from their flags
// and hookd's own configuration.
type Options struct {
	Logger *zap.Logger           // nil: no logging
	Config *configs.DaemonConfig // nil: configs.DefaultDaemonConfig()
	// Sources are the settings files every project shares (ManagedDir, UserDir, Home,
	// Extra); each project adds its own as events arrive.
	Sources settings.Sources
	// StateDir holds per-session files hookd creates and, unless hookd's configuration
	// names another place, the decision log.
	StateDir string
	// Socket is where Serve listens. Empty builds an in-process daemon for one event
	// (`hookd run`): nothing is prewarmed (hooks configured as persistent workers still
	// speak their protocol, for that one event), no watcher follows the settings files
	// and there is no server; Handle is the only way in.
	Socket string
	// Signals, if set, reloads every settings file on each value received (`hookd serve`
	// passes SIGHUP here). Only with a Socket.
	Signals <-chan os.Signal
	// Grace is how long Serve waits for in-flight events once its context is done.
	Grace time.Duration
	// HTTP, with a Socket, also serves Claude Code's http hooks on this loopback endpoint
	// (package httpfwd, docs/http-forwarder.md), and keeps each session's environment as
	// hookc sends it for them.
	HTTP *install.HTTPEndpoint
	// Listener and HTTPListener, when set, are sockets a service manager created and
	// passed (package activation, docs/service.md): New serves on them instead of creating
	// Socket and binding HTTP.Listen, after the same trust checks (Server.Adopt,
	// httpfwd.HTTPServer.Adopt). Listener must be bound to Socket.
	Listener     *net.UnixListener
	HTTPListener *net.TCPListener
	// SessionEnvWait bounds how long an http event of a session with no stored
	// environment waits for one (0: sessionenv.Wait, 10 s). Tests that send many unknown
	// sessions (the fuzz target) shorten it.
	SessionEnvWait time.Duration
}

// Daemon is hookd assembled: the runner pool, the decision log, the settings store and
// its watcher, the engine and, with a socket, the server. Build it with New, answer
// events with Serve (on the socket) or Handle (in-process), and release it with Close.
type Daemon struct {
	log   *zap.Logger
	opts  Options
	pool  *runner.Pool
	audit *audit.Log
	// stopExport stops the exporters (after the log is closed, so they ship its last
	// records).
	stopExport func()
	engine     *engine
	watcher    *store.Watcher
	server     *server
	http       *httpfwd.HTTPServer
	// httpErr says why the configured HTTP forwarder is not served ("" when it is).
	httpErr string
}

// New builds a daemon, in this order: the runner pool; the decision log when hookd's
// configuration enables it; the engine with its settings store; then, with a Socket, the
// server listening on it and the watcher following the settings files (stopped when ctx
// is done or by Close).
//
// A decision log that cannot be opened (unwritable directory, full disk) does not fail
// New: the daemon keeps serving, events that can block fail closed and `hookd status`
// says why, until the problem is fixed — rather than leave harnesses without answers.
// Only a log whose options are unusable is an error. A socket another daemon answers on
// is an error (ErrAlreadyRunning).
func New(ctx context.Context, o Options) (*Daemon, error) {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Config == nil {
		o.Config = configs.DefaultDaemonConfig()
	}
	d := &Daemon{log: o.Logger, opts: o}
	// Command hooks run through the pool: prewarmed processes where safe or configured,
	// persistent workers where configured, cold starts otherwise.
	d.pool = runner.NewPool(runner.PoolOptions{Logger: o.Logger.Named("runner"), NoPrewarm: o.Socket == ""})
	aud, err := d.openAudit()
	if err != nil {
		d.Close()
		return nil, err
	}
	d.engine = newEngine(engineOptions{
		Logger: o.Logger.Named("engine"), Config: o.Config, Sources: o.Sources, StateDir: o.StateDir,
		Runner: d.pool, Audit: aud, SyncForwarders: o.Socket != "",
		SessionEnvs: o.Socket != "" && o.HTTP != nil, SessionEnvWait: o.SessionEnvWait, HTTP: o.HTTP,
	})
	if o.Socket == "" {
		return d, nil
	}
	if err := d.listen(); err != nil {
		d.Close()
		return nil, err
	}
	d.engine.SyncForwarders() // forwarders follow hookd's files (docs/claude-code.md); serving only, after Listen
	d.watcher = store.StartWatcher(ctx, d.engine.Store(), store.WatchOptions{Logger: o.Logger.Named("watcher"), Signals: o.Signals})
	d.server.Reload = func(ctx context.Context) protocol.ReloadSummary { return d.watcher.Reload(ctx, "request") }
	d.server.Status = d.Status
	return d, nil
}

// openAudit opens the decision log when hookd's configuration enables it (nil Auditor
// otherwise) and, for a serving daemon, starts its exporters. Only options that cannot
// work are an error; a log that cannot be opened is logged and left to fail events closed.
func (d *Daemon) openAudit() (auditor, error) {
	o := d.opts
	if !o.Config.Audit.IsEnabled() {
		return nil, nil
	}
	alog := o.Logger.Named("audit")
	ao := auditOptions(o.Config.Audit, o.StateDir, alog)
	if cp := o.Config.Audit.Checkpoint; cp != nil {
		// A configured key that cannot be used is the admin's error: refuse to start
		// rather than run without the checkpoints they asked for.
		signer, err := audit.LoadSigner(cp.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("audit.checkpoint.key_file: %w", err)
		}
		ao.Checkpoint = &audit.CheckpointOptions{Signer: signer, Interval: time.Duration(cp.IntervalS) * time.Second}
	}
	l, err := audit.Open(ao)
	if l == nil {
		return nil, err
	}
	if err != nil {
		alog.Error("audit log unusable: events that can block fail closed until it is fixed", zap.Error(err))
	}
	d.audit = l
	// Only a serving daemon exports; `hookd run` leaves its records to the daemon's
	// exporters, which read them from the same files.
	if o.Socket != "" {
		if d.stopExport, err = startExporters(o.Config.Audit, l, alog); err != nil {
			return nil, err
		}
	}
	return newAuditor(l), nil
}

// listen makes the server and puts it on the socket (its own, or the one a service
// manager passed: Options.Listener), then the HTTP forwarder when configured. An HTTP
// forwarder that cannot listen does not fail New: the socket still serves hookc.
func (d *Daemon) listen() error {
	o := d.opts
	lim := o.Config.Limits
	d.server = &server{engine: d.engine, Log: o.Logger.Named("server"), MaxRequestBytes: o.Config.MaxRequestBytes,
		MaxConnsPerUID: lim.MaxConnectionsPerUID, ReadTimeout: time.Duration(lim.RequestReadTimeoutMS) * time.Millisecond,
		IdleTimeout:      time.Duration(lim.IdleConnectionTimeoutMS) * time.Millisecond,
		MaxInFlightBytes: int64(lim.MaxInFlightRequestBytes)}
	listen := func() error { return d.server.Listen(o.Socket) }
	if o.Listener != nil {
		listen = func() error { return d.server.Adopt(o.Listener, o.Socket) }
	}
	if err := listen(); err != nil {
		return err
	}
	if o.HTTP == nil {
		return nil
	}
	hs := &httpfwd.HTTPServer{Engine: d.engine, CallerGone: ErrCallerGone, Shutdown: ErrShutdown, Log: o.Logger.Named("http"), Token: o.HTTP.Token, MaxRequestBytes: o.Config.MaxRequestBytes,
		ReadTimeout: time.Duration(lim.RequestReadTimeoutMS) * time.Millisecond}
	listenHTTP := func() error { return hs.Listen(o.HTTP.Listen) }
	if o.HTTPListener != nil {
		listenHTTP = func() error { return hs.Adopt(o.HTTPListener, o.HTTP.Listen) }
	}
	if err := listenHTTP(); err != nil {
		// The socket still serves hookc; Claude Code's http hooks fail (closed, with
		// onFailure: block) until this is fixed. Said loudly, and in status.
		d.httpErr = err.Error()
		o.Logger.Error("http forwarder not served", zap.Error(err))
	} else {
		d.http = hs
	}
	return nil
}

// Serve answers events on the socket until ctx is done, then stops accepting, lets
// in-flight requests finish (up to Options.Grace) and removes the socket. It does not
// Close the daemon.
func (d *Daemon) Serve(ctx context.Context) error {
	if d.server == nil {
		return errors.New("daemon: Serve needs Options.Socket")
	}
	if d.http == nil {
		return d.server.Serve(ctx, d.opts.Grace)
	}
	var herr error
	done := make(chan struct{})
	go func() { defer close(done); herr = d.http.Serve(ctx, d.opts.Grace) }()
	err := d.server.Serve(ctx, d.opts.Grace)
	<-done
	return errors.Join(err, herr)
}

// HTTPAddr is the address the HTTP forwarder listens on, "" when it does not.
func (d *Daemon) HTTPAddr() string {
	if d.http == nil {
		return ""
	}
	return d.http.Addr()
}

// Handle answers one event in-process, exactly as the server does for a request on the
// socket: emit (nil: none) receives each hook's frames as it finishes; the result is the
// final answer.
func (d *Daemon) Handle(ctx context.Context, req *protocol.Request, caller Caller, emit func(*protocol.Frame)) (*protocol.Result, error) {
	return d.engine.Handle(ctx, req, caller, emit)
}

// Close stops the watcher, the pool's processes and the decision log. Call it after
// Serve returned.
func (d *Daemon) Close() error {
	var errs []error
	if d.watcher != nil {
		errs = append(errs, d.watcher.Close())
	}
	if d.server != nil && d.server.ln != nil {
		// Serve removes the socket; this covers a daemon that never served.
		d.server.ln.Close()
	}
	if d.http != nil {
		d.http.Close() // Serve closed it already; this covers one that never served
	}
	d.pool.Close()
	if d.audit != nil {
		if err := d.audit.Close(); err != nil {
			d.log.Named("audit").Error("closing audit log", zap.Error(err))
			errs = append(errs, err)
		}
	}
	if d.stopExport != nil {
		d.stopExport()
	}
	return errors.Join(errs...)
}
