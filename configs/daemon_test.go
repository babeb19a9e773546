package configs

import (
	"errors"
	"github.com/hookd/hookd/configs/settings"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hookd/hookd/protocol"
)

func TestDefaultDaemonConfig(t *testing.T) {
	c := DefaultDaemonConfig()
	if c.Mode != ModeParallel || c.Audit.Fsync != "batch" || !c.Audit.IsEnabled() || c.Audit.MaxSizeMB != 64 ||
		c.Audit.Retain != 10 || c.Audit.MaxFieldBytes != 65536 || c.OutputCapBytes != 1<<20 || c.Path != "" {
		t.Errorf("defaults = %+v", c)
	}
	if c.MaxRequestBytes != protocol.DefaultMaxRequestBytes {
		t.Errorf("max_request_bytes = %d, protocol default %d", c.MaxRequestBytes, protocol.DefaultMaxRequestBytes)
	}
	// Each call returns a fresh copy.
	c.Hooks = append(c.Hooks, HookOverride{Match: "x"})
	c.Audit.Mask = append(c.Audit.Mask, MaskRule{Path: "a", Action: "drop"})
	if d := DefaultDaemonConfig(); len(d.Hooks) != 0 || len(d.Audit.Mask) != 0 {
		t.Errorf("defaults shared between calls")
	}
	for _, p := range []string{"", filepath.Join(t.TempDir(), "missing.json")} {
		got, err := LoadDaemonConfig(p)
		if err != nil || !reflect.DeepEqual(got, DefaultDaemonConfig()) {
			t.Errorf("LoadDaemonConfig(%q) = %+v, %v", p, got, err)
		}
	}
}

func TestLoadDaemonConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hookd.json")
	writeFile(t, path, `{
  "mode": "sequential",
  "hooks": [
    {"match": "./guard.sh", "on_timeout": "deny", "prewarm": true},
    {"match": "project:/p/.claude/settings.json#PreToolUse[0].hooks[0]", "worker": false}
  ],
  "audit": {"fsync": "always", "mask": [{"path": "tool_input.content", "action": "hash"}]},
  "settings": ["extra.json", "/abs/x.json"]
}`)
	c, err := LoadDaemonConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != ModeSequential || len(c.Hooks) != 2 || *c.Hooks[0].Prewarm != true || c.Hooks[1].Worker == nil || *c.Hooks[1].Worker {
		t.Errorf("config = %+v", c)
	}
	// Unset keys keep their defaults, inside nested objects too.
	if c.Audit.Fsync != "always" || c.Audit.MaxSizeMB != 64 || !c.Audit.IsEnabled() || c.OutputCapBytes != 1<<20 {
		t.Errorf("audit = %+v", c.Audit)
	}
	if !reflect.DeepEqual(c.Settings, []string{filepath.Join(dir, "extra.json"), "/abs/x.json"}) || c.Path != path {
		t.Errorf("settings = %v, path = %q", c.Settings, c.Path)
	}

	guard := &settings.Handler{ID: "user:/u#Stop[0].hooks[0]", Type: "command", Command: "./guard.sh"}
	byID := &settings.Handler{ID: "project:/p/.claude/settings.json#PreToolUse[0].hooks[0]", Type: "command", Command: "./guard.sh"}
	other := &settings.Handler{ID: "x", Type: "command", Command: "other"}
	if o := c.Override(guard); o.OnTimeout != OnTimeoutDeny {
		t.Errorf("by command: %+v", o)
	}
	if o := c.Override(byID); o.Worker == nil || *o.Worker || o.OnTimeout != "" {
		t.Errorf("ID wins over command: %+v", o)
	}
	if o := c.Override(other); !reflect.DeepEqual(o, HookOverride{}) {
		t.Errorf("no match: %+v", o)
	}
	exec := &settings.Handler{ID: "y", Type: "command", Command: "./guard.sh", Args: []string{"--fast"}}
	c.Hooks = append(c.Hooks, HookOverride{Match: "./guard.sh --fast", OnTimeout: OnTimeoutIgnore})
	if o := c.Override(exec); o.OnTimeout != OnTimeoutDeny {
		t.Errorf("exec form by command: %+v", o) // the command alone matches first
	}
	var nilCfg *DaemonConfig
	if o := nilCfg.Override(guard); o.Match != "" {
		t.Errorf("nil config: %+v", o)
	}
}

