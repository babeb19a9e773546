package test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRoutingDropInStatus: with hookd's managed drop-in installed (`hookd install
// claude-code --scope managed`, into the scratch managed dir), `hookd validate` and `hookd
// status` say the drop-in routes, which events it does not forward, and name each user or
// project hook of those events as running nowhere; a hook of a forwarded event is not
// named. Without the drop-in, nothing of it is said.
func TestRoutingDropInStatus(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("user", `{"hooks":{"WorktreeCreate":[{"hooks":[{"type":"command","command":"true make-tree"}]}],"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"true"}]}]}}`)
	e.WriteSettings("project", `{"hooks":{"FileChanged":[{"matcher":".envrc","hooks":[{"type":"command","command":"true direnv-reload"}]}]}}`)
	user, project := e.SettingsPath("user"), e.SettingsPath("project")
	// (Every program here exists: validate would rightly call a missing one an error.)

	v := e.Hookd("", "validate")
	if v.Code != 0 || strings.Contains(v.Stdout, "routed by") || strings.Contains(v.Stdout, "runs nowhere") {
		t.Fatalf("validate without the drop-in: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	if r := e.Hookd("", "install", "claude-code", "--scope", "managed", "--hookc", bins.hookc); r.Code != 0 {
		t.Fatalf("install: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	dropIn := filepath.Join(e.Managed, "managed-settings.d", "50-hookd.json")
	want := []string{
		"routed by hookd's managed drop-in " + dropIn,
		"FileChanged, WorktreeCreate, WorktreeRemove",
		"warning: " + user + ": hooks.WorktreeCreate: ",
		"warning: " + project + ": hooks.FileChanged: ",
	}
	check := func(what, out string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", what, w, out)
			}
		}
		if n := strings.Count(out, "runs nowhere"); n != 2 {
			t.Errorf("%s names %d hooks as running nowhere, want 2:\n%s", what, n, out)
		}
	}
	v = e.Hookd("", "validate")
	if v.Code != 0 {
		t.Fatalf("validate: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	check("validate", v.Stdout)

	e.Start()
	e.Hookc(bashPayload(e, "echo hi")) // the project's snapshot is built by its first event
	check("status", e.Hookd("", "status").Stdout)
}
