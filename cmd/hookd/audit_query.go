package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

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

// recordPrinter prints records as aligned rows, or their raw lines with --json.
type recordPrinter struct {
	w      io.Writer
	json   bool
	header bool
}

func (p *recordPrinter) print(r *audit.Record, line []byte) {
	if p.json {
		fmt.Fprintf(p.w, "%s\n", line)
		return
	}
	const row = "%-24s  %-26s  %-18s  %-12s  %-8s  %-10s  %-22s  %s\n"
	if !p.header {
		fmt.Fprintf(p.w, row, "TIME", "DECISION_ID", "EVENT", "TOOL", "DECISION", "FALLBACK", "HOOKS", "DETAIL")
		p.header = true
	}
	if r.Kind != audit.KindDecision {
		detail := r.Kind
		if r.Repair != nil {
			detail = fmt.Sprintf("%s %s: %s", r.Kind, r.Repair.Reason, r.Repair.Detail)
		}
		fmt.Fprintf(p.w, row, when(r.Time), "-", "-", "-", "-", "-", "-", detail)
		return
	}
	fmt.Fprintf(p.w, row, when(r.Time), r.DecisionID, r.Event,
		dash(r.ToolName), dash(r.Decision), fallbackCell(r), hookSummary(r.Hooks), detail(r))
}

// fallbackCell is the FALLBACK column: "in-process" for a decision hookc's fallback made
// without the daemon (`hookd audit show` says why), "-" otherwise.
func fallbackCell(r *audit.Record) string {
	if r.Fallback != "" {
		return "in-process"
	}
	return "-"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// hookSummary is "3: 2 ok, 1 error".
func hookSummary(hs []audit.Hook) string {
	if len(hs) == 0 {
		return "0"
	}
	count := map[string]int{}
	var order []string
	for _, h := range hs {
		if count[h.Outcome] == 0 {
			order = append(order, h.Outcome)
		}
		count[h.Outcome]++
	}
	var parts []string
	for _, o := range order {
		parts = append(parts, fmt.Sprintf("%d %s", count[o], o))
	}
	return fmt.Sprintf("%d: %s", len(hs), strings.Join(parts, ", "))
}

func detail(r *audit.Record) string {
	if o := r.Override; o != nil {
		return fmt.Sprintf("%s→%s by %s rule %s (%s)", o.HookDecision, o.Final, o.List, o.Rule, o.File)
	}
	s := strings.Join(strings.Fields(r.Reason), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	if (r.Decision == "" || r.Decision == "none") && r.RuleAnswer == nil && (r.Event == "PreToolUse" || r.Event == "PermissionRequest") && s == "" {
		return "no rule matches: Claude Code's permission mode decides"
	}
	if ra := r.RuleAnswer; ra != nil && (r.Decision == "" || r.Decision == "none") {
		// No hook decided, so Claude Code applies its permission rules itself: say what
		// they answer (hookd reads the same rules), or the row reads as if nothing did.
		rs := "rules say " + ra.Decision
		if ra.Rule != "" {
			rs += fmt.Sprintf(" (%s rule %s)", ra.List, ra.Rule)
		}
		if s == "" {
			return rs
		}
		s = rs + "; " + s
	}
	switch r.DecisionVia {
	case "on_failure":
		// Say first that no hook decided this: a failed hook's onFailure did.
		s = "onFailure block by " + r.DecisionHook + ": " + s
	case "on_timeout":
		s = "on_timeout deny by " + r.DecisionHook + ": " + s
	}
	return s
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
			p := &recordPrinter{w: c.App.Writer, json: c.Bool("json")}
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
				p.print(x.r, x.line)
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
				p.print(r, line)
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
			p := &recordPrinter{w: c.App.Writer, json: c.Bool("json")}
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
					p.print(r, line)
					return nil
				}
				ring = append(ring, rl{r, append([]byte(nil), line...)})
				if len(ring) > limit {
					ring = ring[1:]
				}
				return nil
			})
			for _, x := range ring {
				p.print(x.r, x.line)
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
			printDecision(c.App.Writer, found[0])
			return checkChain(c, path)
		},
	}, "audit-dir", "config", "state-dir")
}

