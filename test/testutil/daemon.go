package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// StartTimeout is how long StartDaemon waits for a new daemon's first answer, and
// StopTimeout how long Stop waits after SIGINT before it kills. Both are failure
// bounds, not expectations: a healthy daemon starts and stops in milliseconds.
const (
	StartTimeout = 20 * time.Second
	StopTimeout  = 15 * time.Second
)

// DaemonOptions say how StartDaemon runs hookd.
type DaemonOptions struct {
	Bin string // the hookd binary
	// Args are all of hookd's arguments, "serve" included; the daemon they start must
	// listen on Socket.
	Args   []string
	Socket string
	Env    []string // the daemon's whole environment
	Dir    string   // its working directory; "" is the test's
	// Cmd, if set, is the command to start instead of Bin with Args, Env and Dir (a
	// daemon run inside a namespace through a wrapper, for instance).
	Cmd *exec.Cmd
}

// Daemon is a hookd process started by StartDaemon: the one test daemon harness of the
// black-box tests (test), the Claude Code and harness end-to-end tests (test/e2e) and
// the benchmarks (test/bench). Each of those builds its scratch world (HOME, settings
// directories, socket) and its arguments; starting, waiting for the first answer,
// collecting the logs and stopping are here.
type Daemon struct {
	// Cmd is the running process (tests signal or kill Cmd.Process directly).
	Cmd    *exec.Cmd
	tb     testing.TB
	logs   SyncBuffer
	exited chan struct{}
	once   sync.Once
}

// StartDaemon starts hookd and waits until it answers a ping on o.Socket. It fails the
// test (with the daemon's output) when the process exits first or does not answer within
// StartTimeout. The daemon is stopped when the test ends (see Stop).
func StartDaemon(tb testing.TB, o DaemonOptions) *Daemon {
	tb.Helper()
	d := &Daemon{Cmd: o.Cmd, tb: tb, exited: make(chan struct{})}
	if d.Cmd == nil {
		d.Cmd = exec.Command(o.Bin, o.Args...)
		d.Cmd.Env, d.Cmd.Dir = o.Env, o.Dir
	}
	d.Cmd.Stdout, d.Cmd.Stderr = &d.logs, &d.logs
	if err := d.Cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { _ = d.Cmd.Wait(); close(d.exited) }()
	tb.Cleanup(func() {
		d.Stop()
		if tb.Failed() {
			tb.Logf("hookd log (%s):\n%s", o.Socket, d.Logs())
		}
	})
	if err := WaitForDaemon(o.Socket, d.exited, StartTimeout); err != nil {
		tb.Fatalf("%v:\n%s", err, d.Logs())
	}
	return d
}

// Exited is closed when the process has ended (and its output is complete).
func (d *Daemon) Exited() <-chan struct{} { return d.exited }

// Logs returns what the daemon has written to stdout and stderr so far.
func (d *Daemon) Logs() string { return d.logs.String() }

// PID is the daemon's process ID.
func (d *Daemon) PID() int { return d.Cmd.Process.Pid }

// Stop sends SIGINT (a clean shutdown: the socket is removed, the decision log closed),
// kills the daemon if it has not exited after StopTimeout, and waits. It fails the test
// if the daemon reported a data race (binaries built with -race). Calling it again, or
// after the process ended otherwise, only waits.
func (d *Daemon) Stop() {
	select {
	case <-d.exited:
	default:
		_ = d.Cmd.Process.Signal(os.Interrupt)
		select {
		case <-d.exited:
		case <-time.After(StopTimeout):
			_ = d.Cmd.Process.Kill()
			<-d.exited
		}
	}
	d.once.Do(func() {
		if logs := d.Logs(); strings.Contains(logs, "WARNING: DATA RACE") {
			d.tb.Errorf("hookd reported a data race:\n%s", logs)
		}
	})
}

// SyncBuffer is a bytes.Buffer safe for a process's writes and a test's reads: give it
// to exec.Cmd as Stdout and Stderr.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
