package test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

// The decision log, black-box: records written by a real daemon, read back as JSON
// lines, and `hookd audit …` run as a person would.

func (e *Env) auditFile() string { return filepath.Join(e.State, "audit", audit.DefaultFile) }

// auditLines returns every record of the daemon's log as a generic JSON object, keyed by
// nothing: the test reads the keys a security team's tooling would.
func auditLines(t *testing.T, e *Env) []map[string]any {
	t.Helper()
	files, err := audit.Files(e.auditFile())
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("%s: line is not JSON: %s", f, line)
			}
			out = append(out, m)
		}
	}
	return out
}

func byDecisionID(recs []map[string]any) map[string][]map[string]any {
	m := map[string][]map[string]any{}
	for _, r := range recs {
		if id, ok := r["decision_id"].(string); ok {
			m[id] = append(m[id], r)
		}
	}
	return m
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestAuditEveryEvent: each of the 34 events produces exactly one record carrying the
// fields issue 5 lists, and the chain verifies.
func TestAuditEveryEvent(t *testing.T) {
	e := NewEnv(t)
	probe := e.Script("probe.sh", probeScript)
	hooks := map[string]any{}
	for _, ev := range events.All() {
		group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": probe}}}
		if ev.MatcherField != "" && !ev.NarrowMatcher {
			group["matcher"] = "*"
		}
		hs := []any{group}
		if ev.Name == "PreToolUse" {
			// A handler hookd cannot run itself: recorded as not_run.
			hs = append(hs, map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "prompt", "prompt": "is this safe?"}}})
		}
		hooks[ev.Name] = hs
	}
	b, _ := json.Marshal(map[string]any{"hooks": hooks})
	e.WriteSettings("project", string(b))
	e.Start()
	out := t.TempDir()
	e.extraEnv = []string{"PROBE_OUT=" + out, "PROBE_MODE=ctx"}

	results := map[string]*protocol.Result{}
	for _, ev := range events.All() {
		res, _ := e.Event(payloadFor(t, e, ev.Name))
		if res.DecisionID == "" {
			t.Fatalf("%s: result without decision_id", ev.Name)
		}
		results[ev.Name] = res
	}
	// hookc's debug line names the decision too.
	r := e.Hookc(payloadFor(t, e, "Stop"), "--debug")
	hookcID := ""
	if i := strings.Index(r.Stderr, "decision_id="); i >= 0 {
		hookcID = strings.Fields(r.Stderr[i+len("decision_id="):])[0]
	}
	if hookcID == "" {
		t.Fatalf("hookc --debug printed no decision_id: %q", r.Stderr)
	}

	recs := auditLines(t, e)
	ids := byDecisionID(recs)
	if len(recs) != len(events.All())+1 {
		t.Errorf("%d records for %d answered events", len(recs), len(events.All())+1)
	}
	if len(ids[hookcID]) != 1 {
		t.Errorf("hookc's decision %s: %d records", hookcID, len(ids[hookcID]))
	}
	settings := e.SettingsPath("project")
	for _, ev := range events.All() {
		t.Run(ev.Name, func(t *testing.T) {
			res := results[ev.Name]
			got := ids[res.DecisionID]
			if len(got) != 1 {
				t.Fatalf("%d records for decision %s", len(got), res.DecisionID)
			}
			rec := got[0]
			want := map[string]any{
				"v": 1.0, "kind": "decision", "event": ev.Name, "project_dir": e.Project, "cwd": e.Project,
				"revision": res.Revision, "mode": "parallel", "daemon_version": "dev", "exit_code": float64(res.ExitCode),
			}
			for k, v := range want {
				if rec[k] != v {
					t.Errorf("%s = %v, want %v", k, rec[k], v)
				}
			}
			for _, k := range []string{"time", "seq", "prev_hash", "session_id", "decision", "input"} {
				if _, ok := rec[k]; !ok {
					t.Errorf("record lacks %q", k)
				}
			}
			if ev.ToolEvent {
				// PermissionRequest payloads carry no tool_use_id (spec §1.3).
				if rec["tool_name"] != "Bash" || (rec["tool_use_id"] == nil) != (ev.Name == "PermissionRequest") {
					t.Errorf("tool fields: tool_name=%v tool_use_id=%v", rec["tool_name"], rec["tool_use_id"])
				}
			}
			caller, _ := rec["caller"].(map[string]any)
			if caller == nil || caller["uid"] != float64(os.Getuid()) || caller["pid"] == nil || caller["pid"] == 0.0 {
				t.Errorf("caller = %v", rec["caller"])
			}
			srcs, _ := rec["sources"].([]any)
			found := false
			for _, s := range srcs {
				s := s.(map[string]any)
				found = found || (s["file"] == settings && s["source"] == "project" && len(s["hash"].(string)) == 64)
			}
			if !found {
				t.Errorf("sources %v lack the project settings file", srcs)
			}
			hs, _ := rec["hooks"].([]any)
			if len(hs) == 0 {
				t.Fatalf("no hooks recorded")
			}
			h := hs[0].(map[string]any)
			if h["file"] != settings || h["source"] != "project" || h["command"] != probe || h["id"] == "" || h["type"] != "command" {
				t.Errorf("hook identity %v", h)
			}
			if ev.MatcherField != "" && !ev.NarrowMatcher && h["matcher"] != "*" {
				t.Errorf("hook matcher %v", h["matcher"])
			}
			if h["outcome"] != "ok" || h["exit_code"] != 0.0 || h["duration_ms"] == nil {
				t.Errorf("hook outcome %v exit %v duration %v", h["outcome"], h["exit_code"], h["duration_ms"])
			}
			stdout := fmt.Sprintf(`{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"probe-ctx"}}`+"\n", ev.Name)
			so, _ := h["stdout"].(map[string]any)
			se, _ := h["stderr"].(map[string]any)
			if so == nil || so["bytes"] != float64(len(stdout)) || so["sha256"] != sha(stdout) || se == nil || se["bytes"] != 0.0 || se["sha256"] != sha("") {
				t.Errorf("stdout %v stderr %v; want %d bytes sha256 %s", so, se, len(stdout), sha(stdout))
			}
			if ev.Honoured(events.FAdditionalContext) && ev.Name != "WorktreeCreate" {
				if cb, _ := rec["additional_context_bytes"].([]any); len(cb) != 1 || cb[0] != float64(len("probe-ctx")) {
					t.Errorf("additional_context_bytes = %v", rec["additional_context_bytes"])
				}
			}
			if ev.Name == "PreToolUse" {
				if len(hs) != 2 || hs[1].(map[string]any)["outcome"] != "not_run" || hs[1].(map[string]any)["type"] != "prompt" {
					t.Errorf("the prompt handler is not recorded as not_run: %v", hs)
				}
			}
		})
	}

	v := e.Hookd("", "audit", "verify")
	if v.Code != 0 || !strings.Contains(v.Stdout, fmt.Sprintf("OK: %d records", len(recs))) {
		t.Fatalf("verify: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	// The operational log joins on decision_id (a warning the engine logs per override
	// is covered in TestAuditRuleOverride); here: the log names its component loggers.
	if !strings.Contains(e.Logs(), `"logger":"`) {
		t.Errorf("operational log has no named loggers:\n%s", e.Logs())
	}
}

// TestAuditRuleOverride: a hook's allow downgraded by a managed deny rule is recorded with
// the rule and its file, and the queries find it.
func TestAuditRuleOverride(t *testing.T) {
	e := NewEnv(t)
	allow := e.Script("allow.sh", `#!/bin/sh
cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'
`)
	e.WriteSettings("project", `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"`+allow+`"}]}]}}`)
	e.WriteSettings("managed", `{"permissions":{"deny":["Bash(rm:*)"]}}`)
	e.Start()
	res, _ := e.Event(e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf build"}, "tool_use_id": "toolu_1"}))
	if res.Permission == nil || res.Permission.Decision != "deny" {
		t.Fatalf("permission %+v", res.Permission)
	}
	ok, _ := e.Event(e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}, "tool_use_id": "toolu_2"}))

	ids := byDecisionID(auditLines(t, e))
	rec := ids[res.DecisionID][0]
	o, _ := rec["override"].(map[string]any)
	managed := e.SettingsPath("managed")
	if rec["decision"] != "deny" || rec["hook_decision"] != "allow" || rec["decision_source"] != "rule" || o == nil ||
		o["rule"] != "Bash(rm:*)" || o["list"] != "deny" || o["file"] != managed || o["final"] != "deny" || o["hook_decision"] != "allow" {
		t.Fatalf("override not recorded: decision %v hook_decision %v override %v", rec["decision"], rec["hook_decision"], rec["override"])
	}
	if rec2 := ids[ok.DecisionID][0]; rec2["decision"] != "allow" || rec2["override"] != nil {
		t.Fatalf("plain allow: %v %v", rec2["decision"], rec2["override"])
	}
	if !strings.Contains(e.Logs(), `"decision_id":"`+res.DecisionID+`"`) {
		t.Errorf("operational log does not carry the decision_id of the override")
	}

	for _, args := range [][]string{{"--overridden"}, {"--source-file", "managed-settings.json"}, {"--decision", "deny", "--tool", "Bash"}} {
		q := e.Hookd("", append([]string{"audit", "query", "--json"}, args...)...)
		if q.Code != 0 || strings.Count(q.Stdout, "\n") != 1 || !strings.Contains(q.Stdout, res.DecisionID) {
			t.Errorf("query %v: exit %d\n%s%s", args, q.Code, q.Stdout, q.Stderr)
		}
	}
	q := e.Hookd("", "audit", "query", "--decision", "allow")
	if q.Code != 0 || !strings.Contains(q.Stdout, ok.DecisionID) || strings.Contains(q.Stdout, res.DecisionID) || !strings.HasPrefix(q.Stdout, "TIME") {
		t.Errorf("query table: exit %d\n%s%s", q.Code, q.Stdout, q.Stderr)
	}
	s := e.Hookd("", "audit", "show", res.DecisionID[:20])
	if s.Code != 0 || !strings.Contains(s.Stdout, "allow → deny by deny rule Bash(rm:*) in "+managed) || !strings.Contains(s.Stdout, allow) {
		t.Errorf("show: exit %d\n%s%s", s.Code, s.Stdout, s.Stderr)
	}
	st := e.Hookd("", "audit", "stats")
	if st.Code != 0 || !strings.Contains(st.Stdout, "decisions: 2") || !strings.Contains(st.Stdout, "overridden by rules: 1") || !strings.Contains(st.Stdout, allow) {
		t.Errorf("stats: exit %d\n%s%s", st.Code, st.Stdout, st.Stderr)
	}
	tail := e.Hookd("", "audit", "tail", "-n", "1", "--json")
	if tail.Code != 0 || !strings.Contains(tail.Stdout, ok.DecisionID) || strings.Count(tail.Stdout, "\n") != 1 {
		t.Errorf("tail: exit %d\n%s%s", tail.Code, tail.Stdout, tail.Stderr)
	}
}

