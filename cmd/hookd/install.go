package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon"
)

func installCommand() *cli.Command {
	return &cli.Command{
		Name:  "install",
		Usage: "route a harness's hooks through hookd",
		Subcommands: append([]*cli.Command{usesGlobals(&cli.Command{
			Name:  "claude-code",
			Usage: "move the command/http hooks of a Claude Code settings file into hookd and forward every event",
			Description: `Moves the command and http hooks of the chosen Claude Code settings file into hookd's own
file beside it (~/.claude/hookd.json, <project>/.claude/hookd.json, or
<project>/.claude/hookd.local.json for the local file), which Claude Code does not read, and
puts one forwarding hook per event running hookc in their place. prompt, agent and mcp_tool
hooks, permission rules and every other key stay in Claude Code's file untouched; hookd
reads the moved hooks with their original source (status and audit still say "project" etc.).

Idempotent: run it again after adding hooks to Claude Code's file to move those too. The
Claude Code file is backed up first, into hookd's state directory (<state-dir>/install-backups,
the newest --keep-backups per file), so nothing new appears beside it. A settings file that is
a symbolic link (a dotfiles manager's) is written through: the link stays a link. --dry-run
prints the diff and writes nothing. See docs/claude-code.md.

Inside a project, the default scope (user) leaves the project's own hooks to Claude Code;
install says which of its files have hooks. --scope all installs every scope that has
hooks: user, and the project's settings.json and settings.local.json.

--scope managed writes one drop-in, <managed-dir>/managed-settings.d/` + install.DropInName + `
(default managed dir: where Claude Code looks — /etc/claude-code on Linux,
/Library/Application Support/ClaudeCode on macOS), holding
allowManagedHooksOnly and a hookc forwarder for every event; no other file is touched.
Claude Code then runs only managed hooks, and hookd runs the user, project and local hooks
from their own files. The drop-in is a plain file an MDM can deliver. See docs/fleet.md.`,
			Flags: append(append(scopeFlags(),
				&cli.StringFlag{Name: "hookc", Usage: "forwarder `PATH` written into the hook (default: the hookc next to this hookd)"},
				&cli.StringFlag{Name: "transport", Value: TransportAuto, Usage: "how Claude Code reaches hookd: hookc (command hooks over the Unix socket), http (Claude Code's http hooks post the frequent events to hookd on 127.0.0.1, the rest stay on hookc; user and local scopes; see docs/http-forwarder.md), or auto: http when hookd runs as the socket-activated service holding the http port (user and local scopes), else hookc"},
				&cli.IntFlag{Name: "http-port", Usage: "with --transport http: the loopback `PORT` hookd serves http on (default: the one already chosen, else 21000 + uid mod 10000)"},
			), formFlags()...),
			Action: claudeCodeAction(false),
		}, "managed-dir", "user-dir", "state-dir")}, harnessInstallCommands(false)...),
	}
}

func uninstallCommand() *cli.Command {
	return &cli.Command{
		Name:  "uninstall",
		Usage: "give a harness its hooks back",
		Subcommands: append([]*cli.Command{usesGlobals(&cli.Command{
			Name:  "claude-code",
			Usage: "restore the hooks `hookd install claude-code` moved, and remove the forwarders",
			Description: `Puts the original "hooks" of the Claude Code settings file back (equal as JSON; byte for
byte when the file was not edited since the install) and removes hookd's file. If hooks
were edited since (in either file), puts back the hooks as they are now: Claude Code's
file first, then hookd's. Both files are backed up first (into hookd's state directory); a
settings file or .claude/ directory the install created is removed again.

If hookd's file is gone (forwarders present, moved hooks missing: ` + "`hookd status`" + ` warns), the
hooks come back from the newest backup without forwarders, which is named: byte for byte
when the file was not edited since the install. --scope all uninstalls every scope
installed.

--scope managed removes hookd's drop-in (only if it still holds nothing but forwarders).`,
			Flags:  scopeFlags(),
			Action: claudeCodeAction(true),
		}, "managed-dir", "user-dir", "state-dir")}, harnessInstallCommands(true)...),
	}
}

func scopeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "scope", Value: "user", Usage: "which Claude Code settings file: user (~/.claude/settings.json), project (<project>/.claude/settings.json), local (<project>/.claude/settings.local.json), all (each of those three that has hooks), or managed (a drop-in <managed-dir>/managed-settings.d/" + install.DropInName + "; no other file is touched)"},
		&cli.StringFlag{Name: "project", Usage: "project `DIR` for --scope project|local|all (default: derived from the current directory)"},
		&cli.BoolFlag{Name: "dry-run", Usage: "print the diff, write nothing"},
		&cli.IntFlag{Name: "keep-backups", Value: install.DefaultKeepBackups, Usage: "how many backups per settings file to keep in <state-dir>/install-backups (the one an installation names is always kept)"},
	}
}

// projectFlag is --project, or else the project the current directory belongs to.
func projectFlag(c *cli.Context, home string) (string, error) {
	if p := c.String("project"); p != "" {
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return settings.ProjectDirFor(wd, home), nil
}

func installOptions(c *cli.Context, scope string) (install.Options, error) {
	o := install.Options{Scope: settings.Kind(scope), HookdVersion: daemon.Version, BackupDir: backupDir(c), KeepBackups: c.Int("keep-backups"),
		StartsWarm: daemon.StartsWarm}
	home, _ := os.UserHomeDir()
	switch o.Scope {
	case settings.KindManaged:
		o.Settings = filepath.Join(c.String("managed-dir"), "managed-settings.d", install.DropInName)
	case settings.KindUser:
		o.Settings = filepath.Join(c.String("user-dir"), "settings.json")
	case settings.KindProject, settings.KindLocal:
		project, err := projectFlag(c, home)
		if err != nil {
			return o, err
		}
		abs, err := filepath.Abs(project)
		if err != nil {
			return o, err
		}
		name := "settings.json"
		if o.Scope == settings.KindLocal {
			name = "settings.local.json"
		}
		o.Settings = filepath.Join(abs, ".claude", name)
	default:
		return o, fmt.Errorf("--scope %q: one of user, project, local, all, managed", o.Scope)
	}
	if abs, err := filepath.Abs(o.Settings); err == nil {
		o.Settings = abs
	}
	return o, nil
}

// backupDir is where install and uninstall keep backups: hookd's state directory, so that
// nothing new appears beside a settings file (in a repository: in `git status`).
func backupDir(c *cli.Context) string {
	return filepath.Join(c.String("state-dir"), "install-backups")
}

// report prints the plan (and its diff with --dry-run) and applies it unless dry.
// planned is the Action of every install and uninstall command: the options from the
// flags, the plan, then its report (or, with --dry-run, its diff).
func planned[O any](options func(*cli.Context) (O, error), plan func(O) (*install.Plan, error)) cli.ActionFunc {
	return func(c *cli.Context) error {
		o, err := options(c)
		if err != nil {
			return err
		}
		p, err := plan(o)
		if err != nil {
			return err
		}
		return report(c, p)
	}
}

func report(c *cli.Context, p *install.Plan) error {
	w := c.App.Writer
	dry := c.Bool("dry-run")
	if dry && p.Changed() {
		fmt.Fprint(w, p.Diff())
	}
	for _, line := range p.Summary {
		if dry {
			line = "would: " + line
		}
		fmt.Fprintln(w, line)
	}
	local := p.HookdAfter != nil && filepath.Base(p.Hookd) == settings.HookdLocalFile && install.InGitWorkTree(filepath.Dir(p.Hookd))
	if dry {
		if local {
			fmt.Fprintf(w, "would: make sure git ignores %s everywhere (%q in git's global excludes file), as Claude Code does for settings.local.json\n", settings.HookdLocalFile, install.GitIgnoreLine)
		}
		return nil
	}
	if err := p.Apply(); err != nil {
		return err
	}
	if local {
		// A local file of hookd's in a repository must never be offered for a commit.
		switch file, added, err := install.EnsureGitIgnored(); {
		case err != nil:
			fmt.Fprintf(c.App.ErrWriter, "warning: could not add %q to git's global excludes file (%v): add it yourself, or `git status` will offer %s for a commit\n", install.GitIgnoreLine, err, p.Hookd)
		case added:
			fmt.Fprintf(w, "added %q to %s (git's global excludes file), as Claude Code does for settings.local.json\n", install.GitIgnoreLine, file)
		}
	}
	return nil
}

// defaultHookc is the hookc next to the running hookd.
func defaultHookc() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot locate hookd to find hookc beside it (%v); pass --hookc PATH", err)
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	p := filepath.Join(filepath.Dir(self), "hookc")
	fi, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) || err == nil && fi.IsDir() {
		return "", fmt.Errorf("no hookc next to hookd (%s); pass --hookc PATH", p)
	}
	if err != nil {
		return "", err
	}
	if fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not executable; pass --hookc PATH", p)
	}
	return p, nil
}

