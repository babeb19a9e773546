package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/cmd/hookd/internal/show"
	"github.com/hookd/hookd/daemon/audit"
)

// The read-side audit commands: tail, query, show, stats. Each reads the log files
// directly (no daemon needed) and prints a table for people or, with --json, the
// records' own lines (JSON lines, as in the log). query, show and stats then verify the
// chain they read (checkChain): what they printed is only as good as the log.

func auditFiles(c *cli.Context) (string, []string, error) {
	path, err := auditPath(c)
	if err != nil {
		return "", nil, err
	}
	files, err := audit.Files(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", nil, err
	}
	if len(files) == 0 {
		return path, nil, fmt.Errorf("no decision log at %s (is auditing on? see `hookd audit --help` for --audit-dir)", path)
	}
	return path, files, nil
}

// noVerifyFlag skips checkChain.
func noVerifyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-verify", Usage: "do not check the hash chain after reading (the output then says nothing about tampering)"}
}

// checkChain verifies the whole log (as `hookd audit verify` does) after a read command
// printed from it. A chain that does not verify is a warning on stderr, naming the first
// problem, and the command's exit code is 1: records may have been edited, removed or
// reordered, so what was printed cannot be trusted as it stands.
func checkChain(c *cli.Context, path string) error {
	if c.Bool("no-verify") {
		return nil
	}
	rep, err := audit.VerifyLog(path)
	if err != nil {
		return fmt.Errorf("verifying the decision log: %w", err)
	}
	if rep.OK() {
		return nil
	}
	fmt.Fprintf(c.App.ErrWriter, "hookd: WARNING: the decision log does not verify: %s\n", rep.Problems[0])
	return exitError{code: 1, msg: fmt.Sprintf("the records above come from a log whose hash chain is broken (%d problem(s); `hookd audit verify` for the report)", len(rep.Problems))}
}

func filterFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "since", Usage: "records at or after `TIME` (RFC 3339, YYYY-MM-DD, or a duration ago: 90m, 2h, 7d)"},
		&cli.StringFlag{Name: "until", Usage: "records before `TIME` (same forms)"},
		&cli.StringFlag{Name: "event", Usage: "hook `EVENT` (PreToolUse, Stop, …)"},
		&cli.StringFlag{Name: "decision", Usage: "final `DECISION`: allow, deny, ask, defer, block, stop, none"},
		&cli.StringFlag{Name: "tool", Usage: "tool `NAME` (Bash, Write, mcp__…)"},
		&cli.StringFlag{Name: "session", Usage: "session `ID` (or a prefix)"},
		&cli.StringFlag{Name: "hook", Usage: "a matched hook whose id or command contains `TEXT`"},
		&cli.StringFlag{Name: "source-file", Usage: "a hook or overriding rule from a settings file whose path contains `TEXT`"},
		&cli.BoolFlag{Name: "overridden", Usage: "only decisions a permission rule overrode"},
		&cli.StringFlag{Name: "via", Usage: "only denies and blocks a failed hook made: on_failure (onFailure: \"block\") or on_timeout (on_timeout: deny)"},
		&cli.StringFlag{Name: "harness", Usage: "the `AGENT` that sent the event: claude-code, codex, gemini"},
		&cli.BoolFlag{Name: "fallback", Usage: "only decisions answered in-process, without the daemon (hookc's fallback)"},
	}
}

func filterFrom(c *cli.Context) (audit.Filter, error) {
	f := audit.Filter{Event: c.String("event"), Decision: c.String("decision"), Tool: c.String("tool"),
		Session: c.String("session"), Hook: c.String("hook"), SourceFile: c.String("source-file"),
		Overridden: c.Bool("overridden"), Via: c.String("via"), Harness: c.String("harness"), Fallback: c.Bool("fallback")}
	if f.Via != "" && f.Via != "on_failure" && f.Via != "on_timeout" {
		return f, fmt.Errorf("--via %q: want on_failure or on_timeout", f.Via)
	}
	var err error
	if f.Since, err = parseWhen(c.String("since"), "--since"); err != nil {
		return f, err
	}
	if f.Until, err = parseWhen(c.String("until"), "--until"); err != nil {
		return f, err
	}
	if f.Event != "" || f.Decision != "" || f.Tool != "" || f.Session != "" || f.Hook != "" || f.SourceFile != "" || f.Overridden || f.Via != "" || f.Harness != "" || f.Fallback {
		f.Kinds = []string{audit.KindDecision}
	}
	return f, nil
}