// TestAuditMasking: configured paths are hashed or dropped before anything is written.
func TestAuditMasking(t *testing.T) {
	e := NewEnv(t)
	rewrite := e.Script("rewrite.sh", `#!/bin/sh
cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"file_path":"/tmp/x","content":"SECRET-IN-UPDATE"}}}'
`)
	e.WriteSettings("project", `{"hooks":{"PreToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"`+rewrite+` --token SECRET-IN-COMMAND"}]}]}}`)
	e.Config = filepath.Join(e.Root, "hookd.json")
	WriteAtomic(t, e.Config, `{"audit":{"mask":[
		{"path":"tool_input.content","action":"hash"},
		{"path":"transcript_path","action":"drop"},
		{"path":"hooks.command","action":"hash"}]}}`)
	e.Start()
	secret := "SECRET-IN-INPUT " + strings.Repeat("x", 100)
	res, _ := e.Event(e.Payload("PreToolUse", map[string]any{"tool_name": "Write", "tool_use_id": "toolu_1",
		"tool_input": map[string]any{"file_path": "/tmp/x", "content": secret}}))
	data, err := os.ReadFile(e.auditFile())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("SECRET")) {
		t.Fatalf("masked value written to the log:\n%s", data)
	}
	rec := byDecisionID(auditLines(t, e))[res.DecisionID][0]
	in := rec["input"].(map[string]any)
	if in["tool_input"].(map[string]any)["content"] != "sha256:"+sha(secret) || in["transcript_path"] != nil || in["tool_input"].(map[string]any)["file_path"] != "/tmp/x" {
		t.Errorf("input = %v", in)
	}
	if up := rec["updated_input"].(map[string]any); up["content"] != "sha256:"+sha("SECRET-IN-UPDATE") {
		t.Errorf("updated_input = %v", up)
	}
	h := rec["hooks"].([]any)[0].(map[string]any)
	if h["command"] != nil || h["command_sha256"] != sha(rewrite+" --token SECRET-IN-COMMAND") {
		t.Errorf("hook command %v / %v", h["command"], h["command_sha256"])
	}
	if m := fmt.Sprint(rec["masked"]); !strings.Contains(m, "tool_input.content:hash") || !strings.Contains(m, "transcript_path:drop") {
		t.Errorf("masked = %v", rec["masked"])
	}
}