// shellQuote quotes a path for the sh -c command line Claude Code runs, only when needed.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// forwarderFlag is the --hookc flag as it goes into a harness's hook command: the hookc
// next to this hookd by default, an absolute path for a relative one (a relative path
// would depend on the directory the harness runs in), shell-quoted.
func forwarderFlag(c *cli.Context) (string, error) {
	fwd, err := forwarderPath(c)
	if err != nil {
		return "", err
	}
	return shellQuote(fwd), nil
}

// forwarderPath is the --hookc flag unquoted: the exec form's "command".
func forwarderPath(c *cli.Context) (string, error) {
	fwd := c.String("hookc")
	var err error
	if fwd == "" {
		fwd, err = defaultHookc()
	} else if strings.Contains(fwd, "/") {
		fwd, err = filepath.Abs(fwd)
	}
	return fwd, err
}

// transportFlag is the endpoint of --transport http (nil for hookc): the one in hookd's
// state directory, created there (0600, a new token) unless --dry-run, which writes
// nothing and shows a token that is not kept.
func transportFlag(c *cli.Context, scope settings.Kind) (*install.HTTPEndpoint, error) {
	transport := c.String("transport")
	if transport == TransportAuto {
		var why string
		if transport, why = autoTransport(c, scope); why != "" {
			fmt.Fprintln(c.App.Writer, why)
		}
	}
	switch transport {
	case install.TransportHookc, "":
		if c.IsSet("http-port") {
			return nil, errors.New("--http-port needs --transport http")
		}
		return nil, nil
	case install.TransportHTTP:
	default:
		return nil, fmt.Errorf("--transport %q: auto, hookc or http", c.String("transport"))
	}
	port := c.Int("http-port")
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("--http-port %d: not a port", port)
	}
	state := c.String("state-dir")
	if c.Bool("dry-run") {
		ep, err := install.LoadHTTPEndpoint(state)
		if err != nil || ep != nil {
			return ep, err
		}
		if port == 0 {
			port = install.DefaultHTTPPort()
		}
		return &install.HTTPEndpoint{Listen: fmt.Sprintf("127.0.0.1:%d", port), Token: strings.Repeat("0", 64) + "-dry-run"}, nil
	}
	return install.EnsureHTTPEndpoint(state, port)
}

// claudeCodeAction is `install claude-code` (or, uninstall, `uninstall claude-code`): one
// plan per scope named by --scope ("all": user, project and local, each that has hooks to
// move or an installation to remove), reported in order; then, after an install of one
// scope, which other scopes still have hooks Claude Code runs itself.
func claudeCodeAction(uninstall bool) cli.ActionFunc {
	return func(c *cli.Context) error {
		scopes := []string{c.String("scope")}
		if scopes[0] == "all" {
			var err error
			if scopes, err = allScopes(c, uninstall); err != nil {
				return err
			}
		}
		// Every plan first: a scope that cannot be planned stops the command before
		// anything is written.
		plans := make([]*install.Plan, len(scopes))
		var form formChoice
		if !uninstall {
			var err error
			if form, err = forwarderForm(c); err != nil {
				return err
			}
		}
		for n, scope := range scopes {
			o, err := installOptions(c, scope)
			if err == nil && !uninstall && o.Scope == settings.KindManaged {
				err = trustedManagedDir(o.Settings, c.String("managed-dir"))
			}
			if err == nil && !uninstall {
				o.Form = form.form
				if form.form == install.FormExec {
					o.Forwarder, err = forwarderPath(c)
				} else {
					o.Forwarder, err = forwarderFlag(c)
				}
				if err == nil {
					o.HTTP, err = transportFlag(c, o.Scope)
				}
			}
			if err != nil {
				return err
			}
			plan := install.PlanInstall
			if uninstall {
				plan = install.PlanUninstall
			}
			if plans[n], err = plan(o); err != nil {
				return err
			}
		}
		if form.note != "" && slices.ContainsFunc(plans, (*install.Plan).Changed) {
			fmt.Fprintln(c.App.Writer, form.note)
		}
		for n, p := range plans {
			if len(scopes) > 1 {
				if n > 0 {
					fmt.Fprintln(c.App.Writer)
				}
				fmt.Fprintf(c.App.Writer, "%s scope:\n", scopes[n])
			}
			if err := report(c, p); err != nil {
				return err
			}
		}
		if !uninstall && len(scopes) == 1 && c.String("scope") != "managed" {
			otherScopes(c, scopes[0])
		}
		if !uninstall && c.String("scope") == "managed" {
			takenOver(c)
		}
		return nil
	}
}

