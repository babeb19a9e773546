package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/service"
)

// serviceCommand is `hookd service install|uninstall|status` (docs/service.md).
func serviceCommand() *cli.Command {
	dry := &cli.BoolFlag{Name: "dry-run", Usage: "print the files and commands, change nothing"}
	return &cli.Command{
		Name:  "service",
		Usage: "keep hookd running under the OS's service manager (systemd user units with socket activation, a launchd agent)",
		Description: `hookd service install writes a systemd user socket + service unit (Linux) or a launchd agent
(macOS) for the hookd binary it is run as (its real path), and has the manager start it:
the socket is held from login on, the first event starts hookd, a crash is restarted with
nothing lost. It carries the global flags given to it (--config, --state-dir, …) into the
service's command line, and the http forwarder's port when one is installed. Run it again
after moving hookd or installing the http transport. See docs/service.md.`,
		Subcommands: []*cli.Command{
			usesGlobals(&cli.Command{
				Name: "install", Usage: "write the service files and start the service", Flags: []cli.Flag{dry},
				Action: func(c *cli.Context) error {
					m, d, err := serviceManager(c)
					if err != nil {
						return err
					}
					if c.Bool("dry-run") {
						printServicePlan(c, m, d, "install")
						return nil
					}
					changed, err := m.Install()
					reportService(c, m, changed, "wrote")
					if errors.Is(err, service.ErrNoManager) {
						return exitError{1, err.Error() + "; run `hookd serve` yourself meanwhile"}
					}
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "hookd service: %s serves %s; hookd starts with the first event\n", m.Kind, d.Socket)
					return nil
				},
			}, "socket", "config", "managed-dir", "user-dir", "settings", "state-dir"),
			usesGlobals(&cli.Command{
				Name: "uninstall", Usage: "stop the service and remove its files", Flags: []cli.Flag{dry},
				Action: func(c *cli.Context) error {
					m, d, err := serviceManager(c)
					if err != nil {
						return err
					}
					if c.Bool("dry-run") {
						printServicePlan(c, m, d, "uninstall")
						return nil
					}
					removed, err := m.Uninstall()
					reportService(c, m, removed, "removed")
					return err
				},
			}, "socket", "config", "managed-dir", "user-dir", "settings", "state-dir"),
			usesGlobals(&cli.Command{
				Name: "status", Usage: "whether the service is installed, current and running",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print it as one JSON object"}},
				Action: func(c *cli.Context) error {
					m, _, err := serviceManager(c)
					if err != nil {
						return err
					}
					st := m.Status()
					if c.Bool("json") {
						enc := json.NewEncoder(c.App.Writer)
						enc.SetIndent("", "  ")
						return enc.Encode(st)
					}
					_, _ = io.WriteString(c.App.Writer, st.Text())
					if !st.Installed() {
						return exitError{code: 1}
					}
					return nil
				},
			}, "socket", "config", "managed-dir", "user-dir", "settings", "state-dir"),
		},
	}
}

// serviceDescription is the service for this hookd binary and the global flags given.
func serviceDescription(c *cli.Context) (service.Description, error) {
	exe, err := os.Executable()
	if err != nil {
		return service.Description{}, fmt.Errorf("finding hookd's own binary: %w", err)
	}
	if exe, err = service.RealExe(exe); err != nil {
		return service.Description{}, fmt.Errorf("finding hookd's own binary: %w", err)
	}
	sock, err := filepath.Abs(c.String("socket"))
	if err != nil {
		return service.Description{}, err
	}
	d := service.Description{Exe: exe, Socket: sock}
	// The flags whose value is not the default travel into the service's command line, so
	// the service serves what this command was pointed at.
	for _, f := range globalFlags() {
		name := f.Names()[0]
		switch f := f.(type) {
		case *cli.StringFlag:
			if name == "socket" {
				continue
			}
			if v := c.String(name); v != "" && v != f.Value {
				if abs, err := filepath.Abs(v); err == nil {
					v = abs
				}
				d.Args = append(d.Args, "--"+name, v)
			}
		case *cli.StringSliceFlag:
			for _, v := range c.StringSlice(name) {
				if abs, err := filepath.Abs(v); err == nil {
					v = abs
				}
				d.Args = append(d.Args, "--"+name, v)
			}
		}
	}
	ep, err := install.LoadHTTPEndpoint(c.String("state-dir"))
	if err != nil {
		return d, fmt.Errorf("the http forwarder's endpoint: %w", err)
	}
	if ep != nil {
		d.HTTP = ep.Listen
	}
	return d, nil
}

func servicePaths() service.Paths {
	home, _ := os.UserHomeDir()
	return service.Paths{Home: home, Getenv: os.Getenv, UID: os.Getuid()}
}

func serviceManager(c *cli.Context) (*service.Manager, service.Description, error) {
	d, err := serviceDescription(c)
	if err != nil {
		return nil, d, err
	}
	m, err := service.For(runtime.GOOS, d, servicePaths(), nil)
	return m, d, err
}

func printServicePlan(c *cli.Context, m *service.Manager, d service.Description, op string) {
	w := c.App.Writer
	for _, f := range m.Files {
		if op == "install" {
			fmt.Fprintf(w, "would write %s:\n%s\n", f.Path, indent(string(f.Content)))
		} else {
			fmt.Fprintf(w, "would remove %s\n", f.Path)
		}
	}
	for _, cmd := range m.Commands(op) {
		fmt.Fprintf(w, "would run: %s\n", strings.Join(cmd, " "))
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

func reportService(c *cli.Context, m *service.Manager, paths []string, verb string) {
	for _, p := range paths {
		fmt.Fprintf(c.App.Writer, "hookd service: %s %s\n", verb, p)
	}
}
