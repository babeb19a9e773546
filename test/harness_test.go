// Package test holds hookd's black-box tests: they build the real binaries, start a real
// daemon on a real Unix socket with a scratch HOME, managed dir and project, and drive
// it with hookc and with the raw protocol.
//
// "spec §N" means §N of docs/spec/claude-code-hooks-spec.md (docs/spec/README.md).
package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/testutil"
)

var bins struct {
	dir, hookd, hookc string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hookd-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.dir = dir
	_ = os.Chmod(dir, 0o755) // another uid runs hookc in TestOtherUsersAreRefused
	bins.hookd = filepath.Join(dir, "hookd")
	bins.hookc = filepath.Join(dir, "hookc")
	root := repoRoot()
	// The daemon is built with the race detector so black-box runs check it too.
	for _, b := range []struct {
		out, pkg string
		race     bool
	}{{bins.hookd, "./cmd/hookd", raceEnabled}, {bins.hookc, "./cmd/hookc", false}} {
		args := []string{"build", "-o", b.out}
		if b.race {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, b.pkg)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", b.pkg, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// GoldenPayloadDir holds the stdin payloads captured from real Claude Code 2.1.330
// (test/testdata/README.md says how they were captured).
func GoldenPayloadDir() string {
	return filepath.Join(repoRoot(), "test", "testdata", "payloads", "claude-code-2.1.330")
}

// Env is one scratch world: HOME, managed dir, a project, and (once started) a daemon.
type Env struct {
	t       testing.TB
	Root    string
	Home    string
	UserDir string
	Managed string
	Project string
	State   string
	Socket  string
	Config  string
	// d is the running daemon (Start); daemon and exited are its process and exit
	// signal, which tests use directly (signals, kills).
	d        *testutil.Daemon
	daemon   *exec.Cmd
	exited   <-chan struct{}
	extraEnv []string
}

// NewEnv makes the scratch directories. The socket lives under a short /tmp path: Unix
// socket paths are limited to 107 bytes and t.TempDir() paths can be long.
//
// NewEnv marks the test parallel: black-box tests run alongside each other (up to go test's
// -parallel: GOMAXPROCS by default, 8 under make unit and make test, the Makefile's
// BLACKBOX_PARALLEL). Each Env is a world of its own — scratch HOME, managed dir, project,
// state, socket and daemon — so nothing is shared but the built binaries, and most of a
// black-box test's time is spent waiting on hook timeouts, sleeps and polls. A test that
// needs two Envs gets one Parallel call.
func NewEnv(t testing.TB) *Env {
	t.Helper()
	markParallel(t)
	root := t.TempDir()
	sockDir, err := os.MkdirTemp("", "hkd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	e := &Env{
		t: t, Root: root,
		Home:    filepath.Join(root, "home"),
		Managed: filepath.Join(root, "etc-claude-code"),
		Project: filepath.Join(root, "home", "proj"),
		State:   filepath.Join(root, "state"),
		Socket:  filepath.Join(sockDir, "hookd.sock"),
	}
	e.UserDir = filepath.Join(e.Home, ".claude")
	for _, d := range []string{e.UserDir, e.Managed, filepath.Join(e.Project, ".claude"), e.State} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// parallelTests holds the tests markParallel has marked (t.Parallel panics when called twice).
var parallelTests sync.Map

func markParallel(t testing.TB) {
	if pt, ok := t.(*testing.T); ok {
		if _, marked := parallelTests.LoadOrStore(pt, true); !marked {
			pt.Parallel()
		}
	}
}

// SettingsPath returns the settings file of a source kind.
func (e *Env) SettingsPath(kind string) string {
	switch kind {
	case "managed":
		return filepath.Join(e.Managed, "managed-settings.json")
	case "user":
		return filepath.Join(e.UserDir, "settings.json")
	case "project":
		return filepath.Join(e.Project, ".claude", "settings.json")
	case "local":
		return filepath.Join(e.Project, ".claude", "settings.local.json")
	}
	e.t.Fatalf("unknown settings kind %q", kind)
	return ""
}

// WriteSettings writes a settings file atomically (write + rename, as editors save).
func (e *Env) WriteSettings(kind, content string) {
	e.t.Helper()
	WriteAtomic(e.t, e.SettingsPath(kind), content)
}

// WriteAtomic writes path via a temp file and rename, as editors save.
var WriteAtomic = testutil.WriteAtomic

// Script writes an executable script into the project and returns its path.
func (e *Env) Script(name, body string) string {
	e.t.Helper()
	p := filepath.Join(e.Project, "hooks", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// BaseEnv is the environment the daemon and hookc run with: a scratch HOME.
func (e *Env) BaseEnv() []string {
	env := []string{
		"HOME=" + e.Home, "PATH=" + os.Getenv("PATH"), "HOOKD_SOCKET=" + e.Socket,
		"XDG_CONFIG_HOME=" + filepath.Join(e.Root, "xdg-config"), "XDG_STATE_HOME=" + filepath.Join(e.Root, "xdg-state"),
		"HOOKD_BIN=" + bins.hookd, "GORACE=halt_on_error=1",
	}
	return append(env, e.extraEnv...)
}

// DaemonArgs are the global flags that point hookd at the scratch world.
func (e *Env) DaemonArgs() []string {
	args := []string{"--socket", e.Socket, "--managed-dir", e.Managed, "--user-dir", e.UserDir, "--state-dir", e.State}
	if e.Config != "" {
		args = append(args, "--config", e.Config)
	}
	return args
}

// Start runs `hookd serve` and waits until it answers a ping.
func (e *Env) Start(extra ...string) {
	e.t.Helper()
	args := append(e.DaemonArgs(), "serve")
	e.StartArgs(append(args, extra...)...)
}

// StartArgs runs hookd with exactly args (which should start a daemon on e.Socket) and
// waits until it answers a ping.
func (e *Env) StartArgs(args ...string) {
	e.t.Helper()
	e.d = testutil.StartDaemon(e.t, testutil.DaemonOptions{Bin: bins.hookd, Args: args, Socket: e.Socket, Env: e.BaseEnv()})
	e.daemon, e.exited = e.d.Cmd, e.d.Exited()
}

// Stop stops the daemon (SIGINT, then SIGKILL) and waits; it fails the test if the
// daemon reported a data race.
func (e *Env) Stop() {
	if e.daemon == nil || e.d == nil {
		return
	}
	e.d.Stop()
	e.daemon = nil
}

// Logs returns what the daemon has logged so far.
func (e *Env) Logs() string {
	if e.d == nil {
		return ""
	}
	return e.d.Logs()
}

// Result of running hookc.
type Result struct {
	Stdout, Stderr string
	Code           int
	Took           time.Duration
}

// JSON decodes stdout.
func (r Result) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
		t.Fatalf("hookc stdout is not JSON: %q (stderr %q, exit %d)", r.Stdout, r.Stderr, r.Code)
	}
	return m
}

// Hookc runs hookc with payload on stdin, as Claude Code would run it as a hook.
func (e *Env) Hookc(payload string, args ...string) Result {
	e.t.Helper()
	cmd := exec.Command(bins.hookc, args...)
	cmd.Env = append(e.BaseEnv(), "CLAUDE_PROJECT_DIR="+e.Project)
	cmd.Dir = e.Project
	cmd.Stdin = strings.NewReader(payload)
	return run(e.t, cmd)
}

// Hookd runs a hookd subcommand against the scratch world.
func (e *Env) Hookd(stdin string, args ...string) Result {
	e.t.Helper()
	cmd := exec.Command(bins.hookd, append(e.DaemonArgs(), args...)...)
	cmd.Env = append(e.BaseEnv(), "CLAUDE_PROJECT_DIR="+e.Project)
	cmd.Dir = e.Project
	cmd.Stdin = strings.NewReader(stdin)
	return run(e.t, cmd)
}

// run runs cmd with its output captured and timed; an exit code is part of the Result,
// only a failure to run fails the test.
func run(t testing.TB, cmd *exec.Cmd) Result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String(), Took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", filepath.Base(cmd.Path), err)
	}
	return r
}

// Raw sends one request over the socket and returns every frame of the answer.
func (e *Env) Raw(req *protocol.Request) ([]*protocol.Frame, error) {
	e.t.Helper()
	c, err := protocol.Dial(context.Background(), e.Socket)
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	var frames []*protocol.Frame
	_, err = c.Do(context.Background(), req, func(f *protocol.Frame) { frames = append(frames, f) })
	return frames, err
}

// Event sends payload as an event with the project dir set and returns the result.
func (e *Env) Event(payload string) (*protocol.Result, []*protocol.Frame) {
	e.t.Helper()
	frames, err := e.Raw(&protocol.Request{Event: json.RawMessage(payload), ProjectDir: e.Project, Env: e.BaseEnv()})
	if err != nil {
		e.t.Fatalf("event failed: %v", err)
	}
	last := frames[len(frames)-1]
	if last.Type != protocol.FrameResult || last.Result == nil {
		e.t.Fatalf("last frame is %+v", last)
	}
	return last.Result, frames
}

// Status fetches the daemon's status.
func (e *Env) Status() map[string]any {
	e.t.Helper()
	frames, err := e.Raw(&protocol.Request{Op: protocol.OpStatus})
	if err != nil {
		e.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(frames[len(frames)-1].Data, &m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

// Payload builds an event payload with the common fields filled in.
func (e *Env) Payload(event string, fields map[string]any) string {
	m := map[string]any{
		"session_id": "sess-1", "transcript_path": filepath.Join(e.Home, ".claude", "projects", "p", "sess-1.jsonl"),
		"cwd": e.Project, "hook_event_name": event,
	}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// Eventually polls cond until it holds or the timeout passes.
var Eventually = testutil.WaitFor

type syncBuffer = testutil.SyncBuffer

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }
