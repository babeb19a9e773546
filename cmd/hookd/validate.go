package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/cmd/hookd/internal/show"
	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/configs/settings/cmdcheck"
)

func validateCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:      "validate",
		Usage:     "check settings files with the daemon's own loader, and lint them",
		ArgsUsage: "[FILE...]",
		Description: `With FILE arguments, checks those files. Without, checks the whole hierarchy the daemon
would read for the project around the current directory (managed, user, project, local,
--settings), the installation of each of its Claude Code files, and hookd's own
configuration's "hooks" entries against the hooks found.

Prints file:line:col: field messages for invalid files, then each finding: "error" for what
leaves a guard that never fires — an unknown event, a tool name no tool has in a rule, an
` + "`if`" + ` or a matcher (with the name meant: "did you mean Bash?"), a hook whose program or
script does not exist (a bare name is looked up on this shell's PATH, which is what Claude
Code started from here gives its hooks), a hookd.json gone from under its forwarders, a
"hooks[].match" that matches no hook — and "warning" for what may be fine (a tool of a newer
Claude Code). Exits 1 on an invalid file or an error-level finding; with --strict, also on a
warning.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "project", Usage: "project `DIR` (default: derived from the current directory)"},
			&cli.BoolFlag{Name: "strict", Usage: "exit 1 on warnings too", EnvVars: []string{"HOOKD_VALIDATE_STRICT"}},
		},
		Action: validateAction,
	}, "config", "managed-dir", "mdm-profile", "user-dir", "settings", "state-dir")
}

func validateAction(c *cli.Context) error {
	cfg, cfgPath, err := loadConfig(c)
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
	bad, errs, warns := 0, 0, 0
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
	}
	// The findings only validate can make: programs looked up on this shell's PATH.
	onPath := lintOnPath(files, os.Getenv("PATH"))
	for _, f := range files {
		state := "ok"
		if f.Untrusted != "" {
			state = "UNTRUSTED" // its error-level finding follows
		}
		fmt.Fprintf(w, "%s: %s (%s, %d handlers, %d rules)\n", f.Ref.Path, state, f.Ref.Kind, len(f.Handlers), len(f.Rules))
		for _, warn := range f.Warnings {
			if warn.IsError() {
				fmt.Fprintf(w, "  error: %s\n", warn)
				errs++
				continue
			}
			fmt.Fprintf(w, "  warning: %s\n", warn)
			warns++
		}
		for _, warn := range onPath {
			if warn.File == f.Ref.Path {
				fmt.Fprintf(w, "  error: %s\n", warn)
				errs++
			}
		}
		if k := f.Ref.Kind; k == settings.KindUser || k == settings.KindProject || k == settings.KindLocal {
			for _, fi := range install.Check(f.Ref.Path, k, backupDir(c)) {
				fmt.Fprintf(w, "  error: %s\n", fi)
				errs++
			}
		}
	}
	if bad > 0 {
		return exitError{code: 1, msg: fmt.Sprintf("%d invalid settings file(s)", bad)}
	}
	var handlers []*settings.Handler
	for _, f := range files {
		handlers = append(handlers, f.Handlers...)
	}
	if c.NArg() == 0 {
		if unmatched := cfg.UnmatchedOverrides(handlers); len(unmatched) > 0 {
			fmt.Fprintf(w, "%s:\n", cfgPath)
			for _, m := range unmatched {
				fmt.Fprintf(w, "  error: %s\n", m)
				errs++
			}
		}
	}
	snap := settings.Compile(files)
	if snap.Managed.Channel != "" {
		fmt.Fprintf(w, "managed settings Claude Code uses: %s\n", snap.Managed)
	}
	if cache := settings.ServerManagedCache(src.UserDir); cache != "" {
		fmt.Fprintf(w, "  warning: %s\n", settings.ServerManagedNote(cache))
		warns++
	}
	for _, sk := range snap.Managed.Skipped {
		if sk.IsError() {
			fmt.Fprintf(w, "  error: %s\n", sk)
			errs++
			continue
		}
		fmt.Fprintf(w, "  warning: %s\n", sk)
		warns++
	}
	if snap.RoutedBy != "" {
		fmt.Fprintf(w, "routed by hookd's managed drop-in %s; not forwarded: %s\n", snap.RoutedBy, strings.Join(snap.NotForwarded, ", "))
	}
	for _, rn := range snap.RunNowhere {
		fmt.Fprintf(w, "  warning: %s\n", rn)
		warns++
	}
	fmt.Fprintf(w, "revision %s\n", show.ShortHash(snap.Revision))
	switch {
	case errs > 0:
		// The files load and their hooks run, but something in them leaves a guard that
		// never fires, or may change a hook's safety in a way hookd does not act on.
		return exitError{code: 1, msg: fmt.Sprintf("%d error-level finding(s): the files load, but what is named above does not do what it says", errs)}
	case warns > 0 && c.Bool("strict"):
		return exitError{code: 1, msg: fmt.Sprintf("%d warning(s) (--strict)", warns)}
	}
	return nil
}

// lintOnPath is the part of the settings linter only `hookd validate` runs: each command
// handler of files (and each forwarder) whose program is a bare name not found on path —
// the PATH of the shell validate runs in, which is what Claude Code, started from it,
// gives its hooks. The loader cannot know that PATH (hooks run with the session's
// environment), so status and the load log do not report these.
func lintOnPath(files []*settings.File, path string) []settings.Warning {
	var out []settings.Warning
	for _, f := range files {
		if f.Settings == nil { // a harness's own file: its hooks are not Claude Code's to find on PATH
			continue
		}
		project := settings.LintProject(f.Ref)
		for _, eh := range f.Settings.Hooks {
			for gi, g := range eh.Groups {
				for hi, hs := range g.Hooks {
					if hs.Type != "command" {
						continue
					}
					words, ok := []string{hs.Command}, true
					if hs.Args == nil {
						words, ok = cmdcheck.FirstWords(hs.Command, project)
					}
					if !ok || len(words) == 0 || strings.Contains(words[0], "/") {
						continue // paths are the loader's findings
					}
					if msg := cmdcheck.Missing(hs.Command, hs.Args, project, path); msg != "" && !slices.ContainsFunc(f.Warnings, func(w settings.Warning) bool { return strings.Contains(w.Message, msg) }) {
						out = append(out, settings.Warning{File: f.Ref.Path, Field: fmt.Sprintf("hooks.%s[%d].hooks[%d].command", eh.Event, gi, hi),
							Message: msg + ": the hook can never run (Claude Code reports exit 127, a non-blocking error: the guard is off)", Level: settings.LevelError})
					}
				}
			}
		}
	}
	return out
}
