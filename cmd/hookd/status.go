package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/cmd/hookd/internal/show"
	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/protocol"
)

func statusCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "status",
		Usage: "show the running daemon's sources, revisions, errors and counters",
		Description: `Prints the daemon's state (protocol.Status), then checks what the daemon cannot see:
the installation of each Claude Code settings file of the user and of the projects hookd
knows ("forwarders present, moved hooks missing" when hookd.json is gone), and counts
from the decision log the events hookc answered in-process (its fallback, without the
daemon) since the daemon started — or, with no daemon, since its last answer.

Exits 1 while a settings file is invalid, refused or (managed) untrusted, an installation is broken, or the
daemon cannot be reached (the installation is still checked). --check prints only the
problems, one per line, and exits 1 on any of those and also on an error-level finding in
a settings file or a failing decision log: for monitoring.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the status as JSON (protocol.Status)"},
			&cli.BoolFlag{Name: "check", Usage: "print only the problems, one per line; exit 1 if there are any (for monitoring)"},
		},
		Action: statusAction,
	}, "socket", "config", "user-dir", "state-dir")
}

func statusAction(c *cli.Context) error {
	var st *protocol.Status
	data, daemonErr := call(c, protocol.OpStatus)
	if daemonErr == nil {
		st = &protocol.Status{}
		if err := json.Unmarshal(data, st); err != nil {
			return fmt.Errorf("decoding status: %w", err)
		}
	}
	w := c.App.Writer
	if c.Bool("json") {
		if daemonErr != nil {
			return daemonErr
		}
		var b bytes.Buffer
		if err := json.Indent(&b, data, "", "  "); err != nil {
			return err
		}
		fmt.Fprintln(w, b.String())
		return nil
	}
	installs := installFindings(c, st)
	p := statusProblems(st, installs)
	if c.Bool("check") {
		if daemonErr != nil {
			fmt.Fprintf(w, "daemon: %v\n", daemonErr)
		}
		for _, line := range append(p.failing, p.findings...) {
			fmt.Fprintln(w, line)
		}
		if n := len(p.failing) + len(p.findings); n > 0 || daemonErr != nil {
			return exitError{code: 1, msg: fmt.Sprintf("%d problem(s)", n+boolInt(daemonErr != nil))}
		}
		fmt.Fprintln(w, "ok")
		return nil
	}
	if st != nil {
		show.Status(w, st)
		if cache := settings.ServerManagedCache(c.String("user-dir")); cache != "" {
			fmt.Fprintf(w, "warning: %s\n", settings.ServerManagedNote(cache))
		}
	}
	if fc := countFallbacks(c, st); fc.log != "" {
		fmt.Fprintf(w, "\nanswered in-process (hookc's fallback, without the daemon) since %s (%s): %d", show.When(fc.since), fc.sinceWhat, fc.n)
		if fc.last != nil {
			fmt.Fprintf(w, "; the last at %s: %s", show.When(fc.last.Time), fc.last.Fallback)
		}
		fmt.Fprintln(w)
	}
	if len(installs) > 0 {
		fmt.Fprintf(w, "\ninstallation:\n")
		for _, f := range installs {
			fmt.Fprintf(w, "  WARNING %s\n", f)
		}
	}
	switch {
	case daemonErr != nil:
		return daemonErr
	case len(p.failing) > 0:
		return exitError{code: 1, msg: strings.Join(p.failing, "; ")}
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// problems are what `hookd status` exits 1 for (failing) and what only --check does
// (findings).
type problems struct {
	failing, findings []string
}

// statusProblems sorts the status's problems: invalid or refused settings files and
// broken installations fail `status`; error-level findings and a failing decision log
// fail `status --check`. st may be nil (no daemon).
func statusProblems(st *protocol.Status, installs []install.Finding) problems {
	var p problems
	for _, f := range installs {
		p.failing = append(p.failing, f.String())
	}
	if st == nil {
		return p
	}
	for _, s := range st.Sources {
		switch {
		case s.Error != "":
			p.failing = append(p.failing, fmt.Sprintf("invalid settings file %s", s.Error))
		case s.Refused != nil:
			p.failing = append(p.failing, fmt.Sprintf("settings file %s: change refused by a ConfigChange hook: %s", s.Path, s.Refused.Reason))
		case s.State == "untrusted":
			p.failing = append(p.failing, fmt.Sprintf("managed settings file %s is untrusted: hookd runs none of its hooks (see its finding)", s.Path))
		}
		for _, warn := range s.Warnings {
			if rest, ok := strings.CutPrefix(warn, "error: "); ok {
				p.findings = append(p.findings, "error-level finding: "+rest)
			}
		}
	}
	seen := map[string]bool{}
	for _, pr := range st.Projects {
		for _, sk := range pr.ManagedSkipped {
			if rest, ok := strings.CutPrefix(sk, "error: "); ok && !seen[rest] {
				seen[rest] = true
				p.findings = append(p.findings, "error-level finding: "+rest)
			}
		}
	}
	if a := st.Audit; a != nil && !a.Healthy {
		p.findings = append(p.findings, "decision log failing: "+a.LastError)
	}
	return p
}

// fallbacks is how many decisions were answered in-process since a point in time.
type fallbacks struct {
	log       string // the decision log read; "" when there is none
	since     time.Time
	sinceWhat string
	n         int
	last      *audit.Record
}

// countFallbacks counts the decisions hookc's fallback answered in-process, from the
// decision log — the one place that knows: the fallback has no daemon to count them, and
// each `hookd run` records its decision there with the reason (audit.Record.Fallback).
// With a daemon running it counts since the daemon started; without one, since the last
// decision a daemon made (else since the log's first record). It reads the current log
// file and the rotated one before it.
func countFallbacks(c *cli.Context, st *protocol.Status) fallbacks {
	var path string
	if st != nil && st.Audit != nil {
		path = st.Audit.Path
	} else if p, err := auditPath(c); err == nil {
		path = p
	}
	files, _ := audit.Files(path)
	if len(files) == 0 {
		return fallbacks{}
	}
	files = files[max(0, len(files)-2):]
	fc := fallbacks{log: path}
	if st != nil {
		fc.since, fc.sinceWhat = st.StartedAt, "the daemon's start"
	}
	_ = audit.Scan(files, func(r *audit.Record, _ []byte) error {
		if r.Kind != audit.KindDecision {
			return nil
		}
		if fc.since.IsZero() {
			fc.since, fc.sinceWhat = r.Time, "the first record read"
		}
		switch {
		case r.Fallback != "":
			if !r.Time.Before(fc.since) {
				fc.n++
				fc.last = r
			}
		case st == nil && (r.Caller == nil || r.Caller.Client != "hookd run"):
			// A daemon answered: count from here.
			fc.since, fc.sinceWhat, fc.n, fc.last = r.Time, "the daemon's last answer", 0, nil
		}
		return nil
	})
	return fc
}

// installFindings checks the installation of the user's Claude Code settings file and
// of each project's (the current directory's, and those the daemon has loaded).
func installFindings(c *cli.Context, st *protocol.Status) []install.Finding {
	home, _ := os.UserHomeDir()
	dirs := []string{}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, settings.ProjectDirFor(wd, home))
	}
	if st != nil {
		for _, p := range st.Projects {
			dirs = append(dirs, p.Dir)
		}
	}
	type file struct {
		path  string
		scope settings.Kind
	}
	files := []file{{filepath.Join(c.String("user-dir"), "settings.json"), settings.KindUser}}
	seen := map[string]bool{}
	for _, d := range dirs {
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		files = append(files, file{filepath.Join(d, ".claude", "settings.json"), settings.KindProject},
			file{filepath.Join(d, ".claude", "settings.local.json"), settings.KindLocal})
	}
	var out []install.Finding
	for _, f := range files {
		out = append(out, install.Check(f.path, f.scope, backupDir(c))...)
	}
	return out
}

// answer asks the daemon for op and decodes the answer into v (so a malformed answer is
// an error in either form). With --json it prints the answer as received, indented —
// fields a newer daemon added are kept; otherwise print renders v.
func answer(c *cli.Context, op, what string, v any, print func(io.Writer)) error {
	data, err := call(c, op)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decoding %s: %w", what, err)
	}
	if c.Bool("json") {
		var b bytes.Buffer
		if err := json.Indent(&b, data, "", "  "); err != nil {
			return err
		}
		fmt.Fprintln(c.App.Writer, b.String())
		return nil
	}
	print(c.App.Writer)
	return nil
}
