package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"

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
	v, err := claudeVersion(bin)
	if err != nil {
		return formChoice{install.FormShell, fmt.Sprintf("forwarders in the shell form: `%s --version` failed (%v); --forwarder-form exec for Claude Code %s and later", bin, err, install.ExecFormSince)}, nil
	}
	form, why := formFor(v)
	return formChoice{form, fmt.Sprintf("forwarders in the %s form: %s (`%s --version`)", form, why, bin)}, nil
}

var versionRE = regexp.MustCompile(`^\d+\.\d+\.\d+$`)

// formFor is the forwarder form for a Claude Code version as claudeVersion reads it
// ("2.1.332"), and why. Anything that is not a version gets the shell form, which every
// version runs.
func formFor(v string) (form, why string) {
	switch {
	case !versionRE.MatchString(v):
		return install.FormShell, fmt.Sprintf("Claude Code's version is unknown (%q)", v)
	case compareVersions(v, install.ExecFormSince) < 0:
		return install.FormShell, fmt.Sprintf("Claude Code %s predates the exec form (%s)", v, install.ExecFormSince)
	}
	return install.FormExec, fmt.Sprintf("Claude Code %s has the exec form (%s and later)", v, install.ExecFormSince)
}
