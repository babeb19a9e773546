package settings

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func harnessSnapshot(t *testing.T, files map[FileRef]string) *Snapshot {
	t.Helper()
	var fs []*File
	for ref, text := range files {
		f, err := ParseFile(ref, []byte(text), "/home/u")
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	return Compile(fs)
}

var (
	codexUser   = FileRef{Path: "/home/u/.codex/hookd.json", Kind: KindHarness, Origin: "codex-user", Harness: "codex"}
	geminiUser  = FileRef{Path: "/home/u/.gemini/hookd.json", Kind: KindHarness, Origin: "gemini-user", Harness: "gemini"}
	geminiConf  = FileRef{Path: "/home/u/.gemini/settings.json", Kind: KindHarnessConfig, Origin: "gemini-user", Harness: "gemini"}
	geminiHooks = `{"hooks": {
  "BeforeTool": [
    {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "shell-guard", "name": "guard", "timeout": 1500}]},
    {"matcher": "read_.*|write_file", "sequential": true, "hooks": [{"command": "files"}]},
    {"hooks": [{"type": "command", "command": "every-tool"}]}
  ],
  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "on-start"}]}]
},
 "hookd": {"version": 1}}`
)

// The harness's own hooks are matched as the harness would: a regular expression over
// its tool name on tool events ("*" or none: all), an exact value elsewhere; a
// sequential group makes the plan sequential; Gemini's hooksConfig.disabled is honoured;
// timeouts are in the harness's unit.
func TestHarnessHooks(t *testing.T) {
	s := harnessSnapshot(t, map[FileRef]string{geminiUser: geminiHooks})
	for _, c := range []struct {
		native, value string
		want          []string
		seq           bool
	}{
		{"BeforeTool", "run_shell_command", []string{"shell-guard", "every-tool"}, false},
		{"BeforeTool", "read_file", []string{"files", "every-tool"}, true},
		{"BeforeTool", "write_file", []string{"files", "every-tool"}, true},
		{"BeforeTool", "glob", []string{"every-tool"}, false},
		{"SessionStart", "startup", []string{"on-start"}, false},
		{"SessionStart", "resume", nil, false},
		{"AfterTool", "run_shell_command", nil, false},
	} {
		hs, seq := s.HarnessHooks("gemini", c.native, c.value)
		var got []string
		for _, h := range hs {
			got = append(got, h.Command)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") || seq != c.seq {
			t.Errorf("%s %s: %v sequential %v, want %v %v", c.native, c.value, got, seq, c.want, c.seq)
		}
	}
	if hs, _ := s.HarnessHooks("codex", "PreToolUse", "Bash"); hs != nil {
		t.Errorf("gemini's hooks served to codex: %v", hs)
	}
	hs, _ := s.HarnessHooks("gemini", "BeforeTool", "run_shell_command")
	h := hs[0]
	if h.Timeout != 1500*time.Millisecond || h.Event.Name != "PreToolUse" || h.Source != "gemini-user" ||
		h.ID != "gemini-user:/home/u/.gemini/hookd.json#BeforeTool[0].hooks[0]" || h.Ref().Command != "shell-guard" {
		t.Errorf("handler %+v", h)
	}

	off := harnessSnapshot(t, map[FileRef]string{geminiUser: geminiHooks,
		geminiConf: `{"hooksConfig": {"disabled": ["guard", "every-tool"]}, "model": {"name": "x"}}`})
	if hs, _ := off.HarnessHooks("gemini", "BeforeTool", "run_shell_command"); len(hs) != 0 {
		t.Errorf("disabled hooks still run: %v", hs)
	}
	codex := harnessSnapshot(t, map[FileRef]string{codexUser: `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"g","timeout":5}]}]}}`})
	if hs, _ := codex.HarnessHooks("codex", "PreToolUse", "Bash"); len(hs) != 1 || hs[0].Timeout != 5*time.Second {
		t.Errorf("codex hooks %v", hs)
	}
}

// A harness hook file is decoded strictly: what would silently drop a guard is an error
// naming file, field, line and column (the daemon keeps the last good version); what
// hookd can skip is a warning.
func TestHarnessHookFileErrors(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
	}{
		{"bad JSON", "{\"hooks\": {\n  \"PreToolUse\": [\n}", "/home/u/.codex/hookd.json:3:1: invalid JSON"},
		{"command not a string", "{\"hooks\":{\"PreToolUse\":[{\"hooks\":[{\"type\":\"command\",\n \"command\": 5}]}]}}",
			"/home/u/.codex/hookd.json:2:13: hooks.PreToolUse[0].hooks[0].command: must be a string"},
		{"no command", `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command"}]}]}}`, "hooks.PreToolUse[0].hooks[0].command: missing"},
		{"bad regex", `{"hooks":{"PreToolUse":[{"matcher":"(","hooks":[{"command":"x"}]}]}}`, "hooks.PreToolUse[0].matcher:"},
		{"negative timeout", `{"hooks":{"PreToolUse":[{"hooks":[{"command":"x","timeout":-1}]}]}}`, "timeout: must be a non-negative number of seconds"},
		{"groups not an array", `{"hooks":{"Stop":{}}}`, "hooks.Stop: must be an array"},
		{"no hooks array", `{"hooks":{"Stop":[{"matcher":""}]}}`, "hooks.Stop[0].hooks: missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseFile(codexUser, []byte(c.text), "/home/u")
			var fe *FileError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	f, err := ParseFile(codexUser, []byte(`{"hooks":{"NoSuch":[],"Stop":[{"extra":1,"hooks":[{"type":"prompt","prompt":"p"},{"command":"x","statusMessage":"s"}]}]},"other":1}`), "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	var warns []string
	for _, w := range f.Warnings {
		warns = append(warns, w.Field)
	}
	if got := strings.Join(warns, " "); got != "hooks.NoSuch hooks.Stop[0].extra hooks.Stop[0].hooks[0].type hooks.Stop[0].hooks[1].statusMessage other" || len(f.Handlers) != 1 {
		t.Errorf("warnings %s, %d handlers", got, len(f.Handlers))
	}
}

// Gemini's settings file is Gemini's: hookd reads hooksConfig.disabled and never calls the
// file invalid (it may hold comments, which Gemini CLI accepts).
func TestHarnessConfigLenient(t *testing.T) {
	for _, text := range []string{"// comment\n{}", "", "[1]", `{"hooksConfig":{"disabled":"x"}}`} {
		f, err := ParseFile(geminiConf, []byte(text), "/home/u")
		if err != nil || f.HarnessConfig == nil || len(f.HarnessConfig.Disabled) != 0 {
			t.Errorf("%q: %+v, %v", text, f, err)
		}
		if text != "" && len(f.Warnings) == 0 {
			t.Errorf("%q: no warning", text)
		}
	}
}
