// Package clix holds the conventions every hookd command follows, applied to the
// urfave/cli application as a whole: suggestions for mistyped commands and flags, errors
// instead of help dumps, flags accepted after arguments, and shell completion. hookd's
// own commands and flags are cmd/hookd's; this package knows none of them.
package clix

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/configs/suggest"
)

// The command line's conventions, applied to every command by Conventions (docs/configuration.md, "Conventions"):
//
//   - a mistyped command or flag is an error (exit 2) with a suggestion — `hookd stauts`:
//     did you mean "status"? — and a pointer to the help, never the whole help text;
//   - global flags are accepted before the command, after it and after its arguments
//     (inheritGlobals, intersperse);
//   - errors reach main, which prints "hookd: <message>" once and exits with the error's
//     code (urfave/cli's own exit handling, which would exit inside Run, is off);
//   - shell completion for bash, zsh and fish comes from urfave/cli (`hookd completion`).

// Conventions wires the behaviour above into app and every command under it (call it
// after the commands are in place).
func Conventions(app *cli.App) {
	app.Suggest = true
	app.ExitErrHandler = func(*cli.Context, error) {} // main prints and exits
	app.Action = groupAction
	app.OnUsageError = usageError
	// `hookd help stauts`: urfave/cli's own help command prints "No help topic" and
	// exits 0 (with a CommandNotFound) or suggests by its own measure; this one is an
	// error with our suggestion, as `hookd stauts` is.
	// (With a "help" command of its own, urfave/cli no longer adds --help to the app:
	// add it here.)
	app.Flags = append(app.Flags, cli.HelpFlag)
	app.Commands = append(app.Commands, &cli.Command{
		Name: "help", Aliases: []string{"h"}, Usage: "show the commands, or one command's help", ArgsUsage: "[COMMAND]",
		Action: func(c *cli.Context) error {
			name, parent := c.Args().First(), c.Lineage()[1]
			switch {
			case name == "":
				return cli.ShowAppHelp(c)
			case c.App.Command(name) == nil:
				return unknownCommand(parent, name)
			}
			return cli.ShowCommandHelp(parent, name)
		},
	})
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			cmd.OnUsageError = usageError
			if len(cmd.Subcommands) > 0 && cmd.Action == nil {
				cmd.Action = groupAction
			}
			walk(cmd.Subcommands)
		}
	}
	walk(app.Commands)
}

// groupAction runs for the app and for a command that only groups others (install,
// audit) when no subcommand was named: help without arguments, else the unknown
// command's error with a suggestion.
func groupAction(c *cli.Context) error {
	if c.Args().Present() {
		return unknownCommand(c, c.Args().First())
	}
	if c.Command == nil || c.Command.Name == "" {
		return cli.ShowAppHelp(c)
	}
	return cli.ShowSubcommandHelp(c)
}

// commandPath is "hookd" or "hookd audit": the command c runs.
func commandPath(c *cli.Context) string {
	if c.Command != nil && c.Command.HelpName != "" {
		return c.Command.HelpName
	}
	return c.App.Name
}

// within is "audit query: " for an error of `hookd audit query`, "" for the app's own
// (main prefixes every message with "hookd: ").
func within(c *cli.Context) string {
	if rest, ok := strings.CutPrefix(commandPath(c), c.App.Name+" "); ok {
		return rest + ": "
	}
	return ""
}

// subcommands are the commands c can run next (the app's at the top).
func subcommands(c *cli.Context) []*cli.Command {
	if c.Command != nil && c.Command.Name != "" {
		return c.Command.Subcommands
	}
	return c.App.Commands
}

func unknownCommand(c *cli.Context, name string) error {
	var names []string
	for _, cmd := range subcommands(c) {
		if !cmd.Hidden && cmd.Name != "help" {
			names = append(names, cmd.Names()...)
		}
	}
	path := commandPath(c)
	msg := fmt.Sprintf("%sunknown command %q", within(c), name)
	if s := suggest.Closest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return ExitError{Code: 2, Msg: msg + fmt.Sprintf("\nrun '%s --help' for the commands", path)}
}

// usageError replaces urfave/cli's answer to a bad flag (the message, a suggestion by
// its own metric, then the whole help) with one error line, a close flag name, and a
// pointer to the command's help.
func usageError(c *cli.Context, err error, _ bool) error {
	path := commandPath(c)
	msg := fmt.Sprintf("%s%v", within(c), err)
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		name = strings.TrimLeft(name, "-")
		var flags []cli.Flag
		if c.Command != nil && c.Command.Name != "" {
			flags = c.Command.Flags
		} else {
			flags = c.App.Flags
		}
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		names = append(names, "help")
		if s := suggest.Closest(name, names); s != "" {
			msg += "; did you mean " + dashes(s) + "?"
		}
	}
	return ExitError{Code: 2, Msg: msg + fmt.Sprintf("\nrun '%s --help' for usage", path)}
}

func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// Intersperse moves the flags a user typed after a command's arguments in front of
// them, so `hookd validate a.json --strict` and `hookd audit show ID --json` mean what
// they say: urfave/cli v2 (like package flag) stops reading flags at the first argument.
// A word is moved only when it is a flag of the command being run (its own, a global
// one or the help flag), with its value when it takes one; everything after "--" stays
// where it is, and urfave/cli's completion flag stays last.
func Intersperse(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	flags, cmds := app.Flags, app.Commands
	i := 1
	// The command path, with the flags typed between its words.
	for i < len(args) {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			cmd := findCommand(cmds, a)
			if cmd == nil {
				break // the first argument
			}
			out = append(out, a)
			flags, cmds = cmd.Flags, cmd.Subcommands
			i++
			continue
		}
		n := flagWords(flags, args[i:])
		out = append(out, args[i:i+n]...)
		i += n
	}
	var moved, rest []string
	complete := false
	for i < len(args) {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if a == "--generate-bash-completion" && i == len(args)-1 {
			complete = true
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" && isFlag(flags, a) {
			n := flagWords(flags, args[i:])
			moved = append(moved, args[i:i+n]...)
			i += n
			continue
		}
		rest = append(rest, a)
		i++
	}
	out = append(append(out, moved...), rest...)
	if complete {
		out = append(out, "--generate-bash-completion")
	}
	return out
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// flagName is the name in "--name=value", "-name" or "--name".
func flagName(word string) string {
	name := strings.TrimLeft(word, "-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

func lookupFlag(flags []cli.Flag, word string) cli.Flag {
	name := flagName(word)
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

func isFlag(flags []cli.Flag, word string) bool {
	if n := flagName(word); n == "help" || n == "h" {
		return true
	}
	return lookupFlag(flags, word) != nil
}

// flagWords is how many words the flag at args[0] spans: 1 for a boolean, for
// "--name=value" and for an unknown flag (left for urfave/cli to report), 2 for a flag
// that takes its value from the next word.
func flagWords(flags []cli.Flag, args []string) int {
	f := lookupFlag(flags, args[0])
	if f == nil || strings.Contains(args[0], "=") || len(args) < 2 {
		return 1
	}
	if dv, ok := f.(cli.DocGenerationFlag); ok && !dv.TakesValue() {
		return 1
	}
	return 2
}

// ExitError is an error that ends the program with Code (main prints Msg, when not
// empty, as "hookd: <Msg>").
type ExitError struct {
	Code int
	Msg  string
}

func (e ExitError) Error() string { return e.Msg }

// ExitCode is the code main exits with.
func (e ExitError) ExitCode() int { return e.Code }
