package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/daemon"
	"github.com/hookd/hookd/events/harness"
	"github.com/hookd/hookd/protocol"
)

// harnessInstallCommands are `install codex|gemini` and `uninstall codex|gemini`.
func harnessInstallCommands(uninstall bool) []*cli.Command {
	var out []*cli.Command
	for _, name := range []string{protocol.HarnessCodex, protocol.HarnessGemini} {
		name := name
		file := map[string]string{protocol.HarnessCodex: "hooks.json", protocol.HarnessGemini: "settings.json"}[name]
		dir := map[string]string{protocol.HarnessCodex: ".codex", protocol.HarnessGemini: ".gemini"}[name]
		flags := []cli.Flag{
			&cli.StringFlag{Name: "scope", Value: "user", Usage: fmt.Sprintf("user (~/%s/%s) or project (<project>/%s/%s)", dir, file, dir, file)},
			&cli.StringFlag{Name: "project", Usage: "project `DIR` for --scope project (default: derived from the current directory)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the diff, write nothing"},
		}
		cmd := &cli.Command{Name: name, Flags: flags}
		if uninstall {
			cmd.Usage = fmt.Sprintf("remove the forwarders from %s's %s and give it back the hooks hookd ran", name, file)
			cmd.Action = planned(func(c *cli.Context) (install.HarnessOptions, error) { return harnessOptions(c, name, dir, file) },
				install.PlanUninstallHarness)
		} else {
			cmd.Usage = fmt.Sprintf("forward %s's hook events to hookd; its own command hooks move into hookd.json beside %s", name, file)
			cmd.Description = fmt.Sprintf(`Writes one forwarding hook per event hookd answers for %[1]s ("hookc --harness %[1]s") into
%[2]s, and moves %[1]s's own command hooks of those events, with their groups, into hookd.json
beside it (which %[1]s does not read): hookd runs them on %[1]s's payload beside the hooks and
permission rules of the Claude Code settings hierarchy. Idempotent; the file is backed up first.
See docs/harnesses/%[1]s.md.`, name, file)
			cmd.Flags = append(cmd.Flags, &cli.StringFlag{Name: "hookc", Usage: "forwarder `PATH` written into the hook (default: the hookc next to this hookd)"})
			cmd.Action = planned(func(c *cli.Context) (o install.HarnessOptions, err error) {
				if o, err = harnessOptions(c, name, dir, file); err == nil {
					o.Forwarder, err = forwarderFlag(c)
				}
				return o, err
			}, install.PlanInstallHarness)
		}
		out = append(out, usesGlobals(cmd, "state-dir"))
	}
	return out
}

func harnessOptions(c *cli.Context, name, dir, file string) (install.HarnessOptions, error) {
	ad := harness.For(name)
	o := install.HarnessOptions{Harness: name, Events: ad.Forward, TimeoutUnit: ad.TimeoutUnit, HookdVersion: daemon.Version, BackupDir: backupDir(c)}
	home, _ := os.UserHomeDir()
	switch c.String("scope") {
	case "user":
		base := filepath.Join(home, dir)
		if name == protocol.HarnessCodex && os.Getenv("CODEX_HOME") != "" {
			base = os.Getenv("CODEX_HOME")
		}
		o.Settings = filepath.Join(base, file)
	case "project":
		project, err := projectFlag(c, home)
		if err != nil {
			return o, err
		}
		o.Settings = filepath.Join(project, dir, file)
	default:
		return o, fmt.Errorf("--scope %q: one of user, project", c.String("scope"))
	}
	abs, err := filepath.Abs(o.Settings)
	if err != nil {
		return o, err
	}
	o.Settings = abs
	return o, nil
}
