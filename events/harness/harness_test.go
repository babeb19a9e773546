package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

// schemaFile maps a Codex event to its schema file (testdata/codex-0.171.0).
func schemaFile(event string) string {
	kebab := regexp.MustCompile(`([a-z])([A-Z])`).ReplaceAllString(event, "$1-$2")
	return filepath.Join("testdata", "codex-0.171.0", strings.ToLower(kebab)+".output.json")
}

// validate checks v against the draft-07 subset Codex's schemas use: type, properties,
// additionalProperties:false, required, enum, const, $ref into definitions, allOf.
func validate(schema, root map[string]any, v any, path string) error {
	if ref, ok := schema["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/definitions/")
		return validate(root["definitions"].(map[string]any)[name].(map[string]any), root, v, path)
	}
	if all, ok := schema["allOf"].([]any); ok {
		if v == nil { // "default": null members may be null
			return nil
		}
		for _, s := range all {
			if err := validate(s.(map[string]any), root, v, path); err != nil {
				return err
			}
		}
	}
	if c, ok := schema["const"]; ok && v != c {
		return fmt.Errorf("%s: %v is not the const %v", path, v, c)
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if e == v {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: %v not in enum %v", path, v, enum)
		}
	}
	if t, ok := schema["type"].(string); ok && v != nil {
		okType := map[string]bool{
			"object": isKind[map[string]any](v), "string": isKind[string](v), "boolean": isKind[bool](v),
		}[t]
		if !okType {
			return fmt.Errorf("%s: %v is not of type %s", path, v, t)
		}
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return nil
	}
	props, _ := schema["properties"].(map[string]any)
	for k, val := range obj {
		ps, ok := props[k]
		if !ok {
			if schema["additionalProperties"] == false {
				return fmt.Errorf("%s: member %q is not allowed (additionalProperties: false)", path, k)
			}
			continue
		}
		if err := validate(ps.(map[string]any), root, val, path+"."+k); err != nil {
			return err
		}
	}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: required member %q missing", path, r)
			}
		}
	}
	return nil
}

func isKind[T any](v any) bool { _, ok := v.(T); return ok }

