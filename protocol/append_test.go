package protocol

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestAppendRequestMatchesEncodingJSON(t *testing.T) {
	reqs := []*Request{
		{V: 1, EventText: "{\n \"hook_event_name\": \"Stop\"\n}\n", Env: []string{"A=1", "Q=\"quoted\" \\ back", "U=é\u2028\x01"}, ProjectDir: "/p", Options: Options{ResultOnly: true, Client: "hookc"}},
		{Op: OpPing},
		{V: 1, ID: "x", Event: json.RawMessage("{\n  \"a\": [1, 2],\n  \"s\": \"sp ace\\n\"\n}"), Options: Options{Client: "c"}},
		{V: 1, EventText: "bad utf8 \xff\xfe", Options: Options{ResultOnly: true}},
		{V: 1, EventText: "{}", Harness: HarnessGemini, HarnessVersion: "0.61.0", Options: Options{Client: "hookc"}},
	}
	for _, r := range reqs {
		got := AppendRequest(nil, r)
		if got[len(got)-1] != '\n' {
			t.Fatal("no trailing newline")
		}
		for _, c := range got[:len(got)-1] {
			if c == '\n' {
				t.Fatalf("encoded request spans lines: %q", got)
			}
		}
		var a, b Request
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("invalid JSON %q: %v", got, err)
		}
		want := *r
		if want.V == 0 {
			want.V = Version
		}
		wb, _ := json.Marshal(&want)
		_ = json.Unmarshal(wb, &b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("AppendRequest differs from json.Marshal:\n got %s\nwant %s", got, wb)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\", "\n\t\r\x00\x1f", "é日本\u2028", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		want, _ := json.Marshal(s)
		var a, b string
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("AppendString(%q) = %s: %v", s, got, err)
		}
		_ = json.Unmarshal(want, &b)
		if a != b {
			t.Fatalf("AppendString(%q) decodes to %q, json.Marshal to %q", s, a, b)
		}
	})
}
