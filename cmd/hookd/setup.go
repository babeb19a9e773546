package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/cmd/hookd/internal/setup"
	"github.com/hookd/hookd/protocol"
)

func setupCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:      "setup",
		Usage:     "set this machine up in one step: the service, the harness's forwarders, then doctor",
		ArgsUsage: "[claude-code|codex|gemini]",
		Description: `hookd setup [claude-code] keeps hookd running under the OS's service manager (hookd service
install) — or, where no service manager runs for this user, starts hookd serve in the
background and says it will not survive a reboot — routes the harness's hooks through hookd
(hookd install <harness>), and runs hookd doctor, whose exit code it returns (0 healthy, 1
degraded, 2 broken). Idempotent: run it again after an upgrade or a change.

--dry-run lists every file it would write or change and every command it would run, and
changes nothing. --undo reverses it: the harness's hooks go back (its settings files byte
for byte when unedited since), the service is removed, a background hookd is stopped.
hookd's state directory (the decision log, install backups) is kept. See docs/install.md.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "list the files and commands, change nothing"},
			&cli.BoolFlag{Name: "undo", Usage: "reverse a previous setup"},
		},
		Action: func(c *cli.Context) error {
			harness := c.Args().First()
			if harness == "" {
				harness = "claude-code"
			}
			switch harness {
			case "claude-code", "codex", "gemini":
			default:
				return exitError{2, fmt.Sprintf("setup: unknown harness %q: claude-code, codex or gemini", harness)}
			}
			if c.NArg() > 1 {
				return exitError{2, "setup: one harness at a time"}
			}
			o, err := setupOptions(c, harness)
			if err != nil {
				return err
			}
			run := setup.Do
			if c.Bool("undo") {
				run = setup.Undo
			}
			var ee *setup.ExitError
			if err := run(o); errors.As(err, &ee) {
				return exitError{ee.Code, ee.Msg}
			} else if err != nil {
				return err
			}
			return nil
		},
	}, "socket", "config", "managed-dir", "user-dir", "settings", "state-dir")
}

// globalArgs are the global flags this command was given, to pass on to the steps.
func globalArgs(c *cli.Context) []string {
	args := []string{"--socket", c.String("socket")}
	for _, name := range []string{"config", "managed-dir", "user-dir", "state-dir"} {
		if v := c.String(name); v != "" {
			args = append(args, "--"+name, v)
		}
	}
	for _, v := range c.StringSlice("settings") {
		args = append(args, "--settings", v)
	}
	return args
}

// step runs `hookd <globals> args…` (this binary), its output going to ours.
func step(c *cli.Context, args ...string) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, append(globalArgs(c), args...)...)
	cmd.Stdout, cmd.Stderr = c.App.Writer, c.App.ErrWriter
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}

func setupOptions(c *cli.Context, harness string) (setup.Options, error) {
	self, err := os.Executable()
	if err != nil {
		return setup.Options{}, err
	}
	o := setup.Options{Harness: harness, DryRun: c.Bool("dry-run"), StateDir: c.String("state-dir"), UserDir: c.String("user-dir"),
		Socket: c.String("socket"), BackupDir: backupDir(c), Out: c.App.Writer, Exe: self, ServeArgs: append(globalArgs(c), "serve"),
		Step:   func(args ...string) (int, error) { return step(c, args...) },
		Status: func() (*protocol.Status, error) { return doctorStatus(c) }}
	o.Manager, o.Desc, o.ManagerErr = serviceManager(c)
	return o, nil
}