// TestAuditFailClosed: when records cannot be written, events that can block are denied
// with the reason, the others are answered, status shows the failure — and the log
// heals once the directory is usable.
func TestAuditFailClosed(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"true"}]}],"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"true"}]}]}}`)
	blocker := filepath.Join(e.Root, "blocker")
	if err := os.WriteFile(blocker, []byte("a file where the audit directory's parent should be"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Config = filepath.Join(e.Root, "hookd.json")
	WriteAtomic(t, e.Config, `{"audit":{"path":"`+filepath.Join(blocker, "audit", "decisions.jsonl")+`"}}`)
	e.Start()
	pre := e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}})
	r := e.Hookc(pre)
	if r.Code != 2 || !strings.Contains(r.Stderr, "could not be recorded in the audit log") || !strings.Contains(r.Stderr, "not a directory") {
		t.Fatalf("blocking event with no audit log: exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	post := e.Hookc(e.Payload("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}, "tool_response": map[string]any{}}))
	if post.Code != 0 {
		t.Fatalf("non-blocking event: exit %d %q %q", post.Code, post.Stdout, post.Stderr)
	}
	st := e.Status()
	if st["counters"].(map[string]any)["audit_failures"] != 2.0 {
		t.Errorf("audit_failures = %v", st["counters"])
	}
	a := st["audit"].(map[string]any)
	if a["healthy"] != false || !strings.Contains(a["last_error"].(string), "not a directory") {
		t.Errorf("status audit = %v", a)
	}
	if s := e.Hookd("", "status"); !strings.Contains(s.Stdout, "audit: FAILING") || !strings.Contains(s.Stdout, "not a directory") {
		t.Errorf("hookd status:\n%s", s.Stdout)
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if r := e.Hookc(pre); r.Code != 0 {
		t.Fatalf("after the directory was fixed: exit %d %q", r.Code, r.Stderr)
	}
	if a := e.Status()["audit"].(map[string]any); a["healthy"] != true {
		t.Errorf("status after healing: %v", a)
	}
}

