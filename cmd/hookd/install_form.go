package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/configs/install"
)

// formFlags are install claude-code's flags for the forwarder form.
func formFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "forwarder-form", Value: "auto", Usage: "how Claude Code starts hookc: exec (\"command\" + \"args\", no shell per event; Claude Code " + install.ExecFormSince + "+), shell (a command line run by sh -c; every version), or auto: exec when `claude --version` says " + install.ExecFormSince + " or later, else shell"},
		&cli.StringFlag{Name: "claude", Usage: "with --forwarder-form auto: the Claude Code `PATH` whose version decides (default: claude on PATH)"},
	}
}

// claudeVersionTimeout bounds `claude --version` (a cold start of Claude Code takes a
// second or two on a slow machine).
const claudeVersionTimeout = 30 * time.Second

// formChoice is the forwarder form for this install and the line that says why.
type formChoice struct{ form, note string }

// forwarderForm resolves --forwarder-form (once per command: every scope of --scope all
// gets the same form).
func forwarderForm(c *cli.Context) (formChoice, error) {
	switch f := c.String("forwarder-form"); f {
	case install.FormExec, install.FormShell:
		return formChoice{f, fmt.Sprintf("forwarders in the %s form (--forwarder-form %s)", f, f)}, nil
	case "auto", "":
	default:
		return formChoice{}, fmt.Errorf("--forwarder-form %q: auto, exec or shell", f)
	}
	bin := c.String("claude")
	if bin == "" {
		p, err := exec.LookPath("claude")
		if err != nil {
			return formChoice{install.FormShell, "forwarders in the shell form: no claude on PATH to ask for its version (--forwarder-form exec for Claude Code " + install.ExecFormSince + " and later)"}, nil
		}
		bin = p
	} else if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	ctx, cancel := context.WithTimeout(context.Background(), claudeVersionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return formChoice{install.FormShell, fmt.Sprintf("forwarders in the shell form: `%s --version` failed (%v); --forwarder-form exec for Claude Code %s and later", bin, err, install.ExecFormSince)}, nil
	}
	form, why := install.FormFor(string(out))
	return formChoice{form, fmt.Sprintf("forwarders in the %s form: %s (`%s --version`: %s)", form, why, bin, strings.TrimSpace(firstLine(string(out))))}, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
