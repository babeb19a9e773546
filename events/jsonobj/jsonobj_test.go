package jsonobj

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseKeepsOrderBytesAndDuplicates(t *testing.T) {
	o, err := Parse([]byte(`{"b": 1.50, "a": {"x" : "\u003c"}, "b": [1, 2]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.Keys(), []string{"b", "a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keys = %q, want %q", got, want)
	}
	// Values are the bytes as written: number spelling, escapes and inner whitespace.
	if got := string(o[0].Value); got != "1.50" {
		t.Errorf("first b = %s", got)
	}
	if got := string(o.Get("a")); got != `{"x" : "\u003c"}` {
		t.Errorf("a = %s", got)
	}
	// The last occurrence wins, as in JSON.parse and encoding/json.
	if got := string(o.Get("b")); got != "[1, 2]" {
		t.Errorf("Get(b) = %s, want the last occurrence", got)
	}
	if v, ok := o.Lookup("zz"); ok || v != nil || o.Get("zz") != nil || o.Has("zz") {
		t.Error("an absent key is found")
	}
	for _, bad := range []string{`[1]`, `"s"`, `{"a":}`, ``, `{"a" 1}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestSetReplacesEveryOccurrenceInPlace(t *testing.T) {
	o, _ := Parse([]byte(`{"a":1,"b":2,"a":3,"c":4}`))
	got := string(o.Set("a", "x").JSON())
	if want := `{"a":"x","b":2,"c":4}`; got != want {
		t.Errorf("Set = %s, want %s (first position, later occurrences dropped)", got, want)
	}
	if got := string(o.Without("a").JSON()); got != `{"b":2,"c":4}` {
		t.Errorf("Without = %s", got)
	}
	if got := string(o.Set("d", true).JSON()); got != `{"a":1,"b":2,"a":3,"c":4,"d":true}` {
		t.Errorf("Set new key = %s", got)
	}
}

// Set, SetRaw, Without and Merge never change the object they are called on, even when
// its backing array has room to spare.
func TestEditsDoNotAlias(t *testing.T) {
	base := make(Object, 0, 8)
	base = base.SetRaw("a", json.RawMessage(`1`)).SetRaw("b", json.RawMessage(`2`))
	before := string(base.JSON())
	x := base.Set("a", 10)
	y := base.Set("c", 30)
	_ = base.Without("b")
	_ = base.Merge(Object{{Key: "a", Value: json.RawMessage(`99`)}})
	if got := string(base.JSON()); got != before {
		t.Errorf("base changed to %s", got)
	}
	if string(x.JSON()) != `{"a":10,"b":2}` || string(y.JSON()) != `{"a":1,"b":2,"c":30}` {
		t.Errorf("x = %s, y = %s", x.JSON(), y.JSON())
	}
}

func TestMergeIsObjectSpread(t *testing.T) {
	base, _ := Parse([]byte(`{"command":"ls","timeout":5}`))
	over, _ := Parse([]byte(`{"timeout":9,"description":"d"}`))
	if got, want := string(base.Merge(over).JSON()), `{"command":"ls","timeout":9,"description":"d"}`; got != want {
		t.Errorf("Merge = %s, want %s", got, want)
	}
}

func TestEncodingIsNotHTMLEscaped(t *testing.T) {
	o := Object{}.Set("reason", "[echo E2 >&2; exit 2] <b>").Set("a&b", 1).SetRaw("raw", json.RawMessage(`{ "k" : "v" }`))
	want := `{"reason":"[echo E2 >&2; exit 2] <b>","a&b":1,"raw":{ "k" : "v" }}`
	if got := string(o.JSON()); got != want {
		t.Errorf("JSON = %s\nwant   %s", got, want)
	}
	// As a value of other JSON it is compacted, as encoding/json does with any Marshaler.
	nested := Object{}.Set("o", o)
	if got := string(nested.Get("o")); got != `{"reason":"[echo E2 >&2; exit 2] <b>","a&b":1,"raw":{"k":"v"}}` {
		t.Errorf("nested = %s", got)
	}
	if got := string(Marshal(json.RawMessage(" [1, 2] "))); got != "[1,2]" {
		t.Errorf("Marshal(RawMessage) = %q", got)
	}
	if got := string(Compact([]byte(`{ "a" : [ 1 ] }`))); got != `{"a":[1]}` {
		t.Errorf("Compact = %q", got)
	}
	if got := string(Compact([]byte(`{bad`))); got != `{bad` {
		t.Errorf("Compact(invalid) = %q, want it unchanged", got)
	}
}

func TestMarshalPanicsOnProgramErrors(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Marshal of a channel did not panic")
		}
	}()
	Marshal(make(chan int))
}

// FuzzParse: any input either fails to parse or gives an object whose encoding is valid
// JSON with the same members; for valid input without duplicate keys, the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":{"b":[1,"x"]},"c":null}`, `{"a":1,"a":2}`, ` { "k" : "\u00e9" } `,
		`[1]`, `{"a":`, `{"\ud800":1}`, `{"a":1}trailing`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := Parse(data)
		if err != nil {
			return
		}
		out := o.JSON()
		if !json.Valid(out) {
			t.Fatalf("JSON of parsed %q is invalid: %s", data, out)
		}
		again, err := Parse(out)
		if err != nil || !reflect.DeepEqual(again.Keys(), o.Keys()) {
			t.Fatalf("re-parse of %s: keys %q vs %q (%v)", out, again.Keys(), o.Keys(), err)
		}
		if !json.Valid(data) {
			return
		}
		var want, got any
		if json.Unmarshal(data, &want) != nil || json.Unmarshal(out, &got) != nil {
			t.Fatalf("unmarshal failed on valid input %q / %s", data, out)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("value changed: %q -> %s", data, out)
		}
	})
}
