package audit

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestMasker(t *testing.T) {
	secret := "API_KEY=hunter2"
	payload := `{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/p/.env","content":"` + secret + `"},` +
		`"edits":[{"old":"a","new":"` + secret + `"},{"old":"b","new":"` + secret + `"}],"n":12345678901234567890}`
	hash := "sha256:" + sha256Hex([]byte(secret))
	cases := []struct {
		name   string
		rules  []MaskRule
		max    int
		want   string // JSON the masked input must equal
		labels []string
	}{
		{"nothing", nil, 0, payload, nil},
		{"hash content", []MaskRule{{Path: "tool_input.content", Action: "hash"}}, 0,
			`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/p/.env","content":"` + hash + `"},` +
				`"edits":[{"old":"a","new":"` + secret + `"},{"old":"b","new":"` + secret + `"}],"n":12345678901234567890}`,
			[]string{"tool_input.content:hash"}},
		{"drop content", []MaskRule{{Path: "tool_input.content", Action: "drop"}}, 0,
			`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/p/.env"},` +
				`"edits":[{"old":"a","new":"` + secret + `"},{"old":"b","new":"` + secret + `"}],"n":12345678901234567890}`,
			[]string{"tool_input.content:drop"}},
		{"wildcard in array", []MaskRule{{Path: "edits.*.new", Action: "hash"}}, 0,
			`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/p/.env","content":"` + secret + `"},` +
				`"edits":[{"old":"a","new":"` + hash + `"},{"old":"b","new":"` + hash + `"}],"n":12345678901234567890}`,
			[]string{"edits.*.new:hash"}},
		{"index and drop element", []MaskRule{{Path: "edits.0", Action: "drop"}, {Path: "tool_input", Action: "drop"}}, 0,
			`{"hook_event_name":"PreToolUse","tool_name":"Write","edits":[{"old":"b","new":"` + secret + `"}],"n":12345678901234567890}`,
			[]string{"edits.0:drop", "tool_input:drop"}},
		{"hash an object", []MaskRule{{Path: "tool_input", Action: "hash"}}, 0, "", []string{"tool_input:hash"}},
		{"absent path", []MaskRule{{Path: "tool_input.nope", Action: "hash"}}, 0, payload, nil},
		{"cap", nil, 8, "", []string{"cap"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := newMasker(c.rules, c.max)
			if err != nil {
				t.Fatal(err)
			}
			got, labels := m.Input(json.RawMessage(payload))
			if strings.Join(labels, ",") != strings.Join(c.labels, ",") {
				t.Errorf("labels = %v, want %v", labels, c.labels)
			}
			if c.want != "" && !jsonEqual(t, got, c.want) {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestMaskerCap(t *testing.T) {
	m, _ := newMasker(nil, 64)
	long := strings.Repeat("é", 40) // 80 bytes
	got, labels := m.Input(json.RawMessage(`{"a":"` + long + `","b":"short"}`))
	var v map[string]string
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v["a"], strings.Repeat("é", 32)+"…[hookd: cut to 64 of 80 bytes, sha256:"+sha256Hex([]byte(long))) || v["b"] != "short" {
		t.Fatalf("capped = %q", v)
	}
	if len(labels) != 1 || labels[0] != "cap" {
		t.Fatalf("labels %v", labels)
	}
	// Many small fields: the whole input is summarised.
	big := `[` + strings.Repeat(`"0123456789",`, 40) + `"x"]`
	got, _ = m.Input(json.RawMessage(big))
	if !strings.Contains(string(got), `"hookd_capped":true`) || !strings.Contains(string(got), sha256Hex(mustCompact(big))) {
		t.Fatalf("summary = %s", got)
	}
}

func TestMaskerUpdatedInputAndCommand(t *testing.T) {
	m, err := newMasker([]MaskRule{
		{Path: "tool_input.content", Action: "hash"}, {Path: "updated_input.token", Action: "drop"},
		{Path: commandPath, Action: "hash"},
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, labels := m.UpdatedInput(json.RawMessage(`{"content":"secret","token":"t","file_path":"/x"}`))
	if !jsonEqual(t, got, `{"content":"sha256:`+sha256Hex([]byte("secret"))+`","file_path":"/x"}`) || len(labels) != 2 {
		t.Fatalf("updated = %s %v", got, labels)
	}
	cmd, sum := m.Command("./guard.sh --token xyz")
	if cmd != "" || sum != sha256Hex([]byte("./guard.sh --token xyz")) {
		t.Fatalf("command = %q %q", cmd, sum)
	}
}

// TestMaskBeforeWrite: the secret never reaches the file.
func TestMaskBeforeWrite(t *testing.T) {
	l := openLog(t, Options{Mask: []MaskRule{{Path: "tool_input.content", Action: "hash"}, {Path: commandPath, Action: "hash"}}})
	r := decision(1)
	r.Input = json.RawMessage(`{"tool_name":"Write","tool_input":{"file_path":"/x","content":"TOPSECRET"}}`)
	r.UpdatedInput = json.RawMessage(`{"file_path":"/x","content":"TOPSECRET2"}`)
	r.Hooks[0].Command = "./guard.sh --password TOPSECRET3"
	if err := l.Append(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, _ := os.ReadFile(l.Path())
	if strings.Contains(string(data), "TOPSECRET") {
		t.Fatalf("secret written: %s", data)
	}
	var got Record
	_ = json.Unmarshal(data, &got)
	if got.Hooks[0].CommandSHA256 == "" || len(got.Masked) != 2 {
		t.Fatalf("record %+v", got)
	}
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("masked output is not JSON: %s", got)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func mustCompact(s string) []byte {
	var v any
	_ = json.Unmarshal([]byte(s), &v)
	b, _ := marshal(v)
	return b
}
