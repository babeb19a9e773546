package show

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookd/hookd/daemon/audit"
)

// RecordPrinter prints records as aligned rows under one header, or (JSON) their lines
// as they are in the log.
type RecordPrinter struct {
	W      io.Writer
	JSON   bool
	header bool
}

func (p *RecordPrinter) Print(r *audit.Record, line []byte) {
	if p.JSON {
		fmt.Fprintf(p.W, "%s\n", line)
		return
	}
	const row = "%-24s  %-26s  %-18s  %-12s  %-8s  %-10s  %-22s  %s\n"
	if !p.header {
		fmt.Fprintf(p.W, row, "TIME", "DECISION_ID", "EVENT", "TOOL", "DECISION", "FALLBACK", "HOOKS", "DETAIL")
		p.header = true
	}
	if r.Kind != audit.KindDecision {
		detail := r.Kind
		if r.Repair != nil {
			detail = fmt.Sprintf("%s %s: %s", r.Kind, r.Repair.Reason, r.Repair.Detail)
		}
		fmt.Fprintf(p.W, row, When(r.Time), "-", "-", "-", "-", "-", "-", detail)
		return
	}
	fmt.Fprintf(p.W, row, When(r.Time), r.DecisionID, r.Event,
		Dash(r.ToolName), Dash(r.Decision), fallbackCell(r), hookSummary(r.Hooks), detail(r))
}

// fallbackCell is the FALLBACK column: "in-process" for a decision hookc's fallback made
// without the daemon (`hookd audit show` says why), "-" otherwise.
func fallbackCell(r *audit.Record) string {
	if r.Fallback != "" {
		return "in-process"
	}
	return "-"
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

func Decision(w io.Writer, r *audit.Record) {
	fmt.Fprintf(w, "decision %s  seq %d  %s\n", r.DecisionID, r.Seq, r.Time.UTC().Format(time.RFC3339Nano))
	if r.Harness != "" {
		fmt.Fprintf(w, "  harness    %s %s\n", r.Harness, r.HarnessVersion)
	}
	fmt.Fprintf(w, "  event      %s", r.Event)
	if r.ToolName != "" {
		fmt.Fprintf(w, "  tool %s  tool_use_id %s", r.ToolName, Dash(r.ToolUseID))
	}
	fmt.Fprintf(w, "\n  session    %s\n  cwd        %s\n  project    %s\n", Dash(r.SessionID), Dash(r.Cwd), Dash(r.ProjectDir))
	if c := r.Caller; c != nil {
		fmt.Fprintf(w, "  caller     uid %d  pid %d  %s\n", c.UID, c.PID, c.Client)
	}
	if r.Fallback != "" {
		fmt.Fprintf(w, "  fallback   answered in-process, without the daemon: %s\n", r.Fallback)
	}
	fmt.Fprintf(w, "  daemon     %s  mode %s\n  revision   %s\n", Dash(r.DaemonVersion), Dash(r.Mode), Dash(r.Revision))
	for _, s := range r.Sources {
		fmt.Fprintf(w, "    %-8s %s  sha256 %s\n", s.Source, s.File, ShortHash(s.Hash))
	}
	fmt.Fprintf(w, "  decision   %s", Dash(r.Decision))
	if r.DecisionSource != "" {
		fmt.Fprintf(w, " (by %s)", r.DecisionSource)
	}
	if r.HookDecision != "" {
		fmt.Fprintf(w, "  hooks said %s", r.HookDecision)
	}
	fmt.Fprintf(w, "  exit code %d\n", r.ExitCode)
	if o := r.Override; o != nil {
		fmt.Fprintf(w, "  overridden %s → %s by %s rule %s in %s\n", o.HookDecision, o.Final, o.List, o.Rule, Dash(o.File))
	}
	if ra := r.RuleAnswer; ra != nil {
		fmt.Fprintf(w, "  rules say  %s (%s rule %s in %s)\n", ra.Decision, ra.List, ra.Rule, Dash(ra.File))
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
			cmd = "sha256:" + ShortHash(h.CommandSHA256)
		}
		fmt.Fprintf(tw, "    %s\texit %s\t%.1f ms\t%s\t%s\t%s\n", h.Outcome, code, h.DurationMS, Dash(h.Decision), Dash(h.Matcher), cmd)
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
		s += " sha256 " + ShortHash(o.SHA256)
	}
	if o.Truncated {
		s += " (cut by the output cap)"
	}
	return s
}

func Verify(w io.Writer, rep *audit.Report, wholeLog bool) {
	if rep.OK() {
		var names []string
		for _, f := range rep.Files {
			names = append(names, fmt.Sprintf("%s (%d)", f.File, f.Records))
		}
		fmt.Fprintf(w, "OK: %d records (%d decisions) in %d files, seq %d..%d\n", rep.Records, rep.Decisions, len(rep.Files), rep.FirstSeq, rep.LastSeq)
		if cp := rep.Checkpoint; cp != nil {
			fmt.Fprintf(w, "  signed checkpoint: covers seq %d (signed by %s at %s): matches\n", cp.Seq, cp.Signer, When(cp.Time))
		}
		if len(names) > 0 {
			fmt.Fprintf(w, "  files: %s\n", strings.Join(names, ", "))
		}
		switch {
		case rep.Head:
			fmt.Fprintln(w, "  chain head: matches")
		case wholeLog:
			fmt.Fprintln(w, "  chain head: none found (a removed rotated file or records cut from the end cannot be detected)")
		}
		if rep.StartsAfter > 0 {
			fmt.Fprintf(w, "  the chain starts after record %d (older files removed by retention, or not given)\n", rep.StartsAfter)
		}
		if rep.LastHash != "" {
			fmt.Fprintf(w, "  last hash: %s\n", rep.LastHash)
		}
	} else {
		fmt.Fprintf(w, "FAILED: %s\n", rep.Problems[0])
		for _, p := range rep.Problems[1:] {
			fmt.Fprintf(w, "  also: %s\n", p)
		}
		fmt.Fprintf(w, "  checked %d records before the problem\n", rep.Records)
	}
	for _, r := range rep.Repairs {
		x := r.Repair
		switch x.Reason {
		case audit.RepairTornTail:
			fmt.Fprintf(w, "  repaired %s:%d (seq %d): torn write — %d bytes cut at offset %d of %s (sha256 %s)\n",
				r.File, r.Line, r.Seq, x.DroppedBytes, x.Offset, x.File, ShortHash(x.DroppedSHA256))
		default:
			fmt.Fprintf(w, "  repair %s:%d (seq %d): %s: %s\n", r.File, r.Line, r.Seq, x.Reason, x.Detail)
		}
	}
}
