package events

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// goldenPayloads holds the stdin captured from real Claude Code 2.1.330
// (test/testdata/README.md has the provenance).
const goldenPayloads = "../test/testdata/payloads/claude-code-2.1.330"

func TestReplaceTopLevel(t *testing.T) {
	tests := []struct {
		name, payload, key, value, want string
	}{
		{"simple", `{"a":1,"tool_input":{"command":"ls"},"b":2}`, "tool_input", `{"command":"pwd"}`,
			`{"a":1,"tool_input":{"command":"pwd"},"b":2}`},
		{"whitespace kept", "{\n \"a\" : 1 ,\n \"tool_input\"\t:\t{ \"command\" : \"ls\" } ,\n \"b\":2\n}\n", "tool_input", `{"command":"pwd"}`,
			"{\n \"a\" : 1 ,\n \"tool_input\"\t:\t{\"command\":\"pwd\"} ,\n \"b\":2\n}\n"},
		{"value compacted", `{"tool_input":1}`, "tool_input", "{ \"x\" :\n [1, 2] }", `{"tool_input":{"x":[1,2]}}`},
		{"nested same key untouched", `{"x":{"tool_input":1},"tool_input":{"tool_input":2},"y":[{"tool_input":3}]}`, "tool_input", `"new"`,
			`{"x":{"tool_input":1},"tool_input":"new","y":[{"tool_input":3}]}`},
		{"key name inside strings", `{"s":"\"tool_input\":1,","tool_input":0,"t":"tool_input"}`, "tool_input", `true`,
			`{"s":"\"tool_input\":1,","tool_input":true,"t":"tool_input"}`},
		{"escaped key", `{"tool\u005finput":{"a":1}}`, "tool_input", `{}`, `{"tool\u005finput":{}}`},
		{"duplicate keys all replaced", `{"tool_input":1,"x":0,"tool_input":2}`, "tool_input", `3`, `{"tool_input":3,"x":0,"tool_input":3}`},
		{"last member", `{"a":"}","tool_input":[1,{"b":"]"}]}`, "tool_input", `null`, `{"a":"}","tool_input":null}`},
		{"absent appended", `{"a":1}`, "tool_input", `{"c":1}`, `{"a":1,"tool_input":{"c":1}}`},
		{"absent appended before trailing space", "{\"a\":1 \n}\n", "tool_input", `2`, "{\"a\":1,\"tool_input\":2 \n}\n"},
		{"absent in empty object", `{ }`, "tool_input", `2`, `{ "tool_input":2}`},
		{"absent key escaped", `{}`, `we"ird<`, `1`, `{"we\"ird\u003c":1}`},
		{"numbers kept as written", `{"n":1.50e+3,"tool_input":1,"m":-0}`, "tool_input", `2`, `{"n":1.50e+3,"tool_input":2,"m":-0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReplaceTopLevel([]byte(tt.payload), tt.key, json.RawMessage(tt.value))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			checkReplaced(t, []byte(tt.payload), tt.key, json.RawMessage(tt.value), got)
		})
	}
	for _, bad := range []struct{ payload, value string }{
		{`[1]`, `1`}, {`"s"`, `1`}, {`{"a":`, `1`}, {`{}`, `{`}, {`{}`, ``}, {``, `1`},
	} {
		if _, err := ReplaceTopLevel([]byte(bad.payload), "k", json.RawMessage(bad.value)); err == nil {
			t.Errorf("ReplaceTopLevel(%q, %q): no error", bad.payload, bad.value)
		}
	}
}

// TestReplaceTopLevelPayloads splices every real payload sample and checks that all bytes
// outside the replaced value are unchanged.
func TestReplaceTopLevelPayloads(t *testing.T) {
	files, _ := filepath.Glob(goldenPayloads + "/*.json")
	if len(files) == 0 {
		t.Fatalf("no payload samples in %s", goldenPayloads)
	}
	for _, f := range files {
		payload, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		value := json.RawMessage(`{"command":"echo rewritten","description":"x"}`)
		got, err := ReplaceTopLevel(payload, "tool_input", value)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		checkReplaced(t, payload, "tool_input", value, got)
		var top map[string]json.RawMessage
		_ = json.Unmarshal(payload, &top)
		i := bytes.Index(payload, []byte("\n \"tool_input\": "))
		if _, ok := top["tool_input"]; !ok || i < 0 {
			continue // no top-level tool_input (appended instead; checked above)
		}
		i += 2 // past "\n "
		start := i + len(`"tool_input": `)
		dec := json.NewDecoder(bytes.NewReader(payload[start:]))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
		rest := payload[start+int(dec.InputOffset()):]
		if !bytes.HasPrefix(got, payload[:start]) || !bytes.HasSuffix(got, rest) ||
			!bytes.Equal(got[start:len(got)-len(rest)], value) {
			t.Errorf("%s: bytes outside the value changed:\n%s", filepath.Base(f), got)
		}
	}
}

// checkReplaced: got is valid JSON whose decoded map is the original's with key replaced.
func checkReplaced(t testing.TB, payload []byte, key string, value json.RawMessage, got []byte) {
	t.Helper()
	if !json.Valid(got) {
		t.Fatalf("result is not valid JSON: %s", got)
	}
	var want, have map[string]any
	decode := func(b []byte, v *map[string]any) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(v); err != nil {
			t.Fatalf("decode %q: %v", b, err)
		}
	}
	decode(payload, &want)
	decode(got, &have)
	var v any
	d := json.NewDecoder(bytes.NewReader(value))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	// Decoding turns invalid UTF-8 in keys into U+FFFD; compare keys the same way.
	var k string
	kb, _ := json.Marshal(key)
	_ = json.Unmarshal(kb, &k)
	want[k] = v
	if !reflect.DeepEqual(have, want) {
		t.Fatalf("decoded result differs:\n got %v\nwant %v", have, want)
	}
}

func FuzzReplaceTopLevel(f *testing.F) {
	f.Add([]byte(`{"a":1,"tool_input":{"command":"ls"},"b":2}`), "tool_input", []byte(`{"command":"pwd"}`))
	f.Add([]byte("{\n \"tool_input\" : [1,\"]\"] }"), "tool_input", []byte(`"x"`))
	f.Add([]byte(`{"tool\u005finput":1,"tool_input":2}`), "tool_input", []byte(`null`))
	f.Add([]byte(`{}`), "k", []byte(`1`))
	f.Add([]byte(`{"s":"\"k\":1","k":{"k":{}}}`), "k", []byte(`[]`))
	payload, err := os.ReadFile(goldenPayloads + "/PreToolUse-Bash.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(payload, "tool_input", []byte(`{"command":"echo hi"}`))
	f.Fuzz(func(t *testing.T, payload []byte, key string, value []byte) {
		got, err := ReplaceTopLevel(payload, key, value)
		var obj map[string]json.RawMessage
		if !json.Valid(value) || json.Unmarshal(payload, &obj) != nil || obj == nil {
			if err == nil {
				t.Fatalf("no error for payload %q value %q", payload, value)
			}
			return
		}
		if err != nil {
			t.Fatalf("ReplaceTopLevel(%q, %q, %q): %v", payload, key, value, err)
		}
		checkReplaced(t, payload, key, value, got)
	})
}
