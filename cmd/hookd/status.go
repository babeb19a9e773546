package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/protocol"
)

func statusCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "status",
		Usage: "show the running daemon's sources, revisions, errors and counters",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the status as JSON (protocol.Status)"}},
		Action: func(c *cli.Context) error {
			var st protocol.Status
			return answer(c, protocol.OpStatus, "status", &st, func(w io.Writer) { printStatus(w, &st) })
		},
	}, "socket")
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
