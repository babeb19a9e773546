package main

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/protocol/lite"
)

// fakeDaemon listens on a socket in a fresh 0700 directory and answers every connection
// with answer (written after the request line was read), then closes it; answer "" means
// never answer (the connection stays open until the test ends). It returns the socket
// path and a channel of the request lines received.
func fakeDaemon(t *testing.T, answer string) (string, <-chan string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "hookc") // short: a socket path has a 108-byte limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	reqs := make(chan string, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReaderSize(c, 1<<20).ReadString('\n')
			reqs <- line
			if answer == "" {
				t.Cleanup(func() { c.Close() })
				continue
			}
			_, _ = c.Write([]byte(answer))
			c.Close()
		}
	}()
	return sock, reqs
}

func runHookc(t *testing.T, payload string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	env := []string{"PATH=/nonexistent", "HOOKD_BIN=/nonexistent/hookd"}
	code = run(args, env, strings.NewReader(payload), &o, &e)
	return code, o.String(), e.String()
}

const preToolUse = `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}` + "\n"

func TestForwardRendersTheResult(t *testing.T) {
	sock, reqs := fakeDaemon(t, "not json\n"+`{"type":"message","kind":"started"}`+"\n"+
		`{"type":"result","v":1,"result":{"decision_id":"d1","output":{"hookSpecificOutput":{"permissionDecision":"deny"}},"stderr":"why\n","exit_code":0}}`+"\n")
	code, out, errOut := runHookc(t, preToolUse, "--socket", sock)
	if code != 0 || out != `{"hookSpecificOutput":{"permissionDecision":"deny"}}`+"\n" || errOut != "why\n" {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errOut)
	}
	req := <-reqs
	for _, want := range []string{`"event_text":` + string(mustQuote(preToolUse)), `"env":["PATH=/nonexistent","HOOKD_BIN=/nonexistent/hookd"]`, `"options":{"result_only":true,"client":"hookc/` + lite.BuildInfo().Version + `"}`} {
		if !strings.Contains(req, want) {
			t.Fatalf("request %s lacks %s", req, want)
		}
	}
}

func mustQuote(s string) []byte {
	var b []byte
	b = append(b, '"')
	for _, c := range []byte(s) {
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

func TestForwardStreamPrintsEveryFrame(t *testing.T) {
	frames := `{"type":"message","kind":"started"}` + "\n" + `{"type":"result","result":{"exit_code":2,"stderr":"x"}}` + "\n"
	sock, reqs := fakeDaemon(t, frames)
	code, out, errOut := runHookc(t, preToolUse, "--socket", sock, "--stream")
	if code != 2 || out != frames || errOut != "" {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errOut)
	}
	if req := <-reqs; strings.Contains(req, "result_only") {
		t.Fatalf("--stream asked for the result only: %s", req)
	}
}

// Every way the daemon can fail to answer is a block (exit 2) with the reason; the
// fallback is never taken for an answered error, and an unsupported version with
// --fallback=false fails closed too. PermissionRequest gets its JSON deny instead.
func TestForwardFailuresFailClosed(t *testing.T) {
	for _, c := range []struct {
		name, answer, payload string
		args                  []string
		wantErr, wantOut      string
		wantCode              int
	}{
		{"error frame", `{"type":"error","error":{"code":"busy","message":"too many"}}` + "\n", preToolUse, nil,
			"hookc: hookd: busy: too many\n", "", 2},
		{"error frame without body", `{"type":"error"}` + "\n", preToolUse, nil,
			"hookc: hookd: internal: error frame without error body\n", "", 2},
		{"closed without an answer", `{"type":"message"}` + "\n", preToolUse, nil,
			"hookc: reading frame: daemon closed the connection: unexpected EOF\n", "", 2},
		{"result without result", `{"type":"result","result":{"exit_code":"0"}}` + "\n", preToolUse, nil,
			"hookc: daemon answered without a result: {\"type\":\"result\",\"result\":{\"exit_code\":\"0\"}}\n", "", 2},
		{"unsupported version, no fallback", `{"type":"error","error":{"code":"unsupported_version","message":"v9"}}` + "\n", preToolUse, []string{"--fallback=false"},
			"hookc: hookd: unsupported_version: v9\n", "", 2},
		{"unsupported version, fallback missing", `{"type":"error","error":{"code":"unsupported_version","message":"v9"}}` + "\n", preToolUse, nil,
			"hookc: hookd is unreachable and the in-process fallback failed: /nonexistent/hookd: fork/exec /nonexistent/hookd: no such file or directory\n", "", 2},
		{"never answers", "", preToolUse, []string{"--timeout", "100ms"},
			"hookc: context deadline exceeded: reading frame: read: i/o timeout\n", "", 2},
		{"PermissionRequest", `{"type":"error","error":{"code":"busy","message":"<&>"}}` + "\n", `{"hook_event_name":"PermissionRequest"}`, nil,
			"", `{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"hookc: hookd: busy: \u003c\u0026\u003e"},"hookEventName":"PermissionRequest"}}` + "\n", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			sock, _ := fakeDaemon(t, c.answer)
			code, out, errOut := runHookc(t, c.payload, append([]string{"--socket", sock}, c.args...)...)
			if code != c.wantCode || out != c.wantOut || errOut != c.wantErr {
				t.Fatalf("exit %d stdout %q stderr %q\nwant exit %d stdout %q stderr %q", code, out, errOut, c.wantCode, c.wantOut, c.wantErr)
			}
		})
	}
}

