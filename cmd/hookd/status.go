package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/daemon"
	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/protocol"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the running daemon's sources, revisions, errors and counters",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the raw status JSON"}},
		Action: func(c *cli.Context) error {
			data, err := call(c, protocol.OpStatus)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				fmt.Fprintln(c.App.Writer, string(data))
				return nil
			}
			var st daemon.Status
			if err := json.Unmarshal(data, &st); err != nil {
				return fmt.Errorf("decoding status: %w", err)
			}
			printStatus(c, &st)
			return nil
		},
	}
}

func printStatus(c *cli.Context, st *daemon.Status) {
	w := c.App.Writer
	fmt.Fprintf(w, "hookd %s  pid %d  up %s  generation %d  mode %s\n", st.Version, st.PID, st.Uptime, st.Generation, st.Mode)
	fmt.Fprintln(w, "\nsources:")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  SOURCE\tSTATE\tREVISION\tLOADED\tWATCH\tPATH")
	for _, s := range st.Sources {
		watch := "-"
		if s.Watch != nil {
			watch = s.Watch.Mode
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", s.Source, s.State, shortHash(s.Revision), s.LoadedAt.Format("15:04:05.000"), watch, s.Path)
	}
	tw.Flush()
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
				s.Path, r.Project, shortHash(r.Revision), r.At.Format("15:04:05.000"), r.Reason, shortHash(s.Revision))
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
		pending := ""
		if ws.Pending {
			pending = "  (reload pending)"
		}
		fmt.Fprintf(w, "\nwatcher: %s, %d directories, %d files polled, debounce %s, %d events, %d reloads, %d overflows%s\n",
			ws.Backend, len(ws.Dirs), len(ws.Polling), ws.Debounce, ws.Events, ws.Reloads, ws.Overflows, pending)
	}
	if lr := st.LastReload; lr != nil {
		fmt.Fprintf(w, "last reload: %s at %s (%s): %d files read, %d changed, %d projects swapped, %d errors, %d refused\n",
			lr.Trigger, lr.At.Format("15:04:05.000"), lr.Took, lr.FilesRead, len(lr.Changed), lr.Swapped, len(lr.Errors), len(lr.Refused))
	}
	fmt.Fprintln(w, "\nprojects:")
	for _, p := range st.Projects {
		fmt.Fprintf(w, "  %s  revision %s  generation %d  %d handlers\n", p.Dir, shortHash(p.Revision), p.Generation, p.Handlers)
		for _, nr := range p.NotRunnable {
			fmt.Fprintf(w, "    not run by hookd: %s\n", nr)
		}
	}
	fmt.Fprintln(w, "\ncounters:")
	var parts []string
	for _, k := range []string{"events", "errors", "hooks_run", "hook_errors", "timeouts", "rule_overrides", "audit_failures"} {
		parts = append(parts, fmt.Sprintf("%s=%d", k, st.Counters[k]))
	}
	fmt.Fprintln(w, "  "+strings.Join(parts, "  "))
	for k, v := range st.Extra {
		if k == "audit" {
			continue
		}
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "%s: %s\n", k, b)
	}
	printAuditStatus(w, st.Extra["audit"])
}

// printAuditStatus prints the decision log's state; a failure is shown loudly, since
// events that can block are failing closed while it lasts.
func printAuditStatus(w io.Writer, v any) {
	if v == nil {
		fmt.Fprintln(w, "\naudit: off")
		return
	}
	var a audit.Status
	b, _ := json.Marshal(v)
	if json.Unmarshal(b, &a) != nil {
		return
	}
	state := "ok"
	if !a.Healthy {
		state = "FAILING (events that can block are denied)"
	}
	fmt.Fprintf(w, "\naudit: %s\n  %s  fsync %s  last seq %d  written %d  failures %d\n", state, a.Path, a.Fsync, a.Seq, a.Records, a.Failures)
	if a.LastError != "" {
		at := ""
		if a.LastErrorAt != nil {
			at = " at " + a.LastErrorAt.Local().Format("2006-01-02 15:04:05")
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
