package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Users type global flags after the command (`hookd serve --socket S`); urfave/cli
// rejects that unless every command declares them too.
func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	e := NewEnv(t)
	// The environment names one socket (HOOKD_SOCKET in BaseEnv); the flag after
	// `serve` must win, so the daemon answers on the other one only.
	envSocket := e.Socket
	e.Socket = filepath.Join(filepath.Dir(envSocket), "flag.sock")
	e.extraEnv = append(e.extraEnv, "HOOKD_SOCKET="+envSocket) // exec keeps the last value
	e.StartArgs(append([]string{"serve"}, e.DaemonArgs()...)...)
	if _, err := os.Stat(envSocket); err == nil {
		t.Fatalf("daemon listens on %s from the environment, not on --socket %s", envSocket, e.Socket)
	}
	r := e.Hookd("", "status", "--socket", e.Socket)
	if r.Code != 0 || !strings.Contains(r.Stdout, "sources:") {
		t.Fatalf("hookd status --socket: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
}
