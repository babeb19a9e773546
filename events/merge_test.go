package events

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hookd/hookd/protocol"
)

// hook is one configured hook for merge tests: its reference (configuration order is the
// slice order) and its output.
type hook struct {
	id  string
	out RawOutput
}

func ref(id string) protocol.HookRef { return protocol.HookRef{ID: id, Command: "./" + id + ".sh"} }

// runHooks interprets the hooks the way the daemon does: concurrently, finishing in
// whatever order, each result stored at its configuration index.
func runHooks(t testing.TB, ev *Event, hs []hook, finishOrder []int) []Interpretation {
	t.Helper()
	parts := make([]Interpretation, len(hs))
	if finishOrder == nil {
		for i := range hs {
			finishOrder = append(finishOrder, i)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, i := range finishOrder {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := hs[i]
			h.out.Command = "./" + h.id + ".sh"
			in := Interpret(ev, ref(h.id), h.out)
			mu.Lock()
			parts[i] = in
			mu.Unlock()
		}()
		wg.Wait() // finish strictly in finishOrder
	}
	return parts
}

func preJSON(fields string) RawOutput {
	return cmd(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse"`+fields+`}}`, "")
}

func decision(d, reason string) RawOutput {
	return preJSON(fmt.Sprintf(`,"permissionDecision":%q,"permissionDecisionReason":%q`, d, reason))
}

func TestMergePermission(t *testing.T) {
	tests := []struct {
		name       string
		hooks      []hook
		wantDec    string
		wantReason string
		wantHook   string
	}{
		{"none", []hook{{"a", cmd(0, "", "")}}, "", "", ""},
		{"allow", []hook{{"a", decision("allow", "ok")}}, "allow", "ok", "a"},
		{"ask beats allow", []hook{{"a", decision("allow", "A")}, {"b", decision("ask", "B")}}, "ask", "B", "b"},
		// Claude Code 2.1.321: an ask is not lost beside a defer it cannot honour; hookd
		// cannot tell, so the ask wins whichever finished first or comes first.
		{"ask beats defer", []hook{{"a", decision("ask", "A")}, {"b", decision("defer", "")}, {"c", decision("allow", "C")}}, "ask", "A", "a"},
		{"ask beats an earlier defer", []hook{{"a", decision("defer", "")}, {"b", decision("ask", "B")}}, "ask", "B", "b"},
		{"defer beats allow", []hook{{"a", decision("allow", "A")}, {"b", decision("defer", "")}}, "defer", "", "b"},
		{"deny beats all", []hook{{"a", decision("allow", "A")}, {"b", decision("defer", "")}, {"c", decision("deny", "C")}, {"d", decision("ask", "D")}}, "deny", "C", "c"},
		{"deny reasons joined in config order", []hook{{"a", decision("deny", "R1")}, {"b", decision("allow", "x")}, {"c", decision("deny", "R2")}}, "deny", "R1\nR2", "a"},
		{"exit 2 deny joins json deny", []hook{{"a", cmd(2, "", "E2\n")}, {"b", decision("deny", "R1")}}, "deny", "[./a.sh]: E2\nR1", "a"},
		{"errors never allow", []hook{{"a", RawOutput{Kind: Command, TimedOut: true, Stdout: []byte(allowPlain)}}, {"b", cmd(127, allowPlain, "sh: 1: x: not found")}}, "", "", ""},
	}
	ev := mustEvent(t, "PreToolUse")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mergeRender(ev, runHooks(t, ev, tt.hooks, nil))
			var gotDec, gotReason, gotHook string
			if p := res.HookPermission; p != nil {
				gotDec, gotReason, gotHook = p.Decision, p.Reason, p.Hook.ID
				if p.Source != "hook" || !reflect.DeepEqual(res.Permission, res.HookPermission) {
					t.Errorf("Permission = %+v, HookPermission = %+v", res.Permission, p)
				}
			}
			if gotDec != tt.wantDec || gotReason != tt.wantReason || gotHook != tt.wantHook {
				t.Errorf("got %q %q from %q, want %q %q from %q", gotDec, gotReason, gotHook, tt.wantDec, tt.wantReason, tt.wantHook)
			}
		})
	}
}

