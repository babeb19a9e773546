package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/events"
)

// parseErrorCases are settings files that must be rejected as a whole; each error must
// name the file, the field (with indexes) and, where given, the line and column.
var parseErrorCases = []struct {
	name      string
	kind      Kind
	text      string
	field     string
	line, col int // 0: not checked
	msg       string
}{
	{name: "bad JSON: stray comma", text: "{\n  \"hooks\": {,\n}", line: 2, col: 13, msg: "invalid JSON"},
	{name: "bad JSON: truncated", text: `{"hooks": {`, line: 1, col: 12, msg: "unexpected end of JSON input"},
	{name: "bad JSON: trailing garbage", text: "{}\n}", line: 2, col: 1, msg: "invalid JSON"},
	{name: "bad JSON: comment", text: "{\n  // no comments in JSON\n}", line: 2, col: 3, msg: "invalid JSON"},
	{name: "empty file", text: " \n", line: 1, col: 1, msg: "empty file"},
	{name: "not an object", text: `["hooks"]`, line: 1, col: 1, msg: "must be a JSON object (found an array)"},
	{name: "hooks not an object", text: `{"hooks": []}`, field: "hooks", line: 1, col: 11, msg: "must be an object"},
	{name: "old event format", text: `{"hooks": {"PreToolUse": {"Bash": "echo"}}}`, field: "hooks.PreToolUse", msg: "must be an array of matcher groups"},
	{name: "group not an object", text: `{"hooks": {"Stop": ["echo"]}}`, field: "hooks.Stop[0]", msg: "must be an object"},
	{name: "group without hooks", text: `{"hooks": {"Stop": [{"matcher": ""}]}}`, field: "hooks.Stop[0].hooks", msg: "missing"},
	{name: "group hooks not array", text: `{"hooks": {"Stop": [{"hooks": {}}]}}`, field: "hooks.Stop[0].hooks", msg: "must be an array"},
	{name: "handler not an object", text: `{"hooks": {"Stop": [{"hooks": ["echo hi"]}]}}`, field: "hooks.Stop[0].hooks[0]", msg: "must be a handler object"},
	{name: "timeout wrong type", text: `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
		{"type": "command", "command": "a"},
		{"type": "command", "command": "b", "timeout": "30"}]}]}}`,
		field: "hooks.PreToolUse[0].hooks[1].timeout", line: 3, col: 50, msg: "must be a number"},
	{name: "negative timeout", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "timeout": -1}]}]}}`,
		field: "hooks.Stop[0].hooks[0].timeout", msg: "must not be negative"},
	{name: "huge timeout", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "timeout": 1e300}]}]}}`,
		field: "hooks.Stop[0].hooks[0].timeout", msg: "too large"},
	{name: "bad matcher regex", text: `{"hooks": {"PreToolUse": [
		{"matcher": "Bash", "hooks": []},
		{"matcher": "Edit", "hooks": []},
		{"matcher": "Bash(", "hooks": [{"type": "command", "command": "x"}]}]}}`,
		field: "hooks.PreToolUse[2].matcher", line: 4, col: 15, msg: "invalid matcher regex"},
	{name: "matcher neither RE2 nor JavaScript", text: `{"hooks": {"PreToolUse": [{"matcher": "^(?<=Bash", "hooks": []}]}}`,
		field: "hooks.PreToolUse[0].matcher", msg: "neither RE2 nor JavaScript"},
	{name: "matcher not a string", text: `{"hooks": {"PreToolUse": [{"matcher": ["Bash"], "hooks": []}]}}`,
		field: "hooks.PreToolUse[0].matcher", msg: "must be a string (found an array)"},
	{name: "permission rule not a string", text: `{"permissions": {"allow": ["Bash", 3]}}`,
		field: "permissions.allow[1]", msg: "must be a string (found a number)"},
	{name: "permissions.ask not an array", text: `{"permissions": {"ask": "Bash"}}`,
		field: "permissions.ask", msg: "must be an array of strings"},
	{name: "permissions not an object", text: `{"permissions": true}`, field: "permissions", msg: "must be an object"},
	{name: "bad if rule", text: `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a", "if": "Bash(git *"}]}]}}`,
		field: "hooks.PreToolUse[0].hooks[0].if", msg: "invalid if rule"},
	{name: "unknown type", text: `{"hooks": {"Stop": [{"hooks": [{"type": "shell", "command": "a"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].type", msg: `unknown handler type "shell"`},
	{name: "missing type", text: `{"hooks": {"Stop": [{"hooks": [{"command": "a"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].type", msg: "missing"},
	{name: "type not a string", text: `{"hooks": {"Stop": [{"hooks": [{"type": 1}]}]}}`,
		field: "hooks.Stop[0].hooks[0].type", msg: "must be a string"},
	{name: "prompt on SessionStart", text: `{"hooks": {"SessionStart": [{"hooks": [{"type": "prompt", "prompt": "p"}]}]}}`,
		field: "hooks.SessionStart[0].hooks[0].type", msg: "SessionStart does not accept prompt handlers"},
	{name: "http on Setup", text: `{"hooks": {"Setup": [{"hooks": [{"type": "http", "url": "http://x"}]}]}}`,
		field: "hooks.Setup[0].hooks[0].type", msg: "does not accept http"},
	{name: "agent on Notification", text: `{"hooks": {"Notification": [{"hooks": [{"type": "agent", "prompt": "p"}]}]}}`,
		field: "hooks.Notification[0].hooks[0].type", msg: "does not accept agent"},
	{name: "command without command", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].command", msg: "missing"},
	{name: "command blank", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "  "}]}]}}`,
		field: "hooks.Stop[0].hooks[0].command", msg: "missing"},
	{name: "http without url", text: `{"hooks": {"Stop": [{"hooks": [{"type": "http"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].url", msg: "missing"},
	{name: "mcp_tool without server", text: `{"hooks": {"Stop": [{"hooks": [{"type": "mcp_tool", "tool": "t"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].server", msg: "missing"},
	{name: "mcp_tool without tool", text: `{"hooks": {"Stop": [{"hooks": [{"type": "mcp_tool", "server": "s"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].tool", msg: "missing"},
	{name: "prompt without prompt", text: `{"hooks": {"Stop": [{"hooks": [{"type": "prompt"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].prompt", msg: "missing"},
	{name: "args not strings", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "args": ["x", 2]}]}]}}`,
		field: "hooks.Stop[0].hooks[0].args[1]", msg: "must be a string (found a number)"},
	{name: "bad shell", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "shell": "zsh"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].shell", msg: `must be "bash" or "powershell"`},
	{name: "async not bool", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "async": "yes"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].async", msg: "must be a boolean"},
	{name: "header not string", text: `{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://x", "headers": {"X-N": 1}}]}]}}`,
		field: "hooks.Stop[0].hooks[0].headers.X-N", msg: "must be a string"},
	{name: "mcp input not object", text: `{"hooks": {"Stop": [{"hooks": [{"type": "mcp_tool", "server": "s", "tool": "t", "input": "x"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].input", msg: "must be an object"},
	{name: "disableAllHooks not bool", text: `{"disableAllHooks": "true"}`, field: "disableAllHooks", msg: "must be a boolean"},
	{name: "allowedHttpHookUrls not array", text: `{"allowedHttpHookUrls": "*"}`, field: "allowedHttpHookUrls", msg: "must be an array of strings"},
	{name: "httpHookAllowedEnvVars element", text: `{"httpHookAllowedEnvVars": ["A", null]}`, field: "httpHookAllowedEnvVars[1]", msg: "found null"},
	{name: "env not object", text: `{"env": ["A=1"]}`, field: "env", msg: "must be an object"},
	{name: "env value object", text: `{"env": {"A": {}}}`, field: "env.A", msg: "must be a string"},
	{name: "additionalDirectories", text: `{"permissions": {"additionalDirectories": "/x"}}`, field: "permissions.additionalDirectories", msg: "must be an array"},
	{name: "defaultMode not string", text: `{"permissions": {"defaultMode": 1}}`, field: "permissions.defaultMode", msg: "must be a string"},
}

func TestParseFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range parseErrorCases {
		t.Run(tt.name, func(t *testing.T) {
			kind := tt.kind
			if kind == "" {
				kind = KindProject
			}
			path := write(t, filepath.Join(dir, ".claude", "settings.json"), tt.text)
			f, err := LoadFile(FileRef{Path: path, Kind: kind}, dir)
			if err == nil {
				t.Fatalf("loaded %d handlers; want an error", len(f.Handlers))
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a *FileError", err, err)
			}
			if fe.File != path {
				t.Errorf("File = %q, want %q", fe.File, path)
			}
			if fe.Field != tt.field {
				t.Errorf("Field = %q, want %q (%v)", fe.Field, tt.field, err)
			}
			if tt.line != 0 && (fe.Line != tt.line || fe.Col != tt.col) {
				t.Errorf("position = %d:%d, want %d:%d (%v)", fe.Line, fe.Col, tt.line, tt.col, err)
			}
			if fe.Line == 0 {
				t.Errorf("no position in %v", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			// The message leads with path:line:col: field:
			prefix := path + ":"
			if !strings.HasPrefix(err.Error(), prefix) || (tt.field != "" && !strings.Contains(err.Error(), ": "+tt.field+": ")) {
				t.Errorf("error %q: want prefix %q and field %q", err, prefix, tt.field)
			}
		})
	}
}

// parseWarningCases are files that load, with warnings naming file and field.
var parseWarningCases = []struct {
	name     string
	kind     Kind
	text     string
	field    string
	msg      string
	handlers int
}{
	{name: "unknown event", text: `{"hooks": {"PreToolUseX": [{"hooks": [{"type": "nope"}]}], "Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}}`,
		field: "hooks.PreToolUseX", msg: "unknown hook event", handlers: 1},
	{name: "event case", text: `{"hooks": {"pretooluse": []}}`, field: "hooks.pretooluse", msg: "did you mean PreToolUse?"},
	{name: "unknown handler field", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "retries": 3}]}]}}`,
		field: "hooks.Stop[0].hooks[0].retries", msg: "unknown handler field", handlers: 1},
	{name: "unknown group field", text: `{"hooks": {"Stop": [{"description": "d", "hooks": [{"type": "command", "command": "a"}]}]}}`,
		field: "hooks.Stop[0].description", msg: "unknown field in matcher group", handlers: 1},
	{name: "unknown top-level key", text: `{"hookd": {"mode": "sequential"}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}}`,
		field: "hookd", msg: "claude code ignores this entire file", handlers: 1},
	{name: "prompt handler", text: `{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "ok?"}]}]}}`,
		field: "hooks.Stop[0].hooks[0]", msg: "reports them as not run", handlers: 1},
	{name: "agent handler", text: `{"hooks": {"PreToolUse": [{"hooks": [{"type": "agent", "prompt": "ok?"}]}]}}`,
		field: "hooks.PreToolUse[0].hooks[0]", msg: "not run", handlers: 1},
	{name: "mcp_tool handler", text: `{"hooks": {"PostToolUse": [{"hooks": [{"type": "mcp_tool", "server": "s", "tool": "t", "input": {"p": "${tool_input.file_path}"}}]}]}}`,
		field: "hooks.PostToolUse[0].hooks[0]", msg: "not run", handlers: 1},
	{name: "once", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "once": true}]}]}}`,
		field: "hooks.Stop[0].hooks[0].once", msg: "skill frontmatter", handlers: 1},
	{name: "matcher on event without matcher field", text: `{"hooks": {"UserPromptSubmit": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]}]}}`,
		field: "hooks.UserPromptSubmit[0].matcher", msg: "matcher is ignored", handlers: 1},
	{name: "invalid regex on event without matcher field", text: `{"hooks": {"Stop": [{"matcher": "(", "hooks": [{"type": "command", "command": "a"}]}]}}`,
		field: "hooks.Stop[0].matcher", msg: "invalid matcher regex", handlers: 1},
	{name: "allowManagedHooksOnly outside managed", text: `{"allowManagedHooksOnly": true}`,
		field: "allowManagedHooksOnly", msg: "only honoured in managed settings"},
	{name: "allowManagedPermissionRulesOnly outside managed", kind: KindUser, text: `{"allowManagedPermissionRulesOnly": "x"}`,
		field: "allowManagedPermissionRulesOnly", msg: "only honoured in managed settings"},
	{name: "allowManagedHooksOnly invalid in managed", kind: KindManaged, text: `{"allowManagedHooksOnly": "yes"}`,
		field: "allowManagedHooksOnly", msg: "treated as true"},
	{name: "if on non-tool event", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "if": "Bash(git *)"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].if", msg: "never runs", handlers: 1},
	{name: "field of another type", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "url": "http://x"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].url", msg: "applies to http handlers; ignored for command", handlers: 1},
	{name: "async on http", text: `{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://x", "async": true}]}]}}`,
		field: "hooks.Stop[0].hooks[0].async", msg: "applies to command handlers", handlers: 1},
	{name: "shell with args", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "args": [], "shell": "bash"}]}]}}`,
		field: "hooks.Stop[0].hooks[0].shell", msg: "exec form", handlers: 1},
	{name: "timeout zero", text: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "timeout": 0}]}]}}`,
		field: "hooks.Stop[0].hooks[0].timeout", msg: "event default", handlers: 1},
	{name: "duplicate key", text: `{"disableAllHooks": true, "disableAllHooks": false}`, field: "disableAllHooks", msg: "duplicate key at 1:27"},
	{name: "env number", text: `{"env": {"N": 1}}`, field: "env.N", msg: "should be a string"},
	{name: "unknown permission mode", text: `{"permissions": {"defaultMode": "yolo"}}`, field: "permissions.defaultMode", msg: "unknown permission mode"},
	{name: "unknown permissions field", text: `{"permissions": {"allowed": []}}`, field: "permissions.allowed", msg: "unknown field"},
}

