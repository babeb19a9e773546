package service

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hookd/hookd/configs/atomicfile"
)

// Runner runs a service manager's command and returns its combined output.
type Runner func(name string, args ...string) (string, error)

// Exec is the Runner that runs the command.
func Exec(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Manager installs, removes and inspects the service for one OS's service manager.
type Manager struct {
	Kind  string // "systemd" or "launchd"
	Files []File
	// unit names (systemd) or the launchd domain target and plist (launchd)
	run    Runner
	target string
}

// Paths says where the user's files live (tests use a scratch HOME).
type Paths struct {
	Home   string
	Getenv func(string) string
	UID    int
}

// For renders d for the service manager of goos ("linux": systemd, "darwin": launchd).
func For(goos string, d Description, p Paths, run Runner) (*Manager, error) {
	if run == nil {
		run = Exec
	}
	switch goos {
	case "linux":
		files, err := Systemd(d, userUnitDir(p.Home, p.Getenv))
		if err != nil {
			return nil, err
		}
		return &Manager{Kind: "systemd", Files: files, run: run}, nil
	case "darwin":
		if d.LogDir == "" {
			d.LogDir = filepath.Join(p.Home, "Library", "Logs", "hookd")
		}
		files, err := Launchd(d, filepath.Join(p.Home, "Library", "LaunchAgents"))
		if err != nil {
			return nil, err
		}
		return &Manager{Kind: "launchd", Files: files, run: run, target: "gui/" + strconv.Itoa(p.UID)}, nil
	}
	return nil, fmt.Errorf("service: no service manager support for %s (run `hookd serve` under yours; docs/service.md)", goos)
}

// Commands are the manager commands Install (op "install") or Uninstall ("uninstall")
// runs, for --dry-run.
func (m *Manager) Commands(op string) [][]string {
	switch m.Kind + " " + op {
	case "systemd install":
		return [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", Name + ".socket"},
			{"systemctl", "--user", "try-restart", Name + ".service"}}
	case "systemd uninstall":
		return [][]string{{"systemctl", "--user", "disable", "--now", Name + ".socket", Name + ".service"}, {"systemctl", "--user", "daemon-reload"}}
	case "launchd install":
		return [][]string{{"launchctl", "bootout", m.target + "/" + Label}, {"launchctl", "bootstrap", m.target, m.Files[0].Path}}
	case "launchd uninstall":
		return [][]string{{"launchctl", "bootout", m.target + "/" + Label}}
	}
	return nil
}

// ErrNoManager says the service manager is not running for this user (no systemd --user:
// a container, a session without pam_systemd). The files are written; nothing started.
var ErrNoManager = errors.New("the service manager is not running for this user")

// Available reports whether the user's service manager answers, with its words if not.
func (m *Manager) Available() (bool, string) {
	var out string
	var err error
	switch m.Kind {
	case "systemd":
		out, err = m.run("systemctl", "--user", "is-system-running")
		// is-system-running exits non-zero for "degraded" and "starting" too; only a
		// manager that cannot be reached is absent.
		if err != nil && (out == "" || strings.Contains(out, "Failed to connect") || strings.Contains(out, "offline") ||
			errors.Is(err, exec.ErrNotFound)) {
			return false, firstLine(out, err)
		}
	case "launchd":
		out, err = m.run("launchctl", "print", m.target)
		if err != nil {
			return false, firstLine(out, err)
		}
	}
	return true, ""
}

func firstLine(out string, err error) string {
	if out == "" && err != nil {
		return err.Error()
	}
	line, _, _ := strings.Cut(out, "\n")
	return line
}

// WriteFiles writes the service's files (0644, atomically), creating their directories.
// It reports which it changed.
func (m *Manager) WriteFiles() (changed []string, err error) {
	for _, f := range m.Files {
		if old, err := os.ReadFile(f.Path); err == nil && bytes.Equal(old, f.Content) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			return changed, err
		}
		if err := atomicfile.Write(f.Path, f.Content, 0o644, true); err != nil {
			return changed, err
		}
		changed = append(changed, f.Path)
	}
	return changed, nil
}

