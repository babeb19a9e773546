//go:build probe

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
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/test/claudeapi"
)

// hookSpec is one command hook: Body is a /bin/sh script written to
// <proj>/h/<Name>.sh and the settings command is that absolute path (or
// Command verbatim if set).
type hookSpec struct {
	Event   string
	Matcher string
	Name    string
	Body    string
	Command string
	// Fields are more handler fields ("onFailure", "timeout", "type"…), merged over the
	// command handler; with "type" other than "command" the command is dropped.
	Fields map[string]any
}

type experiment struct {
	Name     string
	Hooks    []hookSpec
	Script   []claudeapi.Turn
	Prompt   string
	Allow    []string // permissions.allow; default Bash(echo *)
	Args     []string // extra claude args
	Env      []string
	Settings map[string]any // extra settings keys (merged)
	Markers  []string       // strings to look for in the system prompt too
	// Files are written before the run: a path relative to the project, or to HOME
	// with a "~/" prefix (skills, agents, plugins).
	Files map[string]string
	// Prepare runs after the files are written, before Claude Code starts (plugins are
	// installed here, with the real `claude plugin` commands).
	Prepare func(t *testing.T, home, proj string)
	// Managed, when set, is /etc/claude-code/managed-settings.json for this run only:
	// Claude Code runs in a private mount namespace (root) whose /etc is an overlay.
	Managed map[string]any
}

type outcome struct {
	Dir      string
	Stream   []map[string]any
	Stdout   string
	Stderr   string
	ExitCode int
	Server   *claudeapi.Server
	Requests []json.RawMessage
	Report   string
}

func claudeBin(t *testing.T) string {
	if b := os.Getenv("HOOKD_CLAUDE_BIN"); b != "" {
		return b
	}
	b := "/tmp/cc/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
	if _, err := os.Stat(b); err != nil {
		t.Fatalf("set HOOKD_CLAUDE_BIN (no claude at %s)", b)
	}
	return b
}

func outRoot() string {
	if d := os.Getenv("PROBE_OUT"); d != "" {
		return d
	}
	return "/tmp/hookd-probe"
}

var bashEcho = claudeapi.Turn{ToolName: "Bash", ToolInput: map[string]any{"command": "echo hi", "description": "say hi"}}