func TestParseFileWarnings(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range parseWarningCases {
		t.Run(tt.name, func(t *testing.T) {
			kind := tt.kind
			if kind == "" {
				kind = KindProject
			}
			path := filepath.Join(dir, ".claude", "settings.json")
			f, err := ParseFile(FileRef{Path: path, Kind: kind}, []byte(tt.text), dir)
			if err != nil {
				t.Fatalf("ParseFile: %v", err)
			}
			if len(f.Handlers) != tt.handlers {
				t.Errorf("%d handlers, want %d", len(f.Handlers), tt.handlers)
			}
			var found bool
			for _, w := range f.Warnings {
				if w.File != path {
					t.Errorf("warning %v: File = %q, want %q", w, w.File, path)
				}
				if w.Field == tt.field && strings.Contains(w.Message, tt.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("no warning %s: …%s… in %v", tt.field, tt.msg, f.Warnings)
			}
		})
	}
}

func TestParseFileNoWarnings(t *testing.T) {
	// A clean file with every handler field and many known top-level keys has no warnings.
	text := `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus", "env": {"A": "1"}, "statusLine": {"type": "command", "command": "x"},
  "cleanupPeriodDays": 7, "includeCoAuthoredBy": false, "sandbox": {"enabled": true},
  "enabledPlugins": {}, "theme": "dark", "autoUpdates": false, "spinnerTipsEnabled": false,
  "permissions": {"allow": ["Bash(npm test)"], "ask": ["Bash(git push *)"], "deny": ["Read(./.env)"],
    "additionalDirectories": ["../lib"], "defaultMode": "acceptEdits", "disableBypassPermissionsMode": "disable"},
  "disableAllHooks": false,
  "allowedHttpHookUrls": ["https://hooks.example.com/*"],
  "httpHookAllowedEnvVars": ["TOKEN"],
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [
      {"type": "command", "command": "check", "args": ["--strict"], "if": "Bash(git *)", "timeout": 2.5,
       "statusMessage": "checking", "async": false, "asyncRewake": false}]}],
    "Stop": [{"hooks": [
      {"type": "http", "url": "https://hooks.example.com/stop", "headers": {"Authorization": "Bearer $TOKEN"},
       "allowedEnvVars": ["TOKEN"], "timeout": 30}]}]
  }
}`
	f, err := ParseFile(FileRef{Path: "/p/.claude/settings.json", Kind: KindProject}, []byte(text), "/h")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) != 0 {
		t.Errorf("warnings: %v", f.Warnings)
	}
	if len(f.Rules) != 3 {
		t.Errorf("%d rules, want 3", len(f.Rules))
	}
	s := f.Settings
	if s.Permissions == nil || s.Permissions.DefaultMode != "acceptEdits" || len(s.Permissions.AdditionalDirectories) != 1 {
		t.Errorf("permissions = %+v", s.Permissions)
	}
	if len(s.AllowedHTTPHookURLs) != 1 || len(s.HTTPHookAllowedEnvVars) != 1 || s.Env["A"] != "1" {
		t.Errorf("settings = %+v", s)
	}
	if len(s.Hooks) != 2 || s.Hooks[0].Event != "PreToolUse" || s.Hooks[1].Event != "Stop" {
		t.Errorf("hooks = %+v", s.Hooks)
	}
}

