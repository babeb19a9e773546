package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/daemon"
	"github.com/hookd/hookd/daemon/activation"
	"github.com/hookd/hookd/daemon/runner/reaper"
)

// daemonProcs is the GOMAXPROCS `hookd serve` runs with unless the GOMAXPROCS environment
// variable sets one: how many threads may run the daemon's Go code at once.
//
// The daemon's work per event is a few milliseconds of Go (decode, match, merge, log)
// around hooks that run as processes of their own, which GOMAXPROCS does not limit. With
// more than one P, each wake-up of the daemon (an event, a hook's output, a hook's exit)
// also wakes threads for the idle Ps, which spin looking for work and sleep again: on a
// 2-CPU VM that was ≈ 28 % of the daemon's CPU per event (8.0 → 5.75 ms, prewarmed Node hook;
// 95 → 70 ms for a 1 MB event), CPU that a harness session bound by CPU waits for (issue
// 26). Concurrent events and parallel hooks were not slower on one P (8 events at once,
// 7 hooks of one event, 8 events of 1 MB at once): they wait on hooks, not on Go code,
// and a long decode is preempted every 10 ms. Figures and commands: docs/performance.md,
// "The daemon's own CPU".
//
// Set GOMAXPROCS in the daemon's environment (the service unit's, for instance) to give it
// more. Only the daemon is affected: hooks get the environment the harness sent, and
// runtime.GOMAXPROCS changes no environment variable.
const daemonProcs = 1

// setDaemonProcs applies daemonProcs unless getenv("GOMAXPROCS") is set (the runtime has
// then applied that value, or ignored an invalid one and kept its default).
func setDaemonProcs(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(daemonProcs)
	}
}

func serveCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "serve",
		Usage: "run the daemon in the foreground",
		Description: `Loads hooks from the Claude Code settings hierarchy (managed, user, and each project's
project/local files as events arrive), answers events on the Unix socket, follows edits of
every settings file (fsnotify; see docs/hot-reload.md), reloads everything on SIGHUP and on
'hookd reload', and removes the socket on SIGINT/SIGTERM. It runs with GOMAXPROCS=1 (less CPU
per event) unless the GOMAXPROCS environment variable is set (docs/performance.md).`,
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "grace", Value: 10 * time.Second, Usage: "how long shutdown waits for in-flight events"},
		},
		Action: func(c *cli.Context) error {
			setDaemonProcs(os.Getenv)
			log := newLogger(c)
			defer log.Sync() //nolint:errcheck
			cfg, cfgPath, err := loadConfig(c)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			// Closed after the daemon (deferred before it): after a clean shutdown it has no
			// group left to kill.
			var gr *reaper.Reaper
			defer func() {
				if gr != nil {
					gr.Close()
				}
			}()
			src, sock := sources(c, cfg), c.String("socket")
			// The HTTP forwarder (docs/http-forwarder.md) is served when
			// `hookd install claude-code --transport http` created its endpoint file.
			ep, err := install.LoadHTTPEndpoint(c.String("state-dir"))
			if err != nil {
				log.Error("http forwarder not served", zap.Error(err))
				ep = nil
			}
			// Under systemd or launchd socket activation (`hookd service install`), serve on the
			// sockets the service manager holds (docs/service.md).
			inh, err := activation.Listeners()
			if err != nil {
				return err
			}
			if inh.HTTP != nil && ep == nil {
				log.Error("http forwarder not served: the service passes a port but no endpoint exists (`hookd install claude-code --transport http`, then `hookd service install`)",
					zap.String("port", inh.HTTP.Addr().String()))
				inh.HTTP.Close()
				inh.HTTP = nil
			}
			d, err := daemon.New(ctx, daemon.Options{
				Logger: log, Config: cfg, Sources: src, StateDir: c.String("state-dir"),
				Socket: sock, Signals: hup, Grace: c.Duration("grace"), HTTP: ep,
				Listener: inh.Unix, HTTPListener: inh.HTTP,
			})
			if err != nil {
				inh.Close()
				return err
			}
			defer d.Close()
			// Hooks die with the daemon, even a SIGKILLed one: a helper kills their process
			// groups when the daemon's end of its pipe closes, and keeps a record in the
			// state directory in case it dies too. Now that this daemon owns the socket, it
			// reaps what the records of dead reapers list (daemon/runner/reaper).
			if state := c.String("state-dir"); state != "" {
				if n := reaper.ReapRecorded(state, func(format string, args ...any) { log.Warn(fmt.Sprintf(format, args...)) }); n > 0 {
					log.Warn("killed hook process groups left by a daemon that died with its reaper", zap.Int("groups", n))
				}
			}
			if exe, err := os.Executable(); err != nil {
				log.Warn("cannot find hookd's own executable; hooks may outlive a crashed daemon", zap.Error(err))
			} else if g, err := reaper.Start(exe, c.String("state-dir")); err != nil {
				log.Warn("cannot start the hook group reaper; hooks may outlive a crashed daemon", zap.Error(err))
			} else {
				gr = g
			}
			log.Info("hookd serving", zap.String("socket", sock), zap.String("version", daemon.Version), zap.String("activated_by", inh.Manager),
				zap.String("config", cfgPath), zap.String("managed_dir", src.ManagedDir), zap.String("user_dir", src.UserDir),
				zap.String("mode", cfg.Mode))
			fmt.Fprintf(c.App.ErrWriter, "hookd: listening on %s\n  connect a harness: set each hook command to `hookc` (HOOKD_SOCKET=%s), or speak NDJSON on the socket (see protocol docs)\n", sock, sock)
			if a := d.HTTPAddr(); a != "" {
				fmt.Fprintf(c.App.ErrWriter, "hookd: http forwarder on http://%s (token in %s)\n", a, filepath.Join(c.String("state-dir"), install.HTTPEndpointFile))
			}
			err = d.Serve(ctx)
			log.Info("hookd stopped")
			return err
		},
	}, "socket", "config", "managed-dir", "mdm-profile", "user-dir", "settings", "state-dir", "debug")
}
