//go:build e2e

package e2e

import (
	"net"
	"os"
	"path/filepath"
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

	// hookd running but the handler's token wrong: hookd answers 401, and onFailure:
	// block makes Claude Code refuse the call — an error status never lets it through.
	bad := *sc
	bad.Prepare = func(t *testing.T, w *world) {
		p := w.SettingsPath("user")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "Bearer ") {
			t.Fatalf("no token in %s", p)
		}
		w.Write(t, p, strings.ReplaceAll(string(data), "Bearer ", "Bearer wrong"), 0o600)
	}
	unauth := runClaude(t, &bad, "http")
	if unauth.Counts["g"] != 0 || len(unauth.Calls) == 0 || !unauth.Calls[0].IsError {
		t.Fatalf("with a wrong token the call must be refused and no hook run: counts %v, calls %+v", unauth.Counts, unauth.Calls)
	}
	if _, err := os.Stat(filepath.Join(unauth.root, "proj", "allowed-by-hook")); err == nil {
		t.Errorf("the command ran although hookd refused the request")
	}
	t.Logf("refused with a wrong token: %s", unauth.Calls[0].Result)
}
