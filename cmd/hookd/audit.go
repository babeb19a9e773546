package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/daemon"
	"github.com/hookd/hookd/daemon/audit"
)

func auditCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "audit",
		Usage: "verify and query the decision log",
		Description: `The decision log holds one JSON line per event hookd answered: who asked, which hooks
(and which settings files) ran, what they returned, the decision, any permission-rule
override. Lines are hash-chained; ` + "`hookd audit verify`" + ` proves nothing was edited,
removed or reordered. The log lives in --audit-dir, else the directory of the "audit.path"
configuration key, else <state-dir>/audit.`,
		Flags: []cli.Flag{auditDirFlag()},
		Subcommands: []*cli.Command{
			auditVerifyCommand(), auditKeygenCommand(), auditTailCommand(), auditQueryCommand(), auditShowCommand(), auditStatsCommand(),
		},
	}, "config", "state-dir")
}

// auditDirFlag is `hookd audit --audit-dir`, which every audit subcommand reads
// (inheritedFlags: it is accepted before or after the subcommand).
func auditDirFlag() cli.Flag {
	return &cli.StringFlag{Name: "audit-dir", Usage: "decision log `DIR` (default: from hookd's configuration, else <state-dir>/audit)", EnvVars: []string{"HOOKD_AUDIT_DIR"}}
}

// auditPath is the current decision log file the audit commands read.
func auditPath(c *cli.Context) (string, error) {
	if d := c.String("audit-dir"); d != "" {
		return filepath.Join(d, audit.DefaultFile), nil
	}
	cfg, _, err := loadConfig(c)
	if err != nil {
		return "", err
	}
	return daemon.AuditPath(cfg.Audit, c.String("state-dir")), nil
}

func auditVerifyCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:      "verify",
		Usage:     "check the hash chain: report the first broken link, a truncated tail or a missing file, or OK with counts",
		ArgsUsage: "[FILE…]",
		Description: `Without arguments, checks the whole log — every rotated file, in order, then the current
file — against the chain head file, which also detects a removed rotated file and records
removed from the end. With FILE arguments, checks just those files as one chain, in the
order given. Exits 0 when the chain is intact (repairs of torn writes after a crash are
listed, not failures), 1 otherwise.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			&cli.StringFlag{Name: "pubkey", Usage: "verifier `KEY` (or a file holding it) of the admin's checkpoint signer (`hookd audit keygen`)"},
			&cli.StringSliceFlag{Name: "checkpoint", Usage: "`FILE` holding signed checkpoints shipped off the machine (a note, several, or exported JSON lines); the newest valid one is checked. Default with --pubkey: the log's own <base>.checkpoint and checkpoint records (weaker: they live with the log)"},
		},
		Action: func(c *cli.Context) error {
			var rep *audit.Report
			var err error
			var path string
			if c.NArg() > 0 {
				rep, err = audit.VerifyFiles(c.Args().Slice()...)
			} else {
				if path, err = auditPath(c); err != nil {
					return err
				}
				rep, err = audit.VerifyLog(path)
				if errors.Is(err, fs.ErrNotExist) {
					return exitError{code: 1, msg: fmt.Sprintf("no decision log at %s (is auditing on? --audit-dir points elsewhere)", path)}
				}
			}
			if err != nil {
				return err
			}
			if k := c.String("pubkey"); k != "" {
				if path == "" {
					return exitError{code: 2, msg: "--pubkey checks the whole log: give no FILE arguments"}
				}
				cp, err := newestCheckpoint(path, k, c.StringSlice("checkpoint"))
				if err != nil {
					return exitError{code: 1, msg: err.Error()}
				}
				rep.Checkpoint = &audit.CheckpointReport{Seq: cp.Seq, Hash: cp.Hash, Time: cp.Time, Signer: cp.Signer, Origin: cp.Origin}
				if p, err := audit.CheckCheckpoint(path, cp); err != nil {
					return err
				} else if p != nil {
					rep.Problems = append([]audit.Problem{*p}, rep.Problems...)
				}
			}
			w := c.App.Writer
			if c.Bool("json") {
				b, _ := json.MarshalIndent(rep, "", "  ")
				fmt.Fprintln(w, string(b))
			} else {
				printVerify(c, rep)
			}
			if !rep.OK() {
				return exitError{code: 1}
			}
			return nil
		},
	}, "audit-dir", "config", "state-dir")
}

func printVerify(c *cli.Context, rep *audit.Report) {
	w := c.App.Writer
	if rep.OK() {
		var names []string
		for _, f := range rep.Files {
			names = append(names, fmt.Sprintf("%s (%d)", f.File, f.Records))
		}
		fmt.Fprintf(w, "OK: %d records (%d decisions) in %d files, seq %d..%d\n", rep.Records, rep.Decisions, len(rep.Files), rep.FirstSeq, rep.LastSeq)
		if cp := rep.Checkpoint; cp != nil {
			fmt.Fprintf(w, "  signed checkpoint: covers seq %d (signed by %s at %s): matches\n", cp.Seq, cp.Signer, when(cp.Time))
		}
		if len(names) > 0 {
			fmt.Fprintf(w, "  files: %s\n", strings.Join(names, ", "))
		}
		switch {
		case rep.Head:
			fmt.Fprintln(w, "  chain head: matches")
		case c.NArg() == 0:
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
				r.File, r.Line, r.Seq, x.DroppedBytes, x.Offset, x.File, shortHash(x.DroppedSHA256))
		default:
			fmt.Fprintf(w, "  repair %s:%d (seq %d): %s: %s\n", r.File, r.Line, r.Seq, x.Reason, x.Detail)
		}
	}
}
