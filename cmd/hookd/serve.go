package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/hookd/hookd/daemon"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/daemon/settings"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "run the daemon in the foreground",
		Description: `Loads hooks from the Claude Code settings hierarchy (managed, user, and each project's
project/local files as events arrive), answers events on the Unix socket, follows edits of
every settings file (fsnotify; see docs/hot-reload.md), reloads everything on SIGHUP and on
'hookd reload', and removes the socket on SIGINT/SIGTERM.`,
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "grace", Value: 10 * time.Second, Usage: "how long shutdown waits for in-flight events"},
		},
		Action: func(c *cli.Context) error {
			log := newLogger(c)
			defer log.Sync() //nolint:errcheck
			cfg, cfgPath, err := loadConfig(c)
			if err != nil {
				return err
			}
			src := sources(c, cfg)
			// Command hooks run through the prewarm pool: prewarmed processes where safe or
			// configured, persistent workers where configured, cold starts otherwise.
			pool := runner.NewPool(runner.PoolOptions{Logger: log.Named("runner")})
			defer pool.Close()
			aud, closeAudit, err := openAudit(c, cfg, log)
			if err != nil {
				return err
			}
			defer closeAudit()
			eng := daemon.NewEngine(daemon.Options{
				Logger: log.Named("engine"), Config: cfg, Sources: src, StateDir: c.String("state-dir"), Runner: pool, Audit: aud,
			})
			srv := &daemon.Server{Engine: eng, Log: log.Named("server"), MaxRequestBytes: cfg.MaxRequestBytes}
			sock := c.String("socket")
			if err := srv.Listen(sock); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			w := settings.StartWatcher(ctx, eng.Store(), settings.WatchOptions{Logger: log.Named("watcher"), Signals: hup})
			defer w.Close()
			srv.Reload = w.ReloadRequest
			log.Info("hookd serving", zap.String("socket", sock), zap.String("version", daemon.Version),
				zap.String("config", cfgPath), zap.String("managed_dir", src.ManagedDir), zap.String("user_dir", src.UserDir),
				zap.String("mode", cfg.Mode))
			fmt.Fprintf(c.App.ErrWriter, "hookd: listening on %s\n  connect a harness: set each hook command to `hookc` (HOOKD_SOCKET=%s), or speak NDJSON on the socket (see protocol docs)\n", sock, sock)
			err = srv.Serve(ctx, c.Duration("grace"))
			log.Info("hookd stopped")
			return err
		},
	}
}
