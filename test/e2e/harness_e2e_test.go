//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/test/claudeapi"
	"github.com/hookd/hookd/test/testutil"
)

// The end-to-end suite runs the real Claude Code binary (HOOKD_CLAUDE_BIN, installed by
// install-claude.sh) in -p mode against the loopback Messages API stand-in, twice per
// scenario: with the hooks configured natively, and after `hookd install claude-code`
// with a running daemon (or, for scenarios that say so, none: hookc's in-process
// fallback). It compares what matters and counts every real hook's runs.

var bin struct {
	claude, hookd, hookc, dir string
}

func TestMain(m *testing.M) {
	bin.claude = os.Getenv("HOOKD_CLAUDE_BIN")
	if bin.claude == "" {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "e2e: HOOKD_CLAUDE_BIN is not set and CI=true: the suite must run in CI (make e2e installs Claude Code)")
			os.Exit(1)
		}
		fmt.Println("e2e: HOOKD_CLAUDE_BIN not set; skipping the Claude Code suite (make e2e installs it)")
		os.Exit(0)
	}
	if _, err := os.Stat(bin.claude); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "hke2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin.dir = dir
	bin.hookd, bin.hookc = filepath.Join(dir, "hookd"), filepath.Join(dir, "hookc")
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	for out, pkg := range map[string]string{bin.hookd: "./cmd/hookd", bin.hookc: "./cmd/hookc"} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, b)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hook is one command hook of a scenario. Its script is $ROOT/h/<Name>.sh: it appends a
// line to $ROOT/counts/<Name> (the side effect the suite counts), then runs Body.
type hook struct {
	Name    string
	Event   string
	Matcher string // "" = no matcher key
	Scope   string // user | project (default) | local
	If      string
	Timeout float64
	Body    string
	// Command, when set, is the command verbatim (no script; not counted).
	Command string
	// OnFailure is the handler's "onFailure" ("" = absent).
	OnFailure string
	// Args, when non-nil, makes the handler exec form: "args" (the script, or Command,
	// is then "command", run without a shell).
	Args []string
}

type scenario struct {
	Name   string
	Doc    string
	Hooks  []hook
	Script []claudeapi.Turn
	Prompt string
	Allow  []string // permissions.allow (project); default Bash(echo *)
	Deny   []string
	Ask    []string
	// Counts are how often each counted hook must run (both modes).
	Counts map[string]int
	// Diffs are the documented differences this scenario shows (see differences.go).
	Diffs []string
	// NoDaemon: in the hookd run, no daemon is started (hookc falls back to hookd run).
	NoDaemon bool
	// Prepare runs after the settings (and, for hookd, the install) are in place.
	Prepare func(t *testing.T, w *world)
	// Check runs extra assertions on both observations.
	Check func(t *testing.T, native, hookd *obs)
}

type world struct {
	Mode                     string // native | hookd
	Root, Home, Proj, Socket string
	sc                       *scenario
}

func (w *world) path(p ...string) string { return filepath.Join(append([]string{w.Root}, p...)...) }

// Write creates a file (and its directory).
func (w *world) Write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// SettingsPath is the Claude Code settings file of a scope.
func (w *world) SettingsPath(scope string) string {
	switch scope {
	case "user":
		return filepath.Join(w.Home, ".claude", "settings.json")
	case "local":
		return filepath.Join(w.Proj, ".claude", "settings.local.json")
	}
	return filepath.Join(w.Proj, ".claude", "settings.json")
}

// HooksPath is where a scope's hooks live in this mode: Claude Code's settings file
// natively, hookd's file after the install.
func (w *world) HooksPath(scope string) string {
	p := w.SettingsPath(scope)
	if w.Mode == "native" {
		return p
	}
	if scope == "local" {
		return filepath.Join(filepath.Dir(p), "hookd.local.json")
	}
	return filepath.Join(filepath.Dir(p), "hookd.json")
}

// ScriptPath is the path of a counted hook's script.
func (w *world) ScriptPath(name string) string { return w.path("h", name+".sh") }

// HookScript writes a counted hook script.
func (w *world) HookScript(t *testing.T, name, body string) string {
	p := w.ScriptPath(name)
	w.Write(t, p, "#!/bin/sh\necho run >> "+w.path("counts", name)+"\n"+body+"\n", 0o755)
	return p
}

// handlerJSON is the settings entry of h.
func (w *world) handlerJSON(t *testing.T, h hook) map[string]any {
	cmd := h.Command
	if cmd == "" {
		cmd = w.HookScript(t, h.Name, h.Body)
	}
	m := map[string]any{"type": "command", "command": cmd}
	if h.If != "" {
		m["if"] = h.If
	}
	if h.Timeout > 0 {
		m["timeout"] = h.Timeout
	}
	if h.OnFailure != "" {
		m["onFailure"] = h.OnFailure
	}
	if h.Args != nil {
		m["args"] = h.Args
	}
	return m
}

