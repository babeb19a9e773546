package test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Issue 29: the in-process fallback is never quiet. With the daemon stopped, a hookc call
// answers as before, shows Claude Code's user a system message, prints one stderr line
// (not beside an exit-2 block, whose stderr is the reason the model reads), and the
// decision record says so: `audit query` shows it, `--fallback` selects it, `audit show`
// names the reason, and `status` counts it.
func TestFallbackIsNeverQuiet(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"hooks":{"PreToolUse":[
		{"matcher":"Bash","hooks":[{"type":"command","command":"echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"guard\"}}'"}]},
		{"matcher":"Write","hooks":[{"type":"command","command":"echo no writes >&2; exit 2"}]}],
		"Stop":[{"hooks":[{"type":"command","command":"echo keep going >&2; exit 2"}]}]}}`)
	// hookc's fallback runs `hookd run` with this environment: the scratch world's files.
	e.extraEnv = append(e.extraEnv, "HOOKD_STATE_DIR="+e.State, "HOOKD_USER_DIR="+e.UserDir, "HOOKD_MANAGED_DIR="+e.Managed)

	r := e.Hookc(bashPayload(e, "rm -rf /"))
	var out struct {
		SystemMessage string         `json:"systemMessage"`
		HSO           map[string]any `json:"hookSpecificOutput"`
	}
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &out) != nil {
		t.Fatalf("hookc with no daemon: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if out.HSO["permissionDecision"] != "deny" || out.HSO["permissionDecisionReason"] != "guard" {
		t.Errorf("the fallback's decision: %v", out.HSO)
	}
	if !strings.Contains(out.SystemMessage, "hookd answered in-process, without the daemon (hookd unreachable at "+e.Socket) ||
		!strings.Contains(out.SystemMessage, "hookd serve") {
		t.Errorf("no system message for the user: %q", out.SystemMessage)
	}
	if strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "hookc: hookd unreachable at "+e.Socket) || !strings.Contains(r.Stderr, "answered in-process") {
		t.Errorf("hookc's stderr: %q; want one line saying it answered in-process", r.Stderr)
	}

	// An exit-2 block (a Stop hook's, answered with exit 2): stderr stays the reason
	// alone; the system message still says it.
	w := e.Hookc(e.Payload("Stop", map[string]any{"stop_hook_active": false}))
	if w.Code != 2 || strings.Contains(w.Stderr, "hookc:") || !strings.Contains(w.Stderr, "keep going") || !strings.Contains(w.Stdout, `"systemMessage":"hookd answered in-process`) {
		t.Errorf("exit-2 fallback: exit %d\nstdout %s\nstderr %q", w.Code, w.Stdout, w.Stderr)
	}

	q := e.Hookd("", "audit", "query", "--tool", "Bash")
	lines := strings.Split(strings.TrimSpace(q.Stdout), "\n")
	if q.Code != 0 || len(lines) != 2 || !strings.Contains(lines[0], "FALLBACK") || !strings.Contains(lines[1], "in-process") {
		t.Fatalf("audit query: exit %d\n%s%s", q.Code, q.Stdout, q.Stderr)
	}
	if col := strings.Index(lines[0], "FALLBACK"); col < 0 || !strings.HasPrefix(lines[1][col:], "in-process") {
		t.Errorf("the FALLBACK column is not aligned:\n%s", q.Stdout)
	}
	j := e.Hookd("", "audit", "query", "--fallback", "--json")
	if j.Code != 0 || strings.Count(j.Stdout, "\n") != 2 || !strings.Contains(j.Stdout, `"fallback":"hookd unreachable at `+e.Socket) {
		t.Errorf("audit query --fallback --json: exit %d\n%s%s", j.Code, j.Stdout, j.Stderr)
	}
	var rec struct {
		DecisionID string `json:"decision_id"`
	}
	_ = json.Unmarshal([]byte(strings.SplitN(j.Stdout, "\n", 2)[0]), &rec)
	if s := e.Hookd("", "audit", "show", rec.DecisionID); !strings.Contains(s.Stdout, "fallback   answered in-process, without the daemon: hookd unreachable at") {
		t.Errorf("audit show: %s%s", s.Stdout, s.Stderr)
	}
	if st := e.Hookd("", "audit", "stats"); !strings.Contains(st.Stdout, "answered in-process (fallback): 2") {
		t.Errorf("audit stats: %s", st.Stdout)
	}

	// status, with no daemon: says it cannot reach it, and counts the answers made without it.
	st := e.Hookd("", "status")
	if st.Code == 0 || !strings.Contains(st.Stdout, "answered in-process (hookc's fallback, without the daemon) since ") || !strings.Contains(st.Stdout, "): 2; the last at ") {
		t.Errorf("status with no daemon: exit %d\n%s%s", st.Code, st.Stdout, st.Stderr)
	}
	// Once a daemon runs, its answers are not fallbacks and the count starts at its start.
	e.Start()
	if res, _ := e.Event(bashPayload(e, "ls")); res == nil || res.Fallback != "" {
		t.Fatalf("a daemon answer marked as a fallback: %+v", res)
	}
	st = e.Hookd("", "status")
	if st.Code != 0 || !strings.Contains(st.Stdout, "since ") || !strings.Contains(st.Stdout, "(the daemon's start): 0") {
		t.Errorf("status with the daemon: exit %d\n%s%s", st.Code, st.Stdout, st.Stderr)
	}
	if q := e.Hookd("", "audit", "query", "--fallback", "--json"); strings.Count(q.Stdout, "\n") != 2 {
		t.Errorf("the daemon's answer counted as a fallback:\n%s", q.Stdout)
	}
}

// Issue 29: a hook that cannot start is logged at warn with its reason — the exec form's
// start error, and the shell's exit 127 for a program it cannot find.
func TestHookThatCannotStartIsLogged(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[
		{"type":"command","command":"/nonexistent/exec-guard","args":["--x"]},
		{"type":"command","command":"/nonexistent/shell-guard --x"}]}]}}`)
	e.Start()
	e.Event(bashPayload(e, "ls"))
	Eventually(t, 10*time.Second, "both start failures logged at warn", func() bool {
		var n int
		for _, l := range strings.Split(e.Logs(), "\n") {
			if strings.Contains(l, `"level":"warn"`) && strings.Contains(l, `"msg":"hook failed to start"`) &&
				(strings.Contains(l, "exec-guard") && strings.Contains(l, "no such file") || strings.Contains(l, "shell-guard") && strings.Contains(l, "exit 127")) {
				n++
			}
		}
		return n == 2
	})
}
