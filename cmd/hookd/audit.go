package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/cmd/hookd/internal/show"
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
				show.Verify(c.App.Writer, rep, c.NArg() == 0)
			}
			if !rep.OK() {
				return exitError{code: 1}
			}
			return nil
		},
	}, "audit-dir", "config", "state-dir")
}
