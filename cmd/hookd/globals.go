package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/protocol"
)

// globalFlags are hookd's global options. App declares them on the app, so they are
// accepted before the command (`hookd --socket S serve`), and inheritGlobals declares
// them again on every command, so they are accepted after it too, as users type them
// (`hookd serve --socket S`).
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "socket", Usage: "daemon socket `PATH`", EnvVars: []string{protocol.EnvSocket}, Value: protocol.DefaultSocketPath()},
		&cli.StringFlag{Name: "config", Usage: "hookd's own configuration `FILE` (default: $XDG_CONFIG_HOME/hookd/config.json; missing = embedded default)", EnvVars: []string{"HOOKD_CONFIG"}},
		&cli.StringFlag{Name: "managed-dir", Usage: "managed settings `DIR`", EnvVars: []string{"HOOKD_MANAGED_DIR"}, Value: "/etc/claude-code"},
		&cli.StringFlag{Name: "user-dir", Usage: "user settings `DIR`", EnvVars: []string{"HOOKD_USER_DIR"}, Value: defaultUserDir()},
		&cli.StringSliceFlag{Name: "settings", Usage: "extra settings `FILE` (repeatable; like claude --settings)"},
		&cli.StringFlag{Name: "state-dir", Usage: "state `DIR` (session env files)", EnvVars: []string{"HOOKD_STATE_DIR"}, Value: defaultStateDir()},
		&cli.BoolFlag{Name: "debug", Usage: "human-readable debug logging"},
	}
}

// inheritGlobals gives every command (and subcommand) a copy of each global flag and a
// Before that resolves it, so the rest of the code reads c.String("socket") wherever it
// runs. urfave/cli v2 has no persistent flags: a flag declared on a command shadows the
// app's, so the copies carry no default and no environment variable, and Before fills
// each copy not given on the command's own line from the parent's value (the parent's
// line, else its environment variable or default). The innermost value wins; a slice
// (--settings) given at several levels keeps every value, outer ones first.
func inheritGlobals(cmds []*cli.Command) {
	for _, cmd := range cmds {
		var copies []cli.Flag
		for _, f := range globalFlags() {
			if !slices.ContainsFunc(cmd.Flags, func(g cli.Flag) bool { return g.Names()[0] == f.Names()[0] }) {
				copies = append(copies, localCopy(f))
			}
		}
		cmd.Flags = append(cmd.Flags, copies...)
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			if err := inheritValues(c, copies); err != nil {
				return err
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
		inheritGlobals(cmd.Subcommands)
	}
}

// localCopy is a global flag as a command declares it: same name and usage, no default,
// no environment variable.
func localCopy(f cli.Flag) cli.Flag {
	switch f := f.(type) {
	case *cli.StringFlag:
		return &cli.StringFlag{Name: f.Name, Usage: f.Usage}
	case *cli.BoolFlag:
		return &cli.BoolFlag{Name: f.Name, Usage: f.Usage}
	case *cli.StringSliceFlag:
		return &cli.StringSliceFlag{Name: f.Name, Usage: f.Usage, Destination: &cli.StringSlice{}}
	}
	panic(fmt.Sprintf("hookd: global flag %T has no local copy", f))
}

func inheritValues(c *cli.Context, copies []cli.Flag) error {
	parent := c.Lineage()[1]
	local := c.LocalFlagNames()
	for _, f := range copies {
		name := f.Names()[0]
		given := slices.Contains(local, name)
		switch f := f.(type) {
		case *cli.StringSliceFlag:
			if outer := parent.StringSlice(name); len(outer) > 0 {
				*f.Destination = *cli.NewStringSlice(append(slices.Clone(outer), f.Destination.Value()...)...)
			}
		case *cli.BoolFlag:
			if !given && parent.Bool(name) {
				if err := c.Set(name, "true"); err != nil {
					return err
				}
			}
		default:
			if !given {
				if err := c.Set(name, parent.String(name)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
