package test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/protocol"
)

// TestHTTPSessionPrewarmsNode: with the http transport, the Node guard prewarmed when the
// session starts (its env-only SessionStart forwarder, over the socket) serves the
// session's first http PreToolUse: the environment hookd rebuilds for an http event —
// the session's, plus CLAUDE_EFFORT from the payload at the place a native PreToolUse
// has it (right before CLAUDE_PROJECT_DIR, Claude Code 2.1.332) — is the spare's, in
// order (the prewarm key holds it in order). Before, CLAUDE_EFFORT was appended last: the spare never matched,
// and the corpus bench showed each key's first http event cold beside an unused spare.
func TestHTTPSessionPrewarmsNode(t *testing.T) {
	needNode(t)
	e := NewEnv(t)
	seen := filepath.Join(e.Root, "seen")
	guard := e.Script("guard.js", "const fs=require('fs');const ev=JSON.parse(fs.readFileSync(0,'utf8'));"+
		"fs.writeFileSync("+strconv.Quote(seen)+",'effort='+process.env.CLAUDE_EFFORT+' tool='+ev.tool_name)\n")
	// As `hookd install` leaves it: the hook moved into hookd.json, which hookd runs for
	// Claude Code's events and Claude Code does not read.
	WriteAtomic(t, filepath.Join(e.Project, ".claude", "hookd.json"), preToolUse(cmdHook("node "+guard)))
	port, ep := httpEndpoint(t, e)
	e.Start()
	// The session's env-only SessionStart forwarder (hookc): Claude Code's environment.
	env := append(e.BaseEnv(), "CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=sess-1", "CLAUDE_PROJECT_DIR="+e.Project)
	if _, err := e.Raw(&protocol.Request{EventText: e.Payload("SessionStart", map[string]any{"source": "startup"}), ProjectDir: e.Project, Env: env}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the guard's spare started", func() bool {
		s := runnerStats(e, "prewarm")
		return s["spawned"] == 1 && s["starting"] == 0
	})
	body := e.Payload("PreToolUse", map[string]any{
		"tool_name": "Bash", "tool_input": map[string]any{"command": "ls", "description": "d"}, "tool_use_id": "toolu_1",
		"effort": map[string]any{"level": "medium"},
	})
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(port)+settings.HTTPForwarderPath, bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+ep.Token)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("http PreToolUse: %s %v", resp.Status, answer)
	}
	if s := runnerStats(e, "prewarm"); s["hits"] != 1 || s["misses"] != 0 {
		t.Fatalf("the session's first http PreToolUse did not find its spare: %v\n%s", s, e.Logs())
	}
	got, _ := os.ReadFile(seen)
	if want := "effort=medium tool=Bash"; string(got) != want {
		t.Fatalf("the prewarmed guard saw %q, want %q", got, want)
	}
}

// httpEndpoint makes e's http forwarder endpoint on a free loopback port, as `hookd
// install --transport http` does: a daemon started on e then serves it.
func httpEndpoint(t *testing.T, e *Env) (int, *install.HTTPEndpoint) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ep, err := install.EnsureHTTPEndpoint(e.State, port)
	if err != nil {
		t.Fatal(err)
	}
	return port, ep
}