// parseWhen reads a time: RFC 3339, a date (midnight UTC), or a duration before now
// ("7d" = 168h).
func parseWhen(s, flag string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil { // midnight UTC, the zone hookd prints
		return t, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil {
			return time.Now().Add(-time.Duration(days) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		return time.Now().Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want RFC 3339 (2026-01-02T15:04:05Z), a date (2026-01-02) or a duration ago (90m, 2h, 7d)", flag, s)
}

func auditTailCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "tail",
		Usage: "print the last records; -f keeps printing new ones",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "n", Value: 10, Usage: "how many records"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "wait for new records (Ctrl-C stops)"},
			&cli.BoolFlag{Name: "json", Usage: "print the records' JSON lines"},
		},
		Action: func(c *cli.Context) error {
			path, files, err := auditFiles(c)
			if err != nil && !(c.Bool("follow") && len(files) == 0 && path != "") {
				return err
			}
			p := &show.RecordPrinter{W: c.App.Writer, JSON: c.Bool("json")}
			type rl struct {
				r    *audit.Record
				line []byte
			}
			n := c.Int("n")
			var last []rl
			// Newest file first, until n records are in hand.
			for i := len(files) - 1; i >= 0 && len(last) < n; i-- {
				var recs []rl
				if err := audit.Scan(files[i:i+1], func(r *audit.Record, line []byte) error {
					recs = append(recs, rl{r, append([]byte(nil), line...)})
					return nil
				}); err != nil {
					return err
				}
				last = append(recs, last...)
			}
			if len(last) > n {
				last = last[len(last)-n:]
			}
			for _, x := range last {
				p.Print(x.r, x.line)
			}
			if !c.Bool("follow") {
				return nil
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			var after uint64
			if len(last) > 0 {
				after = last[len(last)-1].r.Seq
			} else if len(files) > 0 {
				// -n 0: start at the end.
				_ = audit.Scan(files[len(files)-1:], func(r *audit.Record, _ []byte) error { after = r.Seq; return nil })
			}
			return audit.Follow(ctx, path, after, func(r *audit.Record, line []byte) error {
				p.Print(r, line)
				return nil
			})
		},
	}, "audit-dir", "config", "state-dir")
}

func auditQueryCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "query",
		Usage: "print the records that match filters, oldest first",
		Description: `Filters combine (all must match). Examples:
   hookd audit query --since 24h --decision deny
   hookd audit query --tool Bash --overridden
   hookd audit query --source-file managed-settings.json --json | jq .decision_id`,
		Flags: append(filterFlags(),
			&cli.IntFlag{Name: "limit", Usage: "print at most the last `N` matches (0: all)"},
			&cli.BoolFlag{Name: "json", Usage: "print the records' JSON lines"},
			noVerifyFlag(),
		),
		Action: func(c *cli.Context) error {
			path, files, err := auditFiles(c)
			if err != nil {
				return err
			}
			f, err := filterFrom(c)
			if err != nil {
				return err
			}
			p := &show.RecordPrinter{W: c.App.Writer, JSON: c.Bool("json")}
			limit := c.Int("limit")
			type rl struct {
				r    *audit.Record
				line []byte
			}
			var ring []rl
			matched := 0
			err = audit.Scan(files, func(r *audit.Record, line []byte) error {
				if !f.Match(r) {
					return nil
				}
				matched++
				if limit <= 0 {
					p.Print(r, line)
					return nil
				}
				ring = append(ring, rl{r, append([]byte(nil), line...)})
				if len(ring) > limit {
					ring = ring[1:]
				}
				return nil
			})
			for _, x := range ring {
				p.Print(x.r, x.line)
			}
			if err != nil {
				return err
			}
			if matched == 0 && !c.Bool("json") {
				fmt.Fprintln(c.App.ErrWriter, "no matching records")
			}
			return checkChain(c, path)
		},
	}, "audit-dir", "config", "state-dir")
}

func auditShowCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:      "show",
		Usage:     "print one decision in full",
		ArgsUsage: "DECISION_ID (or a unique prefix)",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the record's JSON line"}, noVerifyFlag()},
		Action: func(c *cli.Context) error {
			id := c.Args().First()
			if id == "" || c.NArg() > 1 {
				return exitError{code: 2, msg: "usage: hookd audit show DECISION_ID"}
			}
			path, files, err := auditFiles(c)
			if err != nil {
				return err
			}
			var found []*audit.Record
			var line []byte
			err = audit.Scan(files, func(r *audit.Record, l []byte) error {
				if r.DecisionID == id {
					found, line = []*audit.Record{r}, append([]byte(nil), l...)
					return io.EOF
				}
				if strings.HasPrefix(r.DecisionID, id) {
					found, line = append(found, r), append([]byte(nil), l...)
				}
				return nil
			})
			if err != nil {
				return err
			}
			switch {
			case len(found) == 0:
				return exitError{code: 1, msg: fmt.Sprintf("no decision %s in the log", id)}
			case len(found) > 1:
				return exitError{code: 1, msg: fmt.Sprintf("%d decisions start with %s; give more of the id", len(found), id)}
			}
			if c.Bool("json") {
				var v any
				_ = json.Unmarshal(line, &v)
				b, _ := json.MarshalIndent(v, "", "  ")
				fmt.Fprintln(c.App.Writer, string(b))
				return checkChain(c, path)
			}
			show.Decision(c.App.Writer, found[0])
			return checkChain(c, path)
		},
	}, "audit-dir", "config", "state-dir")
}

func auditStatsCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "stats",
		Usage: "decisions per outcome and per event; per hook: runs, error rate, p50/p95 duration",
		Flags: append(filterFlags(), &cli.BoolFlag{Name: "json", Usage: "print the figures as JSON"}, noVerifyFlag()),
		Action: func(c *cli.Context) error {
			path, files, err := auditFiles(c)
			if err != nil {
				return err
			}
			f, err := filterFrom(c)
			if err != nil {
				return err
			}
			st := audit.NewStats()
			if err := audit.Scan(files, func(r *audit.Record, _ []byte) error {
				if f.Match(r) {
					st.Add(r)
				}
				return nil
			}); err != nil {
				return err
			}
			st.Finish()
			w := c.App.Writer
			if c.Bool("json") {
				b, _ := json.MarshalIndent(st, "", "  ")
				fmt.Fprintln(w, string(b))
				return checkChain(c, path)
			}
			fmt.Fprintf(w, "decisions: %d", st.Decisions)
			if st.Decisions > 0 {
				fmt.Fprintf(w, " (%s to %s)", show.When(st.First), show.When(st.Last))
			}
			fmt.Fprintf(w, "  overridden by rules: %d  answered in-process (fallback): %d  repairs: %d\n", st.Overridden, st.Fallback, st.Repairs)
			fmt.Fprintf(w, "by decision: %s\n", show.CountList(st.ByDecision))
			fmt.Fprintf(w, "by event:    %s\n", show.CountList(st.ByEvent))
			fmt.Fprintf(w, "hook runs:   %s\n\n", show.CountList(st.ByOutcome))
			tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "COUNT\tERROR%\tP50 MS\tP95 MS\tMAX MS\t  HOOK")
			for _, h := range st.Hooks {
				name := h.Command
				if name == "" {
					name = h.ID
				}
				fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1f\t%.1f\t  %s\n", h.Count, 100*h.ErrorRate, h.P50MS, h.P95MS, h.MaxMS, name)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return checkChain(c, path)
		},
	}, "audit-dir", "config", "state-dir")
}
