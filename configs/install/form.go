package install

import (
	"fmt"
	"time"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events/jsonobj"
)

// Forwarder forms: how Claude Code starts hookc for an event. `hookd install claude-code
// --forwarder-form auto` picks one from `claude --version` (cmd/hookd).
const (
	// FormShell is a shell-form command hook, "command": "<hookc> --timeout 620s": Claude
	// Code runs it as `/bin/sh -c <command>` (Git Bash on Windows), so every event starts a
	// shell that then starts hookc.
	FormShell = "shell"
	// FormExec is the exec form, "command": "<hookc>", "args": ["--timeout", "620s"]
	// (Claude Code ExecFormSince and later): Claude Code spawns hookc directly — no shell
	// per event, and hookc sees exactly Claude Code's environment (a shell adds PWD).
	FormExec = "exec"
)

// ExecFormSince is the first Claude Code version with the exec form (`args`). Checked
// against the real platform binaries: 2.1.139 spawns `command` with `args` and no shell;
// 2.1.138 has no exec form and ignores `args` — it runs `command` alone with sh -c, so
// an exec-form forwarder read by an older Claude Code still runs hookc (without its
// --timeout), never nothing.
const ExecFormSince = "2.1.139"

// hookcCmd is the forwarder as the installer writes it: cmd is the shell-form command
// (hookc's path, shell-quoted where needed) or, in the exec form, hookc's path as is.
type hookcCmd struct {
	cmd  string
	exec bool
}

func forwarderOf(cmd, form string) hookcCmd { return hookcCmd{cmd: cmd, exec: form == FormExec} }

// set writes the forwarder's command (and, in the exec form, its args) into handler,
// with hookc's own --timeout for a handler timeout of d (none when d is 0).
func (f hookcCmd) set(handler jsonobj.Object, d time.Duration) jsonobj.Object {
	if !f.exec {
		cmd := f.cmd
		if d > 0 {
			cmd = forwarderWithTimeout(cmd, d)
		}
		return handler.Set("command", cmd)
	}
	args := []string{}
	if d > 0 {
		args = append(args, "--timeout", hookcTimeout(d))
	}
	return handler.Set("command", f.cmd).Set("args", args)
}

// form is the Meta.Form of o: FormExec, or "" for the shell form.
func (o Options) form() string {
	if o.Form == FormExec {
		return FormExec
	}
	return ""
}

// checkForm checks o.Forwarder against o.Form: a command whose program is hookc (shell
// form), or hookc's path as is, unquoted (exec form: Claude Code runs no shell, and
// resolves a bare name on PATH as a shell would).
func (o Options) checkForm() error {
	switch o.Form {
	case "", FormShell:
		if !settings.IsForwarder(o.Forwarder, nil) {
			return fmt.Errorf("the forwarder %q does not run a program named hookc; hookd could not tell it from a real hook", o.Forwarder)
		}
	case FormExec:
		if !settings.IsForwarder(o.Forwarder, []string{}) {
			return fmt.Errorf("the exec-form forwarder %q must be hookc's path, unquoted", o.Forwarder)
		}
	default:
		return fmt.Errorf("forwarder form %q: %s or %s", o.Form, FormShell, FormExec)
	}
	return nil
}

func orShell(form string) string {
	if form == "" {
		return FormShell
	}
	return form
}
