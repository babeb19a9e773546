//go:build e2e

package e2e

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hookd/hookd/test/claudeapi"
)

// freePort is a loopback port nobody listens on right now, for the http forwarder.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// httpGuard denies any command containing "rm " and allows the rest, by JSON.
var httpGuard = `in=$(cat)
case "$in" in
*'rm '*) echo '` + decide("deny", "no rm here") + `' ;;
*) echo '` + decide("allow", "fine") + `' ;;
esac`

// TestClaudeHTTPForwarder runs one session three ways with the real Claude Code: the
// guard natively, through hookd installed with --transport http (PreToolUse arrives over
// http, SessionStart through hookc), and the same install with hookd stopped. The allow
// and the deny must come out as natively; with hookd stopped, onFailure: block must
// refuse the call (connect ECONNREFUSED), never let it run.
func TestClaudeHTTPForwarder(t *testing.T) {
	t.Parallel()
	sc := &scenario{Name: "http-forwarder",
		Hooks:  []hook{{Name: "g", Event: "PreToolUse", Matcher: "Bash", Scope: "user", Body: httpGuard}},
		Script: []claudeapi.Turn{bash("touch allowed-by-hook"), bash("rm -rf nothing-here"), say("finished")},
		Counts: map[string]int{"g": 2},
	}
	native := runClaude(t, sc, "native")
	viaHTTP := runClaude(t, sc, "http")
	t.Logf("native %s, http %s", native.elapsed.Round(1e6), viaHTTP.elapsed.Round(1e6))
	for _, o := range []*obs{native, viaHTTP} {
		if o.Counts["g"] != 2 {
			t.Errorf("the guard ran %d times, want 2", o.Counts["g"])
		}
	}
	if len(native.Calls) != 2 || len(viaHTTP.Calls) != 2 {
		t.Fatalf("calls: native %+v, http %+v", native.Calls, viaHTTP.Calls)
	}
	for i := range native.Calls {
		n, h := native.Calls[i], viaHTTP.Calls[i]
		if n.IsError != h.IsError || n.Decision != h.Decision {
			t.Errorf("call %d: native %+v, http %+v", i, n, h)
		}
	}
	if native.Calls[0].IsError || !native.Calls[1].IsError || !strings.Contains(viaHTTP.Calls[1].Result, "no rm here") {
		t.Errorf("want the touch allowed and the rm denied with the hook's reason: %+v", viaHTTP.Calls)
	}
	if _, err := os.Stat(filepath.Join(viaHTTP.root, "proj", "allowed-by-hook")); err != nil {
		t.Errorf("the allowed command did not run through the http forwarder: %v", err)
	}
	// The guard's PreToolUse went over http: hookc (the witness) saw SessionStart only.
	for _, l := range viaHTTP.hookc {
		if strings.HasPrefix(l, "PreToolUse ") {
			t.Errorf("PreToolUse went through hookc: %v", viaHTTP.hookc)
		}
	}
	if len(viaHTTP.hookc) == 0 || !strings.HasPrefix(viaHTTP.hookc[0], "SessionStart ") {
		t.Errorf("SessionStart did not go through hookc (the session's environment): %v", viaHTTP.hookc)
	}

	stopped := runClaude(t, sc, "http-stopped")
	if stopped.Counts["g"] != 0 {
		t.Errorf("the guard ran with hookd stopped: %d", stopped.Counts["g"])
	}
	if len(stopped.Calls) == 0 || !stopped.Calls[0].IsError {
		t.Fatalf("with hookd stopped the first call must be refused: %+v", stopped.Calls)
	}
	if _, err := os.Stat(filepath.Join(stopped.root, "proj", "allowed-by-hook")); err == nil {
		t.Errorf("the command ran although hookd was unreachable")
	}
	t.Logf("refused with hookd stopped: %s", stopped.Calls[0].Result)

	// An error status instead of an answer: Claude Code must block (onFailure) too. With
	// hookd running, its forwarder resync puts the daemon's token back into the settings
	// file, so the mismatch is made on the other side: no hookd, and on its port a server
	// that answers every request as hookd answers a wrong token (401; hookd's own 401 is
	// tested in daemon/httpfwd).
	bad := *sc
	bad.Prepare = func(t *testing.T, w *world) {
		data, err := os.ReadFile(w.SettingsPath("user"))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`http://(127\.0\.0\.1:[0-9]+)/hookd/v1/claude-code`).FindSubmatch(data)
		if m == nil {
			t.Fatalf("no http forwarder in the settings:\n%s", data)
		}
		ln, err := net.Listen("tcp", string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("WWW-Authenticate", `Bearer realm="hookd"`)
			http.Error(rw, "hookd: unauthorized", http.StatusUnauthorized)
		})}
		go srv.Serve(ln) //nolint:errcheck
		t.Cleanup(func() { srv.Close() })
	}
	unauth := runClaude(t, &bad, "http-stopped")
	if unauth.Counts["g"] != 0 || len(unauth.Calls) == 0 || !unauth.Calls[0].IsError || !strings.Contains(unauth.Calls[0].Result, "401") {
		t.Fatalf("with a 401 the call must be refused and no hook run: counts %v, calls %+v", unauth.Counts, unauth.Calls)
	}
	if _, err := os.Stat(filepath.Join(unauth.root, "proj", "allowed-by-hook")); err == nil {
		t.Errorf("the command ran although the request was refused")
	}
	t.Logf("refused with a wrong token: %s", unauth.Calls[0].Result)
}

