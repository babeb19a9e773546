package install

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
)

var testEP = &HTTPEndpoint{Listen: "127.0.0.1:21234", Token: strings.Repeat("ab", 32)}

const httpOriginal = `{
  "model": "opus",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "onFailure": "block"}]}],
    "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "http", "url": "http://127.0.0.1:9999/mine"}]}],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "ctx.sh"}]}],
    "Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}]}]
  }
}
`

// forwardersOf maps event → the forwarder handlers Claude Code's file has for it.
func forwardersOf(t *testing.T, text string) map[string][]map[string]any {
	t.Helper()
	var top struct {
		Hooks map[string][]struct {
			Matcher *string          `json:"matcher"`
			Hooks   []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(text), &top); err != nil {
		t.Fatal(err)
	}
	out := map[string][]map[string]any{}
	for ev, groups := range top.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				url, _ := h["url"].(string)
				cmd, _ := h["command"].(string)
				if settings.IsHTTPForwarder(url) || settings.IsForwarder(cmd, nil) {
					out[ev] = append(out[ev], h)
				}
			}
		}
	}
	return out
}

// TestInstallHTTPTransport: the frequent events go over http with the token and
// onFailure: block where they can block; SessionStart gets a hookc forwarder although it
// has no hook (its environment is the session's); the prompt event stays on hookc; the
// user's own http hook moves to hookd like any other; the file is made 0600; hookd's
// file has no token; install again changes nothing; uninstall gives the original back.
func TestInstallHTTPTransport(t *testing.T) {
	w := newWorld(t, httpOriginal)
	o := w.opts()
	o.Scope, o.HTTP = settings.KindLocal, testEP
	w.settings = filepath.Join(w.proj, ".claude", "settings.local.json")
	w.hookd = filepath.Join(w.proj, ".claude", "hookd.local.json")
	if err := os.WriteFile(w.settings, []byte(httpOriginal), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Settings = w.settings
	w.installWith(o)
	s := w.read(w.settings)
	fw := forwardersOf(t, s)
	pre := fw["PreToolUse"]
	if len(pre) != 1 || pre[0]["type"] != "http" || pre[0]["url"] != "http://127.0.0.1:21234"+settings.HTTPForwarderPath ||
		pre[0]["onFailure"] != "block" || pre[0]["headers"].(map[string]any)["Authorization"] != "Bearer "+testEP.Token {
		t.Fatalf("PreToolUse forwarder: %v\n%s", pre, s)
	}
	if post := fw["PostToolUse"]; len(post) != 1 || post[0]["type"] != "http" || post[0]["onFailure"] != nil {
		t.Errorf("PostToolUse (cannot block) forwarder: %v", post)
	}
	if f := fw["UserPromptSubmit"]; len(f) != 1 || f[0]["type"] != "command" {
		t.Errorf("UserPromptSubmit must stay on hookc: %v", f)
	}
	if f, ok := fw["SessionStart"]; ok {
		t.Errorf("SessionStart forwarder %v: the UserPromptSubmit forwarder brings the environment before any http event here", f)
	}
	if _, ok := fw["Stop"]; ok {
		t.Errorf("Stop has only a prompt hook (Claude Code's): no forwarder wanted")
	}
	for ev := range fw {
		e, _ := events.Lookup(ev)
		if fw[ev][0]["type"] == "http" && (!HTTPEvents[ev] || e.Name == "SessionStart") {
			t.Errorf("%s got an http forwarder", ev)
		}
	}
	if !strings.Contains(s, `"prompt": "done?"`) || !strings.Contains(s, `"model": "opus"`) {
		t.Errorf("kept hooks or keys lost:\n%s", s)
	}
	if fi, _ := os.Stat(w.settings); fi.Mode().Perm() != 0o600 {
		t.Errorf("settings mode %v, want 0600 (it holds the token)", fi.Mode().Perm())
	}
	h := w.read(w.hookd)
	if strings.Contains(h, testEP.Token) || !strings.Contains(h, `"transport": "http"`) || !strings.Contains(h, "http://127.0.0.1:9999/mine") {
		t.Errorf("hookd's file: want the user's http hook and the transport, never the token:\n%s", h)
	}

	// Idempotent.
	o.Now = o.Now.Add(1e9)
	if p, err := PlanInstall(o); err != nil || p.Changed() {
		t.Fatalf("second install: %v\n%s", err, p.Diff())
	}
	// Resync needs the endpoint, and then keeps the http forwarders.
	if _, err := PlanResync(Options{Scope: o.Scope, Settings: o.Settings}); err == nil {
		t.Errorf("resync of an http installation without the endpoint must fail, not fall back to hookc")
	}
	hd := strings.Replace(h, `"hooks": {`, `"hooks": {"Notification": [{"hooks": [{"type": "command", "command": "notify.sh"}]}],`, 1)
	if err := os.WriteFile(w.hookd, []byte(hd), 0o644); err != nil {
		t.Fatal(err)
	}
	rp, err := PlanResyncFile(w.hookd, testEP, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.Apply(); err != nil {
		t.Fatal(err)
	}
	rfw := forwardersOf(t, w.read(w.settings))
	if n := rfw["Notification"]; len(n) != 1 || n[0]["type"] != "http" {
		t.Errorf("resync: Notification forwarder %v", n)
	}
	if ss := rfw["SessionStart"]; len(ss) != 1 || ss[0]["async"] != true {
		t.Errorf("resync: a Notification can come before the first prompt, so SessionStart must carry the environment again: %v", ss)
	}
	if err := os.WriteFile(w.hookd, []byte(h), 0o644); err != nil { // back as installed
		t.Fatal(err)
	}
	if rp, err = PlanResyncFile(w.hookd, testEP, nil); err != nil || rp.Apply() != nil {
		t.Fatal(err)
	}

	// Uninstall: the original comes back, with no forwarder of either kind.
	o.Now = o.Now.Add(1e9)
	up, err := PlanUninstall(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Apply(); err != nil {
		t.Fatal(err)
	}
	if got := w.read(w.settings); got != httpOriginal {
		t.Fatalf("uninstall did not restore the original:\n%s", got)
	}
}

// TestInstallHTTPTransportRefusedForSharedScopes: a project's settings.json is committed
// and a managed drop-in serves every user: no token goes there.
func TestInstallHTTPTransportRefusedForSharedScopes(t *testing.T) {
	w := newWorld(t, httpOriginal)
	for _, scope := range []settings.Kind{settings.KindProject, settings.KindManaged} {
		o := w.opts()
		o.Scope, o.HTTP = scope, testEP
		if _, err := PlanInstall(o); err == nil || !strings.Contains(err.Error(), "user and local scopes only") {
			t.Errorf("%s: %v", scope, err)
		}
	}
}

// TestHTTPEndpointFile: created 0600 with a fresh token, kept on the next call, refused
// when others can read it.
func TestHTTPEndpointFile(t *testing.T) {
	dir := t.TempDir()
	ep, err := EnsureHTTPEndpoint(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Token) != 64 || ep.Listen == "" {
		t.Fatalf("endpoint %+v", ep)
	}
	path := filepath.Join(dir, HTTPEndpointFile)
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	again, err := EnsureHTTPEndpoint(dir, 0)
	if err != nil || *again != *ep {
		t.Fatalf("second call: %+v %v", again, err)
	}
	moved, err := EnsureHTTPEndpoint(dir, 23456)
	if err != nil || moved.Token != ep.Token || moved.Listen != "127.0.0.1:23456" {
		t.Fatalf("new port: %+v %v", moved, err)
	}
	other, _ := EnsureHTTPEndpoint(t.TempDir(), 0)
	if other.Token == ep.Token {
		t.Fatal("two endpoints share a token")
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadHTTPEndpoint(dir); err == nil {
		t.Fatal("a group-readable token file was used")
	}
	for _, bad := range []string{`{"listen":"0.0.0.0:1","token":"` + ep.Token + `"}`, `{"listen":"127.0.0.1:1","token":"short"}`, `{"listen":"example.com:1","token":"` + ep.Token + `"}`, `nope`} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadHTTPEndpoint(dir); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestIsHTTPForwarder(t *testing.T) {
	for url, want := range map[string]bool{
		"http://127.0.0.1:21000" + settings.HTTPForwarderPath:  true,
		"http://[::1]:21000" + settings.HTTPForwarderPath:      true,
		"http://127.0.0.1:21000/other":                         false,
		"https://127.0.0.1:21000" + settings.HTTPForwarderPath: false,
		"http://example.com" + settings.HTTPForwarderPath:      false,
		"http://10.0.0.1:80" + settings.HTTPForwarderPath:      false,
	} {
		if settings.IsHTTPForwarder(url) != want {
			t.Errorf("%s: want %v", url, want)
		}
	}
}

// TestHTTPSessionStartForwarder: under --transport http the SessionStart forwarder that
// only carries the session's environment (no SessionStart hook behind it) is async — the
// session does not wait for its exec — and skips compaction (same session, same
// environment); there is none when the file's UserPromptSubmit forwarder brings the
// environment before every event the file sends over http (issue 26: one exec fewer per
// session); and one with a SessionStart hook to answer for is neither async nor narrowed.
func TestHTTPSessionStartForwarder(t *testing.T) {
	noPrompt := strings.Replace(httpOriginal, `    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "ctx.sh"}]}],
`, "", 1)
	if noPrompt == httpOriginal {
		t.Fatal("fixture: no UserPromptSubmit hook removed")
	}
	for name, c := range map[string]struct {
		settings string
		want     string // "": no SessionStart forwarder; "env": async, environment only; "hook": the hook's own
	}{
		"UserPromptSubmit brings the environment":       {httpOriginal, ""},
		"no UserPromptSubmit hook":                      {noPrompt, "env"},
		"a Notification (may precede the first prompt)": {strings.Replace(httpOriginal, `"Stop": [`, `"Notification": [{"hooks": [{"type": "command", "command": "n.sh"}]}], "Stop": [`, 1), "env"},
		"a SessionStart hook":                           {strings.Replace(httpOriginal, `"Stop": [`, `"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "ctx.sh"}]}], "Stop": [`, 1), "hook"},
	} {
		w := newWorld(t, c.settings)
		o := w.opts()
		o.Scope, o.HTTP = settings.KindLocal, testEP
		o.Settings = filepath.Join(w.proj, ".claude", "settings.local.json")
		w.settings = o.Settings
		w.write(c.settings)
		w.installWith(o)
		text := w.read(w.settings)
		fw := forwardersOf(t, text)
		ss := fw["SessionStart"]
		switch c.want {
		case "":
			if len(ss) != 0 {
				t.Errorf("%s: SessionStart forwarder %v, want none", name, ss)
			}
		case "env":
			if len(ss) != 1 || ss[0]["type"] != "command" || ss[0]["async"] != true ||
				!strings.Contains(text, `"matcher": "`+envSessionStartSources+`"`) {
				t.Errorf("%s: SessionStart forwarder %v, want async on %s:\n%s", name, ss, envSessionStartSources, text)
			}
		case "hook":
			if len(ss) != 1 || ss[0]["type"] != "command" || ss[0]["async"] != nil || strings.Contains(text, envSessionStartSources) {
				t.Errorf("%s: SessionStart forwarder %v, want the hook's (synchronous, its matcher):\n%s", name, ss, text)
			}
		}
		for ev, hs := range fw {
			if ev != "SessionStart" && hs[0]["async"] != nil {
				t.Errorf("%s: %s forwarder is async: %v", name, ev, hs[0])
			}
		}
	}
}

// TestWarmStartSessionStartForwarder: with the hookc transport, a file whose hooks hookd
// prepares ahead of a session's first tool call (Options.StartsWarm) gets the async,
// env-only SessionStart forwarder — only then, not when a SessionStart hook already
// brings the start, and the predicate sees the project as the hooks' directory. The
// daemon's resync, asked the same, keeps it (no flapping); asked without it, drops it.
func TestWarmStartSessionStartForwarder(t *testing.T) {
	const file = `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "node guard.js"}, {"type": "command", "command": "sh slow.sh", "async": true}]}]}}`
	for name, c := range map[string]struct {
		settings string
		warm     string // the command StartsWarm says yes to
		want     string // "", "env" or "hook", as in TestHTTPSessionStartForwarder
	}{
		"a hook hookd warms":                 {file, "node guard.js", "env"},
		"none it warms":                      {file, "nothing", ""},
		"an async hook is not what it waits": {file, "sh slow.sh", ""},
		"a SessionStart hook brings the start": {strings.Replace(file, `"PreToolUse"`, `"SessionStart": [{"hooks": [{"type": "command", "command": "s.sh"}]}], "PreToolUse"`, 1),
			"node guard.js", "hook"},
	} {
		w := newWorld(t, c.settings)
		var dirs []string
		o := w.opts()
		o.StartsWarm = func(event, command string, args []string, dir string) bool {
			dirs = append(dirs, dir)
			return event == "PreToolUse" && command == c.warm
		}
		w.installWith(o)
		text := w.read(w.settings)
		ss := forwardersOf(t, text)["SessionStart"]
		switch c.want {
		case "":
			if len(ss) != 0 {
				t.Errorf("%s: SessionStart forwarder %v, want none:\n%s", name, ss, text)
			}
		case "env":
			if len(ss) != 1 || ss[0]["async"] != true || !strings.Contains(text, `"matcher": "`+envSessionStartSources+`"`) {
				t.Errorf("%s: SessionStart forwarder %v, want async on %s:\n%s", name, ss, envSessionStartSources, text)
			}
		case "hook":
			if len(ss) != 1 || ss[0]["async"] != nil || strings.Contains(text, envSessionStartSources) {
				t.Errorf("%s: SessionStart forwarder %v, want the hook's own:\n%s", name, ss, text)
			}
		}
		for _, d := range dirs {
			if d != w.proj {
				t.Errorf("%s: StartsWarm asked with dir %q, want the project %q", name, d, w.proj)
			}
		}
		if c.want != "env" {
			continue
		}
		if rp, err := PlanResyncFile(w.hookd, nil, o.StartsWarm); err != nil || rp.Changed() {
			t.Errorf("%s: resync with the same question changes the file (err %v)", name, err)
		}
		rp, err := PlanResyncFile(w.hookd, nil, nil)
		if err != nil || !rp.Changed() || len(forwardersOf(t, string(rp.SettingsAfter))["SessionStart"]) != 0 {
			t.Errorf("%s: resync without StartsWarm keeps the env-only SessionStart (err %v)", name, err)
		}
	}
}
