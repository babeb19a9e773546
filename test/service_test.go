package test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/test/testutil"
)

// socketActivate is systemd-socket-activate(1), the stand-in for systemd's socket units
// this machine can run (no systemd runs as init here; .ci/run installs the systemd package
// when it is missing).
func socketActivate(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("systemd-socket-activate")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-socket-activate not found: .ci/run installs the systemd package")
		}
		t.Skip("systemd-socket-activate not found (apt-get install systemd); CI installs it")
	}
	return p
}

// startActivated starts hookd under systemd-socket-activate listening on listen (the
// socket path first): the daemon is started by the first connection and serves on the
// descriptors it inherits (LISTEN_FDS).
func (e *Env) startActivated(t *testing.T, listen ...string) (*exec.Cmd, *testutil.SyncBuffer) {
	t.Helper()
	args := []string{}
	for _, l := range listen {
		args = append(args, "-l", l)
	}
	for _, kv := range e.BaseEnv() {
		args = append(args, "-E", kv)
	}
	args = append(args, bins.hookd)
	args = append(args, e.DaemonArgs()...)
	args = append(args, "serve", "--grace", "2s")
	cmd := exec.Command(socketActivate(t), args...)
	out := &testutil.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	testutil.WaitFor(t, time.Minute, "the activator to listen on "+listen[0], func() bool {
		return strings.Contains(out.String(), "Listening on "+listen[0])
	})
	return cmd, out
}

// TestSocketActivation (issue 25): hookd started by the first event under
// systemd-socket-activate answers it on the inherited socket — the guard's deny, from the
// daemon, not from hookc's in-process fallback — narrows the socket to 0600, and leaves the
// socket file in place when it stops (it is the service manager's).
func TestSocketActivation(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("user", preToolUse(cmdHook(`grep -q "rm -rf" && { echo "no rm -rf" >&2; exit 2; }; exit 0`)))
	cmd, out := e.startActivated(t, e.Socket)
	if strings.Contains(out.String(), "Execing") {
		t.Fatalf("hookd started before any event:\n%s", out)
	}
	r := e.Hookc(bashPayload(e, "rm -rf /"), "--fallback=false")
	if h := hso(t, r); h["permissionDecision"] != "deny" || !strings.Contains(h["permissionDecisionReason"].(string), "no rm -rf") {
		t.Fatalf("first event through the inherited socket: exit %d stdout %q stderr %q\nactivator and daemon:\n%s", r.Code, r.Stdout, r.Stderr, out)
	}
	if !strings.Contains(out.String(), `"activated_by":"systemd"`) {
		t.Fatalf("the daemon does not say it serves on systemd's socket:\n%s", out)
	}
	if r := e.Hookc(bashPayload(e, "ls"), "--fallback=false"); r.Code != 0 {
		t.Fatalf("second event: exit %d stderr %q", r.Code, r.Stderr)
	}
	fi, err := os.Stat(e.Socket)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("inherited socket mode: %v %v (want 0600; the activator made it 0644)", fi.Mode(), err)
	}
	if st := e.Status(); st["pid"] == nil {
		t.Fatalf("status: %v", st)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	testutil.WaitFor(t, time.Minute, "hookd to stop", func() bool { return cmd.ProcessState != nil || strings.Contains(out.String(), "hookd stopped") })
	if _, err := os.Lstat(e.Socket); err != nil {
		t.Fatalf("hookd removed the service manager's socket: %v", err)
	}
}

// TestSocketActivationRefusesUntrustedSocket: an inherited socket in a directory others
// can write is refused exactly like one hookd would create there; the event is not
// answered by whoever could swap that socket.
func TestSocketActivationRefusesUntrustedSocket(t *testing.T) {
	e := NewEnv(t)
	dir := filepath.Dir(e.Socket)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	_, out := e.startActivated(t, e.Socket)
	c, err := net.Dial("unix", e.Socket) // the first connection starts hookd
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testutil.WaitFor(t, time.Minute, "hookd to refuse the socket", func() bool { return strings.Contains(out.String(), "refusing the inherited socket") })
	if !strings.Contains(out.String(), "writable by group or others") {
		t.Fatalf("refusal does not say why:\n%s", out)
	}
}

// TestSocketActivationHTTP: the http forwarder's port inherited too (the systemd socket
// unit lists it when `hookd install --transport http` made an endpoint): hookd serves it
// with the token, and refuses a port that is not the endpoint's.
func TestSocketActivationHTTP(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("user", preToolUse(cmdHook(`exit 0`)))
	port, ep := httpEndpoint(t, e)
	_, out := e.startActivated(t, e.Socket, "127.0.0.1:"+strconv.Itoa(port))
	// The first connection, on the http port, starts hookd; a Stop (no hooks) answers {}.
	body, _ := json.Marshal(map[string]any{"session_id": "s", "hook_event_name": "Stop", "cwd": e.Project, "transcript_path": "/tmp/t.jsonl"})
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(port)+settings.HTTPForwarderPath, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+ep.Token)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("post to the inherited port: %v\n%s", err, out)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("post to the inherited port: %s\n%s", resp.Status, out)
	}
	// A second port the activator passes is refused loudly, the socket still served.
	e2 := NewEnv(t)
	if _, err := install.EnsureHTTPEndpoint(e2.State, port+1); err != nil {
		t.Fatal(err)
	}
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other := ln2.Addr().String()
	ln2.Close()
	_, out2 := e2.startActivated(t, e2.Socket, other)
	if r := e2.Hookc(e2.Payload("Stop", nil), "--fallback=false"); r.Code != 0 {
		t.Fatalf("socket not served: exit %d %q\n%s", r.Code, r.Stderr, out2)
	}
	if !strings.Contains(out2.String(), "make them agree") {
		t.Fatalf("a mismatched port was not refused with a reason:\n%s", out2)
	}
}

// waitFor polls cond for up to a minute (testutil.WaitFor).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.WaitFor(t, time.Minute, what, cond)
}
