package test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/protocol"
)

// TestStatusShowsClientVersionsAndSkew (issue 25): `hookd status` lists the clients that
// sent events with their versions — the hookc built with this daemon, a hookc of another
// release (built here with another -ldflags version, as a package upgrade or a second
// installation leaves one), a client from before hookc said its version (options.client
// "hookc") and another program speaking the protocol — and flags exactly the two hookc
// that are not the daemon's version; `hookd doctor` warns about them (exit 1).
func TestStatusShowsClientVersionsAndSkew(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("user", preToolUse(cmdHook("true")))
	const otherVersion = "0.0.1-skewcheck"
	other := filepath.Join(t.TempDir(), "hookc")
	build := exec.Command("go", "build", "-o", other, "-ldflags", "-X github.com/hookd/hookd/protocol/lite.version="+otherVersion, "./cmd/hookc")
	build.Dir = repoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building hookc %s: %v\n%s", otherVersion, err, out)
	}
	e.Start()
	daemonVersion, _ := e.Status()["version"].(string)

	payload := e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}})
	if r := e.Hookc(payload); r.Code != 0 {
		t.Fatalf("hookc: %d %s", r.Code, r.Stderr)
	}
	for range 2 {
		cmd := exec.Command(other)
		cmd.Env, cmd.Dir, cmd.Stdin = append(e.BaseEnv(), "CLAUDE_PROJECT_DIR="+e.Project), e.Project, strings.NewReader(payload)
		if r := run(t, cmd); r.Code != 0 || strings.Contains(r.Stderr, "in-process") {
			t.Fatalf("hookc %s: %d %s", otherVersion, r.Code, r.Stderr)
		}
	}
	for _, client := range []string{"hookc", "my-harness/1.2"} {
		if _, err := e.Raw(&protocol.Request{Event: json.RawMessage(payload), ProjectDir: e.Project, Options: protocol.Options{Client: client}}); err != nil {
			t.Fatalf("event from %q: %v", client, err)
		}
	}

	r := e.Hookd("", "status", "--json")
	var st protocol.Status
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.Stdout)
	}
	got := map[string]protocol.ClientStatus{}
	for _, c := range st.Clients {
		got[c.Client+"/"+c.Version] = c
	}
	for key, want := range map[string]struct {
		requests uint64
		skew     bool
	}{
		"hookc/" + daemonVersion: {1, false}, "hookc/" + otherVersion: {2, true}, "hookc/": {1, true}, "my-harness/1.2": {1, false},
	} {
		c, ok := got[key]
		if !ok || c.Requests != want.requests || c.Skew != want.skew || c.LastSeen.Before(c.FirstSeen) || c.FirstSeen.IsZero() {
			t.Errorf("client %s: got %+v (present %v), want %d requests, skew %v", key, c, ok, want.requests, want.skew)
		}
	}
	if len(st.Clients) != 4 {
		t.Errorf("status lists %d clients, want 4: %+v", len(st.Clients), st.Clients)
	}

	r = e.Hookd("", "status")
	if r.Code != 0 {
		t.Fatalf("status: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		"\nclients:\n", "hookc " + otherVersion + " sent 2 requests", "to hookd " + daemonVersion + ": they are not one release",
		"hookc of unknown version (it predates hookc saying its version) sent 1 requests",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("hookd status lacks %q:\n%s", want, r.Stdout)
		}
	}
	if n := strings.Count(r.Stdout, "they are not one release"); n != 2 {
		t.Errorf("hookd status warns %d times, want 2 (the other release and the unknown):\n%s", n, r.Stdout)
	}

	code, f := e.doctorJSON(t)
	if code != 1 || !has(f, "version", "warning", "hookc "+otherVersion+" sent 2 requests") || !has(f, "version", "warning", "hookc of unknown version") {
		t.Fatalf("doctor: exit %d: %v", code, f)
	}
}