// hooksByScope builds the "hooks" object of each scope: one group per hook, in order.
func (w *world) hooksByScope(t *testing.T, hooks []hook) map[string]map[string][]any {
	out := map[string]map[string][]any{}
	for _, h := range hooks {
		scope := h.Scope
		if scope == "" {
			scope = "project"
		}
		if out[scope] == nil {
			out[scope] = map[string][]any{}
		}
		g := map[string]any{"hooks": []any{w.handlerJSON(t, h)}}
		if h.Matcher != "" {
			g["matcher"] = h.Matcher
		}
		out[scope][h.Event] = append(out[scope][h.Event], g)
	}
	return out
}

// obs is what one run showed: what the suite compares between the two modes.
type obs struct {
	Calls    []call       `json:"calls"`
	Model    []string     `json:"model"`    // hook-originated texts the model received
	Requests int          `json:"requests"` // main-loop model requests
	Result   resultRecord `json:"result"`
	Counts   map[string]int
	// not compared
	hookc   []string // "event md5" per hookc run (hookd mode)
	stream  []map[string]any
	stderr  string
	root    string
	elapsed time.Duration
}

type call struct {
	Result   string `json:"result"`
	IsError  bool   `json:"is_error"`
	Decision string `json:"decision"` // permission_decision: decision/source/reason_type
	Output   any    `json:"output,omitempty"`
}

type resultRecord struct {
	Subtype        string   `json:"subtype"`
	IsError        bool     `json:"is_error"`
	Result         string   `json:"result"`
	StopReason     any      `json:"stop_reason"`
	TerminalReason string   `json:"terminal_reason"`
	NumTurns       int      `json:"num_turns"`
	Denials        []string `json:"denials"`
}

var hookText = regexp.MustCompile(`(?i)hook`)

// hookParagraphs picks the hook paragraphs of a system-role text: UserPromptSubmit and
// SessionStart context arrive as paragraphs of the message holding "# Environment"
// (FINDINGS.md).
var hookPara = regexp.MustCompile(`^[A-Za-z]+(:[^ ]+)? hook `)

