package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/protocol"
)

// seen is what a command's action read from the global flags.
type seen struct {
	socket, stateDir string
	settings         []string
	debug            bool
}

// runApp runs hookd's real command line with args, every action replaced by one that
// records the global flags as the command sees them.
func runApp(t *testing.T, args ...string) seen {
	t.Helper()
	app := App()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	var got seen
	ran := false
	var capture func([]*cli.Command)
	capture = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			cmd.Action = func(c *cli.Context) error {
				ran = true
				got = seen{c.String("socket"), c.String("state-dir"), c.StringSlice("settings"), c.Bool("debug")}
				return nil
			}
			capture(cmd.Subcommands)
		}
	}
	capture(app.Commands)
	if err := app.Run(append([]string{"hookd"}, args...)); err != nil {
		t.Fatalf("hookd %s: %v", strings.Join(args, " "), err)
	}
	if !ran {
		t.Fatalf("hookd %s: no command ran", strings.Join(args, " "))
	}
	return got
}

func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	t.Setenv(protocol.EnvSocket, "/env.sock")
	t.Setenv("HOOKD_STATE_DIR", "/env-state")
	for _, tc := range []struct {
		args []string
		want seen
	}{
		{[]string{"status"}, seen{socket: "/env.sock", stateDir: "/env-state"}},
		{[]string{"--socket", "/a.sock", "status"}, seen{socket: "/a.sock", stateDir: "/env-state"}},
		{[]string{"serve", "--socket", "/b.sock", "--grace", "1s"}, seen{socket: "/b.sock", stateDir: "/env-state"}},
		{[]string{"--socket", "/a.sock", "status", "--socket", "/b.sock"}, seen{socket: "/b.sock", stateDir: "/env-state"}},
		{[]string{"run", "--state-dir", "/s", "--debug"}, seen{socket: "/env.sock", stateDir: "/s", debug: true}},
		{[]string{"--debug", "reload"}, seen{socket: "/env.sock", stateDir: "/env-state", debug: true}},
		// --settings is repeatable: every value counts, outer ones first.
		{[]string{"--settings", "a.json", "validate", "--settings", "b.json"},
			seen{socket: "/env.sock", stateDir: "/env-state", settings: []string{"a.json", "b.json"}}},
		{[]string{"validate", "--settings", "b.json"}, seen{socket: "/env.sock", stateDir: "/env-state", settings: []string{"b.json"}}},
		// Subcommands of subcommands inherit through every level.
		{[]string{"--socket", "/a.sock", "audit", "--state-dir", "/s", "verify", "--socket", "/c.sock"},
			seen{socket: "/c.sock", stateDir: "/s"}},
		{[]string{"--socket", "/a.sock", "audit", "verify"}, seen{socket: "/a.sock", stateDir: "/env-state"}},
	} {
		got := runApp(t, tc.args...)
		if got.socket != tc.want.socket || got.stateDir != tc.want.stateDir || got.debug != tc.want.debug ||
			!slices.Equal(got.settings, tc.want.settings) {
			t.Errorf("hookd %s: got %+v, want %+v", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}
