// Package setup is `hookd setup` (docs/install.md): the harness's forwarders, the service
// (or, where no service manager runs, a background daemon), then doctor — and --undo. Each
// step is a hookd command run as a child (Options.Step), so setup does exactly what the
// commands do by hand.
package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/hookd/hookd/configs/atomicfile"
	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/service"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/protocol"
)

// Options are what setup works with.
type Options struct {
	Harness                              string // claude-code, codex or gemini
	DryRun                               bool
	StateDir, UserDir, Socket, BackupDir string
	Out                                  io.Writer
	// Step runs `hookd <the global flags> args…` and returns its exit code.
	Step func(args ...string) (int, error)
	// Exe and ServeArgs start the background daemon: Exe ServeArgs… (`hookd … serve`).
	Exe       string
	ServeArgs []string
	// Manager is the OS's service for Desc (nil: ManagerErr says why).
	Manager    *service.Manager
	Desc       service.Description
	ManagerErr error
	// Status asks the daemon on Socket for its status.
	Status func() (*protocol.Status, error)
}

// ExitError is an exit code for hookd, with a message ("" for none).
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

func installArgs(harness string) []string {
	if harness == "claude-code" {
		return []string{"claude-code", "--scope", "user"}
	}
	return []string{harness}
}

func errOrNil(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// record is what `hookd setup` started that `hookd setup --undo` must stop: kept in
// <state-dir>/setup.json.
type record struct {
	Harness string `json:"harness"`
	// Service is the manager that runs hookd ("systemd", "launchd"), or "background" when
	// there was none and setup started `hookd serve` itself (PID).
	Service string    `json:"service"`
	PID     int       `json:"pid,omitempty"`
	At      time.Time `json:"at"`
}

const recordFile = "setup.json"

func Do(o Options) error {
	w := o.Out
	dry := o.DryRun
	state := o.StateDir
	m, d := o.Manager, o.Desc
	if o.ManagerErr != nil {
		return o.ManagerErr
	}
	available, why := m.Available()
	if dry {
		fmt.Fprintln(w, "hookd setup --dry-run: nothing is changed. It would touch these files:")
		for _, f := range files(o, m, available) {
			fmt.Fprintln(w, "  "+f)
		}
		fmt.Fprintln(w, "and run:")
	}
	// 1. The forwarders (first: the service carries the http port when there is one).
	fmt.Fprintf(w, "== %s: forward its hooks to hookd\n", o.Harness)
	args := append([]string{"install"}, installArgs(o.Harness)...)
	if o.Harness == "claude-code" {
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
	if code, err := o.Step(args...); err != nil || code != 0 {
		return &ExitError{2, fmt.Sprintf("setup: hookd %v failed (exit %d) %v", args, code, errOrNil(err))}
	}
	// 2. The service, or a background daemon where no service manager runs.
	fmt.Fprintln(w, "== the service")
	rec := record{Harness: o.Harness, Service: m.Kind, At: time.Now().UTC()}
	if available {
		args := []string{"service", "install"}
		if dry {
			args = append(args, "--dry-run")
		}
		if code, err := o.Step(args...); err != nil || code != 0 {
			return &ExitError{2, fmt.Sprintf("setup: hookd service install failed (exit %d) %v", code, errOrNil(err))}
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
			if old, err := readRecord(state); err == nil && old.Service == "background" {
				rec.PID = old.PID
			}
		case dry:
			fmt.Fprintf(w, "would start: hookd serve in the background (log: %s); it would not survive a reboot\n", filepath.Join(state, "hookd.log"))
		default:
			if err := os.MkdirAll(state, 0o700); err != nil {
				return err
			}
			pid, err := service.Background(o.Exe, o.ServeArgs, filepath.Join(state, "hookd.log"), d.Socket)
			if err != nil {
				return &ExitError{2, "setup: starting hookd: " + err.Error()}
			}
			rec.PID = pid
			fmt.Fprintf(w, "started hookd serve in the background (pid %d, log %s); it will not survive a reboot: run `hookd setup` again after one, or supervise `hookd serve` yourself\n",
				pid, filepath.Join(state, "hookd.log"))
		}
	}
	if dry {
		return nil
	}
	if err := writeRecord(state, rec); err != nil {
		return err
	}
	// 3. doctor decides.
	fmt.Fprintln(w, "== doctor")
	code, err := o.Step("doctor")
	if err != nil {
		return err
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}

// recordFiles lists every file setup may write: the harness's settings file and hookd's file
// beside it, the install backup directory, the service's files (or the background log),
// and setup's own record.
func files(o Options, m *service.Manager, available bool) []string {
	state := o.StateDir
	var files []string
	if o.Harness == "claude-code" {
		s := filepath.Join(o.UserDir, "settings.json")
		files = append(files, s+" (forwarders replace its hooks; backed up first)", settings.HookdPathFor(s, settings.KindUser)+" (the moved hooks)")
	} else {
		files = append(files, "the "+o.Harness+" hooks file `hookd install "+o.Harness+" --dry-run` names below (backed up first)")
	}
	files = append(files, o.BackupDir+"/ (backups)")
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
	return append(files, filepath.Join(state, recordFile))
}

func readRecord(state string) (record, error) {
	var r record
	b, err := os.ReadFile(filepath.Join(state, recordFile))
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}

func writeRecord(state string, r record) error {
	if err := os.MkdirAll(state, 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	return atomicfile.Write(filepath.Join(state, recordFile), append(b, '\n'), 0o600, true)
}

func Undo(o Options) error {
	w := o.Out
	dry := o.DryRun
	state := o.StateDir
	rec, recErr := readRecord(state)
	fmt.Fprintf(w, "== %s: give its hooks back\n", o.Harness)
	args := append([]string{"uninstall"}, installArgs(o.Harness)...)
	if dry {
		args = append(args, "--dry-run")
	}
	if code, err := o.Step(args...); err != nil || code != 0 {
		return &ExitError{2, fmt.Sprintf("setup --undo: hookd %v failed (exit %d) %v", args, code, errOrNil(err))}
	}
	fmt.Fprintln(w, "== the service")
	args = []string{"service", "uninstall"}
	if dry {
		args = append(args, "--dry-run")
	}
	if code, err := o.Step(args...); err != nil || code != 0 {
		return &ExitError{2, fmt.Sprintf("setup --undo: hookd service uninstall failed (exit %d) %v", code, errOrNil(err))}
	}
	if recErr == nil && rec.Service == "background" && rec.PID > 0 {
		if dry {
			fmt.Fprintf(w, "would stop the background hookd (pid %d)\n", rec.PID)
		} else if stopped, err := stopBackground(o, rec.PID); err != nil {
			return &ExitError{2, "setup --undo: " + err.Error()}
		} else if stopped {
			fmt.Fprintf(w, "stopped the background hookd (pid %d)\n", rec.PID)
		}
	}
	if dry {
		fmt.Fprintf(w, "would remove %s\n", filepath.Join(state, recordFile))
		return nil
	}
	if err := os.Remove(filepath.Join(state, recordFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// stopBackground stops the hookd setup started, after checking that the daemon answering
// on the socket is that process (a recycled pid is never signalled).
func stopBackground(o Options, pid int) (bool, error) {
	st, err := o.Status()
	if err != nil {
		return false, nil // not running any more
	}
	if st.PID != pid {
		return false, fmt.Errorf("the hookd answering on %s is pid %d, not the %d setup started; stop it yourself", o.Socket, st.PID, pid)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return false, fmt.Errorf("stopping hookd (pid %d): %w", pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for service.Reachable(o.Socket) {
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