func loadSchema(t testing.TB, event string) map[string]any {
	b, err := os.ReadFile(schemaFile(event))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// codexAnswer runs hook outputs through the same path the engine takes: interpret each as
// a Claude Code hook output, merge, finalize, then render for Codex.
func codexAnswer(t testing.TB, event string, outs ...events.RawOutput) *protocol.Result {
	ev, _, ok := For(protocol.HarnessCodex).Event(event)
	if !ok {
		t.Fatalf("codex event %s unknown", event)
	}
	var parts []events.Interpretation
	for i, o := range outs {
		parts = append(parts, events.Interpret(ev, protocol.HookRef{ID: fmt.Sprint("h", i), Command: fmt.Sprint("hook", i)}, o))
	}
	o := events.Merge(ev, parts)
	if o.HookPermission != nil && o.Permission == nil {
		o.Permission = o.HookPermission
	}
	res := events.Render(ev, o)
	For(protocol.HarnessCodex).Render(event, "Bash", res)
	return res
}

func stdout(s string) events.RawOutput {
	return events.RawOutput{Kind: events.Command, Stdout: []byte(s)}
}

// Hook outputs a Claude Code hook may print, including fields Codex's schemas reject.
var claudeOutputs = []string{
	``,
	`plain text context`,
	`{"continue":false,"stopReason":"stop now","systemMessage":"note","suppressOutput":true}`,
	`{"decision":"block","reason":"no"}`,
	`{"decision":"approve","reason":"fine"}`,
	`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"bad"}}`,
	`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls"}}}`,
	`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}`,
	`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}`,
	`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"ctx","updatedToolOutput":"x","updatedMCPToolOutput":{"a":1}}}`,
	`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"ctx","sessionTitle":"t","watchPaths":["/a"],"initialUserMessage":"m"}}`,
	`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ctx","sessionTitle":"t","suppressOriginalPrompt":true}}`,
	`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"ls"},"updatedPermissions":[{"type":"setMode","mode":"plan","destination":"session"}]}}}`,
	`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"m","interrupt":true}}}`,
	`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`,
	`{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"x"},"terminalSequence":"\u001b]0;t\u0007"}`,
}

func TestCodexOutputsStayInsideSchemas(t *testing.T) {
	exits := []events.RawOutput{
		{Kind: events.Command, ExitCode: 2, Stderr: []byte("blocked by exit 2")},
		{Kind: events.Command, ExitCode: 1, Stderr: []byte("warn")},
	}
	for ev := range codexSchemas {
		schema := loadSchema(t, ev)
		var cases [][]events.RawOutput
		for _, s := range claudeOutputs {
			cases = append(cases, []events.RawOutput{stdout(s)})
		}
		for _, e := range exits {
			cases = append(cases, []events.RawOutput{e}, []events.RawOutput{e, stdout(claudeOutputs[9])})
		}
		cases = append(cases, []events.RawOutput{stdout(claudeOutputs[1]), stdout(claudeOutputs[10])})
		for _, outs := range cases {
			res := codexAnswer(t, ev, outs...)
			if res.Stdout != "" {
				t.Errorf("%s: plain stdout %q for %v", ev, res.Stdout, outs)
			}
			if len(res.Output) == 0 {
				continue
			}
			var v any
			if err := json.Unmarshal(res.Output, &v); err != nil {
				t.Fatalf("%s: invalid JSON %s", ev, res.Output)
			}
			if err := validate(schema, schema, v, ev); err != nil {
				t.Errorf("%s: rendered %s violates Codex's schema: %v (hook outputs %q)", ev, res.Output, err, outs[0].Stdout)
			}
		}
	}
}

func TestCodexDecisionsSurviveRendering(t *testing.T) {
	for _, c := range []struct {
		event, hook string
		want        []string // substrings of the rendered JSON
		exit        int
	}{
		{"PreToolUse", claudeOutputs[5], []string{`"permissionDecision":"deny"`, `"permissionDecisionReason":"bad"`}, 0},
		{"PreToolUse", claudeOutputs[6], []string{`"permissionDecision":"allow"`, `"updatedInput":{"command":"ls"}`}, 0},
		{"PostToolUse", claudeOutputs[9], []string{`"additionalContext":"ctx"`, `"updatedMCPToolOutput":{"a":1}`}, 0},
		{"SessionStart", claudeOutputs[1], []string{`"additionalContext":"plain text context"`}, 0},
		{"Stop", claudeOutputs[3], []string{`"decision":"block"`, `"reason":"no"`}, 0},
		// The allow-with-rewrite Codex cannot apply fails closed.
		{"PermissionRequest", claudeOutputs[12], []string{`"behavior":"deny"`}, 0},
		{"PermissionRequest", claudeOutputs[13], []string{`"behavior":"deny"`, `"message":"m"`}, 0},
	} {
		res := codexAnswer(t, c.event, stdout(c.hook))
		for _, w := range c.want {
			if !strings.Contains(string(res.Output), w) {
				t.Errorf("%s %s: rendered %s lacks %s", c.event, c.hook, res.Output, w)
			}
		}
		if res.ExitCode != c.exit {
			t.Errorf("%s: exit %d, want %d", c.event, res.ExitCode, c.exit)
		}
	}
	res := codexAnswer(t, "PreToolUse", events.RawOutput{Kind: events.Command, ExitCode: 2, Stderr: []byte("nope")})
	if !strings.Contains(string(res.Output)+res.Stderr, "nope") || (res.ExitCode != 2 && !strings.Contains(string(res.Output), `"deny"`)) {
		t.Errorf("exit-2 block lost: %+v", res)
	}
	res = codexAnswer(t, "SessionEnd", stdout(claudeOutputs[2]))
	if len(res.Output) != 0 {
		t.Errorf("SessionEnd has no Codex output schema, rendered %s", res.Output)
	}
}

// FuzzCodexRender: whatever a hook prints, the answer stays inside Codex's schema.
func FuzzCodexRender(f *testing.F) {
	for _, s := range claudeOutputs {
		f.Add("PreToolUse", s, 0)
		f.Add("PermissionRequest", s, 0)
		f.Add("Stop", s, 2)
	}
	schemas := map[string]map[string]any{}
	for ev := range codexSchemas {
		schemas[ev] = loadSchema(f, ev)
	}
	f.Fuzz(func(t *testing.T, event, out string, exit int) {
		schema, ok := schemas[event]
		if !ok {
			return
		}
		res := codexAnswer(t, event, events.RawOutput{Kind: events.Command, Stdout: []byte(out), ExitCode: exit & 3})
		if len(res.Output) == 0 {
			return
		}
		var v any
		if err := json.Unmarshal(res.Output, &v); err != nil {
			t.Fatalf("invalid JSON %s", res.Output)
		}
		if err := validate(schema, schema, v, event); err != nil {
			t.Fatalf("rendered %s violates Codex's schema: %v", res.Output, err)
		}
	})
}

// A BeforeTool payload captured from Gemini CLI 0.61.0.
const geminiBeforeTool = `{"session_id":"ad1fd693-fe68-49b8-bbe2-596434e5300c","transcript_path":"/h/.gemini/tmp/proj/chats/session-2026-11-23T14-33-ad1fd693.jsonl","cwd":"/p","hook_event_name":"BeforeTool","timestamp":"2026-11-23T14:33:54.104Z","tool_name":"run_shell_command","tool_input":{"command":"rm -rf build","description":"clean"}}`

func TestGeminiCanonical(t *testing.T) {
	g := For(protocol.HarnessGemini)
	got, err := g.Canonical([]byte(geminiBeforeTool))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"session_id":"ad1fd693-fe68-49b8-bbe2-596434e5300c","transcript_path":"/h/.gemini/tmp/proj/chats/session-2026-11-23T14-33-ad1fd693.jsonl","cwd":"/p","hook_event_name":"PreToolUse","timestamp":"2026-11-23T14:33:54.104Z","tool_name":"Bash","tool_input":{"command":"rm -rf build","description":"clean"}}`
	if string(got) != want {
		t.Errorf("Canonical:\n got %s\nwant %s", got, want)
	}
	stop := `{"session_id":"s","cwd":"/p","hook_event_name":"AfterAgent","prompt":"go","prompt_response":"finished","stop_hook_active":false}`
	got, _ = g.Canonical([]byte(stop))
	var m map[string]any
	_ = json.Unmarshal(got, &m)
	if m["hook_event_name"] != "Stop" || m["last_assistant_message"] != "finished" || m["prompt_response"] != "finished" {
		t.Errorf("AfterAgent → Stop: %s", got)
	}
	glob := `{"hook_event_name":"BeforeTool","tool_name":"glob","tool_input":{"pattern":"*.go","dir_path":"src"}}`
	got, _ = g.Canonical([]byte(glob))
	if !strings.Contains(string(got), `"tool_name":"Glob","tool_input":{"pattern":"*.go","path":"src"}`) {
		t.Errorf("glob: %s", got)
	}
	// A decoy "path" beside Gemini's dir_path must not be what the rules judge.
	got, _ = g.Canonical([]byte(`{"hook_event_name":"BeforeTool","tool_name":"grep_search","tool_input":{"path":"/safe","pattern":"x","dir_path":"/etc"}}`))
	if !strings.Contains(string(got), `"tool_input":{"pattern":"x","path":"/etc"}`) {
		t.Errorf("decoy member: %s", got)
	}
	if back := g.NativeInput("glob", json.RawMessage(`{"pattern":"*.go","path":"src"}`)); string(back) != `{"pattern":"*.go","dir_path":"src"}` {
		t.Errorf("NativeInput: %s", back)
	}
	cx := []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"turn_id":"t"}`)
	if got, _ := For(protocol.HarnessCodex).Canonical(cx); string(got) != string(cx) {
		t.Errorf("codex payloads are Claude-shaped and must pass unchanged: %s", got)
	}
	for native := range g.Events {
		if _, _, ok := g.Event(native); !ok {
			t.Errorf("gemini event %s maps to %s, which the catalogue lacks", native, g.Events[native])
		}
	}
}

