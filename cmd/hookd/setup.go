package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/configs/atomicfile"
	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/service"
	"github.com/hookd/hookd/configs/settings"
)

// setupRecord is what `hookd setup` started that `hookd setup --undo` must stop: kept in
// <state-dir>/setup.json.
type setupRecord struct {
	Harness string `json:"harness"`
	// Service is the manager that runs hookd ("systemd", "launchd"), or "background" when
	// there was none and setup started `hookd serve` itself (PID).
	Service string    `json:"service"`
	PID     int       `json:"pid,omitempty"`
	At      time.Time `json:"at"`
}

const setupFile = "setup.json"

func setupCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:      "setup",
		Usage:     "set this machine up in one step: the service, the harness's forwarders, then doctor",
		ArgsUsage: "[claude-code|codex|gemini]",
		Description: `hookd setup [claude-code] keeps hookd running under the OS's service manager (hookd service
install) — or, where no service manager runs for this user, starts hookd serve in the
background and says it will not survive a reboot — routes the harness's hooks through hookd
(hookd install <harness>), and runs hookd doctor, whose exit code it returns (0 healthy, 1
degraded, 2 broken). Idempotent: run it again after an upgrade or a change.

--dry-run lists every file it would write or change and every command it would run, and
changes nothing. --undo reverses it: the harness's hooks go back (its settings files byte
for byte when unedited since), the service is removed, a background hookd is stopped.
hookd's state directory (the decision log, install backups) is kept. See docs/setup.md.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "list the files and commands, change nothing"},
			&cli.BoolFlag{Name: "undo", Usage: "reverse a previous setup"},
		},
		Action: func(c *cli.Context) error {
			harness := c.Args().First()
			if harness == "" {
				harness = "claude-code"
			}
			switch harness {
			case "claude-code", "codex", "gemini":
			default:
				return exitError{2, fmt.Sprintf("setup: unknown harness %q: claude-code, codex or gemini", harness)}
			}
			if c.NArg() > 1 {
				return exitError{2, "setup: one harness at a time"}
			}
			if c.Bool("undo") {
				return setupUndo(c, harness)
			}
			return setupDo(c, harness)
		},
	}, "socket", "config", "managed-dir", "user-dir", "settings", "state-dir")
}

// globalArgs are the global flags this command was given, to pass on to the steps.
func globalArgs(c *cli.Context) []string {
	args := []string{"--socket", c.String("socket")}
	for _, name := range []string{"config", "managed-dir", "user-dir", "state-dir"} {
		if v := c.String(name); v != "" {
			args = append(args, "--"+name, v)
		}
	}
	for _, v := range c.StringSlice("settings") {
		args = append(args, "--settings", v)
	}
	return args
}

// step runs `hookd <globals> args…` (this binary), its output going to ours.
func step(c *cli.Context, args ...string) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, append(globalArgs(c), args...)...)
	cmd.Stdout, cmd.Stderr = c.App.Writer, c.App.ErrWriter
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}

func installArgs(harness string) []string {
	if harness == "claude-code" {
		return []string{"claude-code", "--scope", "user"}
	}
	return []string{harness}
}

func setupDo(c *cli.Context, harness string) error {
	w := c.App.Writer
	dry := c.Bool("dry-run")
	state := c.String("state-dir")
	m, d, err := serviceManager(c)
	if err != nil {
		return err
	}
	available, why := m.Available()
	if dry {
		fmt.Fprintln(w, "hookd setup --dry-run: nothing is changed. It would touch these files:")
		for _, f := range setupFiles(c, harness, m, available) {
			fmt.Fprintln(w, "  "+f)
		}
		fmt.Fprintln(w, "and run:")
	}
	// 1. The forwarders (first: the service carries the http port when there is one).
	fmt.Fprintf(w, "== %s: forward its hooks to hookd\n", harness)
	args := append([]string{"install"}, installArgs(harness)...)
	if harness == "claude-code" {
		// Under a service manager, the http transport for the events where nothing is
		// lost by it (docs/http-forwarder.md): the service's socket holds the port, so a
		// stopped hookd is started again by the next event instead of the event being
		// refused. Without one, hookc: its fallback runs the hooks while no hookd runs.
		transport := install.TransportHookc
		if available {
			transport = install.TransportHTTP
		}
		args = append(args, "--transport", transport)
	}
	if dry {
		args = append(args, "--dry-run")
	}
	if code, err := step(c, args...); err != nil || code != 0 {
		return exitError{2, fmt.Sprintf("setup: hookd %v failed (exit %d) %v", args, code, errOrNil(err))}
	}
	// 2. The service, or a background daemon where no service manager runs.
	fmt.Fprintln(w, "== the service")
	rec := setupRecord{Harness: harness, Service: m.Kind, At: time.Now().UTC()}
	if available {
		args := []string{"service", "install"}
		if dry {
			args = append(args, "--dry-run")
		}
		if code, err := step(c, args...); err != nil || code != 0 {
			return exitError{2, fmt.Sprintf("setup: hookd service install failed (exit %d) %v", code, errOrNil(err))}
		}
		if !dry {
			service.WaitReachable(d.Socket, 30*time.Second) // the first connection starts it
		}
	} else {
		fmt.Fprintf(w, "no %s service manager runs for this user (%s)\n", m.Kind, why)
		rec.Service = "background"
		switch {
		case service.Reachable(d.Socket):
			fmt.Fprintf(w, "hookd already answers on %s; leaving it running\n", d.Socket)
			if old, err := readSetupRecord(state); err == nil && old.Service == "background" {
				rec.PID = old.PID
			}
		case dry:
			fmt.Fprintf(w, "would start: hookd serve in the background (log: %s); it would not survive a reboot\n", filepath.Join(state, "hookd.log"))
		default:
			self, err := os.Executable()
			if err != nil {
				return err
			}
			if err := os.MkdirAll(state, 0o700); err != nil {
				return err
			}
			pid, err := service.Background(self, append(globalArgs(c), "serve"), filepath.Join(state, "hookd.log"), d.Socket)
			if err != nil {
				return exitError{2, "setup: starting hookd: " + err.Error()}
			}
			rec.PID = pid
			fmt.Fprintf(w, "started hookd serve in the background (pid %d, log %s); it will not survive a reboot: run `hookd setup` again after one, or supervise `hookd serve` yourself\n",
				pid, filepath.Join(state, "hookd.log"))
		}
	}
	if dry {
		return nil
	}
	if err := writeSetupRecord(state, rec); err != nil {
		return err
	}
	// 3. doctor decides.
	fmt.Fprintln(w, "== doctor")
	code, err := step(c, "doctor")
	if err != nil {
		return err
	}
	if code != 0 {
		return exitError{code: code}
	}
	return nil
}

func errOrNil(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// setupFiles lists every file setup may write: the harness's settings file and hookd's file
// beside it, the install backup directory, the service's files (or the background log),
// and setup's own record.
func setupFiles(c *cli.Context, harness string, m *service.Manager, available bool) []string {
	state := c.String("state-dir")
	var files []string
	if harness == "claude-code" {
		s := filepath.Join(c.String("user-dir"), "settings.json")
		files = append(files, s+" (forwarders replace its hooks; backed up first)", settings.HookdPathFor(s, settings.KindUser)+" (the moved hooks)")
	} else {
		files = append(files, "the "+harness+" hooks file `hookd install "+harness+" --dry-run` names below (backed up first)")
	}
	files = append(files, backupDir(c)+"/ (backups)")
	if ep, _ := install.LoadHTTPEndpoint(state); ep != nil {
		files = append(files, filepath.Join(state, install.HTTPEndpointFile)+" (read)")
	}
	if available {
		for _, f := range m.Files {
			files = append(files, f.Path)
		}
	} else {
		files = append(files, filepath.Join(state, "hookd.log")+" (the background daemon's log)")
	}
	return append(files, filepath.Join(state, setupFile))
}

func readSetupRecord(state string) (setupRecord, error) {
	var r setupRecord
	b, err := os.ReadFile(filepath.Join(state, setupFile))
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}

func writeSetupRecord(state string, r setupRecord) error {
	if err := os.MkdirAll(state, 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	return atomicfile.Write(filepath.Join(state, setupFile), append(b, '\n'), 0o600, true)
}

func setupUndo(c *cli.Context, harness string) error {
	w := c.App.Writer
	dry := c.Bool("dry-run")
	state := c.String("state-dir")
	rec, recErr := readSetupRecord(state)
	fmt.Fprintf(w, "== %s: give its hooks back\n", harness)
	args := append([]string{"uninstall"}, installArgs(harness)...)
	if dry {
		args = append(args, "--dry-run")
	}
	if code, err := step(c, args...); err != nil || code != 0 {
		return exitError{2, fmt.Sprintf("setup --undo: hookd %v failed (exit %d) %v", args, code, errOrNil(err))}
	}
	fmt.Fprintln(w, "== the service")
	args = []string{"service", "uninstall"}
	if dry {
		args = append(args, "--dry-run")
	}
	if code, err := step(c, args...); err != nil || code != 0 {
		return exitError{2, fmt.Sprintf("setup --undo: hookd service uninstall failed (exit %d) %v", code, errOrNil(err))}
	}
	if recErr == nil && rec.Service == "background" && rec.PID > 0 {
		if dry {
			fmt.Fprintf(w, "would stop the background hookd (pid %d)\n", rec.PID)
		} else if stopped, err := stopBackground(c, rec.PID); err != nil {
			return exitError{2, "setup --undo: " + err.Error()}
		} else if stopped {
			fmt.Fprintf(w, "stopped the background hookd (pid %d)\n", rec.PID)
		}
	}
	if dry {
		fmt.Fprintf(w, "would remove %s\n", filepath.Join(state, setupFile))
		return nil
	}
	if err := os.Remove(filepath.Join(state, setupFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// stopBackground stops the hookd setup started, after checking that the daemon answering
// on the socket is that process (a recycled pid is never signalled).
func stopBackground(c *cli.Context, pid int) (bool, error) {
	st, err := doctorStatus(c)
	if err != nil {
		return false, nil // not running any more
	}
	if st.PID != pid {
		return false, fmt.Errorf("the hookd answering on %s is pid %d, not the %d setup started; stop it yourself", c.String("socket"), st.PID, pid)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return false, fmt.Errorf("stopping hookd (pid %d): %w", pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for service.Reachable(c.String("socket")) {
		if time.Now().After(deadline) {
			return false, errors.New("hookd (pid " + strconv.Itoa(pid) + ") did not stop within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The socket is gone; give it the moment it needs to close the decision log (a zombie
	// nobody reaps still answers kill 0, so this waits at most that moment).
	for end := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	return true, nil
}