// takenOver lists, after the managed drop-in is in place, the plugin, subagent and skill
// hooks Claude Code now blocks (allowManagedHooksOnly) and hookd runs instead — of the
// user, and of the project the command runs in (each project's in `hookd status`).
func takenOver(c *cli.Context) {
	cfg, _, err := loadConfig(c)
	if err != nil {
		return
	}
	src := sources(c, cfg)
	wd, _ := os.Getwd()
	src.ProjectDir = settings.ProjectDirFor(wd, src.Home)
	var files []*settings.File
	for _, r := range src.Files() {
		if f, err := src.Load(r); err == nil {
			files = append(files, f)
		}
	}
	snap := settings.Compile(files)
	var lines []string
	for _, h := range snap.Handlers() {
		if (h.Plugin != nil || h.Frontmatter != nil) && snap.Reason(h) == "" && !snap.ClaudeCodeRuns(h) {
			what := h.Event.Name
			if h.MatcherText != "" {
				what += " (" + h.MatcherText + ")"
			}
			lines = append(lines, fmt.Sprintf("  %s: %s %s", h.Ref().Source+versionOf(h), what, h.CommandLine()))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(c.App.Writer, "hookd now runs %s that Claude Code blocks under the drop-in (plugins not force-enabled in managed settings, subagents, skills):\n%s\n",
		plural(len(lines), "hook", "hooks"), strings.Join(lines, "\n"))
}

func versionOf(h *settings.Handler) string {
	if h.Plugin != nil && h.Plugin.Version != "" {
		return " " + h.Plugin.Version
	}
	return ""
}

// claudeScopes are the scopes of Claude Code's own settings files, in precedence order.
var claudeScopes = []string{"user", "project", "local"}

// allScopes are the scopes --scope all acts on: those whose file has hooks install would
// move, or an installation (a hookd file, or forwarders) to keep up to date or remove.
// The project's scopes only when there is a project (its .claude/ exists).
func allScopes(c *cli.Context, uninstall bool) ([]string, error) {
	var out []string
	for _, scope := range claudeScopes {
		o, err := installOptions(c, scope)
		if err != nil {
			return nil, err
		}
		installed := fileExists(settings.HookdPathFor(o.Settings, o.Scope)) || len(install.Check(o.Settings, o.Scope, o.BackupDir)) > 0
		n, _ := install.MovableHooks(o.Settings)
		if installed || !uninstall && (n > 0 || scope == "user") {
			out = append(out, scope)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--scope all: no scope is installed")
	}
	return out, nil
}

// otherScopes notes, after installing scope, each other scope of the current project
// (or the user scope) whose Claude Code file still has hooks Claude Code runs itself.
func otherScopes(c *cli.Context, done string) {
	for _, scope := range claudeScopes {
		if scope == done {
			continue
		}
		o, err := installOptions(c, scope)
		if err != nil {
			continue
		}
		if fileExists(settings.HookdPathFor(o.Settings, o.Scope)) {
			continue // installed already: install moves hooks added there when run for it
		}
		if n, evs := install.MovableHooks(o.Settings); n > 0 {
			fmt.Fprintf(c.App.Writer, "note: %s has %s (%s) that Claude Code still runs itself; move them too with `hookd install claude-code --scope %s`, or every scope with `--scope all`\n",
				o.Settings, plural(n, "command/http hook", "command/http hooks"), strings.Join(evs, ", "), scope)
		}
	}
}

// trustedManagedDir refuses to install hookd's drop-in where the trust check of managed
// files (settings.CheckManaged) would refuse it: Claude Code would read a drop-in there
// that another account could have written or could replace, and hookd would not run it.
func trustedManagedDir(dropIn, managedDir string) error {
	if err := settings.CheckManaged(dropIn, managedDir); err != nil {
		return fmt.Errorf("refusing to install into %s: %w (make every directory up to it owned by root and not writable by group or others, e.g. chown root and chmod go-w, then install again)", filepath.Dir(dropIn), err)
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
