package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/daemon/audit"
)

func auditKeygenCommand() *cli.Command {
	return &cli.Command{
		Name:  "keygen",
		Usage: "make an Ed25519 key pair for signed checkpoints",
		Description: `Writes the signer key to --out (mode 0600; point audit.checkpoint.key_file at it) and
prints the verifier key, which auditors pass to 'hookd audit verify --pubkey'. Keys are
in the signed-note format (golang.org/x/mod/sumdb/note): "NAME+HASH+KEY".`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Value: "hookd-audit", Usage: "key `NAME` shown in every signature"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "signer key `FILE` to create"},
		},
		Action: func(c *cli.Context) error {
			skey, vkey, err := audit.GenerateKey(c.String("name"))
			if err != nil {
				return err
			}
			f, err := os.OpenFile(c.String("out"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintln(f, skey); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintln(c.App.Writer, vkey)
			return nil
		},
	}
}

// newestCheckpoint opens every checkpoint in files (or, without files, the log's own
// <base>.checkpoint and checkpoint records) with the verifier key and returns the one
// covering the most records. A checkpoint whose signature does not verify is an error:
// someone handed the auditor a forged or foreign note.
func newestCheckpoint(path, key string, files []string) (*audit.Checkpoint, error) {
	if data, err := os.ReadFile(key); err == nil {
		key = strings.TrimSpace(string(data))
	}
	var notes [][]byte
	if len(files) == 0 {
		files = []string{audit.CheckpointPath(path)}
		if fs, err := audit.Files(path); err == nil {
			files = append(files, fs...)
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && f == audit.CheckpointPath(path) {
				continue
			}
			return nil, err
		}
		notes = append(notes, audit.SplitCheckpoints(data)...)
	}
	if len(notes) == 0 {
		return nil, fmt.Errorf("FAILED: no signed checkpoint found in %s", strings.Join(base(files), ", "))
	}
	var best *audit.Checkpoint
	for _, n := range notes {
		cp, err := audit.OpenCheckpoint(n, key)
		if err != nil {
			return nil, fmt.Errorf("FAILED: %w", err)
		}
		if best == nil || cp.Seq > best.Seq {
			best = cp
		}
	}
	return best, nil
}

func base(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Base(f)
	}
	return out
}