func TestMergeUpdatedInput(t *testing.T) {
	rewrite := func(d, cmd string) RawOutput {
		return preJSON(fmt.Sprintf(`,"permissionDecision":%q,"updatedInput":{"command":%q}`, d, cmd))
	}
	tests := []struct {
		name      string
		hooks     []hook
		want      string
		wantWarns []string
	}{
		{"single", []hook{{"a", rewrite("allow", "x")}}, `{"command":"x"}`, nil},
		{"first in config order wins", []hook{{"managed", rewrite("allow", "x")}, {"user", rewrite("allow", "y")}, {"project", rewrite("ask", "z")}},
			`{"command":"x"}`, []string{"conflicting updatedInput from user ignored", "conflicting updatedInput from project ignored"}},
		{"identical rewrites agree", []hook{{"a", rewrite("allow", "x")}, {"b", preJSON(`,"permissionDecision":"allow","updatedInput":{ "command" : "x" }`)}}, `{"command":"x"}`, nil},
		{"deny wins: no rewrite", []hook{{"a", rewrite("allow", "x")}, {"b", decision("deny", "no")}}, "", nil},
		{"exit 2 deny: no rewrite", []hook{{"a", rewrite("allow", "x")}, {"b", cmd(2, "", "no")}}, "", nil},
		{"ask with rewrite", []hook{{"a", rewrite("ask", "x")}, {"b", decision("allow", "")}}, `{"command":"x"}`, nil},
		// A defer's rewrite is never applied by Claude Code; now that an ask beats the
		// defer, the defer's rewrite must not ride along with the ask.
		{"defer rewrite never applies", []hook{{"a", rewrite("defer", "x")}, {"b", decision("ask", "B")}}, "", nil},
		{"ask rewrite beside a defer", []hook{{"a", rewrite("defer", "x")}, {"b", rewrite("ask", "y")}}, `{"command":"y"}`, nil},
		{"rewrite without a decision", []hook{{"a", preJSON(`,"updatedInput":{"command":"x"}`)}}, `{"command":"x"}`, nil},
	}
	ev := mustEvent(t, "PreToolUse")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mergeRender(ev, runHooks(t, ev, tt.hooks, nil))
			if got := string(res.UpdatedInput); got != tt.want {
				t.Errorf("UpdatedInput = %s, want %s", got, tt.want)
			}
			if len(res.Warnings) != len(tt.wantWarns) {
				t.Fatalf("Warnings = %q, want %q", res.Warnings, tt.wantWarns)
			}
			for i, w := range tt.wantWarns {
				if !strings.HasPrefix(res.Warnings[i], w) {
					t.Errorf("Warnings[%d] = %q, want prefix %q", i, res.Warnings[i], w)
				}
			}
		})
	}
	// A hand-built deny part that still carries an input is not a rewrite source.
	parts := []Interpretation{{Hook: ref("a"), Permission: "deny", UpdatedInput: json.RawMessage(`{"x":1}`)}}
	if res := mergeRender(ev, parts); res.UpdatedInput != nil {
		t.Errorf("deny part's updatedInput used: %s", res.UpdatedInput)
	}
}

func TestMergeContinueBlocksContexts(t *testing.T) {
	stop := mustEvent(t, "Stop")
	res := mergeRender(stop, runHooks(t, stop, []hook{
		{"a", cmd(0, `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"ctx-A"},"systemMessage":"M1"}`, "")},
		{"b", cmd(0, stopBlock, "")},
		{"c", cmd(0, `{"continue":false,"systemMessage":"M2"}`, "")},
		{"d", cmd(2, "", "SE\n")},
		{"e", cmd(0, `{"continue":false,"stopReason":"second"}`, "")},
		{"f", cmd(0, `{"continue":false,"stopReason":"third"}`, "")},
		{"g", cmd(0, `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"ctx-G"}}`, "")},
	}, []int{6, 3, 5, 0, 2, 4, 1}))
	if !res.PreventContinuation || res.StopReason != "second" {
		t.Errorf("PreventContinuation = %v, StopReason = %q; want true, %q", res.PreventContinuation, res.StopReason, "second")
	}
	wantBlock := &protocol.Block{Reason: "Tests are failing; fix them before stopping\n[./d.sh]: SE\n", Hook: &protocol.HookRef{ID: "b", Command: "./b.sh"}, Via: "json"}
	if !reflect.DeepEqual(res.Block, wantBlock) {
		t.Errorf("Block = %+v, want %+v", res.Block, wantBlock)
	}
	if want := []string{"ctx-A", "ctx-G"}; !reflect.DeepEqual(res.AdditionalContext, want) {
		t.Errorf("AdditionalContext = %q, want %q", res.AdditionalContext, want)
	}
	if want := []string{"M1", "M2"}; !reflect.DeepEqual(res.SystemMessages, want) {
		t.Errorf("SystemMessages = %q, want %q", res.SystemMessages, want)
	}
	var ids []string
	for _, h := range res.Hooks {
		ids = append(ids, h.Hook.ID+"="+h.Outcome)
	}
	if want := "a=ok b=blocked c=ok d=blocked e=ok f=ok g=ok"; strings.Join(ids, " ") != want {
		t.Errorf("Hooks = %v, want %s", ids, want)
	}

	// Only exit-2 blocks: Via exit2.
	res = mergeRender(stop, runHooks(t, stop, []hook{{"a", cmd(2, "", "one")}, {"b", cmd(2, "", "two\n")}}, nil))
	if res.Block.Via != "exit2" || res.Block.Reason != "[./a.sh]: one\n[./b.sh]: two\n" {
		t.Errorf("Block = %+v", res.Block)
	}
}