func runClaude(t *testing.T, sc *scenario, mode string) *obs {
	t.Helper()
	root, err := os.MkdirTemp("", "hke2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() || os.Getenv("HOOKD_E2E_KEEP") == "" {
			os.RemoveAll(root)
		}
	})
	w := &world{Mode: mode, Root: root, Home: filepath.Join(root, "home"), Proj: filepath.Join(root, "proj"),
		Socket: filepath.Join(root, "s.sock"), sc: sc}
	for _, d := range []string{filepath.Join(w.Home, ".claude"), filepath.Join(w.Proj, ".claude"), w.path("counts"), w.path("payloads"), w.path("managed"), w.path("state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{w.Proj: map[string]any{"hasTrustDialogAccepted": true}}})
	w.Write(t, filepath.Join(w.Home, ".claude.json"), string(trust), 0o644)

	byScope := w.hooksByScope(t, sc.Hooks)
	allow := sc.Allow
	if allow == nil {
		allow = []string{"Bash(echo *)"}
	}
	perms := map[string]any{"allow": allow}
	if sc.Deny != nil {
		perms["deny"] = sc.Deny
	}
	if sc.Ask != nil {
		perms["ask"] = sc.Ask
	}
	for _, scope := range []string{"user", "project", "local"} {
		s := map[string]any{}
		if h := byScope[scope]; h != nil {
			s["hooks"] = h
		}
		if scope == "project" {
			s["permissions"] = perms
		}
		if len(s) == 0 {
			continue
		}
		b, _ := json.MarshalIndent(s, "", "  ")
		w.Write(t, w.SettingsPath(scope), string(b)+"\n", 0o644)
	}

	env := claudeEnv(w, mode)
	if mode != "native" { // "hookd", "exec" (execform_e2e_test.go); "http" and "http-stopped" (http_e2e_test.go)
		// The forwarder Claude Code runs: a witness named hookc that records each event
		// (and a digest of its payload, to prove no firing reached hookd twice) and then
		// runs the real hookc. It also notes which program started it (Claude Code
		// itself in the exec form, a shell in the shell form). It is Perl, not a shell
		// script: a shell would add PWD to the environment hookc sends, which an
		// exec-form forwarder's hookc never has.
		witness := w.path("bin", "hookc")
		q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }
		w.Write(t, witness, fmt.Sprintf(`#!/usr/bin/perl
open my $p, ">>", %s or die "witness: $!"; print $p readlink("/proc/" . getppid() . "/exe") . "\n"; close $p;
binmode STDIN; local $/; my $in = <STDIN>; $in = "" unless defined $in;
my $tmp = %s . "/.in.$$";
open my $t, ">", $tmp or die "witness: $!"; binmode $t; print $t $in; close $t;
my $ev = ""; for (split /\n/, $in) { if (/.*"hook_event_name" *: *"([A-Za-z]*)"/) { $ev = $1; last } }
open my $m, "-|", "md5sum", $tmp or die "witness: $!"; my $sum = substr(scalar(<$m>), 0, 32); close $m;
open my $c, ">>", %s or die "witness: $!"; print $c "$ev $sum\n"; close $c;
open my $o, ">", %s . "/$ev-$sum.json" or die "witness: $!"; binmode $o; print $o $in; close $o;
open STDIN, "<", $tmp or die "witness: $!"; unlink $tmp;
exec %s or die "witness: exec hookc: $!";
`, q(w.path("hookc-parents")), q(w.path("payloads")), q(w.path("counts", "_hookc")), q(w.path("payloads")), q(bin.hookc)), 0o755)
		for _, scope := range []string{"user", "project", "local"} {
			if byScope[scope] == nil {
				continue
			}
			args := []string{"install", "claude-code", "--scope", scope, "--project", w.Proj, "--hookc", witness}
			switch mode {
			case "hookd":
				args = append(args, "--forwarder-form", "shell")
			case "exec": // the form `auto` picks from the real binary's --version
				args = append(args, "--claude", bin.claude)
			default: // http, http-stopped: as `hookd setup` installs it under a service manager
				args = append(args, "--state-dir", w.path("state"), "--transport", "http", "--http-port", freePort(t), "--claude", bin.claude)
			}
			w.Write(t, w.path("install-"+scope+".txt"), hookdCmd(t, w, env, args...), 0o644)
		}
		if !sc.NoDaemon && mode != "http-stopped" {
			startDaemon(t, w, env)
		}
	}
	if sc.Prepare != nil {
		sc.Prepare(t, w)
	}

	srv := claudeapi.Start(t, sc.Script)
	prompt := sc.Prompt
	if prompt == "" {
		prompt = "go"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin.claude, "-p", prompt, "--output-format", "stream-json", "--verbose", "--include-hook-events")
	cmd.Dir = w.Proj
	cmd.Env = append(env, "ANTHROPIC_BASE_URL="+srv.URL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("%s: running claude: %v", mode, err)
		}
	}
	o := observe(t, w, stdout.Bytes(), srv)
	o.stderr, o.root, o.elapsed = stderr.String(), root, time.Since(start)
	return o
}

// claudeEnv is the environment Claude Code runs with in w: a scratch HOME and XDG
// directories, a dummy API key, no non-essential traffic; in hookd mode also where the
// daemon, hookd and the managed settings are.
func claudeEnv(w *world, mode string) []string {
	env := []string{
		"HOME=" + w.Home, "PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"XDG_CONFIG_HOME=" + w.path("xdg-config"), "XDG_STATE_HOME=" + w.path("xdg-state"),
	}
	if mode != "native" {
		env = append(env, "HOOKD_SOCKET="+w.Socket, "HOOKD_BIN="+bin.hookd, "HOOKD_MANAGED_DIR="+w.path("managed"))
	}
	return env
}

