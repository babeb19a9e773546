//go:build e2e

package e2e

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/test/claudeapi"
)

// activator stands in for a service manager's socket activation (systemd's socket unit
// with its service; launchd's Sockets): it creates and holds hookd's listeners — the Unix
// socket hookc connects to and the http forwarder's loopback port — for the whole test,
// and starts `hookd serve` when a connection waits on either and no hookd runs, passing
// the listeners as systemd does (fds 3 and 4, LISTEN_FDS=2, LISTEN_FDNAMES, LISTEN_PID of
// hookd's own process). A hookd that exits is started again by the next waiting
// connection. What it does not stand in for: systemd's unit options (Restart=,
// SocketMode=; configs/service's tests verify the units with systemd-analyze) — systemd
// itself cannot run here (it is not PID 1).
type activator struct {
	t     *testing.T
	files []*os.File // the listeners' descriptors, held until the test ends
	args  []string   // hookd serve's command line
	env   []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	starts int
	exited chan struct{} // closed when the current hookd exited
	done   chan struct{}
}

func newActivator(t *testing.T, unixPath, httpAddr string, args, env []string) *activator {
	t.Helper()
	a := &activator{t: t, args: args, env: env, done: make(chan struct{})}
	ul, err := net.Listen("unix", unixPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(unixPath, 0o600); err != nil {
		t.Fatal(err)
	}
	tl, err := net.Listen("tcp", httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []interface{ File() (*os.File, error) }{ul.(*net.UnixListener), tl.(*net.TCPListener)} {
		f, err := l.File() // a dup; the listener itself is closed below, the dup held
		if err != nil {
			t.Fatal(err)
		}
		a.files = append(a.files, f)
	}
	ul.(*net.UnixListener).SetUnlinkOnClose(false)
	ul.Close()
	tl.Close()
	go a.loop()
	t.Cleanup(a.close)
	return a
}

// loop: wait for a connection, start hookd, wait for it to exit; again.
func (a *activator) loop() {
	for {
		if !a.waitReadable() {
			return
		}
		cmd := exec.Command("/bin/sh", append([]string{"-c", `LISTEN_PID=$$ exec "$0" "$@"`, bin.hookd}, a.args...)...)
		cmd.Env = append(append([]string{}, a.env...), "LISTEN_FDS=2", "LISTEN_FDNAMES=hookd.socket:http")
		cmd.ExtraFiles = a.files
		var log syncBuf
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			a.t.Errorf("activator: starting hookd: %v", err)
			return
		}
		exited := make(chan struct{})
		a.mu.Lock()
		a.cmd, a.exited = cmd, exited
		a.starts++
		a.mu.Unlock()
		_ = cmd.Wait()
		close(exited)
		a.t.Logf("activator: hookd (start %d, pid %d) exited: %v\n%s", a.starts, cmd.Process.Pid, cmd.ProcessState, log.String())
		select {
		case <-a.done:
			return
		default:
		}
	}
}

// waitReadable waits until a connection waits on either listener (false: closing).
func (a *activator) waitReadable() bool {
	fds := make([]unix.PollFd, len(a.files))
	for i, f := range a.files {
		fds[i] = unix.PollFd{Fd: int32(f.Fd()), Events: unix.POLLIN}
	}
	for {
		select {
		case <-a.done:
			return false
		default:
		}
		n, err := unix.Poll(fds, 100)
		if err == nil && n > 0 {
			return true
		}
	}
}

// stop sends hookd SIGTERM (as `systemctl stop hookd.service` does) and waits until it
// exited; the listeners stay held.
func (a *activator) stop() {
	a.mu.Lock()
	cmd, exited := a.cmd, a.exited
	a.mu.Unlock()
	if cmd == nil {
		a.t.Fatal("activator: no hookd was started yet")
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		a.t.Fatal("activator: hookd did not exit within 60 s of SIGTERM")
	}
}

func (a *activator) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.starts
}

func (a *activator) close() {
	close(a.done)
	a.mu.Lock()
	cmd, exited := a.cmd, a.exited
	a.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
	for _, f := range a.files {
		f.Close()
	}
}