// TestClaudeHTTPEnvFromUserPromptSubmit (issue 26): with a UserPromptSubmit hook beside
// the PreToolUse guard, the http install writes no SessionStart forwarder — the session's
// environment reaches hookd with the UserPromptSubmit forwarder, which Claude Code waits for
// before the turn's first tool call — so an http session starts no process a native one does
// not. The guard must still run over http with that environment: the touch allowed and run,
// the rm denied with the guard's reason (without an environment hookd would refuse both).
func TestClaudeHTTPEnvFromUserPromptSubmit(t *testing.T) {
	t.Parallel()
	sc := &scenario{Name: "http-env-ups",
		Hooks: []hook{
			{Name: "g", Event: "PreToolUse", Matcher: "Bash", Scope: "user", Body: httpGuard},
			{Name: "ups", Event: "UserPromptSubmit", Scope: "user", Body: "cat >/dev/null"},
		},
		Script: []claudeapi.Turn{bash("touch allowed-by-hook"), bash("rm -rf nothing-here"), say("finished")},
		Counts: map[string]int{"g": 2, "ups": 1},
	}
	native := runClaude(t, sc, "native")
	viaHTTP := runClaude(t, sc, "http")
	for _, o := range []*obs{native, viaHTTP} {
		if o.Counts["g"] != 2 || o.Counts["ups"] != 1 {
			t.Errorf("hooks ran %v, want the guard twice and the prompt hook once", o.Counts)
		}
	}
	if len(viaHTTP.Calls) != 2 || viaHTTP.Calls[0].IsError || !viaHTTP.Calls[1].IsError || !strings.Contains(viaHTTP.Calls[1].Result, "no rm here") {
		t.Fatalf("want the touch allowed and the rm denied with the guard's reason: %+v", viaHTTP.Calls)
	}
	if _, err := os.Stat(filepath.Join(viaHTTP.root, "proj", "allowed-by-hook")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	// hookc (the witness) ran once, for UserPromptSubmit: no SessionStart exec, and every
	// PreToolUse went over http.
	if len(viaHTTP.hookc) != 1 || !strings.HasPrefix(viaHTTP.hookc[0], "UserPromptSubmit ") {
		t.Errorf("hookc ran for %v, want UserPromptSubmit only", viaHTTP.hookc)
	}
	data, err := os.ReadFile(filepath.Join(viaHTTP.root, "home", ".claude", "settings.json"))
	if err == nil && strings.Contains(string(data), `"SessionStart"`) {
		t.Errorf("the http install wrote a SessionStart forwarder:\n%s", data)
	}
}

// TestClaudeHTTPForwarderStopAndPostToolUse: an exit-2 Stop block (which hookd says as
// decision:"block" over http) keeps Claude going exactly once, as natively, and a
// PostToolUse hook's additionalContext reaches the model through the http forwarder.
func TestClaudeHTTPForwarderStopAndPostToolUse(t *testing.T) {
	t.Parallel()
	sc := &scenario{Name: "http-stop-post",
		Hooks: []hook{
			{Name: "stop", Event: "Stop", Scope: "user", Body: stopBlocksOnce("", "keep going", 2)},
			{Name: "post", Event: "PostToolUse", Matcher: "Bash", Scope: "user", Body: emit(ctx("PostToolUse", "post-context-marker"), "", 0)},
		},
		Script: []claudeapi.Turn{bash("echo hi"), say("first"), say("second")},
		Counts: map[string]int{"stop": 2, "post": 1},
	}
	native := runClaude(t, sc, "native")
	viaHTTP := runClaude(t, sc, "http")
	for _, o := range []*obs{native, viaHTTP} {
		if o.Counts["stop"] != 2 || o.Counts["post"] != 1 {
			t.Errorf("hook runs %v, want stop 2, post 1", o.Counts)
		}
	}
	if native.Requests != viaHTTP.Requests {
		t.Errorf("model requests: native %d, http %d (the Stop block must continue the turn once)", native.Requests, viaHTTP.Requests)
	}
	has := func(o *obs, s string) bool { return strings.Contains(strings.Join(o.Model, "\n"), s) }
	for _, s := range []string{"post-context-marker", "keep going"} {
		if !has(native, s) || !has(viaHTTP, s) {
			t.Errorf("%q reached the model natively %v, through http %v\nnative: %v\nhttp: %v", s, has(native, s), has(viaHTTP, s), native.Model, viaHTTP.Model)
		}
	}
	for _, l := range viaHTTP.hookc {
		if strings.HasPrefix(l, "Stop ") || strings.HasPrefix(l, "PostToolUse ") {
			t.Errorf("%s went through hookc, not http", l)
		}
	}
	// The one documented difference (docs/http-forwarder.md, "What it loses"): the JSON
	// block adds a system message naming the forwarder's URL, which an exit-2 block through
	// hookc does not (FINDINGS.md, probes stop-2/stop-2b).
	extra := 0
	for _, m := range viaHTTP.Model {
		if strings.Contains(m, "Stop hook blocking error from command") {
			extra++
		}
	}
	if extra != 1 || len(viaHTTP.Model) != len(native.Model)+1 {
		t.Errorf("want the native texts plus one 'Stop hook blocking error' message through http")
	}
	t.Logf("native model texts: %q", native.Model)
	t.Logf("http model texts: %q", viaHTTP.Model)
}