func geminiAnswer(native, tool string, res *protocol.Result) map[string]any {
	For(protocol.HarnessGemini).Render(native, tool, res)
	var m map[string]any
	_ = json.Unmarshal(res.Output, &m)
	return m
}

func TestGeminiRender(t *testing.T) {
	m := geminiAnswer("BeforeTool", "run_shell_command", &protocol.Result{
		Permission: &protocol.Permission{Decision: "deny", Reason: "rule says no", Source: "rule"},
		ExitCode:   2, Stderr: "x",
	})
	if m["decision"] != "deny" || m["reason"] != "rule says no" {
		t.Errorf("BeforeTool deny: %v", m)
	}
	res := &protocol.Result{Permission: &protocol.Permission{Decision: "allow"}, UpdatedInput: json.RawMessage(`{"pattern":"a","path":"b"}`),
		AdditionalContext: []string{"c1", "c2"}}
	m = geminiAnswer("BeforeTool", "glob", res)
	hso, _ := m["hookSpecificOutput"].(map[string]any)
	if m["decision"] != "allow" || hso["hookEventName"] != "BeforeTool" || hso["additionalContext"] != "c1\n\nc2" ||
		hso["tool_input"].(map[string]any)["dir_path"] != "b" || res.ExitCode != 0 || res.Stderr != "" {
		t.Errorf("BeforeTool allow+rewrite: %s", res.Output)
	}
	m = geminiAnswer("AfterAgent", "", &protocol.Result{Block: &protocol.Block{Reason: "keep going"}})
	if m["decision"] != "block" || m["reason"] != "keep going" {
		t.Errorf("AfterAgent block: %v", m)
	}
	m = geminiAnswer("SessionStart", "", &protocol.Result{PreventContinuation: true, StopReason: "halt", SystemMessages: []string{"a", "b"}})
	if m["continue"] != false || m["stopReason"] != "halt" || m["systemMessage"] != "a\nb" {
		t.Errorf("universal fields: %v", m)
	}
	if res := (&protocol.Result{}); geminiAnswer("Notification", "", res) != nil || res.Output != nil {
		t.Errorf("empty answer rendered %s", res.Output)
	}
}