// TestAuditVerifyCLI: `hookd audit verify` on a tampered log, a torn tail that the next
// start repairs, and `hookd run` (the fallback) writing into the same chain.
func TestAuditVerifyCLI(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}`)
	e.Start()
	for i := 0; i < 5; i++ {
		e.Event(e.Payload("Stop", nil))
	}
	if r := e.Hookd(e.Payload("Stop", nil), "run"); r.Code != 0 {
		t.Fatalf("hookd run: %d %s", r.Code, r.Stderr)
	}
	e.Event(e.Payload("Stop", nil))
	e.Stop()
	if v := e.Hookd("", "audit", "verify"); v.Code != 0 || !strings.Contains(v.Stdout, "OK: 7 records") {
		t.Fatalf("verify: %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}

	path := e.auditFile()
	orig, _ := os.ReadFile(path)
	tampered := bytes.Replace(orig, []byte(`"decision":"none"`), []byte(`"decision":"deny"`), 1)
	os.WriteFile(path, tampered, 0o600)
	v := e.Hookd("", "audit", "verify")
	if v.Code != 1 || !strings.Contains(v.Stdout, "FAILED: decisions.jsonl:2: record 2 does not chain") {
		t.Fatalf("verify of an edited log: %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	// The read commands print what they read, then say loudly that it does not verify.
	for _, args := range [][]string{{"audit", "query"}, {"audit", "query", "--json"}, {"audit", "stats"}, {"audit", "query", "--decision", "deny"}} {
		q := e.Hookd("", args...)
		if q.Code != 1 || !strings.Contains(q.Stderr, "WARNING: the decision log does not verify: decisions.jsonl:2: record 2 does not chain") {
			t.Errorf("hookd %s on an edited log: exit %d\n%s%s", strings.Join(args, " "), q.Code, q.Stdout, q.Stderr)
		}
	}
	if q := e.Hookd("", "audit", "query", "--no-verify"); q.Code != 0 || strings.Contains(q.Stderr, "WARNING") {
		t.Errorf("hookd audit query --no-verify on an edited log: exit %d\n%s", q.Code, q.Stderr)
	}
	os.WriteFile(path, orig, 0o600)
	if q := e.Hookd("", "audit", "query"); q.Code != 0 || strings.Contains(q.Stderr, "WARNING") {
		t.Errorf("hookd audit query on the restored log: exit %d\n%s", q.Code, q.Stderr)
	}

	// A torn write (as a crash mid-write leaves): reported, then repaired on start.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2026-01-01T00:00:00Z","kind":"decision","v":1,"decision_id":"01TORN`)
	f.Close()
	if v := e.Hookd("", "audit", "verify"); v.Code != 1 || !strings.Contains(v.Stdout, "ends in the middle of a record") {
		t.Fatalf("verify of a torn log: %d\n%s", v.Code, v.Stdout)
	}
	e.Start()
	e.Event(e.Payload("Stop", nil))
	v = e.Hookd("", "audit", "verify")
	if v.Code != 0 || !strings.Contains(v.Stdout, "OK: 9 records") || !strings.Contains(v.Stdout, "torn write") {
		t.Fatalf("verify after repair: %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	if !strings.Contains(e.Logs(), "audit log repaired") {
		t.Errorf("the repair was not logged:\n%s", e.Logs())
	}
}