func TestNoDaemonNoFallbackFailsClosed(t *testing.T) {
	dir, err := os.MkdirTemp("", "hookc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "missing.sock")
	code, out, errOut := runHookc(t, preToolUse, "--socket", sock, "--fallback=false")
	want := "hookc: hookd unreachable at " + sock + ": no such file or directory\n"
	if code != 2 || out != "" || errOut != want {
		t.Fatalf("exit %d stdout %q stderr %q, want stderr %q", code, out, errOut, want)
	}
}

// TestVersion: --version answers without reading stdin or reaching a daemon, and names
// the harness versions this build was checked against.
func TestVersion(t *testing.T) {
	code, out, errOut := runHookc(t, "not read", "--socket", "/nonexistent/hookd.sock", "--version")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if want := lite.BuildInfo().Text("hookc"); out != want {
		t.Fatalf("stdout %q, want %q", out, want)
	}
	if !strings.HasPrefix(out, "hookc dev\n") || !strings.Contains(out, "checked against Claude Code "+lite.CheckedVersion("Claude Code")) {
		t.Fatalf("stdout %q", out)
	}
}

// The fallback passes its reason to `hookd run --fallback` and says on stderr, in one
// line, that it answered in-process — except beside an exit-2 answer, whose stderr is the
// block reason.
func TestFallbackSaysSo(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	sock := filepath.Join(dir, "missing.sock")
	for _, c := range []struct {
		name, result string
		wantCode     int
		wantErr      string
	}{
		{"exit 0", `{"exit_code":0,"output":{"systemMessage":"m"}}`, 0,
			"hookc: hookd unreachable at " + sock + ": no such file or directory; answered in-process (hookd run), slower and unshared: start the daemon with `hookd serve`\n"},
		{"exit 2", `{"exit_code":2,"stderr":"blocked\n"}`, 2, "blocked\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := filepath.Join(dir, "hookd")
			script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\ncat >/dev/null\nprintf '%s\\n' '{\"type\":\"result\",\"v\":1,\"result\":" + c.result + "}'\n"
			if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			var o, e bytes.Buffer
			code := run([]string{"--socket", sock}, []string{"PATH=/usr/bin:/bin", "HOOKD_BIN=" + fake}, strings.NewReader(preToolUse), &o, &e)
			if code != c.wantCode || e.String() != c.wantErr {
				t.Fatalf("exit %d stderr %q, want %d %q", code, e.String(), c.wantCode, c.wantErr)
			}
			args, _ := os.ReadFile(argsFile)
			if want := "run\n--stream\n--fallback\nhookd unreachable at " + sock + ": no such file or directory\n"; string(args) != want {
				t.Errorf("hookd was run with %q, want %q", args, want)
			}
		})
	}
}