func TestGeminiTranslate(t *testing.T) {
	g := For(protocol.HarnessGemini)
	ev, _, _ := g.Event("BeforeTool")
	in := json.RawMessage(`{"command":"rm -rf build","description":"clean"}`)
	interp := func(native string, out events.RawOutput) events.Interpretation {
		e, _, _ := g.Event(native)
		return events.Interpret(e, protocol.HookRef{ID: "g"}, g.Translate(native, "run_shell_command", in, out))
	}
	for _, c := range []struct {
		name     string
		out      events.RawOutput
		perm     string
		reason   string
		contains string
	}{
		{"json deny", stdout(`{"decision":"deny","reason":"no rm"}`), "deny", "no rm", ""},
		{"json block is deny", stdout(`{"decision":"block","reason":"no"}`), "deny", "no", ""},
		{"json ask", stdout(`{"decision":"ask"}`), "ask", "", ""},
		{"json allow", stdout(`{"decision":"allow"}`), "allow", "", ""},
		// Gemini CLI reads hook output with JSON.parse, where the last duplicate wins; hookd
		// once read the first one here and allowed what Gemini itself would deny.
		{"duplicate keys: the last wins", stdout(`{"decision":"allow","reason":"a","decision":"deny","reason":"dup"}`), "deny", "dup", ""},
		{"json in a string", stdout(`"{\"decision\":\"deny\",\"reason\":\"s\"}"`), "deny", "s", ""},
		{"json on stderr", events.RawOutput{Kind: events.Command, Stderr: []byte(`{"decision":"deny","reason":"e"}`)}, "deny", "e", ""},
		{"exit 2 text", events.RawOutput{Kind: events.Command, ExitCode: 2, Stderr: []byte("nope")}, "deny", "", "nope"},
		{"exit 3 text", events.RawOutput{Kind: events.Command, ExitCode: 3, Stdout: []byte("nope3")}, "deny", "", "nope3"},
		{"exit 0 text is no decision", stdout("hello"), "", "", ""},
		{"exit 1 is a warning", events.RawOutput{Kind: events.Command, ExitCode: 1, Stderr: []byte("warn")}, "", "", ""},
	} {
		got := interp("BeforeTool", c.out)
		if got.Permission != c.perm {
			t.Errorf("%s: permission %q, want %q (%+v)", c.name, got.Permission, c.perm, got)
		}
		if c.reason != "" && got.PermissionReason != c.reason {
			t.Errorf("%s: reason %q, want %q", c.name, got.PermissionReason, c.reason)
		}
		if c.contains != "" && !strings.Contains(got.PermissionReason+got.BlockReason, c.contains) {
			t.Errorf("%s: reason %q lacks %q", c.name, got.PermissionReason+got.BlockReason, c.contains)
		}
	}
	got := interp("BeforeTool", stdout(`{"hookSpecificOutput":{"tool_input":{"command":"echo safe"}}}`))
	if string(got.UpdatedInput) != `{"command":"echo safe","description":"clean"}` {
		t.Errorf("tool_input merges over the call's input: %s", got.UpdatedInput)
	}
	got = interp("AfterAgent", stdout(`{"decision":"deny","reason":"again"}`))
	if !got.Block || got.BlockReason != "again" {
		t.Errorf("AfterAgent deny is a Stop block: %+v", got)
	}
	got = interp("BeforeAgent", stdout(`{"hookSpecificOutput":{"additionalContext":"ctx"}}`))
	if got.AdditionalContext != "ctx" {
		t.Errorf("additionalContext: %+v", got)
	}
	_ = ev
	if out := For(protocol.HarnessCodex).Translate("PreToolUse", "Bash", in, stdout("x")); string(out.Stdout) != "x" {
		t.Error("codex hook output must pass unchanged")
	}
}