func hookdCmd(t *testing.T, w *world, env []string, args ...string) string {
	t.Helper()
	full := append([]string{"--user-dir", filepath.Join(w.Home, ".claude"), "--managed-dir", w.path("managed")}, args...)
	cmd := exec.Command(bin.hookd, full...)
	cmd.Env, cmd.Dir = env, w.Proj
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hookd %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func startDaemon(t *testing.T, w *world, env []string) {
	t.Helper()
	testutil.StartDaemon(t, testutil.DaemonOptions{Bin: bin.hookd, Socket: w.Socket, Env: env,
		Args: []string{"--socket", w.Socket, "--managed-dir", w.path("managed"), "--user-dir", filepath.Join(w.Home, ".claude"), "--state-dir", w.path("state"), "serve"}})
}

// syncBuf collects a process's output for the test to read.
type syncBuf = testutil.SyncBuffer

// observe extracts the compared facts from one run, with the run's scratch root
// replaced by $ROOT (and, in hookd mode, the forwarder's command — its path and the
// --timeout the installer adds — by $HOOKC: Claude Code names the command in hook
// feedback).
func observe(t *testing.T, w *world, stdout []byte, srv *claudeapi.Server) *obs {
	o := &obs{Counts: map[string]int{}}
	forwarder := regexp.MustCompile(regexp.QuoteMeta(w.path("bin", "hookc")) + `( --timeout [0-9.]+(ms|s|m))?`)
	norm := func(s string) string {
		if w.Mode != "native" {
			s = forwarder.ReplaceAllString(s, "$$HOOKC")
		}
		s = strings.ReplaceAll(s, w.Root, "$ROOT")
		return toolID.ReplaceAllString(s, "toolu_ID")
	}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		o.stream = append(o.stream, m)
		switch m["type"] {
		case "user":
			msg, _ := m["message"].(map[string]any)
			content, _ := msg["content"].([]any)
			for i, c := range content {
				b, _ := c.(map[string]any)
				if b["type"] != "tool_result" {
					continue
				}
				cl := call{IsError: b["is_error"] == true, Result: norm(textOf(b["content"]))}
				if metas, ok := m["tool_result_meta"].([]any); ok && i < len(metas) {
					if meta, ok := metas[i].(map[string]any); ok {
						if pd, ok := meta["permission_decision"].(map[string]any); ok {
							cl.Decision = fmt.Sprintf("%v/%v/%v", pd["decision"], pd["source"], pd["reason_type"])
						}
					}
				}
				if tur, ok := m["tool_use_result"]; ok {
					b, _ := json.Marshal(tur)
					var v any
					_ = json.Unmarshal([]byte(norm(string(b))), &v)
					cl.Output = v
				}
				o.Calls = append(o.Calls, cl)
			}
		case "result":
			r := resultRecord{TerminalReason: str(m["terminal_reason"]), StopReason: m["stop_reason"]}
			r.Subtype, r.IsError, r.Result = str(m["subtype"]), m["is_error"] == true, norm(str(m["result"]))
			if n, ok := m["num_turns"].(float64); ok {
				r.NumTurns = int(n)
			}
			if ds, ok := m["permission_denials"].([]any); ok {
				for _, d := range ds {
					dm, _ := d.(map[string]any)
					in, _ := json.Marshal(dm["tool_input"])
					r.Denials = append(r.Denials, norm(fmt.Sprintf("%v %s", dm["tool_name"], in)))
				}
			}
			o.Result = r
		}
	}
	reqs := srv.Requests()
	o.Requests = len(reqs)
	if len(reqs) > 0 {
		msgs, err := claudeapi.Messages(reqs[len(reqs)-1])
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			for _, b := range m.Blocks {
				if b.Type != "text" || !hookText.MatchString(b.Text) {
					continue
				}
				if m.Role == "system" && strings.Contains(b.Text, "# Environment") {
					for _, p := range strings.Split(b.Text, "\n\n") {
						if hookPara.MatchString(p) {
							o.Model = append(o.Model, "[system paragraph] "+norm(p))
						}
					}
					continue
				}
				o.Model = append(o.Model, "["+m.Role+"] "+norm(b.Text))
			}
		}
	}
	ents, _ := os.ReadDir(w.path("counts"))
	for _, e := range ents {
		data, _ := os.ReadFile(w.path("counts", e.Name()))
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if e.Name() == "_hookc" {
			o.hookc = lines
			continue
		}
		o.Counts[e.Name()] = len(lines)
	}
	return o
}

var toolID = regexp.MustCompile(`toolu_standin\d+`)

func textOf(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, x := range c {
			if m, ok := x.(map[string]any); ok {
				parts = append(parts, str(m["text"]))
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// canon is the comparable form of an observation.
func (o *obs) canon() string {
	b, _ := json.MarshalIndent(o, "", "  ")
	return string(b)
}

// mapStrings returns a copy of o with f applied to every text the model saw.
func (o *obs) mapStrings(f func(string) string) *obs {
	c := *o
	c.Calls = append([]call(nil), o.Calls...)
	for i := range c.Calls {
		c.Calls[i].Result = f(c.Calls[i].Result)
		c.Calls[i].Decision = f(c.Calls[i].Decision)
		if s, ok := c.Calls[i].Output.(string); ok {
			c.Calls[i].Output = f(s)
		}
	}
	c.Result.Denials = nil
	for _, d := range o.Result.Denials {
		c.Result.Denials = append(c.Result.Denials, f(d))
	}
	c.Model = nil
	for _, m := range o.Model {
		c.Model = append(c.Model, f(m))
	}
	c.Result.Result = f(o.Result.Result)
	return &c
}

// hookcDuplicates lists forwarder runs that received a payload another run also
// received: one event firing that reached hookd twice.
func (o *obs) hookcDuplicates() []string {
	seen := map[string]int{}
	var dup []string
	for _, l := range o.hookc {
		seen[l]++
		if seen[l] == 2 {
			dup = append(dup, l)
		}
	}
	sort.Strings(dup)
	return dup
}

// lineDiff is a small line diff for failure messages.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	n := max(len(al), len(bl))
	for i := 0; i < n; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("  line %d:\n    native: %s\n    hookd:  %s", i+1, x, y))
		}
	}
	return strings.Join(out, "\n")
}