func TestParseFileHandlers(t *testing.T) {
	text := `{"hooks": {
  "Stop": [{"hooks": [{"type": "command", "command": "b"}]}],
  "PreToolUse": [
    {"matcher": "Bash", "hooks": [
      {"type": "command", "command": "lint.sh --fast", "timeout": 1.5, "asyncRewake": true},
      {"type": "command", "command": "go", "args": ["vet", "./..."], "shell": "powershell", "if": "Bash(go *)"}
    ]},
    {"hooks": [{"type": "http", "url": "https://x/y", "headers": {"A": "b"}, "allowedEnvVars": ["T"]}]}
  ]
}}`
	path := "/proj/.claude/settings.local.json"
	f, err := ParseFile(FileRef{Path: path, Kind: KindLocal}, []byte(text), "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Handlers) != 4 {
		t.Fatalf("%d handlers, want 4", len(f.Handlers))
	}
	stop, a, b, c := f.Handlers[0], f.Handlers[1], f.Handlers[2], f.Handlers[3]
	if stop.Event.Name != "Stop" || a.Event.Name != "PreToolUse" {
		t.Errorf("file order lost: %s, %s", stop.Event.Name, a.Event.Name)
	}
	if want := "local:" + path + "#PreToolUse[0].hooks[1]"; b.ID != want {
		t.Errorf("ID = %q, want %q", b.ID, want)
	}
	if a.Timeout != 1500*time.Millisecond || !a.Async || !a.AsyncRewake || a.Args != nil {
		t.Errorf("a = %+v", a)
	}
	if a.EffectiveTimeout() != 1500*time.Millisecond {
		t.Errorf("EffectiveTimeout = %v", a.EffectiveTimeout())
	}
	if b.Args == nil || len(b.Args) != 2 || b.If == nil || b.IfText != "Bash(go *)" || b.MatcherText != "Bash" || b.Matcher == nil {
		t.Errorf("b = %+v", b)
	}
	if b.EffectiveTimeout() != 600*time.Second {
		t.Errorf("default timeout = %v", b.EffectiveTimeout())
	}
	if b.CommandLine() != "go vet ./..." {
		t.Errorf("CommandLine = %q", b.CommandLine())
	}
	if c.URL != "https://x/y" || c.Headers["A"] != "b" || c.AllowedEnvVars[0] != "T" || !c.Runnable || c.Group != 1 || c.Index != 0 {
		t.Errorf("c = %+v", c)
	}
	if string(c.Raw) != `{"type": "http", "url": "https://x/y", "headers": {"A": "b"}, "allowedEnvVars": ["T"]}` {
		t.Errorf("Raw = %s", c.Raw)
	}
	ref := b.Ref()
	if ref.ID != b.ID || ref.Source != "local" || ref.File != path || ref.Event != "PreToolUse" || ref.Matcher != "Bash" ||
		ref.Type != "command" || ref.Command != "go vet ./..." {
		t.Errorf("Ref = %+v", ref)
	}
	// Exec form ignores shell, so the key does too; shell form keys include it.
	if b.Key == a.Key || !strings.Contains(b.Key, `["go","vet","./..."]`) {
		t.Errorf("keys: %q %q", a.Key, b.Key)
	}
}

