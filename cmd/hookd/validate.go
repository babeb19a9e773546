package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/configs/settings"
)

func validateCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:      "validate",
		Usage:     "check settings files with the daemon's own loader",
		ArgsUsage: "[FILE...]",
		Description: `With FILE arguments, checks those files. Without, checks the whole hierarchy the daemon
would read for the project around the current directory (managed, user, project, local,
--settings). Prints file:field messages; exits 1 if any file is invalid.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "project", Usage: "project `DIR` (default: derived from the current directory)"}},
		Action: func(c *cli.Context) error {
			cfg, _, err := loadConfig(c)
			if err != nil {
				return err
			}
			src := sources(c, cfg)
			var refs []settings.FileRef
			if c.NArg() > 0 {
				for _, a := range c.Args().Slice() {
					abs, _ := filepath.Abs(a)
					refs = append(refs, settings.FileRef{Path: abs, Kind: settings.KindFlag})
				}
			} else {
				project := c.String("project")
				if project == "" {
					wd, _ := os.Getwd()
					project = settings.ProjectDirFor(wd, src.Home)
				}
				src.ProjectDir = project
				refs = src.Files()
			}
			w := c.App.Writer
			bad, findings := 0, 0
			var files []*settings.File
			for _, r := range refs {
				f, err := src.Load(r)
				switch {
				case errors.Is(err, fs.ErrNotExist):
					if c.NArg() > 0 {
						fmt.Fprintf(w, "%s: file does not exist\n", r.Path)
						bad++
					}
					continue
				case err != nil:
					fmt.Fprintf(w, "%s\n", err)
					bad++
					continue
				}
				files = append(files, f)
				n := len(f.Handlers)
				state := "ok"
				if f.Untrusted != "" {
					state = "UNTRUSTED" // its error-level finding follows
				}
				fmt.Fprintf(w, "%s: %s (%s, %d handlers, %d rules)\n", r.Path, state, r.Kind, n, len(f.Rules))
				for _, warn := range f.Warnings {
					if warn.IsError() {
						fmt.Fprintf(w, "  error: %s\n", warn)
						findings++
						continue
					}
					fmt.Fprintf(w, "  warning: %s\n", warn)
				}
			}
			if bad > 0 {
				return exitError{code: 1, msg: fmt.Sprintf("%d invalid settings file(s)", bad)}
			}
			snap := settings.Compile(files)
			if snap.Managed.Channel != "" {
				fmt.Fprintf(w, "managed settings Claude Code uses: %s\n", snap.Managed)
			}
			for _, sk := range snap.Managed.Skipped {
				if sk.IsError() {
					fmt.Fprintf(w, "  error: %s\n", sk)
					findings++
					continue
				}
				fmt.Fprintf(w, "  warning: %s\n", sk)
			}
			if snap.RoutedBy != "" {
				fmt.Fprintf(w, "routed by hookd's managed drop-in %s; not forwarded: %s\n", snap.RoutedBy, strings.Join(snap.NotForwarded, ", "))
			}
			for _, rn := range snap.RunNowhere {
				fmt.Fprintf(w, "  warning: %s\n", rn)
			}
			fmt.Fprintf(w, "revision %s\n", shortHash(snap.Revision))
			if findings > 0 {
				// The files load and their hooks run, but something in them may change a
				// hook's safety in Claude Code and hookd does not act on it.
				return exitError{code: 1, msg: fmt.Sprintf("%d error-level finding(s): the files load and their hooks run, but hookd ignores what is named above", findings)}
			}
			return nil
		},
	}, "config", "managed-dir", "mdm-profile", "user-dir", "settings")
}
