package httpfwd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/configs"
	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon"
	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/protocol"
)

const token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// world is a serving daemon (real Unix socket, real loopback HTTP listener) whose user
// settings hold a PreToolUse guard: it denies commands containing "rm -rf" (by JSON, or by
// exit 2 for "exit2"), and echoes two variables of its environment into the reason
// otherwise, as an allow.
type world struct {
	d        *daemon.Daemon
	socket   string
	url      string
	stateDir string
	cancel   context.CancelFunc
	done     chan error
}

const guard = `in=$(cat); case "$in" in
*exit2*) echo "exit-two block" >&2; exit 2;;
*"rm -rf"*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm -rf"}}';;
*) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"marker=%s effort=%s"}}' "$HOOKD_TEST_MARKER" "$CLAUDE_EFFORT";;
esac`

func newWorld(t testing.TB, stateDir string, cfg *configs.DaemonConfig, opts ...func(*daemon.Options)) *world {
	t.Helper()
	tmp, err := os.MkdirTemp("", "hkhttp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	user := filepath.Join(tmp, "user")
	if err := os.MkdirAll(user, 0o700); err != nil {
		t.Fatal(err)
	}
	// The hooks live in hookd's file, as `hookd install` leaves them: Claude Code runs
	// those still in its own settings file itself, so hookd does not run them for it.
	hookd, _ := json.Marshal(map[string]any{
		"hookd": map[string]any{"version": 1, "scope": "user", "installed_from": filepath.Join(user, "settings.json"), "forwarder": "hookc"},
		"hooks": map[string]any{
			"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": guard}}}},
		}})
	if err := os.WriteFile(filepath.Join(user, "settings.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, "hookd.json"), hookd, 0o600); err != nil {
		t.Fatal(err)
	}
	if stateDir == "" {
		stateDir = filepath.Join(tmp, "state")
	}
	if cfg == nil {
		cfg = configs.DefaultDaemonConfig()
	}
	cfg.Limits.RequestReadTimeoutMS = 300 // slowloris tests: short, not a bound on the test
	ctx, cancel := context.WithCancel(context.Background())
	w := &world{socket: filepath.Join(tmp, "s.sock"), stateDir: stateDir, cancel: cancel, done: make(chan error, 1)}
	o := daemon.Options{Config: cfg, Sources: settings.Sources{UserDir: user, Home: tmp},
		StateDir: stateDir, Socket: w.socket, Grace: time.Second,
		HTTP: &install.HTTPEndpoint{Listen: "127.0.0.1:0", Token: token}}
	for _, f := range opts {
		f(&o)
	}
	w.d, err = daemon.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if w.d.HTTPAddr() == "" {
		t.Fatal("http forwarder not listening")
	}
	w.url = "http://" + w.d.HTTPAddr() + settings.HTTPForwarderPath
	go func() { w.done <- w.d.Serve(ctx) }()
	t.Cleanup(w.stop)
	return w
}

func (w *world) stop() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	<-w.done
	w.d.Close()
	w.cancel = nil
}

func payload(event, session, command string) string {
	m := map[string]any{"session_id": session, "hook_event_name": event, "cwd": "/tmp", "transcript_path": "/tmp/t.jsonl"}
	if event == "PreToolUse" {
		m["tool_name"], m["tool_input"], m["tool_use_id"] = "Bash", map[string]any{"command": command}, "toolu_1"
		m["effort"] = map[string]any{"level": "high"}
	}
	if event == "SessionStart" {
		m["source"] = "startup"
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// sessionStart sends a SessionStart over the Unix socket as hookc does, with env.
func (w *world) sessionStart(t testing.TB, session string, env []string) {
	t.Helper()
	c, err := protocol.Dial(context.Background(), w.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f, err := c.Do(context.Background(), &protocol.Request{V: protocol.Version, EventText: payload("SessionStart", session, ""),
		Env: env, Harness: protocol.HarnessClaudeCode, Options: protocol.Options{Client: "hookc", ResultOnly: true}}, nil)
	if err != nil || f.Type != protocol.FrameResult {
		t.Fatalf("SessionStart over the socket: %v %+v", err, f)
	}
}

func post(t *testing.T, url, auth, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type hso struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

func decode(t *testing.T, body string) hso {
	t.Helper()
	var h hso
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, body)
	}
	return h
}

func hookEnv(marker string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "CLAUDECODE=1", "HOOKD_TEST_MARKER=" + marker, "CLAUDE_ENV_FILE=/nonexistent/x.sh"}
}

// TestHTTPForwarderRunsHooksWithTheSessionEnvironment: an allow, a JSON deny and an exit-2
// block, through the real listener, with the environment SessionStart sent over the socket
// (and CLAUDE_EFFORT from the payload).
func TestHTTPForwarderRunsHooksWithTheSessionEnvironment(t *testing.T) {
	w := newWorld(t, "", nil)
	w.sessionStart(t, "sess-1", hookEnv("from-session-start"))
	auth := "Bearer " + token

	code, body := post(t, w.url, auth, payload("PreToolUse", "sess-1", "ls"))
	h := decode(t, body)
	if code != 200 || h.HookSpecificOutput.PermissionDecision != "allow" || h.HookSpecificOutput.PermissionDecisionReason != "marker=from-session-start effort=high" {
		t.Fatalf("allow: %d %s", code, body)
	}
	code, body = post(t, w.url, auth, payload("PreToolUse", "sess-1", "rm -rf /"))
	if h := decode(t, body); code != 200 || h.HookSpecificOutput.PermissionDecision != "deny" || h.HookSpecificOutput.PermissionDecisionReason != "no rm -rf" {
		t.Fatalf("deny: %d %s", code, body)
	}
	code, body = post(t, w.url, auth, payload("PreToolUse", "sess-1", "echo exit2"))
	if h := decode(t, body); code != 200 || h.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(h.HookSpecificOutput.PermissionDecisionReason, "exit-two block") {
		t.Fatalf("exit 2: %d %s", code, body)
	}
	// A later hookc event of the session refreshes what http events run with.
	w.sessionStart(t, "sess-1", hookEnv("refreshed"))
	if _, body = post(t, w.url, auth, payload("PreToolUse", "sess-1", "ls")); !strings.Contains(body, "marker=refreshed") {
		t.Fatalf("after refresh: %s", body)
	}
}

// TestHTTPForwarderNoSessionEnvironmentFailsClosed: an http event of a session hookd has
// no environment for is denied, not run with hookd's own environment, and the audit log
// records it.
func TestHTTPForwarderNoSessionEnvironmentFailsClosed(t *testing.T) {
	w := newWorld(t, "", nil)
	w.sessionStart(t, "other-session", hookEnv("x"))
	code, body := post(t, w.url, "Bearer "+token, payload("PreToolUse", "unknown-session", "ls"))
	h := decode(t, body)
	if code != 200 || h.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(h.HookSpecificOutput.PermissionDecisionReason, "no environment known for session") {
		t.Fatalf("want a fail-closed deny, got %d %s", code, body)
	}
	w.stop() // flush the audit log
	data, err := os.ReadFile(filepath.Join(w.stateDir, "audit", audit.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, line := range bytes.Split(data, []byte("\n")) {
		var r audit.Record
		if json.Unmarshal(line, &r) == nil && r.SessionID == "unknown-session" {
			found = true
			if r.Decision != "deny" || !strings.Contains(r.Reason, "no environment known") || r.Caller == nil || r.Caller.Client != "http" {
				t.Errorf("audit record: %s", line)
			}
		}
	}
	if !found {
		t.Fatalf("no audit record for the refused event:\n%s", data)
	}
}

// TestHTTPForwarderSessionEnvironmentSurvivesRestart: the environment is kept in the
// state directory (0600), so a restarted daemon serves the session; a stored file that
// others could have written is not used.
func TestHTTPForwarderSessionEnvironmentSurvivesRestart(t *testing.T) {
	state, err := os.MkdirTemp("", "hkstate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	w := newWorld(t, state, nil)
	w.sessionStart(t, "sess-r", hookEnv("persisted"))
	w.stop()
	files, _ := filepath.Glob(filepath.Join(state, "session-env", "*.json"))
	if len(files) != 1 {
		t.Fatalf("stored environments: %v", files)
	}
	fi, _ := os.Stat(files[0])
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	if data, _ := os.ReadFile(files[0]); bytes.Contains(data, []byte("CLAUDE_ENV_FILE")) {
		t.Fatalf("CLAUDE_ENV_FILE (set per event) was stored: %s", data)
	}

	w2 := newWorld(t, state, nil)
	if _, body := post(t, w2.url, "Bearer "+token, payload("PreToolUse", "sess-r", "ls")); !strings.Contains(body, "marker=persisted") {
		t.Fatalf("after restart: %s", body)
	}
	w2.stop()

	if err := os.Chmod(files[0], 0o644); err != nil {
		t.Fatal(err)
	}
	w3 := newWorld(t, state, nil)
	if _, body := post(t, w3.url, "Bearer "+token, payload("PreToolUse", "sess-r", "ls")); !strings.Contains(body, `"deny"`) {
		t.Fatalf("a group-readable stored environment was used: %s", body)
	}
}

// TestHTTPForwarderRefusesHostileRequests: every request without the exact token, of the
// wrong shape or too large is refused before any hook runs.
func TestHTTPForwarderRefusesHostileRequests(t *testing.T) {
	cfg := configs.DefaultDaemonConfig()
	cfg.MaxRequestBytes = 4096
	w := newWorld(t, "", cfg)
	w.sessionStart(t, "s", hookEnv("m"))
	good := payload("PreToolUse", "s", "ls")
	for _, c := range []struct {
		name, method, path, auth, host, body string
		want                                 int
	}{
		{"no token", "POST", settings.HTTPForwarderPath, "", "", good, 401},
		{"wrong token", "POST", settings.HTTPForwarderPath, "Bearer " + strings.Repeat("0", len(token)), "", good, 401},
		{"token prefix", "POST", settings.HTTPForwarderPath, "Bearer " + token[:32], "", good, 401},
		{"token with suffix", "POST", settings.HTTPForwarderPath, "Bearer " + token + "x", "", good, 401},
		{"no Bearer", "POST", settings.HTTPForwarderPath, token, "", good, 401},
		{"basic auth", "POST", settings.HTTPForwarderPath, "Basic " + token, "", good, 401},
		{"wrong path", "POST", "/hookd/v1/other", "Bearer " + token, "", good, 404},
		{"root", "POST", "/", "Bearer " + token, "", good, 404},
		{"GET", "GET", settings.HTTPForwarderPath, "Bearer " + token, "", "", 405},
		{"PUT", "PUT", settings.HTTPForwarderPath, "Bearer " + token, "", good, 405},
		{"DNS rebinding host", "POST", settings.HTTPForwarderPath, "Bearer " + token, "evil.example:80", good, 421},
		{"malformed JSON", "POST", settings.HTTPForwarderPath, "Bearer " + token, "", `{"hook_event_name":`, 400},
		{"not an object", "POST", settings.HTTPForwarderPath, "Bearer " + token, "", `[1,2]`, 400},
		{"unknown event", "POST", settings.HTTPForwarderPath, "Bearer " + token, "", `{"hook_event_name":"Nope","session_id":"s"}`, 400},
		{"oversized", "POST", settings.HTTPForwarderPath, "Bearer " + token, "", `{"x":"` + strings.Repeat("a", 8192) + `"}`, 413},
	} {
		req, _ := http.NewRequest(c.method, "http://"+w.d.HTTPAddr()+c.path, strings.NewReader(c.body))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, resp.StatusCode, c.want, b)
		}
		if c.want != 200 && bytes.Contains(b, []byte("marker=")) {
			t.Errorf("%s: a hook ran: %s", c.name, b)
		}
	}
	// Two Authorization headers, one of them right: refused.
	req, _ := http.NewRequest("POST", w.url, strings.NewReader(good))
	req.Header.Add("Authorization", "Bearer nope")
	req.Header.Add("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("two Authorization headers: %d", resp.StatusCode)
	}
}

// TestHTTPForwarderSlowloris: a client that never finishes its headers, or its body, is
// cut off by the read timeouts instead of holding a connection forever.
func TestHTTPForwarderSlowloris(t *testing.T) {
	w := newWorld(t, "", nil)
	for name, partial := range map[string]string{
		"headers": "POST " + settings.HTTPForwarderPath + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\n",
		"body":    "POST " + settings.HTTPForwarderPath + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\nContent-Length: 1000\r\n\r\n{\"a\":",
	} {
		c, err := net.Dial("tcp", w.d.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, partial); err != nil {
			t.Fatal(err)
		}
		// The server must close the connection on its own (its timeouts are 300 ms); the
		// generous deadline only keeps a broken server from hanging the test.
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		rest, err := io.ReadAll(bufio.NewReader(c))
		c.Close()
		if err != nil {
			t.Errorf("%s: connection not closed by the server: %v", name, err)
		}
		if bytes.Contains(rest, []byte("marker=")) {
			t.Errorf("%s: a hook ran: %s", name, rest)
		}
	}
}

// TestHTTPForwarderStoppedDaemonRefusesConnections: once hookd stops, the port is closed
// (Claude Code's onFailure: block then refuses the call: "connect ECONNREFUSED").
func TestHTTPForwarderStoppedDaemonRefusesConnections(t *testing.T) {
	w := newWorld(t, "", nil)
	addr := w.d.HTTPAddr()
	w.stop()
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after the daemon stopped", addr)
	}
}

func FuzzHTTPForwarderBody(f *testing.F) {
	f.Add(payload("PreToolUse", "s", "ls"))
	f.Add(payload("PreToolUse", "s", "rm -rf /"))
	f.Add(payload("Stop", "s", ""))
	f.Add(`{"hook_event_name":"PreToolUse","session_id":"s","effort":{"level":"\u0000"}}`)
	f.Add(`{"hook_event_name":1}`)
	f.Add(`null`)
	// An unknown session_id waits for its environment, 10 s by default: the fuzzer's
	// mutated ids would each wait that long, and the fuzzer counts an input that takes
	// 10 s as a hang (a dry run of make fuzz, 2026-11-28). The wait's own behaviour is
	// TestSessionEnvWait's and TestHTTPForwarderNoSessionEnvironmentFailsClosed's (the
	// default); here it is short.
	w := newWorld(f, "", nil, func(o *daemon.Options) { o.SessionEnvWait = 20 * time.Millisecond })

	w.sessionStart(f, "s", hookEnv("m"))
	f.Fuzz(func(t *testing.T, body string) {
		code, out := post(t, w.url, "Bearer "+token, body)
		switch code {
		case 200:
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("2xx answer is not a JSON object: %v: %q", err, out)
			}
		case 400:
		default:
			t.Fatalf("status %d for %q: %s", code, body, out)
		}
	})
}

// TestHTTPForwarderPortTaken: a port another program holds is not served — the daemon
// still serves its socket, and status says why http is not served.
func TestHTTPForwarderPortTaken(t *testing.T) {
	w := newWorld(t, "", nil)
	if st := w.d.Status(); st.HTTP == nil || st.HTTP.Listen != w.d.HTTPAddr() {
		t.Fatalf("status: %+v", st.HTTP)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tmp, err := os.MkdirTemp("", "hkhttp")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := daemon.New(ctx, daemon.Options{Config: configs.DefaultDaemonConfig(), Sources: settings.Sources{UserDir: tmp, Home: tmp},
		StateDir: filepath.Join(tmp, "state"), Socket: filepath.Join(tmp, "s.sock"),
		HTTP: &install.HTTPEndpoint{Listen: taken.Addr().String(), Token: token}})
	if err != nil {
		t.Fatalf("the socket must still be served: %v", err)
	}
	defer d.Close()
	st := d.Status()
	if d.HTTPAddr() != "" || st.HTTP == nil || !strings.Contains(st.HTTP.Error, "another program holds the port") {
		t.Fatalf("status: %+v", st.HTTP)
	}
	// A non-loopback address is never listened on.
	d2, err := daemon.New(ctx, daemon.Options{Config: configs.DefaultDaemonConfig(), Sources: settings.Sources{UserDir: tmp, Home: tmp},
		StateDir: filepath.Join(tmp, "state2"), Socket: filepath.Join(tmp, "s2.sock"),
		HTTP: &install.HTTPEndpoint{Listen: "0.0.0.0:0", Token: token}})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if st := d2.Status(); d2.HTTPAddr() != "" || st.HTTP == nil || !strings.Contains(st.HTTP.Error, "loopback") {
		t.Fatalf("0.0.0.0: %+v", st.HTTP)
	}
}
