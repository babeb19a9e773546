package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/protocol"
)

// globalFlags are hookd's global options. App declares them on the app, so they are
// accepted before the command (`hookd --socket S serve`), and inheritGlobals declares
// them again, hidden, on every command, so they are accepted after it too, as users type
// them (`hookd serve --socket S`, even after the arguments: see intersperse).
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "socket", Usage: "daemon socket `PATH`", EnvVars: []string{protocol.EnvSocket}, Value: defaultPaths().Socket},
		&cli.StringFlag{Name: "config", Usage: "hookd's own configuration `FILE` (default: config.json in hookd's config dir — $XDG_CONFIG_HOME/hookd on Linux, ~/Library/Application Support/hookd on macOS; missing = embedded default)", EnvVars: []string{"HOOKD_CONFIG"}},
		&cli.StringFlag{Name: "managed-dir", Usage: "Claude Code's managed settings `DIR`", EnvVars: []string{"HOOKD_MANAGED_DIR"}, Value: defaultPaths().ManagedDir},
		&cli.StringSliceFlag{Name: "mdm-profile", Usage: "Claude Code's MDM profile plist `FILE`s, the first present one in effect (repeatable; default on macOS: /Library/Managed Preferences/$USER/ then /Library/Managed Preferences/ com.anthropic.claudecode.plist; none on Linux)", EnvVars: []string{"HOOKD_MDM_PROFILE"}, Value: cli.NewStringSlice(defaultPaths().MDMProfiles...)},
		&cli.StringFlag{Name: "user-dir", Usage: "user settings `DIR`", EnvVars: []string{"HOOKD_USER_DIR"}, Value: defaultUserDir()},
		&cli.StringSliceFlag{Name: "settings", Usage: "extra settings `FILE` (repeatable; like claude --settings)", EnvVars: []string{"HOOKD_SETTINGS"}},
		&cli.StringFlag{Name: "state-dir", Usage: "state `DIR` (session env files, install backups, the decision log by default)", EnvVars: []string{"HOOKD_STATE_DIR"}, Value: defaultStateDir()},
		&cli.BoolFlag{Name: "debug", Usage: "human-readable debug logging", EnvVars: []string{"HOOKD_DEBUG"}},
	}
}

// inheritedFlags are the flags a command passes on to its subcommands the way the app
// passes on the global ones (`hookd audit --audit-dir D query` and `hookd audit query
// --audit-dir D` both work).
var inheritedFlags = []string{"audit-dir"}

// usesGlobals declares which global flags cmd reads (and, for a subcommand, which
// inherited ones: "audit-dir"). Its --help lists its own flags and then these, with their
// environment variables and defaults; the other global flags are accepted there too but
// not listed, and the help ends with a pointer to `hookd --help`. A command that reads
// none needs no call.
func usesGlobals(cmd *cli.Command, names ...string) *cli.Command {
	cmd.CustomHelpTemplate = helpTemplate(cmd, names)
	return cmd
}

// helpTemplate is urfave/cli's command help with the global flags cmd reads in a
// section of their own. The section is text computed here, quoted into the template.
func helpTemplate(cmd *cli.Command, names []string) string {
	base := cli.CommandHelpTemplate
	if len(cmd.Subcommands) > 0 {
		base = cli.SubcommandHelpTemplate
	}
	var b strings.Builder
	if len(names) > 0 {
		b.WriteString("\nGLOBAL OPTIONS it reads (accepted before or after the command):\n")
		for _, n := range names {
			f := findFlag(n)
			if f == nil {
				panic("hookd: usesGlobals: no global or inherited flag " + n)
			}
			b.WriteString("   " + f.String() + "\n")
		}
	}
	b.WriteString("\nEvery global option: hookd --help\n")
	return base + `{{` + strconv.Quote(b.String()) + `}}`
}

// findFlag is the global flag name, or an inherited one as its command declares it.
func findFlag(name string) cli.Flag {
	for _, f := range globalFlags() {
		if f.Names()[0] == name {
			return f
		}
	}
	if name == "audit-dir" {
		return auditDirFlag()
	}
	return nil
}

// inheritGlobals gives every command (and subcommand) a hidden copy of each global flag
// (and each inherited flag of its ancestors) and a Before that resolves it, so the rest
// of the code reads c.String("socket") wherever it runs. urfave/cli v2 has no persistent
// flags: a flag declared on a command shadows the app's, so the copies carry no default
// and no environment variable, and Before fills each copy not given on the command's own
// line from the parent's value (the parent's line, else its environment variable or
// default). The innermost value wins; a slice (--settings) given at several levels keeps
// every value, outer ones first. A command without help of its own (no usesGlobals) gets
// the pointer to the global options.
func inheritGlobals(cmds []*cli.Command, inherited []cli.Flag) {
	for _, cmd := range cmds {
		var copies []cli.Flag
		for _, f := range inherited {
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
		if cmd.CustomHelpTemplate == "" {
			cmd.CustomHelpTemplate = helpTemplate(cmd, nil)
		}
		next := inherited
		for _, f := range cmd.Flags {
			if slices.Contains(inheritedFlags, f.Names()[0]) && !slices.Contains(copies, f) {
				next = append(slices.Clip(next), f)
			}
		}
		inheritGlobals(cmd.Subcommands, next)
	}
}

// localCopy is a global flag as a command declares it: same name and usage, hidden, no
// default, no environment variable.
func localCopy(f cli.Flag) cli.Flag {
	switch f := f.(type) {
	case *cli.StringFlag:
		return &cli.StringFlag{Name: f.Name, Usage: f.Usage, Hidden: true}
	case *cli.BoolFlag:
		return &cli.BoolFlag{Name: f.Name, Usage: f.Usage, Hidden: true}
	case *cli.StringSliceFlag:
		return &cli.StringSliceFlag{Name: f.Name, Usage: f.Usage, Destination: &cli.StringSlice{}, Hidden: true}
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