func TestMergeSpecific(t *testing.T) {
	ss := mustEvent(t, "SessionStart")
	out := func(fields string) RawOutput {
		return cmd(0, `{"hookSpecificOutput":{"hookEventName":"SessionStart"`+fields+`}}`, "")
	}
	res := mergeRender(ss, runHooks(t, ss, []hook{
		{"a", out(`,"sessionTitle":"A","watchPaths":["/1","/2"]`)},
		{"b", out(`,"sessionTitle":"B","watchPaths":["/2","/3"],"reloadSkills":true`)},
		{"c", out(`,"sessionTitle":"A"`)},
	}, []int{2, 1, 0}))
	want := map[string]json.RawMessage{"sessionTitle": json.RawMessage(`"A"`), "watchPaths": json.RawMessage(`["/1","/2","/3"]`), "reloadSkills": json.RawMessage(`true`)}
	if !reflect.DeepEqual(res.Specific, want) {
		t.Errorf("Specific = %s", mustJSON(res.Specific))
	}
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "conflicting sessionTitle from b ignored") {
		t.Errorf("Warnings = %q", res.Warnings)
	}

	post := mustEvent(t, "PostToolUse")
	cc := func(s string) RawOutput {
		return cmd(0, fmt.Sprintf(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","classifierContext":%q}}`, s), "")
	}
	res = mergeRender(post, runHooks(t, post, []hook{{"a", cc(strings.Repeat("a", 1500))}, {"b", cc(strings.Repeat("b", 1500))}}, nil))
	var got string
	_ = json.Unmarshal(res.Specific["classifierContext"], &got)
	if n := len([]rune(got)); n != 2000 || !strings.HasPrefix(got, "aaa") || !strings.Contains(got, "\nbbb") {
		t.Errorf("classifierContext: %d runes, %q...", n, got[:10])
	}
}

// TestMergeDeterministic: same hooks, any finish order, same bytes.
func TestMergeDeterministic(t *testing.T) {
	ev := mustEvent(t, "PreToolUse")
	hs := []hook{
		{"managed", preJSON(`,"permissionDecision":"allow","updatedInput":{"command":"A"},"additionalContext":"ctx-A"`)},
		{"user", preJSON(`,"additionalContext":"ctx-B","permissionDecision":"ask","permissionDecisionReason":"Q"`)},
		{"project", preJSON(`,"permissionDecision":"ask","permissionDecisionReason":"Q2","updatedInput":{"command":"C"}`)},
		{"local", cmd(1, "", "oops")},
		{"extra", cmd(0, `{"systemMessage":"S","hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx-E"}}`, "")},
	}
	var first []byte
	rng := rand.New(rand.NewSource(1))
	for range 20 {
		res := mergeRender(ev, runHooks(t, ev, hs, rng.Perm(len(hs))))
		again := mergeRender(ev, runHooks(t, ev, hs, nil))
		b1, b2 := mustJSON(res), mustJSON(again)
		if string(b1) != string(b2) {
			t.Fatalf("Merge not deterministic:\n%s\n%s", b1, b2)
		}
		if first == nil {
			first = b1
		} else if string(first) != string(b1) {
			t.Fatalf("finish order changed the result:\n%s\n%s", first, b1)
		}
	}
	res := mergeRender(ev, runHooks(t, ev, hs, nil))
	want := `{"systemMessage":"S","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"Q\nQ2","updatedInput":{"command":"A"},"additionalContext":"ctx-A\nctx-B\nctx-E"}}`
	if string(res.Output) != want {
		t.Errorf("Output =\n%s\nwant\n%s", res.Output, want)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestHonourDefer: for an unattended session (Claude Code -p / SDK, where a defer is
// honoured) the defer wins over an ask again; a deny still wins; nothing else changes.
func TestHonourDefer(t *testing.T) {
	ev := mustEvent(t, "PreToolUse")
	tests := []struct {
		name    string
		hooks   []hook
		changed bool
		want    string
	}{
		{"defer over ask", []hook{{"a", decision("ask", "A")}, {"b", decision("defer", "")}}, true, "defer"},
		{"deny stays", []hook{{"a", decision("deny", "D")}, {"b", decision("defer", "")}, {"c", decision("ask", "")}}, false, "deny"},
		{"ask alone stays", []hook{{"a", decision("ask", "A")}}, false, "ask"},
		{"defer alone stays", []hook{{"a", decision("defer", "")}}, false, "defer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := runHooks(t, ev, tt.hooks, nil)
			o := Merge(ev, parts)
			if got := HonourDefer(ev, o, parts); got != tt.changed {
				t.Fatalf("changed = %v, want %v", got, tt.changed)
			}
			res := Render(ev, o)
			if res.Permission.Decision != tt.want || !strings.Contains(string(res.Output), `"permissionDecision":"`+tt.want+`"`) {
				t.Fatalf("decision %s output %s, want %s", res.Permission.Decision, res.Output, tt.want)
			}
		})
	}
}

// mergeRender is the Merge of parts rendered, for tests of the answer's bytes.
func mergeRender(ev *Event, parts []Interpretation) *protocol.Result {
	return Render(ev, Merge(ev, parts))
}
