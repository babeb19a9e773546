package show

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/hookd/hookd/protocol"
)

// Status writes `hookd status`: the daemon's sources, watcher, projects, counters, pools
// and decision log, each a table or a line of text.
func Status(w io.Writer, st *protocol.Status) {
	fmt.Fprintf(w, "hookd %s  pid %d  up %s  generation %d  mode %s\n", st.Version, st.PID, st.Uptime, st.Generation, st.Mode)
	clients(w, st)

	t := NewTable(w, "sources", "SOURCE", "STATE", "REVISION", "LOADED", "WATCH", "PATH")
	for _, s := range st.Sources {
		watch := "-"
		if s.Watch != nil {
			watch = s.Watch.Mode
		}
		t.Row(s.Source, s.State, ShortHash(s.Revision), clock(s.LoadedAt), watch, s.Path)
	}
	t.Flush()
	for _, s := range st.Sources {
		if s.Error != "" {
			kept := "no previous version: its hooks are not loaded"
			if s.KeptRevision != "" {
				kept = "keeping last good revision " + ShortHash(s.KeptRevision)
			}
			fmt.Fprintf(w, "  ERROR %s (%s)\n", s.Error, kept)
		}
		if r := s.Refused; r != nil {
			fmt.Fprintf(w, "  REFUSED %s: a ConfigChange hook in %s refused revision %s at %s: %s (keeping %s)\n",
				s.Path, r.Project, ShortHash(r.Revision), clock(r.At), r.Reason, ShortHash(s.Revision))
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
		t := NewTable(w, "watcher", "BACKEND", "DIRS", "POLLED", "DEBOUNCE", "EVENTS", "RELOADS", "OVERFLOWS", "PENDING")
		t.Row(ws.Backend, i(len(ws.Dirs)), i(len(ws.Polling)), ws.Debounce, u(ws.Events), u(ws.Reloads), u(ws.Overflows), yesNo(ws.Pending))
		t.Flush()
		if ws.MaxDescriptors > 0 {
			fmt.Fprintf(w, "  watch descriptors: %d of %d (kqueue: one per watched directory and per entry in it)\n", ws.Descriptors, ws.MaxDescriptors)
		}
	}
	if lr := st.LastReload; lr != nil {
		t := NewTable(w, "last reload", "TRIGGER", "AT", "TOOK", "FILES READ", "CHANGED", "SWAPPED", "ERRORS", "REFUSED")
		t.Row(lr.Trigger, clock(lr.At), lr.Took, i(lr.FilesRead), i(len(lr.Changed)), i(lr.Swapped), i(len(lr.Errors)), i(len(lr.Refused)))
		t.Flush()
	}

	if pc := st.ProjectCache; pc != nil {
		fmt.Fprintf(w, "\nlive projects: %d of at most %d (idle timeout %s); %d evicted since start\n", pc.Live, pc.Max, pc.IdleTimeout, pc.Evicted)
	}
	t = NewTable(w, "projects", "DIR", "REVISION", "GENERATION", "HANDLERS", "SWAPPED")
	for _, p := range st.Projects {
		t.Row(p.Dir, ShortHash(p.Revision), u(p.Generation), i(p.Handlers), clock(p.SwappedAt))
	}
	t.Flush()
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
	t = NewTable(w, "counters", "EVENTS", "ERRORS", "HOOKS RUN", "HOOK ERRORS", "TIMEOUTS", "RULE OVERRIDES", "AUDIT FAILURES")
	t.Row(u(c.Events), u(c.Errors), u(c.HooksRun), u(c.HookErrors), u(c.Timeouts), u(c.RuleOverrides), u(c.AuditFailures))
	t.Flush()
	if len(st.PerEvent) > 0 {
		names := make([]string, 0, len(st.PerEvent))
		for n := range st.PerEvent {
			names = append(names, n)
		}
		sort.Strings(names)
		t := NewTable(w, "events", "EVENT", "ANSWERED")
		for _, n := range names {
			t.Row(n, u(st.PerEvent[n]))
		}
		t.Flush()
	}

	if p := st.Prewarm; p != nil {
		t := NewTable(w, "prewarm", "HITS", "MISSES", "FALLBACKS", "SPAWNED", "SPAWN ERRORS", "DISCARDED", "DIED WAITING", "REAPED IDLE", "EVICTED")
		t.Row(u(p.Hits), u(p.Misses), u(p.Fallbacks), u(p.Spawned), u(p.SpawnErrors), u(p.Discarded), u(p.DiedWaiting), u(p.ReapedIdle), u(p.Evicted))
		t.Flush()
		if p.Background > 0 {
			fmt.Fprintf(w, "  started in the background: %d (taken still starting: %d, changed back late: %d)\n", p.Background, p.Unready, p.LateRestores)
		}
		t = NewTable(w, "prewarm pool", "IDLE", "STARTING", "KEYS", "PER KEY", "TOTAL", "IDLE TIMEOUT")
		t.Row(i(p.Idle), i(p.Starting), i(p.Keys), i(p.PerKey), i(p.Total), p.IdleTimeout)
		t.Flush()
	}
	if wk := st.Workers; wk != nil {
		t := NewTable(w, "workers", "RUNNING", "STARTED", "EVENTS", "CRASHES", "TIMEOUTS", "PROTOCOL ERRORS")
		t.Row(i(wk.Workers), u(wk.Started), u(wk.Events), u(wk.Crashes), u(wk.Timeouts), u(wk.ProtocolErrors))
		t.Flush()
	}
	if z := st.Zygote; z != nil && z.Enabled {
		t := NewTable(w, "python zygote", "FORKED", "RAN COLD", "READY", "STARTED", "DIED", "LOST", "DECLINED", "LAST DECLINED")
		t.Row(u(z.Forked), u(z.RanCold), i(z.Zygotes), u(z.Started), u(z.Died), u(z.Lost), u(z.Fallbacks), z.LastFallback)
		t.Flush()
	}
	if h := st.HTTP; h != nil {
		if h.Error != "" {
			fmt.Fprintf(w, "\nhttp forwarder: NOT SERVED: %s\n", h.Error)
		} else {
			fmt.Fprintf(w, "\nhttp forwarder: http://%s (docs/http-forwarder.md)\n", h.Listen)
		}
	}
	auditStatus(w, st.Audit)
}

// clients prints the clients the daemon heard from, and a warning for each hookc whose
// version is not the daemon's.
func clients(w io.Writer, st *protocol.Status) {
	if len(st.Clients) == 0 {
		return
	}
	t := NewTable(w, "clients", "CLIENT", "VERSION", "REQUESTS", "FIRST SEEN", "LAST SEEN")
	for _, c := range st.Clients {
		v := c.Version
		if v == "" {
			v = "unknown"
		}
		t.Row(c.Client, v, u(c.Requests), clock(c.FirstSeen), clock(c.LastSeen))
	}
	t.Flush()
	for _, c := range st.Clients {
		if c.Skew {
			fmt.Fprintf(w, "  warning: %s\n", ClientSkew(c, st.Version))
		}
	}
}

// ClientSkew says what a hookc of another version than the daemon's means, and what to do.
func ClientSkew(c protocol.ClientStatus, daemonVersion string) string {
	what := c.Client + " " + c.Version
	if c.Version == "" {
		what = c.Client + " of unknown version (it predates hookc saying its version)"
	}
	return fmt.Sprintf("%s sent %d requests (last at %s) to hookd %s: they are not one release — "+
		"restart the daemon after an upgrade, or point the forwarder at this release's hookc (hookd doctor lists the forwarders)",
		what, c.Requests, clock(c.LastSeen), daemonVersion)
}

// auditStatus prints the decision log's state; a failure is shown loudly, since
// events that can block are failing closed while it lasts.
func auditStatus(w io.Writer, a *protocol.AuditStatus) {
	if a == nil {
		fmt.Fprintln(w, "\naudit: off")
		return
	}
	state := "ok"
	if !a.Healthy {
		state = "FAILING (events that can block are denied)"
	}
	fmt.Fprintf(w, "\naudit: %s\n", state)
	t := &Table{tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)}
	t.Row("PATH", "FSYNC", "LAST SEQ", "WRITTEN", "BATCHES", "REPAIRS", "ROTATIONS", "FAILURES")
	t.Row(a.Path, a.Fsync, u(a.Seq), u(a.Records), u(a.Batches), u(a.Repairs), u(a.Rotations), u(a.Failures))
	t.Flush()
	if a.LastError != "" {
		at := ""
		if a.LastErrorAt != nil {
			at = " at " + When(*a.LastErrorAt)
		}
		fmt.Fprintf(w, "  last error%s: %s\n", at, a.LastError)
	}
}

// Reload writes a reload summary as `hookd status` writes its parts: one table row
// of figures, then every changed file, error and refusal on a line of its own, so that a
// failing file is named in full.
func Reload(w io.Writer, r *protocol.ReloadSummary) {
	t := NewTable(w, "reload", "TRIGGER", "AT", "TOOK", "FILES READ", "CHANGED", "SWAPPED", "GENERATION", "ERRORS", "REFUSED")
	t.Row(r.Trigger, clock(r.At), r.Took, i(r.FilesRead), i(len(r.Changed)), i(r.Swapped), u(r.Generation), i(len(r.Errors)), i(len(r.Refused)))
	t.Flush()
	for _, c := range r.Changed {
		fmt.Fprintf(w, "  changed %s\n", c)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "  ERROR %s\n", e)
	}
	for _, rf := range r.Refused {
		fmt.Fprintf(w, "  REFUSED %s\n", rf)
	}
}
