package install

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/events/jsonobj"
)

const geminiSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "hooks": {
    "BeforeTool": [
      {"matcher": "run_shell_command", "sequential": true, "hooks": [
        {"type": "command", "command": "./guard.sh", "name": "guard", "timeout": 90000},
        {"type": "runtime", "name": "inproc"}
      ]}
    ],
    "BeforeModel": [{"hooks": [{"type": "command", "command": "./model.sh"}]}]
  },
  "hooksConfig": {"disabled": ["x"]}
}
`

func geminiOpts(path string) HarnessOptions {
	return HarnessOptions{Harness: "gemini", Settings: path, Forwarder: "/opt/hookd/bin/hookc",
		Events: []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"}, TimeoutUnit: time.Millisecond,
		Now: time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)}
}

// Keys a Gemini CLI 0.61.0 hook definition and group may carry (bundle: HookDefinition,
// CommandHookConfig). The installer must write no other.
var geminiKeys = map[string]bool{"matcher": true, "sequential": true, "hooks": true, "type": true, "command": true,
	"name": true, "timeout": true, "description": true, "env": true}

func TestInstallGemini(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".gemini")
	path := filepath.Join(dir, "settings.json")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(geminiSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := PlanInstallHarness(geminiOpts(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	var s struct {
		Security    json.RawMessage
		HooksConfig json.RawMessage
		Hooks       map[string][]map[string]any
	}
	if err := json.Unmarshal(after, &s); err != nil {
		t.Fatal(err)
	}
	if s.Security == nil || s.HooksConfig == nil {
		t.Errorf("other keys lost: %s", after)
	}
	bt := s.Hooks["BeforeTool"]
	if len(bt) != 2 || len(bt[0]["hooks"].([]any)) != 1 || bt[0]["hooks"].([]any)[0].(map[string]any)["type"] != "runtime" {
		t.Errorf("the runtime hook stays, the command hook moves: %s", after)
	}
	fwd := bt[1]["hooks"].([]any)[0].(map[string]any)
	if fwd["command"] != "/opt/hookd/bin/hookc --harness gemini" || fwd["timeout"] != float64(600000) {
		t.Errorf("forwarder: %v", fwd)
	}
	if len(s.Hooks["BeforeModel"]) != 1 || s.Hooks["BeforeModel"][0]["hooks"].([]any)[0].(map[string]any)["command"] != "./model.sh" {
		t.Errorf("BeforeModel is not forwarded and keeps its hook: %s", after)
	}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			for k := range g {
				if !geminiKeys[k] {
					t.Errorf("%s: group key %q is not Gemini's", ev, k)
				}
			}
			for _, h := range g["hooks"].([]any) {
				for k := range h.(map[string]any) {
					if !geminiKeys[k] {
						t.Errorf("%s: hook key %q is not Gemini's", ev, k)
					}
				}
			}
		}
	}
	hf, _ := os.ReadFile(filepath.Join(dir, "hookd.json"))
	var h struct{ Hooks json.RawMessage }
	_ = json.Unmarshal(hf, &h)
	if moved := string(jsonobj.Compact(h.Hooks)); !strings.Contains(moved, `"./guard.sh"`) || !strings.Contains(moved, `"sequential":true`) || strings.Contains(moved, "model.sh") {
		t.Errorf("hookd.json: %s", hf)
	}
	// Idempotent.
	p2, err := PlanInstallHarness(geminiOpts(path))
	if err != nil {
		t.Fatal(err)
	}
	if p2.Changed() {
		t.Errorf("second install changes:\n%s", p2.Diff())
	}
	// Uninstall gives the original hooks back and removes hookd.json.
	u, err := PlanUninstallHarness(geminiOpts(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Apply(); err != nil {
		t.Fatal(err)
	}
	restored, _ := os.ReadFile(path)
	if !equalJSON(restored, []byte(geminiSettings)) {
		t.Errorf("uninstall:\n got %s\nwant %s", restored, geminiSettings)
	}
	if _, err := os.Stat(filepath.Join(dir, "hookd.json")); !os.IsNotExist(err) {
		t.Errorf("hookd.json left behind: %v", err)
	}
}

func TestInstallCodexIntoMissingFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".codex")
	path := filepath.Join(dir, "hooks.json")
	o := HarnessOptions{Harness: "codex", Settings: path, Forwarder: "/b/hookc", Events: []string{"PreToolUse", "Stop"}, TimeoutUnit: time.Second}
	p, err := PlanInstallHarness(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var f struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &f); err != nil || len(f.Hooks) != 2 || f.Hooks["Stop"][0].Hooks[0]["command"] != "/b/hookc --harness codex" || f.Hooks["Stop"][0].Hooks[0]["timeout"] != float64(600) {
		t.Errorf("codex hooks.json: %s (%v)", b, err)
	}
	for _, h := range f.Hooks["PreToolUse"][0].Hooks {
		if _, ok := h["name"]; ok {
			t.Errorf("codex forwarder carries name: %v", h)
		}
	}
	u, _ := PlanUninstallHarness(o)
	if err := u.Apply(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("uninstall must remove the hooks.json it created: %v", err)
	}
}