func printDecision(w io.Writer, r *audit.Record) {
	fmt.Fprintf(w, "decision %s  seq %d  %s\n", r.DecisionID, r.Seq, r.Time.UTC().Format(time.RFC3339Nano))
	if r.Harness != "" {
		fmt.Fprintf(w, "  harness    %s %s\n", r.Harness, r.HarnessVersion)
	}
	fmt.Fprintf(w, "  event      %s", r.Event)
	if r.ToolName != "" {
		fmt.Fprintf(w, "  tool %s  tool_use_id %s", r.ToolName, dash(r.ToolUseID))
	}
	fmt.Fprintf(w, "\n  session    %s\n  cwd        %s\n  project    %s\n", dash(r.SessionID), dash(r.Cwd), dash(r.ProjectDir))
	if c := r.Caller; c != nil {
		fmt.Fprintf(w, "  caller     uid %d  pid %d  %s\n", c.UID, c.PID, c.Client)
	}
	if r.Fallback != "" {
		fmt.Fprintf(w, "  fallback   answered in-process, without the daemon: %s\n", r.Fallback)
	}
	fmt.Fprintf(w, "  daemon     %s  mode %s\n  revision   %s\n", dash(r.DaemonVersion), dash(r.Mode), dash(r.Revision))
	for _, s := range r.Sources {
		fmt.Fprintf(w, "    %-8s %s  sha256 %s\n", s.Source, s.File, shortHash(s.Hash))
	}
	fmt.Fprintf(w, "  decision   %s", dash(r.Decision))
	if r.DecisionSource != "" {
		fmt.Fprintf(w, " (by %s)", r.DecisionSource)
	}
	if r.HookDecision != "" {
		fmt.Fprintf(w, "  hooks said %s", r.HookDecision)
	}
	fmt.Fprintf(w, "  exit code %d\n", r.ExitCode)
	if o := r.Override; o != nil {
		fmt.Fprintf(w, "  overridden %s → %s by %s rule %s in %s\n", o.HookDecision, o.Final, o.List, o.Rule, dash(o.File))
	}
	if ra := r.RuleAnswer; ra != nil {
		fmt.Fprintf(w, "  rules say  %s (%s rule %s in %s)\n", ra.Decision, ra.List, ra.Rule, dash(ra.File))
	}
	if r.Reason != "" {
		fmt.Fprintf(w, "  reason     %s\n", r.Reason)
	}
	fmt.Fprintf(w, "  hooks      %d\n", len(r.Hooks))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, h := range r.Hooks {
		code := "-"
		if h.ExitCode != nil {
			code = strconv.Itoa(*h.ExitCode)
		}
		cmd := h.Command
		if cmd == "" && h.CommandSHA256 != "" {
			cmd = "sha256:" + shortHash(h.CommandSHA256)
		}
		fmt.Fprintf(tw, "    %s\texit %s\t%.1f ms\t%s\t%s\t%s\n", h.Outcome, code, h.DurationMS, dash(h.Decision), dash(h.Matcher), cmd)
		fmt.Fprintf(tw, "    \t\t\t\t\t%s (%s)\n", h.File, h.Source)
		if h.Stdout != nil || h.Stderr != nil {
			fmt.Fprintf(tw, "    \t\t\t\t\tstdout %s  stderr %s\n", outputDesc(h.Stdout), outputDesc(h.Stderr))
		}
		if h.Error != "" {
			fmt.Fprintf(tw, "    \t\t\t\t\terror: %s\n", strings.TrimSpace(h.Error))
		}
	}
	tw.Flush()
	if len(r.AdditionalContextBytes) > 0 || r.SystemMessages > 0 {
		fmt.Fprintf(w, "  context    %v bytes  system messages %d\n", r.AdditionalContextBytes, r.SystemMessages)
	}
	if len(r.UpdatedInput) > 0 {
		fmt.Fprintf(w, "  updated input %s\n", r.UpdatedInput)
	}
	if len(r.Masked) > 0 {
		fmt.Fprintf(w, "  masked     %s\n", strings.Join(r.Masked, ", "))
	}
	if len(r.Input) > 0 {
		fmt.Fprintf(w, "  input      %s\n", r.Input)
	}
}

func outputDesc(o *audit.Output) string {
	if o == nil {
		return "-"
	}
	s := fmt.Sprintf("%d B", o.Bytes)
	if o.Bytes > 0 {
		s += " sha256 " + shortHash(o.SHA256)
	}
	if o.Truncated {
		s += " (cut by the output cap)"
	}
	return s
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
				fmt.Fprintf(w, " (%s to %s)", when(st.First), when(st.Last))
			}
			fmt.Fprintf(w, "  overridden by rules: %d  answered in-process (fallback): %d  repairs: %d\n", st.Overridden, st.Fallback, st.Repairs)
			fmt.Fprintf(w, "by decision: %s\n", countList(st.ByDecision))
			fmt.Fprintf(w, "by event:    %s\n", countList(st.ByEvent))
			fmt.Fprintf(w, "hook runs:   %s\n\n", countList(st.ByOutcome))
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

// countList is "allow 10, deny 2", largest first.
func countList(m map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var kvs []kv
	for k, v := range m {
		kvs = append(kvs, kv{k, v})
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].v != kvs[j].v {
			return kvs[i].v > kvs[j].v
		}
		return kvs[i].k < kvs[j].k
	})
	var parts []string
	for _, x := range kvs {
		parts = append(parts, fmt.Sprintf("%s %d", dash(x.k), x.v))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
