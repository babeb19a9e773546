package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

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
		printStatus(w, st)
	}
	if fc := countFallbacks(c, st); fc.log != "" {
		fmt.Fprintf(w, "\nanswered in-process (hookc's fallback, without the daemon) since %s (%s): %d", when(fc.since), fc.sinceWhat, fc.n)
		if fc.last != nil {
			fmt.Fprintf(w, "; the last at %s: %s", when(fc.last.Time), fc.last.Fallback)
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

// table writes one section of `hookd status`: a title, a header row and rows, aligned.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, title string, header ...string) *table {
	fmt.Fprintf(w, "\n%s:\n", title)
	t := &table{tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	fmt.Fprintln(t.tw, "  "+strings.Join(cells, "\t"))
}

func (t *table) flush() { t.tw.Flush() }

func u(n uint64) string { return strconv.FormatUint(n, 10) }
func i(n int) string    { return strconv.Itoa(n) }

// clock is when(t), or "-" for a time that never was.
func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return when(t)
}

// when is how every command prints a time: UTC, RFC 3339 with milliseconds and a "Z",
// the zone of the decision log's own records (docs/configuration.md, "Conventions"), whatever the machine's zone.
func when(t time.Time) string { return t.UTC().Format(timeLayout) }

const timeLayout = "2006-01-02T15:04:05.000Z"

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func printStatus(w io.Writer, st *protocol.Status) {
	fmt.Fprintf(w, "hookd %s  pid %d  up %s  generation %d  mode %s\n", st.Version, st.PID, st.Uptime, st.Generation, st.Mode)

	t := newTable(w, "sources", "SOURCE", "STATE", "REVISION", "LOADED", "WATCH", "PATH")
	for _, s := range st.Sources {
		watch := "-"
		if s.Watch != nil {
			watch = s.Watch.Mode
		}
		t.row(s.Source, s.State, shortHash(s.Revision), clock(s.LoadedAt), watch, s.Path)
	}
	t.flush()
	for _, s := range st.Sources {
		if s.Error != "" {
			kept := "no previous version: its hooks are not loaded"
			if s.KeptRevision != "" {
				kept = "keeping last good revision " + shortHash(s.KeptRevision)
			}
			fmt.Fprintf(w, "  ERROR %s (%s)\n", s.Error, kept)
		}
		if r := s.Refused; r != nil {
			fmt.Fprintf(w, "  REFUSED %s: a ConfigChange hook in %s refused revision %s at %s: %s (keeping %s)\n",
				s.Path, r.Project, shortHash(r.Revision), clock(r.At), r.Reason, shortHash(s.Revision))
		}
		if s.Watch != nil && s.Watch.Mode == "polling" {
			fmt.Fprintf(w, "  polling %s: %s\n", s.Path, s.Watch.Detail)
		}
		for _, warn := range s.Warnings {
			if rest, ok := strings.CutPrefix(warn, "error: "); ok { // an error-level finding
				fmt.Fprintf(w, "  ERROR finding: %s\n", rest)
				continue
			}
			fmt.Fprintf(w, "  warning: %s\n", warn)
		}
	}

	if ws := st.Watcher; ws != nil {
		t := newTable(w, "watcher", "BACKEND", "DIRS", "POLLED", "DEBOUNCE", "EVENTS", "RELOADS", "OVERFLOWS", "PENDING")
		t.row(ws.Backend, i(len(ws.Dirs)), i(len(ws.Polling)), ws.Debounce, u(ws.Events), u(ws.Reloads), u(ws.Overflows), yesNo(ws.Pending))
		t.flush()
		if ws.MaxDescriptors > 0 {
			fmt.Fprintf(w, "  watch descriptors: %d of %d (kqueue: one per watched directory and per entry in it)\n", ws.Descriptors, ws.MaxDescriptors)
		}
	}
	if lr := st.LastReload; lr != nil {
		t := newTable(w, "last reload", "TRIGGER", "AT", "TOOK", "FILES READ", "CHANGED", "SWAPPED", "ERRORS", "REFUSED")
		t.row(lr.Trigger, clock(lr.At), lr.Took, i(lr.FilesRead), i(len(lr.Changed)), i(lr.Swapped), i(len(lr.Errors)), i(len(lr.Refused)))
		t.flush()
	}

	if pc := st.ProjectCache; pc != nil {
		fmt.Fprintf(w, "\nlive projects: %d of at most %d (idle timeout %s); %d evicted since start\n", pc.Live, pc.Max, pc.IdleTimeout, pc.Evicted)
	}
	t = newTable(w, "projects", "DIR", "REVISION", "GENERATION", "HANDLERS", "SWAPPED")
	for _, p := range st.Projects {
		t.row(p.Dir, shortHash(p.Revision), u(p.Generation), i(p.Handlers), clock(p.SwappedAt))
	}
	t.flush()
	for _, p := range st.Projects {
		for _, nr := range p.NotRunnable {
			fmt.Fprintf(w, "  %s: not run by hookd: %s\n", p.Dir, nr)
		}
		for _, id := range p.ClaudeCodeRuns {
			fmt.Fprintf(w, "  %s: run by Claude Code: %s (hookd runs it only for events Claude Code did not send)\n", p.Dir, id)
		}
		if p.RoutedBy != "" {
			fmt.Fprintf(w, "  %s: routed by hookd's managed drop-in %s (allowManagedHooksOnly): Claude Code runs only managed hooks and forwards the rest to hookd", p.Dir, p.RoutedBy)
			if len(p.NotForwarded) > 0 {
				fmt.Fprintf(w, "; not forwarded: %s (user, project and local hooks of these run nowhere)", strings.Join(p.NotForwarded, ", "))
			}
			fmt.Fprintln(w)
		}
		for _, rn := range p.RunNowhere {
			fmt.Fprintf(w, "  warning: %s\n", rn)
		}
		if p.ManagedSource != "" && p.ManagedSource != "none" {
			fmt.Fprintf(w, "  %s: managed settings Claude Code uses: %s\n", p.Dir, p.ManagedSource)
		}
		for _, sk := range p.ManagedSkipped {
			if rest, ok := strings.CutPrefix(sk, "error: "); ok {
				fmt.Fprintf(w, "  ERROR finding: %s\n", rest)
				continue
			}
			fmt.Fprintf(w, "  warning: %s\n", sk)
		}
	}

	c := st.Counters
	t = newTable(w, "counters", "EVENTS", "ERRORS", "HOOKS RUN", "HOOK ERRORS", "TIMEOUTS", "RULE OVERRIDES", "AUDIT FAILURES")
	t.row(u(c.Events), u(c.Errors), u(c.HooksRun), u(c.HookErrors), u(c.Timeouts), u(c.RuleOverrides), u(c.AuditFailures))
	t.flush()
	if len(st.PerEvent) > 0 {
		names := make([]string, 0, len(st.PerEvent))
		for n := range st.PerEvent {
			names = append(names, n)
		}
		sort.Strings(names)
		t := newTable(w, "events", "EVENT", "ANSWERED")
		for _, n := range names {
			t.row(n, u(st.PerEvent[n]))
		}
		t.flush()
	}

	if p := st.Prewarm; p != nil {
		t := newTable(w, "prewarm", "HITS", "MISSES", "FALLBACKS", "SPAWNED", "SPAWN ERRORS", "DISCARDED", "DIED WAITING", "REAPED IDLE", "EVICTED")
		t.row(u(p.Hits), u(p.Misses), u(p.Fallbacks), u(p.Spawned), u(p.SpawnErrors), u(p.Discarded), u(p.DiedWaiting), u(p.ReapedIdle), u(p.Evicted))
		t.flush()
		t = newTable(w, "prewarm pool", "IDLE", "STARTING", "KEYS", "PER KEY", "TOTAL", "IDLE TIMEOUT")
		t.row(i(p.Idle), i(p.Starting), i(p.Keys), i(p.PerKey), i(p.Total), p.IdleTimeout)
		t.flush()
	}
	if wk := st.Workers; wk != nil {
		t := newTable(w, "workers", "RUNNING", "STARTED", "EVENTS", "CRASHES", "TIMEOUTS", "PROTOCOL ERRORS")
		t.row(i(wk.Workers), u(wk.Started), u(wk.Events), u(wk.Crashes), u(wk.Timeouts), u(wk.ProtocolErrors))
		t.flush()
	}
	if z := st.Zygote; z != nil && z.Enabled {
		t := newTable(w, "python zygote", "FORKED", "RAN COLD", "READY", "STARTED", "DIED", "LOST", "DECLINED", "LAST DECLINED")
		t.row(u(z.Forked), u(z.RanCold), i(z.Zygotes), u(z.Started), u(z.Died), u(z.Lost), u(z.Fallbacks), z.LastFallback)
		t.flush()
	}
	if h := st.HTTP; h != nil {
		if h.Error != "" {
			fmt.Fprintf(w, "\nhttp forwarder: NOT SERVED: %s\n", h.Error)
		} else {
			fmt.Fprintf(w, "\nhttp forwarder: http://%s (docs/http-forwarder.md)\n", h.Listen)
		}
	}
	printAuditStatus(w, st.Audit)
}

// printAuditStatus prints the decision log's state; a failure is shown loudly, since
// events that can block are failing closed while it lasts.
func printAuditStatus(w io.Writer, a *protocol.AuditStatus) {
	if a == nil {
		fmt.Fprintln(w, "\naudit: off")
		return
	}
	state := "ok"
	if !a.Healthy {
		state = "FAILING (events that can block are denied)"
	}
	fmt.Fprintf(w, "\naudit: %s\n", state)
	t := &table{tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)}
	t.row("PATH", "FSYNC", "LAST SEQ", "WRITTEN", "BATCHES", "REPAIRS", "ROTATIONS", "FAILURES")
	t.row(a.Path, a.Fsync, u(a.Seq), u(a.Records), u(a.Batches), u(a.Repairs), u(a.Rotations), u(a.Failures))
	t.flush()
	if a.LastError != "" {
		at := ""
		if a.LastErrorAt != nil {
			at = " at " + when(*a.LastErrorAt)
		}
		fmt.Fprintf(w, "  last error%s: %s\n", at, a.LastError)
	}
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}