// Install writes the files and has the manager load and start them. When the manager is
// not running it returns ErrNoManager (wrapped, with its words) after writing the files.
func (m *Manager) Install() (changed []string, err error) {
	if changed, err = m.WriteFiles(); err != nil {
		return changed, err
	}
	if ok, why := m.Available(); !ok {
		return changed, fmt.Errorf("%w (%s): the files are written; hookd starts with the next login that runs it", ErrNoManager, why)
	}
	for i, c := range m.Commands("install") {
		out, err := m.run(c[0], c[1:]...)
		if err != nil && !(m.Kind == "launchd" && i == 0) { // bootout of an agent not loaded fails
			return changed, fmt.Errorf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
	return changed, nil
}

// Uninstall stops and unloads the service and removes its files. A manager that is not
// running is not an error: the files are removed.
func (m *Manager) Uninstall() (removed []string, err error) {
	if ok, _ := m.Available(); ok {
		for _, c := range m.Commands("uninstall") {
			_, _ = m.run(c[0], c[1:]...) // not loaded, already stopped: fine
		}
	}
	for _, f := range m.Files {
		if err := os.Remove(f.Path); err == nil {
			removed = append(removed, f.Path)
		} else if !errors.Is(err, os.ErrNotExist) {
			return removed, err
		}
	}
	return removed, nil
}

// Status is the service's state as the manager and the files say.
type Status struct {
	Manager   string       `json:"manager"`
	Available bool         `json:"available"`
	Why       string       `json:"why,omitempty"` // why the manager is not available
	Files     []FileStatus `json:"files"`
	Enabled   string       `json:"enabled,omitempty"` // systemctl is-enabled of the socket / launchd: loaded
	Socket    string       `json:"socket,omitempty"`  // is-active of the socket unit
	Service   string       `json:"service,omitempty"` // is-active of the service unit / launchd state
}

// FileStatus is one of the service's files: absent, as hookd would write it now, or stale
// (an older hookd's, another binary path, another socket).
type FileStatus struct {
	Path  string `json:"path"`
	State string `json:"state"` // "current", "stale", "absent"
}

// Installed reports whether every file is present.
func (s Status) Installed() bool {
	for _, f := range s.Files {
		if f.State == "absent" {
			return false
		}
	}
	return len(s.Files) > 0
}

// Current reports whether every file is as hookd would write it now.
func (s Status) Current() bool {
	for _, f := range s.Files {
		if f.State != "current" {
			return false
		}
	}
	return len(s.Files) > 0
}

// Status inspects the files and asks the manager.
func (m *Manager) Status() Status {
	st := Status{Manager: m.Kind}
	for _, f := range m.Files {
		fs := FileStatus{Path: f.Path, State: "absent"}
		if b, err := os.ReadFile(f.Path); err == nil {
			fs.State = "stale"
			if bytes.Equal(b, f.Content) {
				fs.State = "current"
			}
		}
		st.Files = append(st.Files, fs)
	}
	st.Available, st.Why = m.Available()
	if !st.Available {
		return st
	}
	switch m.Kind {
	case "systemd":
		st.Enabled, _ = m.run("systemctl", "--user", "is-enabled", Name+".socket")
		st.Socket, _ = m.run("systemctl", "--user", "is-active", Name+".socket")
		st.Service, _ = m.run("systemctl", "--user", "is-active", Name+".service")
	case "launchd":
		if out, err := m.run("launchctl", "print", m.target+"/"+Label); err == nil {
			st.Enabled = "loaded"
			for _, line := range strings.Split(out, "\n") {
				if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok && k == "state" {
					st.Service = v
				}
			}
		} else {
			st.Enabled = "not loaded"
		}
	}
	return st
}

// Text is the status as `hookd service status` prints it.
func (s Status) Text() string {
	var b strings.Builder
	b.WriteString("manager:  " + s.Manager)
	if !s.Available {
		b.WriteString(" (not running for this user: " + s.Why + ")")
	}
	b.WriteString("\n")
	for _, f := range s.Files {
		b.WriteString("file:     " + f.Path + " (" + f.State + ")\n")
	}
	if s.Available {
		dash := func(v string) string {
			if v == "" {
				return "-"
			}
			return v
		}
		b.WriteString("enabled:  " + dash(s.Enabled) + "\nsocket:   " + dash(s.Socket) + "\nservice:  " + dash(s.Service) + "\n")
	}
	return b.String()
}