// The schema check must be able to fail: the Claude Code answers Codex rejects.
func TestSchemaValidatorRejectsClaudeOnlyFields(t *testing.T) {
	for ev, bad := range map[string]string{
		"PostToolUse":       `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"x"}}`,
		"PreToolUse":        `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}`,
		"Stop":              `{"hookSpecificOutput":{"hookEventName":"Stop"}}`,
		"SessionStart":      `{"hookSpecificOutput":{"hookEventName":"SessionStart","sessionTitle":"t"}}`,
		"PermissionRequest": `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","extra":1}}}`,
		"Interrupt":         `{"continue":false}`,
	} {
		s := loadSchema(t, ev)
		var v any
		_ = json.Unmarshal([]byte(bad), &v)
		if err := validate(s, s, v, ev); err == nil {
			t.Errorf("%s: validator accepted %s", ev, bad)
		}
	}
}

// FuzzGeminiTranslate: whatever a Gemini hook prints, the translation is a Claude Code hook
// output events.Interpret reads without panicking, and a Gemini deny never becomes an allow.
func FuzzGeminiTranslate(f *testing.F) {
	for _, s := range []string{`{"decision":"deny","reason":"r"}`, `{"decision":"allow"}`, `"{\"decision\":\"block\"}"`,
		`{"hookSpecificOutput":{"tool_input":{"command":"x"},"additionalContext":"c"}}`, `plain`, ``, `{"decision":7}`, `[1]`} {
		f.Add("BeforeTool", s, 0)
		f.Add("AfterAgent", s, 2)
	}
	g := For(protocol.HarnessGemini)
	f.Fuzz(func(t *testing.T, native, out string, exit int) {
		ev, _, ok := g.Event(native)
		if !ok {
			return
		}
		raw := events.RawOutput{Kind: events.Command, Stdout: []byte(out), ExitCode: exit & 7}
		tr := g.Translate(native, "run_shell_command", json.RawMessage(`{"command":"ls"}`), raw)
		in := events.Interpret(ev, protocol.HookRef{ID: "f"}, tr)
		var m struct {
			Decision string `json:"decision"`
		}
		if json.Unmarshal([]byte(strings.TrimSpace(out)), &m) == nil && (m.Decision == "deny" || m.Decision == "block") && native == "BeforeTool" && in.Permission != "deny" {
			t.Fatalf("gemini %s %q read as %q", native, out, in.Permission)
		}
	})
}

// FuzzCanonical: any payload either fails to parse or comes out as valid JSON with the
// catalogue's event name.
func FuzzCanonical(f *testing.F) {
	f.Add(geminiBeforeTool)
	f.Add(`{"hook_event_name":"AfterAgent","prompt_response":"x"}`)
	f.Add(`{"hook_event_name":"BeforeTool","tool_name":"glob","tool_input":{"dir_path":"a","path":"b"}}`)
	f.Add(`{"hook_event_name":"BeforeTool","hook_event_name":"AfterTool"}`)
	g := For(protocol.HarnessGemini)
	f.Fuzz(func(t *testing.T, payload string) {
		out, err := g.Canonical([]byte(payload))
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON out of %q: %q", payload, out)
		}
		var in, got struct {
			Event string `json:"hook_event_name"`
		}
		if json.Unmarshal([]byte(payload), &in) != nil {
			return
		}
		_ = json.Unmarshal(out, &got)
		if want, ok := g.Events[in.Event]; ok && got.Event != want {
			t.Fatalf("%q → event %q, want %q", payload, got.Event, want)
		}
	})
}