func TestLoadDaemonConfigErrors(t *testing.T) {
	tests := []struct {
		name, text, field string
		line, col         int
		msg               string
	}{
		{"bad JSON", "{\n \"mode\": }", "", 2, 10, "invalid JSON"},
		{"unknown key", `{"modes": "parallel"}`, "modes", 1, 2, "unknown field"},
		{"unknown nested key", `{"audit": {"fsynk": "never"}}`, "audit.fsynk", 1, 12, "unknown field"},
		{"wrong type", `{"max_request_bytes": "1MB"}`, "max_request_bytes", 1, 23, "must be a number"},
		{"fraction", `{"output_cap_bytes": 1.5}`, "output_cap_bytes", 0, 0, "whole number"},
		{"bool type", `{"prewarm": "yes"}`, "prewarm", 0, 0, "must be a boolean"},
		{"bad mode", `{"mode": "serial"}`, "mode", 1, 10, `must be "parallel" or "sequential"`},
		{"override without match", `{"hooks": [{"on_timeout": "deny"}]}`, "hooks[0].match", 0, 0, "missing"},
		{"override bad on_timeout", `{"hooks": [{"match": "x", "on_timeout": "allow"}]}`, "hooks[0].on_timeout", 1, 41, "must be"},
		{"per-hook mode is not a setting", `{"hooks": [{"match": "x", "mode": "sequential"}]}`, "hooks[0].mode", 0, 0, "unknown field"},
		{"override unknown key", `{"hooks": [{"match": "x", "timeout": 3}]}`, "hooks[0].timeout", 0, 0, "unknown field"},
		{"fsync", `{"audit": {"fsync": "sometimes"}}`, "audit.fsync", 0, 0, "must be"},
		{"mask action", `{"audit": {"mask": [{"path": "a", "action": "blur"}]}}`, "audit.mask[0].action", 0, 0, "must be"},
		{"mask path", `{"audit": {"mask": [{"action": "drop"}]}}`, "audit.mask[0].path", 0, 0, "missing"},
		{"zero cap", `{"output_cap_bytes": 0}`, "output_cap_bytes", 0, 0, "must be positive"},
		{"negative retain", `{"audit": {"retain": -1}}`, "audit.retain", 0, 0, "must not be negative"},
		{"empty settings path", `{"settings": [""]}`, "settings[0]", 0, 0, "empty path"},
		{"not an object", `[]`, "", 0, 0, "must be an object"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "hookd.json")
			writeFile(t, path, tt.text)
			_, err := LoadDaemonConfig(path)
			var fe *settings.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *settings.FileError", err)
			}
			if fe.File != path || fe.Field != tt.field || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("got %q (field %q), want field %q and %q", err, fe.Field, tt.field, tt.msg)
			}
			if tt.line != 0 && (fe.Line != tt.line || fe.Col != tt.col) {
				t.Errorf("position %d:%d, want %d:%d (%v)", fe.Line, fe.Col, tt.line, tt.col, err)
			}
		})
	}
}

func TestExampleSettingsLoadClean(t *testing.T) {
	f, err := settings.LoadFile(settings.FileRef{Path: filepath.Join("examples", "settings.json"), Kind: settings.KindProject}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) != 0 || len(f.Handlers) != 5 || len(f.Rules) != 3 {
		t.Errorf("example: %d handlers, %d rules, warnings %v", len(f.Handlers), len(f.Rules), f.Warnings)
	}
}

func TestHarnessRulesOptOut(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "hookd.json")
	if err := os.WriteFile(p, []byte(`{"harnesses":{"gemini":{"permission_rules":false}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadDaemonConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Harnesses.For("gemini").RulesApply() || !c.Harnesses.For("codex").RulesApply() || !c.Harnesses.For("claude-code").RulesApply() {
		t.Errorf("opt-out not read: %+v", c.Harnesses)
	}
	if err := os.WriteFile(p, []byte(`{"harnesses":{"gemini":{"rules":false}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDaemonConfig(p); err == nil || !strings.Contains(err.Error(), "harnesses.gemini.rules") {
		t.Errorf("unknown key must be an error naming it, got %v", err)
	}
}

// writeFile creates path with content.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