// TestClaudeSocketActivatedRestart: hookd under socket activation (activator) with the
// transport `hookd setup` installs there (http for the frequent events, exec-form hookc
// for the rest). Mid-session — after the first tool call's hooks have answered, before
// the model asks for the second — hookd is stopped. The second call's PreToolUse (over
// http) reaches the port the activator still holds, a new hookd is started by it and
// answers: the guard denies the rm as it would have, the third call is allowed, and the
// Stop and SessionEnd events (http and hookc) reach hookd too. Nothing is refused with a
// connection error (onFailure: block would have refused the call), nothing falls back to
// an in-process run, and the decision log has the calls of both daemons.
func TestClaudeSocketActivatedRestart(t *testing.T) {
	t.Parallel()
	var act *activator
	stopped := false
	sc := &scenario{Name: "socket-activated-restart",
		Hooks: []hook{
			{Name: "g", Event: "PreToolUse", Matcher: "Bash", Scope: "user", Body: httpGuard},
			{Name: "post", Event: "PostToolUse", Matcher: "Bash", Scope: "user", Body: "cat >/dev/null"},
			{Name: "stop", Event: "Stop", Scope: "user", Body: "cat >/dev/null"},
			{Name: "end", Event: "SessionEnd", Scope: "user", Body: "cat >/dev/null"},
		},
		Script: []claudeapi.Turn{
			bash("echo one"),
			{ToolName: "Bash", ToolInput: map[string]any{"command": "rm -rf nothing-here", "description": "x"}, Before: func() {
				act.stop()
				stopped = true
			}},
			bash("echo two"),
			say("finished"),
		},
		Counts: map[string]int{"g": 3, "post": 2, "stop": 1},
	}
	sc.Prepare = func(t *testing.T, w *world) {
		ep, err := install.LoadHTTPEndpoint(w.path("state"))
		if err != nil || ep == nil {
			t.Fatalf("no http endpoint after the install: %v", err)
		}
		args := []string{"--socket", w.Socket, "--managed-dir", w.path("managed"), "--user-dir", filepath.Join(w.Home, ".claude"), "--state-dir", w.path("state"), "serve"}
		act = newActivator(t, w.Socket, ep.Listen, args, claudeEnv(w, w.Mode))
	}
	o := runClaude(t, sc, "http-stopped") // the install with http; no daemon of the harness's own
	if !stopped {
		t.Fatal("the session never reached the second tool call")
	}
	if n := act.count(); n != 2 {
		t.Errorf("hookd was started %d times, want 2 (on the first event, and again after the stop)", n)
	}
	if len(o.Calls) != 3 {
		t.Fatalf("calls: %+v\nstderr: %s", o.Calls, o.stderr)
	}
	if o.Calls[0].IsError || !o.Calls[1].IsError || o.Calls[2].IsError {
		t.Errorf("want echo allowed, rm denied, echo allowed: %+v", o.Calls)
	}
	if !strings.Contains(o.Calls[1].Result, "no rm here") {
		t.Errorf("the rm was not denied by the guard through the restarted hookd: %q", o.Calls[1].Result)
	}
	for name, want := range sc.Counts {
		if o.Counts[name] != want {
			t.Errorf("%s ran %d times, want %d", name, o.Counts[name], want)
		}
	}
	for _, m := range o.stream {
		if m["type"] == "system" && (m["subtype"] == "hook_response" || m["subtype"] == "hook_error") {
			if out, _ := m["output"].(string); strings.Contains(out, "ECONNREFUSED") || strings.Contains(out, "blocking because onFailure") {
				t.Errorf("a hook event was refused: %v", m)
			}
		}
	}
	// The decision log: every PreToolUse decided by a daemon (none in-process), the rm's
	// among them.
	recs := auditRecords(t, filepath.Join(o.root, "state"))
	pre, fallback := 0, 0
	for _, r := range recs {
		if r["event"] == "PreToolUse" {
			pre++
		}
		if f, _ := r["fallback"].(string); f != "" {
			fallback++
		}
	}
	if pre != 3 || fallback != 0 {
		t.Errorf("decision log: %d PreToolUse records (want 3), %d in-process fallbacks (want 0)", pre, fallback)
	}
	t.Logf("hookd starts: %d; PreToolUse decisions: %d", act.count(), pre)
}

// auditRecords reads every decision record of a state directory's audit log.
func auditRecords(t *testing.T, state string) []map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(state, "audit", "*"))
	var out []map[string]any
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["event"] != nil {
				out = append(out, m)
			}
		}
	}
	return out
}
