package test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

// doctorJSON runs `hookd doctor --json` and returns its exit code and findings.
func (e *Env) doctorJSON(t *testing.T) (int, []map[string]string) {
	t.Helper()
	r := e.Hookd("", "doctor", "--json")
	var rep struct {
		Status   string              `json:"status"`
		Exit     int                 `json:"exit"`
		Findings []map[string]string `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, r.Stdout, r.Stderr)
	}
	if rep.Exit != r.Code {
		t.Fatalf("doctor says exit %d but exits %d", rep.Exit, r.Code)
	}
	return r.Code, rep.Findings
}

// has reports whether a finding of check at level contains every part.
func has(findings []map[string]string, check, level string, parts ...string) bool {
	for _, f := range findings {
		if f["check"] != check || f["level"] != level {
			continue
		}
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(f["message"], p)
		}
		if ok && (level == "ok" || level == "info" || f["fix"] != "") {
			return true
		}
	}
	return false
}

// freePort is a loopback TCP port free at the time of the call.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// binDir makes a directory of stand-in programs for PATH.
func binDir(t *testing.T, progs map[string]string) string {
	dir := t.TempDir()
	for name, body := range progs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// doctorWorld is a daemon serving a scratch HOME whose user settings forward to the real
// hookc (hookd install claude-code), with no claude and no systemctl on PATH.
func doctorWorld(t *testing.T, path ...string) *Env {
	e := NewEnv(t)
	e.extraEnv = append(e.extraEnv, "PATH="+strings.Join(append(path, "/usr/bin:/bin"), ":"))
	e.WriteSettings("user", preToolUse(cmdHook("true")))
	if r := e.Hookd("", "install", "claude-code", "--hookc", bins.hookc); r.Code != 0 {
		t.Fatalf("install: %d %s%s", r.Code, r.Stdout, r.Stderr)
	}
	e.Start()
	return e
}

// TestDoctorHealthyThenDaemonStopped (issue 25): a set-up with the daemon running,
// forwarders to an existing hookc and a working decision log is healthy (exit 0); with the
// daemon stopped, doctor exits 1 and names it.
func TestDoctorHealthyThenDaemonStopped(t *testing.T) {
	e := doctorWorld(t)
	code, f := e.doctorJSON(t)
	if code != 0 || !has(f, "daemon", "ok", "reachable at "+e.Socket) || !has(f, "forwarders", "ok", "1 hookc") ||
		!has(f, "audit", "ok", "verifies") || !has(f, "version", "ok", "daemon and this hookd") || !has(f, "service", "info", "no systemd") ||
		!has(f, "claude-code", "info", "no claude on PATH") {
		t.Fatalf("exit %d: %v", code, f)
	}
	e.Stop()
	code, f = e.doctorJSON(t)
	if code != 1 || !has(f, "daemon", "warning", "hookd is not running", e.Socket) {
		t.Fatalf("daemon stopped: exit %d: %v", code, f)
	}
	// Plain text names it too.
	if r := e.Hookd("", "doctor"); r.Code != 1 || !strings.Contains(r.Stdout, "WARN  daemon      hookd is not running") {
		t.Fatalf("doctor: %d\n%s", r.Code, r.Stdout)
	}
}

// Each finding doctor reports comes from a world that has the problem.
func TestDoctorFindings(t *testing.T) {
	t.Run("untrusted socket", func(t *testing.T) {
		e := doctorWorld(t)
		if err := os.Chmod(filepath.Dir(e.Socket), 0o777); err != nil {
			t.Fatal(err)
		}
		if code, f := e.doctorJSON(t); code != 2 || !has(f, "socket", "error", "writable by group or others") {
			t.Fatalf("exit %d: %v", code, f)
		}
	})
	t.Run("hookc missing, not executable, another version", func(t *testing.T) {
		e := doctorWorld(t)
		noexec := filepath.Join(t.TempDir(), "no exec", "hookc")
		other := filepath.Join(t.TempDir(), "hookc")
		_ = os.MkdirAll(filepath.Dir(noexec), 0o755)
		_ = os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644)
		_ = os.WriteFile(other, []byte("#!/bin/sh\necho 'hookc v9.9.9'\n"), 0o755)
		e.WriteSettings("local", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/nonexistent/hookc --timeout 5s"}]}],`+
			`"PreCompact":[{"hooks":[{"type":"command","command":"'`+noexec+`'"}]}],`+
			`"SessionEnd":[{"hooks":[{"type":"command","command":"HOOKD_X=1 `+other+` --harness claude-code"}]}]}}`)
		code, f := e.doctorJSON(t)
		if code != 2 || !has(f, "forwarders", "error", "/nonexistent/hookc, which does not exist") ||
			!has(f, "forwarders", "error", noexec+", which is not executable") || !has(f, "version", "warning", other+" is v9.9.9") {
			t.Fatalf("exit %d: %v", code, f)
		}
	})
	t.Run("no forwarders", func(t *testing.T) {
		e := NewEnv(t)
		e.extraEnv = append(e.extraEnv, "PATH=/usr/bin:/bin")
		e.Start()
		if code, f := e.doctorJSON(t); code != 1 || !has(f, "forwarders", "warning", "no Claude Code settings file forwards events") {
			t.Fatalf("exit %d: %v", code, f)
		}
	})
	t.Run("installation broken", func(t *testing.T) {
		e := doctorWorld(t)
		if err := os.Remove(filepath.Join(e.UserDir, "hookd.json")); err != nil {
			t.Fatal(err)
		}
		if code, f := e.doctorJSON(t); code != 2 || !has(f, "install", "error", e.SettingsPath("user")) {
			t.Fatalf("exit %d: %v", code, f)
		}
	})
	t.Run("invalid settings file", func(t *testing.T) {
		e := doctorWorld(t)
		e.WriteSettings("local", `{"hooks": [`)
		e.Hookc(bashPayload(e, "ls")) // the project is loaded by its first event
		if code, f := e.doctorJSON(t); code != 2 || !has(f, "settings", "error", "settings.local.json") {
			t.Fatalf("exit %d: %v", code, f)
		}
	})
	t.Run("claude on PATH", func(t *testing.T) {
		for _, c := range []struct{ version, level, part string }{
			{"9.9.999", "warning", "newer than"}, {"1.0.0", "info", "older than"}, {"", "ok", "the version hookd was checked against"},
		} {
			v := c.version
			if v == "" {
				out := e0Version(t)
				v = out
			}
			e := doctorWorld(t, binDir(t, map[string]string{"claude": "echo '" + v + " (Claude Code)'"}))
			code, f := e.doctorJSON(t)
			want := map[string]int{"warning": 1, "info": 0, "ok": 0}[c.level]
			if code != want || !has(f, "claude-code", c.level, c.part) {
				t.Fatalf("claude %s: exit %d: %v", v, code, f)
			}
		}
	})
	t.Run("service manager running, hookd not installed", func(t *testing.T) {
		// A stand-in systemctl: systemd runs for this user, and hookd's units are absent.
		e := doctorWorld(t, binDir(t, map[string]string{"systemctl": `case "$*" in *is-system-running*) echo running;; *) echo inactive; exit 3;; esac`}))
		if code, f := e.doctorJSON(t); code != 1 || !has(f, "service", "warning", "not installed as a systemd service") {
			t.Fatalf("exit %d: %v", code, f)
		}
	})
	t.Run("decision log unwritable", func(t *testing.T) {
		e := NewEnv(t)
		e.extraEnv = append(e.extraEnv, "PATH=/usr/bin:/bin")
		blocker := filepath.Join(e.Root, "not-a-dir")
		_ = os.WriteFile(blocker, nil, 0o600)
		e.Config = filepath.Join(e.Root, "config.json")
		_ = os.WriteFile(e.Config, []byte(`{"audit":{"path":"`+filepath.Join(blocker, "audit", "decisions.jsonl")+`"}}`), 0o600)
		e.Start()
		if code, f := e.doctorJSON(t); code != 2 || !has(f, "audit", "error", "cannot be written") {
			t.Fatalf("exit %d: %v", code, f)
		}
	})
	t.Run("routing drop-in: events no forwarder sends, hooks that run nowhere", func(t *testing.T) {
		e := doctorWorld(t)
		e.WriteSettings("project", `{"hooks":{"FileChanged":[{"matcher":".envrc","hooks":[{"type":"command","command":"direnv-reload"}]}]}}`)
		if r := e.Hookd("", "install", "claude-code", "--scope", "managed", "--hookc", bins.hookc); r.Code != 0 {
			t.Fatalf("install: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		e.Hookc(bashPayload(e, "echo hi"))
		code, f := e.doctorJSON(t)
		if code != 1 || !has(f, "managed", "info", "routed by") || !has(f, "routing", "warning", "no forwarder sends", "FileChanged") ||
			!has(f, "routing", "warning", "runs nowhere", "FileChanged") {
			t.Fatalf("exit %d: %v", code, f)
		}
	})
}

// e0Version is the Claude Code version this build was checked against.
func e0Version(t *testing.T) string {
	t.Helper()
	r := run(t, exec.Command(bins.hookd, "version", "--json"))
	var b struct {
		Checked []struct{ Name, Version string } `json:"checked_against"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &b); err != nil {
		t.Fatal(err)
	}
	for _, p := range b.Checked {
		if p.Name == "Claude Code" {
			return p.Version
		}
	}
	t.Fatal("no Claude Code pin")
	return ""
}

// TestDoctorExporterBacklog (issue 25): with the syslog exporter's destination down (a
// loopback TCP port nobody listens on: the collector is stopped), more than a thousand
// decisions pile up unexported and doctor warns (exit 1), naming the exporter, the backlog
// and the exporter's error; once a collector listens there, the exporter catches up and
// doctor is healthy again (exit 0).
func TestDoctorExporterBacklog(t *testing.T) {
	e := NewEnv(t)
	e.extraEnv = append(e.extraEnv, "PATH=/usr/bin:/bin")
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	writeHookdConfig(t, e, map[string]any{"audit": map[string]any{"syslog": map[string]any{"network": "tcp", "address": addr}}})
	e.WriteSettings("user", preToolUse(cmdHook("true")))
	if r := e.Hookd("", "install", "claude-code", "--hookc", bins.hookc); r.Code != 0 {
		t.Fatalf("install: %d %s%s", r.Code, r.Stdout, r.Stderr)
	}
	e.Start()

	// 1,008 decisions (Stop: no hook runs), on 8 connections at once.
	stop := e.Payload("Stop", map[string]any{"stop_hook_active": false})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := protocol.Dial(context.Background(), e.Socket)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for range 126 {
				if _, err := c.Do(context.Background(), &protocol.Request{Event: json.RawMessage(stop), ProjectDir: e.Project}, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("sending events: %v", err)
	}
	code, f := e.doctorJSON(t)
	if code != 1 || !has(f, "exporter", "warning", "syslog is 10", "records behind", "connection refused") {
		t.Fatalf("doctor with the collector stopped: exit %d: %v", code, f)
	}

	// The collector comes back: a TCP listener that reads what it is sent.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, conn); conn.Close() }()
		}
	}()
	// It retries within its longest backoff (30 s); the refused connection stays its last
	// error, an info finding.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		code, f = e.doctorJSON(t)
		if code == 0 && (has(f, "exporter", "ok", "syslog: 0 records behind") || has(f, "exporter", "info", "syslog: 0 records behind")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("doctor after the collector came back: exit %d: %v", code, f)
		}
		time.Sleep(time.Second)
	}
}
