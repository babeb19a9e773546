package main

import (
	"context"
	"fmt"
	"github.com/hookd/hookd/events"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/daemon"
	"github.com/hookd/hookd/protocol"
)

func runCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "run",
		Usage: "answer one event from stdin in-process, without a daemon (same output as hookc)",
		Description: `Reads one hook event payload on stdin, runs it through the same engine the daemon uses
(settings hierarchy, matching, hooks, merge, permission rules) and prints the Claude Code
hook output, exiting with the code Claude Code should see. hookc falls back to this when
the daemon is unreachable.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "stream", Usage: "print every frame as a JSON line instead of the hook output"},
			&cli.StringFlag{Name: "project-dir", Usage: "project `DIR` (default: $CLAUDE_PROJECT_DIR, else derived from the event's cwd)"},
			&cli.StringFlag{Name: "harness", EnvVars: []string{"HOOKD_HARNESS"}, Usage: "the `AGENT` that sent the event: claude-code, codex or gemini (default: detected from the payload)"},
		},
		Action: func(c *cli.Context) error {
			payload, err := io.ReadAll(io.LimitReader(os.Stdin, protocol.DefaultMaxRequestBytes+1))
			if err != nil {
				return fmt.Errorf("reading event from stdin: %w", err)
			}
			cfg, _, err := loadConfig(c)
			if err != nil {
				return err
			}
			d, err := daemon.New(c.Context, daemon.Options{Logger: newLogger(c), Config: cfg, Sources: sources(c, cfg), StateDir: c.String("state-dir")})
			if err != nil {
				return err
			}
			defer d.Close()
			req := &protocol.Request{V: protocol.Version, EventText: string(payload), Env: os.Environ(), ProjectDir: c.String("project-dir"), Harness: c.String("harness")}
			if len(payload) > protocol.DefaultMaxRequestBytes {
				return exitError{code: 2, msg: "event payload exceeds the request size limit"}
			}
			line, err := encodeRequest(req)
			if err != nil {
				return err
			}
			dreq, err := protocol.DecodeRequest(line)
			if err != nil {
				return renderError(c, payload, err)
			}
			var emit func(*protocol.Frame)
			if c.Bool("stream") {
				emit = func(f *protocol.Frame) { _ = protocol.WriteFrame(c.App.Writer, f) }
			}
			res, err := d.Handle(context.Background(), dreq, daemon.Caller{UID: os.Getuid(), PID: os.Getpid(), Client: "hookd run"}, emit)
			if err != nil {
				return renderError(c, payload, err)
			}
			if c.Bool("stream") {
				_ = protocol.WriteFrame(c.App.Writer, &protocol.Frame{Type: protocol.FrameResult, V: protocol.Version, Result: res})
				return exitCode(res.ExitCode)
			}
			return exitCode(res.Render(c.App.Writer, c.App.ErrWriter))
		},
	}, "config", "managed-dir", "user-dir", "settings", "state-dir", "debug")
}

func exitCode(code int) error {
	if code == 0 {
		return nil
	}
	return exitError{code: code}
}

// renderError answers an event the engine refused (unknown event, malformed payload):
// fail closed, as hookc does, naming the problem.
func renderError(c *cli.Context, payload []byte, err error) error {
	res := events.FailClosed(protocol.EventName(payload), "hookd: "+err.Error())
	return exitCode(res.Render(c.App.Writer, c.App.ErrWriter))
}