// TestAuditCrash: four clients send events continuously; the daemon is killed with
// SIGKILL at a random moment and restarted. Every decision_id a client received is in
// the log, and the chain verifies (a torn last line is repaired, not a broken chain).
func TestAuditCrash(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"cat >/dev/null"}]}]}}`)
	e.Start()
	var mu sync.Mutex
	var received []string
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := protocol.Dial(context.Background(), e.Socket)
			if err != nil {
				t.Error(err)
				return
			}
			defer cl.Close()
			deadline := time.Now().Add(20 * time.Second)
			for i := 0; time.Now().Before(deadline); i++ {
				select {
				case <-stop:
					return
				default:
				}
				payload := e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": fmt.Sprintf("toolu_%d_%d", c, i),
					"tool_input": map[string]any{"command": "echo " + strings.Repeat("y", rand.IntN(2000))}})
				var res *protocol.Result
				_, err := cl.Do(context.Background(), &protocol.Request{Event: json.RawMessage(payload), ProjectDir: e.Project, Options: protocol.Options{ResultOnly: true}},
					func(f *protocol.Frame) {
						if f.Type == protocol.FrameResult {
							res = f.Result
						}
					})
				if err != nil {
					return // the daemon died under us
				}
				mu.Lock()
				received = append(received, res.DecisionID)
				mu.Unlock()
			}
		}()
	}
	Eventually(t, 20*time.Second, "some answers", func() bool { mu.Lock(); defer mu.Unlock(); return len(received) >= 20 })
	time.Sleep(time.Duration(rand.IntN(1000)) * time.Millisecond)
	if err := e.daemon.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-e.exited
	close(stop)
	wg.Wait()
	t.Logf("%d answers received before SIGKILL", len(received))

	// Before restart: intact, or ending in a torn line the kill cut.
	v := e.Hookd("", "audit", "verify")
	if v.Code != 0 && !strings.Contains(v.Stdout, "ends in the middle of a record") {
		t.Fatalf("after SIGKILL: %d\n%s", v.Code, v.Stdout)
	}
	// Make sure the repair path runs: a write cut short, as a power loss leaves it.
	f, _ := os.OpenFile(e.auditFile(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2026-01-01T00:00:00Z","kind":"decision","v":1,"decisi`)
	f.Close()

	e.Start()
	res, _ := e.Event(e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "true"}}))
	ids := byDecisionID(auditLines(t, e))
	for _, id := range append(received, res.DecisionID) {
		if len(ids[id]) != 1 {
			t.Errorf("decision %s answered but has %d records", id, len(ids[id]))
		}
	}
	v = e.Hookd("", "audit", "verify")
	if v.Code != 0 || !strings.Contains(v.Stdout, "OK:") || !strings.Contains(v.Stdout, "torn write") {
		t.Fatalf("verify after restart: %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	t.Logf("%s", strings.SplitN(v.Stdout, "\n", 2)[0])
}

// TestAuditTailFollow: `hookd audit tail -f` prints the last records, then each new one
// once, across a rotation.
func TestAuditTailFollow(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}`)
	e.Config = filepath.Join(e.Root, "hookd.json")
	WriteAtomic(t, e.Config, `{"audit":{"max_size_mb":1}}`)
	e.Start()
	first, _ := e.Event(e.Payload("Stop", nil))
	cmd := exec.Command(bins.hookd, append(e.DaemonArgs(), "audit", "tail", "-f", "-n", "1", "--json")...)
	cmd.Env = e.BaseEnv()
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	Eventually(t, 10*time.Second, "the last record", func() bool { return strings.Contains(out.String(), first.DecisionID) })
	// ≈1.5 MiB of records: the log rotates once while tail follows it.
	big := strings.Repeat("z", 60<<10)
	var ids []string
	for i := 0; i < 25; i++ {
		res, _ := e.Event(e.Payload("Stop", map[string]any{"last_assistant_message": big}))
		ids = append(ids, res.DecisionID)
	}
	Eventually(t, 10*time.Second, "every new record", func() bool { return strings.Contains(out.String(), ids[len(ids)-1]) })
	time.Sleep(300 * time.Millisecond)
	got := out.String()
	for _, id := range append(ids, first.DecisionID) {
		if n := strings.Count(got, `"decision_id":"`+id+`"`); n != 1 {
			t.Errorf("decision %s printed %d times", id, n)
		}
	}
	if rs, _ := audit.Rotated(e.auditFile()); len(rs) == 0 {
		t.Errorf("the log did not rotate")
	}
}

// A decision no hook made ("none") names what the permission rules answer — Claude Code
// applies them itself — so the table does not read as if nothing decided.
func TestAuditNoneRowShowsTheRules(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"permissions":{"deny":["Bash(cat *)"],"ask":["Bash(git push *)"]},
		"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cat >/dev/null"}]}]}}`)
	e.Start()
	for _, cmd := range []string{"cat .env", "git push origin", "ls"} {
		e.Event(bashPayload(e, cmd))
	}
	q := e.Hookd("", "audit", "query", "--tool", "Bash")
	lines := strings.Split(strings.TrimSpace(q.Stdout), "\n")
	if q.Code != 0 || len(lines) != 4 {
		t.Fatalf("audit query: exit %d\n%s%s", q.Code, q.Stdout, q.Stderr)
	}
	for i, want := range []string{"rules say deny (deny rule Bash(cat *))", "rules say ask (ask rule Bash(git push *))", "no rule matches: Claude Code's permission mode decides"} {
		if l := lines[i+1]; !strings.Contains(l, " none ") || !strings.Contains(l, want) {
			t.Errorf("row %d: %q, want decision none and %q", i+1, l, want)
		}
	}
	// docs/audit.md shows this table: its rows must be what the command prints (but for
	// times and ids).
	doc, err := os.ReadFile("../docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	vary := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  [0-9A-Z]{26}`)
	for _, l := range lines {
		if !strings.Contains(vary.ReplaceAllString(string(doc), "T  ID"), vary.ReplaceAllString(l, "T  ID")) {
			t.Errorf("docs/audit.md does not show this row as printed:\n%s", l)
		}
	}
}
