package lite_test

import (
	"bytes"
	"encoding/json"
	"github.com/hookd/hookd/events"
	"reflect"
	"strings"
	"testing"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/protocol/lite"
)

// The oracle: what hookc decoded with encoding/json before lite existed (protocol's
// peekFrame head, and hookc's resultLine).
type head struct {
	Type  protocol.FrameType `json:"type"`
	Error *protocol.Error    `json:"error"`
}

type resultLine struct {
	Result *struct {
		DecisionID string          `json:"decision_id"`
		Revision   string          `json:"revision"`
		Output     json.RawMessage `json:"output"`
		Stdout     string          `json:"stdout"`
		Stderr     string          `json:"stderr"`
		ExitCode   int             `json:"exit_code"`
	} `json:"result"`
}

func checkAnswer(t *testing.T, line []byte) {
	t.Helper()
	got := lite.DecodeAnswer(line)
	var h head
	herr := json.Unmarshal(line, &h)
	if got.Head != (herr == nil) {
		t.Fatalf("%q: Head %v, encoding/json error %v", line, got.Head, herr)
	}
	if herr == nil {
		if got.Type != string(h.Type) {
			t.Fatalf("%q: type %q, encoding/json %q", line, got.Type, h.Type)
		}
		if (got.Error == nil) != (h.Error == nil) {
			t.Fatalf("%q: error %+v, encoding/json %+v", line, got.Error, h.Error)
		}
		if h.Error != nil && (got.Error.Code != h.Error.Code || got.Error.Message != h.Error.Message ||
			got.Error.Event != h.Error.Event || got.Error.Field != h.Error.Field || got.Error.Error() != h.Error.Error()) {
			t.Fatalf("%q: error %+v, encoding/json %+v", line, got.Error, h.Error)
		}
	}
	var rl resultLine
	rerr := json.Unmarshal(line, &rl)
	if rerr != nil || rl.Result == nil {
		if got.Result != nil {
			t.Fatalf("%q: result %+v, encoding/json none (%v)", line, got.Result, rerr)
		}
		return
	}
	r := rl.Result
	if got.Result == nil {
		t.Fatalf("%q: no result, encoding/json %+v", line, r)
	}
	g := got.Result
	if g.DecisionID != r.DecisionID || g.Revision != r.Revision || !bytes.Equal(g.Output, r.Output) ||
		g.Stdout != r.Stdout || g.Stderr != r.Stderr || g.ExitCode != r.ExitCode {
		t.Fatalf("%q: result %+v, encoding/json %+v", line, g, r)
	}
}

var answerSeeds = []string{
	`{"type":"result","v":1,"result":{"decision_id":"01J","event":"PreToolUse","revision":"abcdef0123456789","output":{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}},"stdout":"x","stderr":"e\n","exit_code":2,"hooks":[{"a":[1,2.5e3,-0,true,false,null]}]}}`,
	`{"type":"error","v":1,"error":{"code":"unsupported_version","message":"m \"q\" \u00e9 \ud83d\ude00 \ud800 x","event":"E","field":"v"}}`,
	`{"type":"error"}`, `{"type":"error","error":null}`, `{"type":"error","error":{}}`, `{"type":"result","result":{}}`,
	`{"type":"result","result":null}`, `{"TYPE":"result","Result":{"EXIT_CODE":1,"ſtdout":"long s","\u212a":"kelvin"}}`,
	`{"type":"result","result":{"stdout":"a"},"result":{"stderr":"b"}}`, `{"type":"result","result":{"stdout":"a"},"result":null}`,
	`{"type":"result","result":{"exit_code":1.5}}`, `{"type":"result","result":{"exit_code":1e2}}`, `{"type":"result","result":{"exit_code":"1"}}`,
	`{"type":"result","result":{"exit_code":99999999999999999999}}`, `{"type":"result","result":{"exit_code":-0,"output":null}}`,
	`{"type":5}`, `{"type":"message","kind":"started"}`, `null`, `[]`, `"s"`, `1`, ``, ` `, `{`, `{"a":}`, `{"a":1,}`, `{"a" 1}`,
	`{"type":"result","result":{}} x`, "{\"type\":\"res\x01ult\"}", `{"type":"\x"}`, `{"type":"\u12"}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`,
	`{"a":tru}`, `{"a":nul}`, "{\"s\":\"\xff\xfe\"}", `{"result":[1],"type":"result"}`, `{"error":"x","type":"error"}`,
	`{"type":"result","result":{"output":  {"a" : [ 1 , 2 ] }  ,"stdout":null}}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"type":"result","result":{"output":` + strings.Repeat(`{"a":`, 9998) + `1` + strings.Repeat(`}`, 9998) + `}}`,
	`{"type":"result","result":{"output":` + strings.Repeat(`{"a":`, 9999) + `1` + strings.Repeat(`}`, 9999) + `}}`,
}

