package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/cmd/hookd/internal/doctor"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/protocol/lite"
)

func doctorCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "doctor",
		Usage: "check this machine's hookd set-up; exit 0 healthy, 1 degraded, 2 broken",
		Description: `Checks, each finding with what to do: the daemon reachable on a trusted socket; hookd, the
running daemon and each installed hookc the same version; the service installed and
current; Claude Code's settings files forwarding events to a hookc that exists and is
executable, and their installations intact; settings files valid; events whose hooks no
forwarder sends and hooks that run nowhere; the managed settings Claude Code reads and
whether hookd's routing drop-in is in effect; the Claude Code on PATH against the version
this hookd was checked against; the decision log writable, its current file verifying, and
each exporter's backlog. Exit codes: 0 healthy (only ok and info), 1 degraded (a
warning), 2 broken (an error). See docs/doctor.md.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the report as one JSON object"}},
		Action: func(c *cli.Context) error {
			rep := doctor.Run(doctorInput(c))
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				printDoctor(c, rep)
			}
			if rep.Exit != 0 {
				return exitError{code: rep.Exit}
			}
			return nil
		},
	}, "socket", "config", "managed-dir", "user-dir", "state-dir")
}

func printDoctor(c *cli.Context, rep doctor.Report) {
	w := c.App.Writer
	mark := map[string]string{doctor.LevelOK: "ok  ", doctor.LevelInfo: "info", doctor.LevelWarning: "WARN", doctor.LevelError: "FAIL"}
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "%s  %-11s %s\n", mark[f.Level], f.Check, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "      %-11s → %s\n", "", f.Fix)
		}
	}
	counts := map[string]int{}
	for _, f := range rep.Findings {
		counts[f.Level]++
	}
	fmt.Fprintf(w, "hookd doctor: %s (%d errors, %d warnings)\n", rep.Status, counts[doctor.LevelError], counts[doctor.LevelWarning])
}

// doctorInput gathers what the checks read: the daemon's status, the installations and
// status problems `hookd status` reports, the service.
func doctorInput(c *cli.Context) doctor.Input {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	in := doctor.Input{Socket: c.String("socket"), UserDir: c.String("user-dir"), ManagedDir: c.String("managed-dir"),
		Cwd: cwd, Home: home, Version: protocol.BuildInfo().Version, MDMProfiles: lite.PathsHere(os.Getenv).MDMProfiles}
	in.Status, in.DialErr = doctorStatus(c)
	in.InstallFindings = installFindings(c, in.Status)
	if in.Status != nil {
		p := statusProblems(in.Status, nil)
		in.Failing, in.Warnings = p.failing, p.findings
	}
	in.Service, _, in.ServiceErr = serviceManager(c)
	return in
}

func doctorStatus(c *cli.Context) (*protocol.Status, error) {
	ctx, cancel := context.WithTimeout(c.Context, 10*time.Second)
	defer cancel()
	cl, err := protocol.Dial(ctx, c.String("socket"))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	f, err := cl.Do(ctx, &protocol.Request{Op: protocol.OpStatus}, nil)
	if err != nil {
		return nil, err
	}
	var st protocol.Status
	if err := json.Unmarshal(f.Data, &st); err != nil {
		return nil, fmt.Errorf("decoding the daemon's status: %w", err)
	}
	return &st, nil
}

// claudeVersion and compareVersions: `claude --version` and dotted-version order, shared
// with install's forwarder form (install_form.go).
var (
	claudeVersion   = doctor.ClaudeVersion
	compareVersions = doctor.CompareVersions
)
