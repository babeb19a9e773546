package install

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/jsonobj"
	"github.com/hookd/hookd/matcher"
	"github.com/hookd/hookd/protocol"
)

const fwd = "/opt/hookd/bin/hookc"

type world struct {
	t        *testing.T
	proj     string
	settings string
	hookd    string
	now      time.Time
}

func newWorld(t *testing.T, content string) *world {
	t.Helper()
	proj := t.TempDir()
	w := &world{t: t, proj: proj, settings: filepath.Join(proj, ".claude", "settings.json"),
		hookd: filepath.Join(proj, ".claude", "hookd.json"), now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	if err := os.MkdirAll(filepath.Dir(w.settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if content != "" {
		w.write(content)
	}
	return w
}

func (w *world) write(content string) {
	w.t.Helper()
	if err := os.WriteFile(w.settings, []byte(content), 0o640); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) read(path string) string {
	w.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	return string(data)
}

func (w *world) opts() Options {
	w.now = w.now.Add(time.Second)
	return Options{Scope: settings.KindProject, Settings: w.settings, Forwarder: fwd, HookdVersion: "test", Now: w.now}
}

func (w *world) install() *Plan {
	w.t.Helper()
	return w.installWith(w.opts())
}

// installWith plans and applies an install with options o, failing the test on an error.
func (w *world) installWith(o Options) *Plan {
	w.t.Helper()
	p, err := PlanInstall(o)
	if err != nil {
		w.t.Fatalf("install: %v", err)
	}
	if err := p.Apply(); err != nil {
		w.t.Fatalf("apply install: %v", err)
	}
	return p
}

func (w *world) uninstall() *Plan {
	w.t.Helper()
	p, err := PlanUninstall(w.opts())
	if err != nil {
		w.t.Fatalf("uninstall: %v", err)
	}
	if err := p.Apply(); err != nil {
		w.t.Fatalf("apply uninstall: %v", err)
	}
	return p
}

// topKeys lists a JSON object's top-level keys in order.
func topKeys(t *testing.T, data string) []string {
	t.Helper()
	o, err := parseObject([]byte(data))
	if err != nil {
		t.Fatalf("%v in %s", err, data)
	}
	var keys []string
	for _, m := range o {
		keys = append(keys, m.Key)
	}
	return keys
}

func hooksOf(t *testing.T, data string) string {
	t.Helper()
	o, err := parseObject([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := o.Lookup("hooks")
	return string(v)
}

const mixed = `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(echo *)"],
    "deny": ["Bash(rm *)"]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {"type": "command", "command": "/p/h/guard.sh", "timeout": 900, "statusMessage": "caf\u00e9 <check>"},
          {"type": "prompt", "prompt": "is $ARGUMENTS ok?"}
        ]
      },
      {"matcher": "Edit|Write", "hooks": [{"type": "http", "url": "http://127.0.0.1:9/h", "timeout": 5}]}
    ],
    "Stop": [{"hooks": [{"type": "agent", "prompt": "check"}]}],
    "NoSuchEvent": [{"hooks": [{"type": "command", "command": "future"}]}],
    "SessionEnd": [{"hooks": [{"type": "command", "command": "bye", "timeout": 20}]}],
    "FileChanged": [{"matcher": ".envrc", "hooks": [{"type": "command", "command": "direnv-hook"}]}, {"hooks": [{"type": "command", "command": "any-file"}]}]
  },
  "model": "opus"
}
`

func TestInstallMovesRunnableHooksAndForwardsHookedEvents(t *testing.T) {
	w := newWorld(t, mixed)
	p := w.install()
	s, h := w.read(w.settings), w.read(w.hookd)

	// Claude Code's file: same keys in the same order, nothing of hookd's.
	if got, want := topKeys(t, s), []string{"$schema", "permissions", "hooks", "model"}; !reflect.DeepEqual(got, want) {
		t.Errorf("settings keys %v, want %v", got, want)
	}
	if !strings.Contains(s, `"allow": ["Bash(echo *)"]`) {
		t.Errorf("permissions were reformatted:\n%s", s)
	}
	// What stays: prompt/agent handlers and the unknown event, verbatim.
	var cc map[string][]struct {
		Matcher *string           `json:"matcher"`
		Hooks   []json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(hooksOf(t, s)), &cc); err != nil {
		t.Fatal(err)
	}
	runs := func(event string) (fwds int, others []string) {
		for _, g := range cc[event] {
			for _, x := range g.Hooks {
				var hi handlerInfo
				_ = json.Unmarshal(x, &hi)
				if isForwarderCmd(t, hi, fwd) {
					fwds++
				} else {
					others = append(others, string(x))
				}
			}
		}
		return
	}
	if n, others := runs("PreToolUse"); n != 1 || len(others) != 1 || !strings.Contains(others[0], `"prompt"`) {
		t.Errorf("PreToolUse in Claude Code's file: %d forwarders, others %v", n, others)
	}
	if n, others := runs("NoSuchEvent"); n != 0 || len(others) != 1 {
		t.Errorf("unknown event: %d forwarders, others %v", n, others)
	}
	for _, name := range events.Names() {
		n, _ := runs(name)
		want := 0 // nobody hooks it: no hookc start per event
		switch name {
		case "PreToolUse", "SessionEnd":
			want = 1
		case "FileChanged":
			want = 2 // one per moved matcher, so the watch list is unchanged
		}
		if n != want {
			t.Errorf("%s: %d forwarders, want %d", name, n, want)
		}
	}
	// The PreToolUse forwarder fires for exactly the tools the moved groups match.
	for _, g := range cc["PreToolUse"] {
		if n, _ := runs("PreToolUse"); n == 1 && len(g.Hooks) == 1 && strings.Contains(string(g.Hooks[0]), fwd) {
			if g.Matcher == nil || *g.Matcher != "Bash|Edit|Write" {
				t.Errorf("PreToolUse forwarder matcher %v, want Bash|Edit|Write", g.Matcher)
			}
		}
	}
	// Matchers and timeouts of the forwarders.
	for _, g := range cc["FileChanged"] {
		if g.Matcher != nil && *g.Matcher != ".envrc" {
			t.Errorf("FileChanged forwarder matcher %q", *g.Matcher)
		}
	}
	timeoutOf := func(event string) any {
		for _, g := range cc[event] {
			for _, x := range g.Hooks {
				var m map[string]any
				_ = json.Unmarshal(x, &m)
				if c, _ := m["command"].(string); c == fwd || strings.HasPrefix(c, fwd+" --timeout ") {
					return m["timeout"]
				}
			}
		}
		return "missing"
	}
	for event, want := range map[string]any{"PreToolUse": 930.0, "Stop": "missing", "UserPromptSubmit": "missing", "SessionEnd": 20.0, "FileChanged": 630.0} {
		if got := timeoutOf(event); got != want {
			t.Errorf("%s forwarder timeout %v, want %v", event, got, want)
		}
	}
	for _, g := range cc["Stop"] {
		if g.Matcher != nil {
			t.Errorf("Stop has no matcher field; forwarder group got %q", *g.Matcher)
		}
	}

	// hookd's file: the moved handlers, byte for byte inside, with their groups.
	if got, want := topKeys(t, h), []string{"hookd", "hooks"}; !reflect.DeepEqual(got, want) {
		t.Errorf("hookd.json keys %v", got)
	}
	for _, frag := range []string{`"statusMessage": "caf\u00e9 <check>"`, `"url": "http://127.0.0.1:9/h"`, `"matcher": "Edit|Write"`, `"command": "bye"`} {
		if !strings.Contains(h, frag) {
			t.Errorf("hookd.json lacks %s:\n%s", frag, h)
		}
	}
	if strings.Contains(hooksOf(t, h), "prompt") || strings.Contains(hooksOf(t, h), "future") {
		t.Errorf("hookd.json got handlers it cannot run:\n%s", hooksOf(t, h))
	}
	if len(p.Backups) != 1 || w.read(p.Backups[w.settings]) != mixed {
		t.Errorf("backup %v", p.Backups)
	}

	// hookd loads both files: the moved hooks with the project label; nothing of what
	// is left in Claude Code's file.
	src := settings.Sources{ManagedDir: filepath.Join(w.proj, "none"), UserDir: filepath.Join(w.proj, "none"), ProjectDir: w.proj}
	var files []*settings.File
	for _, ref := range src.Files() {
		f, err := settings.LoadFile(ref, "")
		if err == nil {
			files = append(files, f)
		} else if !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	snap := settings.Compile(files)
	pre, _ := events.Lookup("PreToolUse")
	run, notRun := snap.Match(settings.Query{Event: pre, MatchValue: "Bash"})
	if len(run) != 1 || run[0].Command != "/p/h/guard.sh" || run[0].Source != settings.KindProject || len(notRun) != 0 {
		t.Errorf("hookd runs %v (not run %v)", run, notRun)
	}
	if snap.Rules.Len() != 2 {
		t.Errorf("rules: %d", snap.Rules.Len())
	}
}

func TestInstallIsIdempotent(t *testing.T) {
	w := newWorld(t, mixed)
	w.install()
	s, h := w.read(w.settings), w.read(w.hookd)
	p, err := PlanInstall(w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if p.Changed() || !strings.Contains(strings.Join(p.Summary, "\n"), "already installed") {
		t.Errorf("second install changes things: %v\n%s", p.Summary, p.Diff())
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	if w.read(w.settings) != s || w.read(w.hookd) != h {
		t.Error("second install rewrote files")
	}
}

func TestUninstallRestoresExactly(t *testing.T) {
	for name, content := range map[string]string{
		"pretty":   mixed,
		"one line": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"s.sh"}]}]},"env":{"A":"1"}}`,
		"no hooks": "{\n  \"model\": \"opus\"\n}\n",
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, content)
			w.install()
			w.uninstall()
			if got := w.read(w.settings); got != content {
				t.Errorf("restored:\n%s\nwant:\n%s", got, content)
			}
			if _, err := os.Stat(w.hookd); !os.IsNotExist(err) {
				t.Errorf("hookd.json still there: %v", err)
			}
		})
	}
}

func TestUninstallAfterOtherEditsKeepsThem(t *testing.T) {
	w := newWorld(t, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"s.sh"}]}]},"env":{"A":"1"}}`)
	w.install()
	// Someone edits the permissions in Claude Code's file after the install.
	s := strings.Replace(w.read(w.settings), `"env"`, `"permissions": {"allow": ["Read"]}, "env"`, 1)
	w.write(s)
	w.uninstall()
	got := w.read(w.settings)
	if !equalJSON([]byte(hooksOf(t, got)), []byte(`{"Stop":[{"hooks":[{"type":"command","command":"s.sh"}]}]}`)) {
		t.Errorf("hooks not restored: %s", hooksOf(t, got))
	}
	if !strings.Contains(got, `"permissions": {"allow": ["Read"]}`) {
		t.Errorf("the later edit was lost:\n%s", got)
	}
}

func TestNoSettingsFile(t *testing.T) {
	w := newWorld(t, "")
	w.install()
	if keys := topKeys(t, w.read(w.settings)); !reflect.DeepEqual(keys, []string{"hooks"}) {
		t.Errorf("created settings keys %v", keys)
	}
	w.uninstall()
	if _, err := os.Stat(w.settings); !os.IsNotExist(err) {
		t.Errorf("settings.json created by install not removed: %v", err)
	}
}

func TestReinstallMovesNewHooksAndUninstallReturnsAll(t *testing.T) {
	w := newWorld(t, mixed)
	w.install()
	// A command hook added to Claude Code's file after the install: it runs natively
	// (hookd leaves the file to Claude Code) until the next install moves it.
	o, _ := parseObject([]byte(w.read(w.settings)))
	hooks, _ := parseObject(mustRaw(o, "hooks"))
	hooks = merge(hooks, jsonobj.Object{}.SetRaw("Stop", json.RawMessage(`[{"hooks":[{"type":"command","command":"late.sh"}]}]`)))
	data, _ := spliceTopLevel([]byte(w.read(w.settings)), "hooks", hooks.JSON())
	w.write(string(data))

	p := w.install()
	if !strings.Contains(strings.Join(p.Summary, "\n"), "added since") {
		t.Errorf("summary %v", p.Summary)
	}
	if !strings.Contains(hooksOf(t, w.read(w.hookd)), "late.sh") || strings.Contains(hooksOf(t, w.read(w.settings)), "late.sh") {
		t.Error("late.sh not moved")
	}
	w.uninstall()
	back := hooksOf(t, w.read(w.settings))
	for _, frag := range []string{"late.sh", "guard.sh", "direnv-hook", "any-file", "future", "is $ARGUMENTS ok?", "bye"} {
		if !strings.Contains(back, frag) {
			t.Errorf("%s missing after uninstall: %s", frag, back)
		}
	}
	if strings.Contains(back, fwd) {
		t.Errorf("forwarder left behind: %s", back)
	}
}

func TestForwarderChange(t *testing.T) {
	w := newWorld(t, mixed)
	w.install()
	o := w.opts()
	o.Forwarder = "/usr/local/bin/hookc"
	w.installWith(o)
	s := w.read(w.settings)
	if strings.Contains(s, fwd) || !strings.Contains(s, "/usr/local/bin/hookc") {
		t.Errorf("forwarders not replaced:\n%s", s)
	}
	w.uninstall()
	if w.read(w.settings) != mixed {
		t.Errorf("not restored after a forwarder change:\n%s", w.read(w.settings))
	}
}

func TestLegacyHookcIsReplacedAndRestored(t *testing.T) {
	legacy := `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "hookc"}]}]}}`
	w := newWorld(t, legacy)
	w.install()
	if strings.Contains(w.read(w.hookd), `"command": "hookc"`) && strings.Contains(hooksOf(t, w.read(w.hookd)), "hookc") {
		t.Errorf("a hookc hook was moved into hookd (it would call itself): %s", w.read(w.hookd))
	}
	w.uninstall()
	if w.read(w.settings) != legacy {
		t.Errorf("restored %s", w.read(w.settings))
	}
}

func TestRefusals(t *testing.T) {
	w := newWorld(t, mixed)
	if err := os.WriteFile(w.hookd, []byte(`{"hooks": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanInstall(w.opts()); err == nil || !strings.Contains(err.Error(), "not written by hookd install") {
		t.Errorf("foreign hookd.json: %v", err)
	}
	os.Remove(w.hookd)
	if _, err := PlanUninstall(w.opts()); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("uninstall without install: %v", err)
	}
	w.write(`{"hooks": [`)
	if _, err := PlanInstall(w.opts()); err == nil {
		t.Error("broken settings accepted")
	}
	o := w.opts()
	o.Forwarder = "/usr/bin/forwarder"
	w.write(mixed)
	if _, err := PlanInstall(o); err == nil {
		t.Error("a forwarder not named hookc accepted")
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	w := newWorld(t, mixed)
	p, err := PlanInstall(w.opts())
	if err != nil {
		t.Fatal(err)
	}
	d := p.Diff()
	if !strings.Contains(d, "+++ "+w.hookd) || !strings.Contains(d, "--- "+w.settings) || !strings.Contains(d, fwd) {
		t.Errorf("diff:\n%s", d)
	}
	if _, err := os.Stat(w.hookd); !os.IsNotExist(err) {
		t.Error("planning wrote hookd.json")
	}
	if w.read(w.settings) != mixed {
		t.Error("planning changed settings.json")
	}
}

func TestSplice(t *testing.T) {
	tests := []struct {
		name, in, key, val, want string
	}{
		{"replace", "{\n  \"a\": 1,\n  \"hooks\": {},\n  \"b\": [1, 2]\n}\n", "hooks", `{"X":[]}`, "{\n  \"a\": 1,\n  \"hooks\": {\n    \"X\": []\n  },\n  \"b\": [1, 2]\n}\n"},
		{"append", "{\n\t\"a\": 1\n}\n", "hooks", `{}`, "{\n\t\"a\": 1,\n\t\"hooks\": {}\n}\n"},
		{"empty object", "{}\n", "hooks", `{"X":1}`, "{\n  \"hooks\": {\n    \"X\": 1\n  }\n}\n"},
		{"remove middle", "{\n  \"a\": 1,\n  \"hooks\": {},\n  \"b\": 2\n}", "hooks", "", "{\n  \"a\": 1,\n  \"b\": 2\n}"},
		{"remove last", "{\n  \"a\": 1,\n  \"hooks\": {}\n}", "hooks", "", "{\n  \"a\": 1\n}"},
		{"remove one-line", `{"hooks":{},"a":1}`, "hooks", "", `{"a":1}`},
		{"escaped key before", `{"a\"b": 1, "hooks": 2}`, "hooks", `3`, `{"a\"b": 1, "hooks": 3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var val json.RawMessage
			if tt.val != "" {
				val = json.RawMessage(tt.val)
			}
			got, err := spliceTopLevel([]byte(tt.in), tt.key, val)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
	if _, err := spliceTopLevel([]byte(`{"hooks":1,"hooks":2}`), "hooks", json.RawMessage(`3`)); err == nil {
		t.Error("duplicate key accepted")
	}
}

// TestForwarderFailsClosedWithItsHooks: when a moved hook of an event says "onFailure":
// "block", the forwarder of that event says it too, so a forwarder that times out or
// cannot start blocks in Claude Code as the hook itself would have; other events'
// forwarders (and async hooks' events) do not. Events nobody hooks (the model-switch
// events here) get no forwarder.
func TestForwarderFailsClosedWithItsHooks(t *testing.T) {
	w := newWorld(t, `{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/g/guard.sh", "onFailure": "block"}]}],
  "PostToolUse": [{"hooks": [{"type": "command", "command": "/g/bg.sh", "async": true, "onFailure": "block"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "/g/stop.sh"}]}]
}}`)
	w.install()
	var cc map[string][]struct {
		Matcher *string                      `json:"matcher"`
		Hooks   []map[string]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(hooksOf(t, w.read(w.settings))), &cc); err != nil {
		t.Fatal(err)
	}
	onFailure := func(event string) string {
		for _, g := range cc[event] {
			for _, h := range g.Hooks {
				if v, ok := h["onFailure"]; ok {
					return string(v)
				}
			}
		}
		return ""
	}
	if got := onFailure("PreToolUse"); got != `"block"` {
		t.Errorf("PreToolUse forwarder onFailure = %s, want \"block\"", got)
	}
	for _, ev := range []string{"PostToolUse", "Stop", "UserPromptSubmit"} {
		if got := onFailure(ev); got != "" {
			t.Errorf("%s forwarder onFailure = %s, want none", ev, got)
		}
	}
	for _, ev := range []string{"PreModelSwitch", "PostModelSwitch"} {
		if len(cc[ev]) != 0 {
			t.Errorf("%s: forwarder groups %+v, want none (nothing hooked there)", ev, cc[ev])
		}
	}
}

// TestUnionMatcher: the forwarder's matcher matches a tool name exactly when one of the
// moved groups' matchers does — checked with hookd's matcher package (Claude Code's rules).
func TestUnionMatcher(t *testing.T) {
	sp := func(s string) *string { return &s }
	tools := []string{"Bash", "Edit", "Write", "NotebookEdit", "Read", "mcp__github__create_issue", "mcp__fs__read", "Task", "a.b", "aXb", ""}
	for _, ms := range [][]*string{
		{sp("Bash")},
		{sp("Bash"), sp("Edit|Write")},
		{sp("Edit, Write"), sp("Bash")},
		{sp("Bash"), sp("mcp__github__.*")},
		{sp("Edit.*"), sp("^Read$")},
		{sp("a.b")}, // a regex: "." is not in the exact-name alphabet
		{sp("Bash"), nil},
		{sp("Bash"), sp("*")},
		{sp("Bash"), sp("")},
	} {
		u := UnionMatcher(ms)
		um, err := matcher.Compile(u, false)
		if err != nil {
			t.Fatalf("%v → %q does not compile: %v", ms, u, err)
		}
		for _, tool := range tools {
			want := false
			for _, m := range ms {
				c, _ := matcher.Compile(deref(m), false)
				want = want || c.Match(tool)
			}
			if um.Match(tool) != want {
				t.Errorf("union %q of %v: Match(%q) = %v, want %v", u, strs(ms), tool, um.Match(tool), want)
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func strs(ms []*string) []string {
	var out []string
	for _, m := range ms {
		if m == nil {
			out = append(out, "<none>")
		} else {
			out = append(out, *m)
		}
	}
	return out
}

// TestResyncFollowsHookdFile: after an install, a hook added to hookd's file gets its
// forwarder, a hook removed loses it, and nothing else in Claude Code's file changes —
// neither hooks added there since the install nor other keys.
func TestResyncFollowsHookdFile(t *testing.T) {
	w := newWorld(t, mixed)
	w.install()
	resync := func() *Plan {
		t.Helper()
		p, err := PlanResync(w.opts())
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Apply(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := resync(); p.Changed() {
		t.Fatalf("resync right after install changed something:\n%s", p.Diff())
	}
	// The user adds a Stop hook to hookd's file and a command hook of their own to Claude
	// Code's file (Claude Code runs that one itself).
	hpath := w.hookd
	h := w.read(hpath)
	h = strings.Replace(h, `"hooks": {`, `"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "stop-gate"}]}],`, 1)
	if err := os.WriteFile(hpath, []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	s := w.read(w.settings)
	s = strings.Replace(s, `"hooks": {`, `"hooks": {"Notification": [{"hooks": [{"type": "command", "command": "mine"}]}],`, 1)
	if err := os.WriteFile(w.settings, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	hookdBefore := w.read(hpath)
	p := resync()
	after := w.read(w.settings)
	if !p.Changed() || !strings.Contains(after, `"command": "mine"`) || w.read(hpath) != hookdBefore {
		t.Fatalf("resync: changed %v\n%s", p.Changed(), after)
	}
	var cc map[string][]struct {
		Hooks []handlerInfo `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(hooksOf(t, after)), &cc); err != nil {
		t.Fatal(err)
	}
	fwds := func(event string) int {
		n := 0
		for _, g := range cc[event] {
			for _, hi := range g.Hooks {
				if isForwarderCmd(t, hi, w.opts().Forwarder) {
					n++
				}
			}
		}
		return n
	}
	if fwds("Stop") != 1 || fwds("PreToolUse") != 1 || fwds("Notification") != 0 || len(cc["Notification"]) != 1 {
		t.Fatalf("forwarders after adding a Stop hook: %s", hooksOf(t, after))
	}
	if got, want := topKeys(t, after), []string{"$schema", "permissions", "hooks", "model"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keys %v", got)
	}
	// Idempotent, and the SessionEnd hook removed from hookd's file loses its forwarder.
	if p := resync(); p.Changed() {
		t.Fatalf("second resync changed:\n%s", p.Diff())
	}
	h = w.read(hpath)
	h = strings.Replace(h, `"command": "bye"`, `"command": "bye"`, 1)
	var top map[string]json.RawMessage
	json.Unmarshal([]byte(h), &top)
	var hooks map[string]json.RawMessage
	json.Unmarshal(top["hooks"], &hooks)
	delete(hooks, "SessionEnd")
	top["hooks"], _ = json.Marshal(hooks)
	b, _ := json.Marshal(top)
	os.WriteFile(hpath, b, 0o644)
	resync()
	cc = nil
	json.Unmarshal([]byte(hooksOf(t, w.read(w.settings))), &cc)
	if fwds("SessionEnd") != 0 || fwds("Stop") != 1 {
		t.Fatalf("after removing SessionEnd from hookd's file: %s", hooksOf(t, w.read(w.settings)))
	}
}

// TestApplyIsCompareAndSwap: a file edited after the plan read it is never overwritten by
// the plan — not Claude Code's settings (the daemon's resync, an install) nor hookd's
// file — and a file that appeared, or disappeared, since is not clobbered or recreated.
func TestApplyIsCompareAndSwap(t *testing.T) {
	w := newWorld(t, mixed)
	w.install()
	h := w.read(w.hookd)
	h = strings.Replace(h, `"hooks": {`, `"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "stop-gate"}]}],`, 1)
	if err := os.WriteFile(w.hookd, []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := PlanResync(w.opts())
	if err != nil || !p.Changed() {
		t.Fatalf("resync plan: changed %v, %v", p != nil && p.Changed(), err)
	}
	// The user saves Claude Code's file between the plan and its application.
	edited := strings.Replace(w.read(w.settings), `"model"`, `"outputStyle": "mine", "model"`, 1)
	if err := os.WriteFile(w.settings, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); !errors.Is(err, ErrChangedSinceRead) {
		t.Fatalf("Apply over a concurrent edit: %v, want ErrChangedSinceRead", err)
	}
	if got := w.read(w.settings); got != edited {
		t.Fatalf("the user's edit was overwritten:\n%s", got)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(w.settings), ".settings.json.*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	// Planned again from the user's version: both their edit and the new forwarder.
	p, err = PlanResync(w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	got := w.read(w.settings)
	if !strings.Contains(got, `"outputStyle": "mine"`) || !strings.Contains(hooksOf(t, got), `"Stop"`) {
		t.Fatalf("after re-planning: %s", got)
	}

	// Install: Claude Code's file deleted after the plan read it is not recreated from the
	// old bytes, and hookd's file (written first) is not touched either.
	w2 := newWorld(t, mixed)
	p, err = PlanInstall(w2.opts())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(w2.settings); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); !errors.Is(err, ErrChangedSinceRead) {
		t.Fatalf("install over a deleted file: %v", err)
	}
	if _, err := os.Stat(w2.settings); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("settings file recreated: %v", err)
	}
	if _, err := os.Stat(w2.hookd); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("hookd's file written although the plan was refused: %v", err)
	}
	// And a hookd file that appeared after the plan (another install) is not clobbered.
	p, err = PlanInstall(newWorldAt(t, w2, mixed).opts())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w2.hookd, []byte(`{"hooks": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); !errors.Is(err, ErrChangedSinceRead) {
		t.Fatalf("install over a hookd file that appeared: %v", err)
	}
	if got := w2.read(w2.hookd); got != `{"hooks": {}}` {
		t.Errorf("hookd file clobbered: %s", got)
	}
}

// newWorldAt writes content as w's settings file again and returns w.
func newWorldAt(t *testing.T, w *world, content string) *world {
	t.Helper()
	w.write(content)
	return w
}

// isForwarderCmd reports whether hi runs the forwarder fwd (possibly with flags), and
// checks the --timeout the installer gave it (issue 13): a margin below the handler's own
// timeout, so hookc answers fail-closed before Claude Code gives up on it; none where the
// handler has no timeout (SessionEnd: hookc then derives it from the event).
func isForwarderCmd(t *testing.T, hi handlerInfo, fwd string) bool {
	t.Helper()
	if hi.Command != fwd && !strings.HasPrefix(hi.Command, fwd+" ") {
		return false
	}
	_, rest, has := strings.Cut(hi.Command, " --timeout ")
	switch {
	case !has && hi.Timeout != nil:
		t.Errorf("forwarder %q with timeout %v has no --timeout of its own", hi.Command, *hi.Timeout)
	case has && hi.Timeout == nil:
		t.Errorf("forwarder %q has --timeout but the handler none", hi.Command)
	case has:
		rest, _, _ = strings.Cut(rest, " ")
		want := protocol.FormatSeconds(protocol.ForwarderTimeout(time.Duration(*hi.Timeout * float64(time.Second))))
		if rest != want {
			t.Errorf("forwarder %q with handler timeout %vs: --timeout %s, want %s", hi.Command, *hi.Timeout, rest, want)
		}
	}
	return true
}