func TestDecodeAnswerMatchesEncodingJSON(t *testing.T) {
	for _, s := range answerSeeds {
		checkAnswer(t, []byte(s))
	}
}

// FuzzDecodeAnswer checks the decoder of the daemon's answer against encoding/json:
// the same lines accepted, the same values read.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkAnswer(t, line) })
}

// FuzzEventName checks lite.EventName against protocol.EventName (encoding/json).
func FuzzEventName(f *testing.F) {
	for _, s := range append(answerSeeds, `{"hook_event_name":"PreToolUse"}`, `{"HOOK_EVENT_NAME":"x","hook_event_name":null}`,
		`{"hook_event_name":1}`, `{"hook_event_name":"a\nb"}`, `{"x":{"hook_event_name":"inner"}}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		if got, want := lite.EventName(payload), protocol.EventName(payload); got != want {
			t.Fatalf("EventName(%q) = %q, encoding/json %q", payload, got, want)
		}
	})
}

// FuzzFailClosed checks that lite's fail-closed answer renders byte for byte as
// events.FailClosed's (whose PermissionRequest deny is json.Marshal'd).
func FuzzFailClosed(f *testing.F) {
	for _, s := range []string{"", "hookc: x", "<a & b>\n\t\b\f\x00 é \u2028 \xff"} {
		f.Add("PermissionRequest", s)
		f.Add("PreToolUse", s)
	}
	f.Fuzz(func(t *testing.T, event, reason string) {
		var o1, e1, o2, e2 bytes.Buffer
		c1 := lite.FailClosed(event, reason).Render(&o1, &e1)
		c2 := events.FailClosed(event, reason).Render(&o2, &e2)
		if c1 != c2 || o1.String() != o2.String() || e1.String() != e2.String() {
			t.Fatalf("FailClosed(%q, %q): lite %d %q %q, protocol %d %q %q", event, reason, c1, o1.String(), e1.String(), c2, o2.String(), e2.String())
		}
	})
}

func TestAppendEventRequestMatchesProtocol(t *testing.T) {
	for _, r := range []lite.EventRequest{
		{EventText: "{\n \"hook_event_name\": \"Stop\"\n}\n", Env: []string{"A=1", "Q=\"quoted\" \\ back", "U=é\u2028\x01\b\f<>&"}, ProjectDir: "/p", Client: "hookc", ResultOnly: true},
		{EventText: "bad utf8 \xff\xfe", ResultOnly: true},
		{EventText: "{}", Harness: protocol.HarnessGemini, Client: "hookc"},
		{EventText: strings.Repeat("x\"", 40000), Env: []string{strings.Repeat("E=", 3000)}, Client: "c"},
		{},
	} {
		got := lite.AppendEventRequest(nil, &r)
		want := protocol.AppendRequest(nil, &protocol.Request{V: protocol.Version, EventText: r.EventText, Env: r.Env,
			ProjectDir: r.ProjectDir, Harness: r.Harness, Options: protocol.Options{Client: r.Client, ResultOnly: r.ResultOnly}})
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendEventRequest:\n got %q\nwant %q", got, want)
		}
		var a, b protocol.Request
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatal(err)
		}
		wb, _ := json.Marshal(&protocol.Request{V: protocol.Version, EventText: r.EventText, Env: r.Env,
			ProjectDir: r.ProjectDir, Harness: r.Harness, Options: protocol.Options{Client: r.Client, ResultOnly: r.ResultOnly}})
		_ = json.Unmarshal(wb, &b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("decodes unlike json.Marshal: %s vs %s", got, wb)
		}
	}
}

func TestPeekEventNameAndTimeoutsMatchProtocol(t *testing.T) {
	for _, p := range []string{`{"hook_event_name":"UserPromptSubmit"}`, `{ "hook_event_name" : "SessionEnd" }`, `{"hook_event_name":"a\"b"}`, `{"hook_event_name":1}`, `x`, `{"hook_event_name":"unterminated`} {
		if g, w := lite.PeekEventName([]byte(p)), protocol.PeekEventName([]byte(p)); g != w {
			t.Fatalf("PeekEventName(%q) = %q, protocol %q", p, g, w)
		}
	}
}

// TestRenderLeavesTheBufferAlone: Output is usually a slice of the answer frame it was
// decoded from; rendering it (with the newline a hook's stdout line ends with) must not
// write into the bytes after it.
func TestRenderLeavesTheBufferAlone(t *testing.T) {
	frame := []byte(`{"a":1}XYZ`)
	r := lite.Result{Output: frame[:7], Stderr: "why\n", ExitCode: 2}
	var out, errb bytes.Buffer
	if code := r.Render(&out, &errb); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
	if out.String() != "{\"a\":1}\n" || errb.String() != "why\n" {
		t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
	}
	if string(frame) != `{"a":1}XYZ` {
		t.Fatalf("Render wrote into the frame it was decoded from: %q", frame)
	}
}