func TestDefaultTimeouts(t *testing.T) {
	text := `{"hooks": {
  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "a"}, {"type": "prompt", "prompt": "p"}, {"type": "agent", "prompt": "p"}]}],
  "MessageDisplay": [{"hooks": [{"type": "command", "command": "a"}]}],
  "SessionEnd": [{"hooks": [{"type": "command", "command": "a"}]}]
}}`
	f, err := ParseFile(FileRef{Path: "/u/settings.json", Kind: KindUser}, []byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{30 * time.Second, 30 * time.Second, 60 * time.Second, 10 * time.Second, events.SessionEndBudget}
	for i, h := range f.Handlers {
		if got := h.EffectiveTimeout(); got != want[i] {
			t.Errorf("%s %s: %v, want %v", h.Event.Name, h.Type, got, want[i])
		}
	}
}

func TestDedupKeys(t *testing.T) {
	text := `{"hooks": {"Stop": [{"hooks": [
  {"type": "command", "command": "x"},
  {"type": "command", "command": "x", "shell": "bash", "timeout": 3},
  {"type": "command", "command": "x", "shell": "powershell"},
  {"type": "command", "command": "x", "args": []},
  {"type": "command", "command": "x", "args": ["y"]},
  {"type": "http", "url": "http://a"},
  {"type": "http", "url": "http://a", "timeout": 9},
  {"type": "prompt", "prompt": "p"},
  {"type": "prompt", "prompt": "p", "model": "m"},
  {"type": "mcp_tool", "server": "s", "tool": "t", "input": {"a": 1, "b": 2}},
  {"type": "mcp_tool", "server": "s", "tool": "t", "input": {"b": 2, "a": 1}}
]}]}}`
	f, err := ParseFile(FileRef{Path: "/u/settings.json", Kind: KindUser}, []byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	same := [][2]int{{0, 1}, {5, 6}, {9, 10}}
	differ := [][2]int{{0, 2}, {0, 3}, {3, 4}, {7, 8}}
	for _, p := range same {
		if f.Handlers[p[0]].Key != f.Handlers[p[1]].Key {
			t.Errorf("handlers %d and %d: keys differ: %q %q", p[0], p[1], f.Handlers[p[0]].Key, f.Handlers[p[1]].Key)
		}
	}
	for _, p := range differ {
		if f.Handlers[p[0]].Key == f.Handlers[p[1]].Key {
			t.Errorf("handlers %d and %d: same key %q", p[0], p[1], f.Handlers[p[0]].Key)
		}
	}
}

func TestLoadFileAbsentAndSpecial(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadFile(FileRef{Path: filepath.Join(dir, "nope.json"), Kind: KindUser}, dir)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: %v, want os.ErrNotExist", err)
	}
	_, err = LoadFile(FileRef{Path: dir, Kind: KindUser}, dir)
	var fe *FileError
	if !errors.As(err, &fe) || errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory: %v", err)
	}
	// "~/" expands with home.
	write(t, filepath.Join(dir, "flag.json"), `{"hooks": {}}`)
	f, err := LoadFile(FileRef{Path: "~/flag.json", Kind: KindFlag}, dir)
	if err != nil || f.Ref.Path != filepath.Join(dir, "flag.json") {
		t.Errorf("~ expansion: %v %+v", err, f)
	}
	// A byte order mark is accepted and positions stay right.
	_, err = ParseFile(FileRef{Path: "/x.json", Kind: KindFlag}, []byte("\xef\xbb\xbf{\"disableAllHooks\": 1}"), "")
	if !errors.As(err, &fe) || fe.Line != 1 || fe.Col != 21 {
		t.Errorf("BOM: %v", err)
	}
}