func run(t *testing.T, ex experiment) *outcome {
	t.Helper()
	dir := filepath.Join(outRoot(), ex.Name)
	_ = os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	proj := filepath.Join(dir, "proj")
	for _, d := range []string{home, filepath.Join(proj, ".claude"), filepath.Join(proj, "h")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hooks := map[string][]any{}
	for _, h := range ex.Hooks {
		cmd := h.Command
		if cmd == "" {
			p := filepath.Join(proj, "h", h.Name+".sh")
			if err := os.WriteFile(p, []byte("#!/bin/sh\n"+h.Body+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd = p
		}
		handler := map[string]any{"type": "command", "command": cmd}
		for k, v := range h.Fields {
			handler[k] = v
		}
		if handler["type"] != "command" {
			delete(handler, "command")
		}
		group := map[string]any{"hooks": []any{handler}}
		if h.Matcher != "" {
			group["matcher"] = h.Matcher
		}
		hooks[h.Event] = append(hooks[h.Event], group)
	}
	allow := ex.Allow
	if allow == nil {
		allow = []string{"Bash(echo *)"}
	}
	settings := map[string]any{"hooks": hooks, "permissions": map[string]any{"allow": allow}}
	for k, v := range ex.Settings {
		settings[k] = v
	}
	// Trust the workspace, else project permissions.allow is ignored.
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{proj: map[string]any{"hasTrustDialogAccepted": true}}})
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), trust, 0o644); err != nil {
		t.Fatal(err)
	}
	sj, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.WriteFile(filepath.Join(proj, ".claude", "settings.json"), sj, 0o644); err != nil {
		t.Fatal(err)
	}

	for name, body := range ex.Files {
		p := filepath.Join(proj, name)
		if rest, ok := strings.CutPrefix(name, "~/"); ok {
			p = filepath.Join(home, rest)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if ex.Prepare != nil {
		ex.Prepare(t, home, proj)
	}
	srv := claudeapi.Start(t, ex.Script)
	prompt := ex.Prompt
	if prompt == "" {
		prompt = "go"
	}
	args := append([]string{"-p", prompt, "--output-format", "stream-json", "--verbose", "--include-hook-events", "--debug-file", filepath.Join(dir, "debug.txt")}, ex.Args...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudeBin(t), args...)
	if ex.Managed != nil {
		ms, _ := json.Marshal(ex.Managed)
		msFile := filepath.Join(dir, "managed-settings.json")
		if err := os.WriteFile(msFile, ms, 0o644); err != nil {
			t.Fatal(err)
		}
		ov := filepath.Join(dir, "etc-overlay")
		script := fmt.Sprintf(`set -e; mkdir -p %[1]s/u %[1]s/w; mount -t overlay probe -o lowerdir=/etc,upperdir=%[1]s/u,workdir=%[1]s/w /etc; mkdir -p /etc/claude-code; cp %[2]s /etc/claude-code/managed-settings.json; cd %[3]s; exec "$@"`, ov, msFile, proj)
		cmd = exec.CommandContext(ctx, "unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh", claudeBin(t)}, args...)...)
	}
	cmd.Dir = proj
	cmd.Env = append([]string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_BASE_URL=" + srv.URL,
		"ANTHROPIC_API_KEY=x",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}, ex.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o := &outcome{Dir: dir, Stdout: stdout.String(), Stderr: stderr.String(), Server: srv}
	if ee, ok := err.(*exec.ExitError); ok {
		o.ExitCode = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run claude: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(o.Stdout))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			o.Stream = append(o.Stream, m)
		}
	}
	o.Requests = srv.Requests()
	o.Report = report(ex, o)
	_ = os.WriteFile(filepath.Join(dir, "stream.jsonl"), stdout.Bytes(), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "stderr.txt"), stderr.Bytes(), 0o644)
	all, _ := json.MarshalIndent(srv.AllRequests(), "", "  ")
	_ = os.WriteFile(filepath.Join(dir, "requests.json"), all, 0o644)
	_ = os.WriteFile(filepath.Join(dir, "report.md"), []byte(o.Report), 0o644)
	t.Logf("\n%s", o.Report)
	return o
}

