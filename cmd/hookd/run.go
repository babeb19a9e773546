package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/daemon"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/jsonobj"
	"github.com/hookd/hookd/protocol"
)

func runCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "run",
		Usage: "answer one event from stdin in-process, without a daemon (same output as hookc)",
		Description: `Reads one hook event payload on stdin, runs it through the same engine the daemon uses
(settings hierarchy, matching, hooks, merge, permission rules) and prints the Claude Code
hook output, exiting with the code Claude Code should see. hookc falls back to this when
the daemon is unreachable: it passes --fallback with the reason, which the decision record
keeps ("fallback"; ` + "`hookd audit query --fallback`" + `) and which the answer shows the user as a
system message ("<Event> says: hookd answered in-process …"; for Claude Code).`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "stream", Usage: "print every frame as a JSON line instead of the hook output"},
			&cli.StringFlag{Name: "project-dir", Usage: "project `DIR` (default: $CLAUDE_PROJECT_DIR, else derived from the event's cwd)"},
			&cli.StringFlag{Name: "harness", EnvVars: []string{"HOOKD_HARNESS"}, Usage: "the `AGENT` that sent the event: claude-code, codex or gemini (default: detected from the payload)"},
			&cli.StringFlag{Name: "fallback", Usage: "answer as a client's in-process fallback: why the daemon was not used (`REASON`, recorded and shown)"},
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
			fallback := c.String("fallback")
			res, err := d.Handle(context.Background(), dreq, daemon.Caller{UID: os.Getuid(), PID: os.Getpid(), Client: "hookd run", Fallback: fallback}, emit)
			if err != nil {
				return renderError(c, payload, err)
			}
			if fallback != "" {
				markFallback(res, fallback)
			}
			if c.Bool("stream") {
				_ = protocol.WriteFrame(c.App.Writer, &protocol.Frame{Type: protocol.FrameResult, V: protocol.Version, Result: res})
				return exitCode(res.ExitCode)
			}
			return exitCode(res.Render(c.App.Writer, c.App.ErrWriter))
		},
	}, "config", "managed-dir", "mdm-profile", "user-dir", "settings", "state-dir", "debug")
}

// markFallback marks an answer made in-process for a client that could not reach the
// daemon: the result frame says why (Result.Fallback), and a Claude Code answer carries a
// system message, which Claude Code shows the user as "<Event> says: …" without telling
// the model. A note on stderr would not do: Claude Code shows a hook's stderr on exit 0
// to nobody (probes pre-t1, ups-10, ss-7, stop-9 against 2.1.332), and on exit 2 it is the
// reason the model reads; a systemMessage is shown beside an exit-2 block without
// changing it (pre-t3).
//
// The note is added to the answer as rendered, never by rendering again: into a JSON
// answer (joined to its own systemMessage), or as the JSON of an answer that printed
// nothing on stdout. An answer whose stdout is text (context, a worktree path, compaction
// instructions) and other harnesses' answers are left as they are; hookc's stderr line
// still says it.
func markFallback(res *protocol.Result, reason string) {
	res.Fallback = reason
	if res.Harness != "" && res.Harness != protocol.HarnessClaudeCode || res.Stdout != "" {
		return
	}
	msg := "hookd answered in-process, without the daemon (" + reason + "); start it with `hookd serve`"
	note := msg
	out := jsonobj.Object{}
	if len(res.Output) > 0 && string(res.Output) != "null" {
		o, err := jsonobj.Parse(res.Output)
		if err != nil {
			return
		}
		out = o
	}
	if raw, ok := out.Lookup("systemMessage"); ok {
		var own string
		if json.Unmarshal(raw, &own) != nil {
			return
		}
		note = own + "\n" + msg
	}
	res.Output = out.Set("systemMessage", note).JSON()
	res.SystemMessages = append(res.SystemMessages, msg)
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