func TestParseFileHash(t *testing.T) {
	a, _ := ParseFile(FileRef{Path: "/a", Kind: KindUser}, []byte(`{}`), "")
	b, _ := ParseFile(FileRef{Path: "/b", Kind: KindUser}, []byte(`{}`), "")
	c, _ := ParseFile(FileRef{Path: "/a", Kind: KindUser}, []byte(`{ }`), "")
	if a.Hash != b.Hash || a.Hash == c.Hash || len(a.Hash) != 64 {
		t.Errorf("hashes %s %s %s", a.Hash, b.Hash, c.Hash)
	}
}

func TestParseInputNotAliased(t *testing.T) {
	data := []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}}`)
	f, err := ParseFile(FileRef{Path: "/a", Kind: KindUser}, data, "")
	if err != nil {
		t.Fatal(err)
	}
	raw := string(f.Handlers[0].Raw)
	for i := range data {
		data[i] = 'X'
	}
	if string(f.Handlers[0].Raw) != raw {
		t.Errorf("Raw aliases the caller's buffer")
	}
}

// LoadFile reports a FIFO as an invalid file naming it (ReadFile refuses it without
// blocking: configs/internal/readfile).
func TestLoadFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(FileRef{Path: fifo}, "")
	var fe *FileError
	if !errors.As(err, &fe) || fe.File != fifo || !errors.Is(err, ErrNotRegular) {
		t.Errorf("LoadFile(fifo): %v", err)
	}
}