// report renders what matters for hook-output rendering: hook records,
// tool results and metadata from the stream, and every new user-side block
// the model received.
func report(ex experiment, o *outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\nexit=%d main_requests=%d side/other=%d unknown=%v\n", ex.Name, o.ExitCode, len(o.Requests), len(o.Server.AllRequests())-len(o.Requests), o.Server.Unknown())
	for _, h := range ex.Hooks {
		body := h.Body
		if h.Command != "" {
			body = "command: " + h.Command
		}
		fmt.Fprintf(&b, "hook %s[%s] %s: %s\n", h.Event, h.Matcher, h.Name, strings.ReplaceAll(body, "\n", "; "))
	}
	b.WriteString("\nstream:\n")
	for _, m := range o.Stream {
		typ, _ := m["type"].(string)
		sub, _ := m["subtype"].(string)
		switch {
		case typ == "system" && (sub == "hook_response" || sub == "hook_started"):
			if sub == "hook_started" {
				continue
			}
			j, _ := json.Marshal(pick(m, "hook_name", "hook_event", "exit_code", "outcome", "stdout", "stderr", "output"))
			fmt.Fprintf(&b, "  hook_response %s\n", j)
		case typ == "system" && sub == "init":
		case typ == "user":
			j, _ := json.Marshal(pick(m, "message", "tool_use_result", "tool_result_meta"))
			fmt.Fprintf(&b, "  user %s\n", j)
		case typ == "assistant":
			msg, _ := m["message"].(map[string]any)
			j, _ := json.Marshal(msg["content"])
			fmt.Fprintf(&b, "  assistant %s\n", j)
		case typ == "result":
			j, _ := json.Marshal(pick(m, "subtype", "is_error", "result", "stop_reason", "terminal_reason", "num_turns", "permission_denials", "errors"))
			fmt.Fprintf(&b, "  result %s\n", j)
		default:
			j, _ := json.Marshal(m)
			fmt.Fprintf(&b, "  %s/%s %s\n", typ, sub, trunc(string(j), 600))
		}
	}
	b.WriteString("\nmodel received (user messages, per main request; only messages new since the previous request):\n")
	prev := 0
	for i, r := range o.Requests {
		msgs, err := claudeapi.Messages(r)
		if err != nil {
			fmt.Fprintf(&b, "  req %d: %v\n", i, err)
			continue
		}
		fmt.Fprintf(&b, "  req %d (%d messages):\n", i, len(msgs))
		for _, para := range systemParagraphs(r) {
			if containsAny(para, ex.Markers) {
				fmt.Fprintf(&b, "    [system prompt paragraph] %q\n", para)
			}
		}
		start := prev
		if start > len(msgs) {
			start = 0
		}
		for j := start; j < len(msgs); j++ {
			m := msgs[j]
			for _, bl := range m.Blocks {
				switch bl.Type {
				case "tool_result":
					fmt.Fprintf(&b, "    [%d %s tool_result is_error=%v] %q\n", j, m.Role, bl.IsError, bl.Text)
				case "tool_use":
					in, _ := json.Marshal(bl.Input)
					fmt.Fprintf(&b, "    [%d %s tool_use %s] %s\n", j, m.Role, bl.Name, in)
				default:
					if m.Role == "system" && strings.Contains(bl.Text, "# Environment") {
						// The environment block is long; keep only the
						// paragraphs that come from hooks or mention a
						// marker, with their position.
						paras := strings.Split(bl.Text, "\n\n")
						for k, para := range paras {
							if hookParagraph(para) || containsAny(para, ex.Markers) {
								fmt.Fprintf(&b, "    [%d system %s, paragraph %d of %d] %q\n", j, bl.Type, k, len(paras), para)
							}
						}
						continue
					}
					fmt.Fprintf(&b, "    [%d %s %s] %q\n", j, m.Role, bl.Type, trunc(bl.Text, 3000))
				}
			}
		}
		prev = len(msgs)
	}
	b.WriteString("\ntranscript hook records (attachments / system entries mentioning hooks):\n")
	for _, line := range transcriptHookLines(filepath.Join(o.Dir, "home")) {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	if o.Stderr != "" {
		fmt.Fprintf(&b, "\nclaude stderr: %q\n", trunc(o.Stderr, 2000))
	}
	return b.String()
}

// hookParagraph reports whether a system-prompt paragraph looks like hook
// output ("SessionStart:startup hook success: …").
func hookParagraph(p string) bool {
	return !strings.HasPrefix(p, "# Environment") && len(p) < 4000 && hookLine.MatchString(p)
}

var hookLine = regexp.MustCompile(`(?m)^[A-Za-z]+(:[^ ]+)? (hook|says)\b`)

// transcriptHookLines returns the transcript entries that record hook
// outcomes: attachments whose type mentions "hook" and system entries.
func transcriptHookLines(home string) []string {
	files, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) != nil {
				continue
			}
			switch e["type"] {
			case "attachment":
				a, _ := e["attachment"].(map[string]any)
				if t, _ := a["type"].(string); strings.Contains(t, "hook") {
					delete(a, "toolUseID")
					j, _ := json.Marshal(a)
					out = append(out, "attachment "+trunc(string(j), 1500))
				}
			case "system":
				j, _ := json.Marshal(pick(e, "subtype", "content", "level", "hookInfos", "hookErrors", "stopReason", "preventedContinuation"))
				out = append(out, "system "+trunc(string(j), 1500))
			}
		}
	}
	return out
}

func containsAny(s string, markers []string) bool {
	for _, m := range markers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// systemParagraphs returns the request's top-level system prompt split into
// paragraphs.
func systemParagraphs(body json.RawMessage) []string {
	var req struct {
		System json.RawMessage `json:"system"`
	}
	_ = json.Unmarshal(body, &req)
	var text string
	var str string
	if json.Unmarshal(req.System, &str) == nil {
		text = str
	} else {
		var blocks []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(req.System, &blocks)
		for _, bl := range blocks {
			text += bl.Text + "\n\n"
		}
	}
	return strings.Split(text, "\n\n")
}

func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
