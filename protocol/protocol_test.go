package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name, line  string
		code, field string // want error code and field; "" = success
	}{
		{"minimal event", `{"v":1,"event":{"hook_event_name":"Stop"}}`, "", ""},
		{"explicit op", `{"v":1,"op":"ping"}`, "", ""},
		{"env", `{"v":1,"event":{},"env":["A=1","PATH=/bin"]}`, "", ""},
		{"empty", ``, CodeBadRequest, ""},
		{"not json", `hello`, CodeBadRequest, ""},
		{"array", `[1,2]`, CodeBadRequest, ""},
		{"trailing", `{"v":1,"op":"ping"} {}`, CodeBadRequest, ""},
		{"no version", `{"event":{}}`, CodeUnsupportedVersion, "v"},
		{"future version", `{"v":2,"event":{}}`, CodeUnsupportedVersion, "v"},
		{"unknown op", `{"v":1,"op":"explode"}`, CodeBadRequest, "op"},
		{"missing event", `{"v":1}`, CodeBadRequest, "event"},
		{"null event", `{"v":1,"event":null}`, CodeBadRequest, "event"},
		{"string event", `{"v":1,"event":"x"}`, CodeBadRequest, "event"},
		{"bad env", `{"v":1,"event":{},"env":["NOEQUALS"]}`, CodeBadRequest, "env"},
		{"env wrong type", `{"v":1,"event":{},"env":"A=1"}`, CodeBadRequest, ""},
		{"unknown field", `{"v":1,"event":{},"surprise":1}`, CodeBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeRequest([]byte(tt.line))
			if tt.code == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if req.Op == "" {
					t.Fatal("op not defaulted")
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("want *Error %s, got %v", tt.code, err)
			}
			if pe.Code != tt.code || (tt.field != "" && pe.Field != tt.field) {
				t.Fatalf("got code %q field %q (%s), want %q %q", pe.Code, pe.Field, pe.Message, tt.code, tt.field)
			}
		})
	}
}

func TestEventBytesPreserved(t *testing.T) {
	ev := `{"zeta":1,"hook_event_name":"PreToolUse","tool_input":{"b":2,"a":[1,2]},"unknown_future_field":{"x":"\u00e9"}}`
	req, err := DecodeRequest([]byte(`{"v":1,"event":` + ev + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(req.Event) != ev {
		t.Fatalf("event bytes changed:\n got %s\nwant %s", req.Event, ev)
	}
}

func TestLineReader(t *testing.T) {
	in := "short\n" + strings.Repeat("x", 100) + "\nafter\r\nlast"
	lr := NewLineReader(strings.NewReader(in), 10)
	want := []struct {
		line string
		err  error
	}{{"short", nil}, {"", ErrLineTooLong}, {"after", nil}, {"last", nil}, {"", io.EOF}}
	for i, w := range want {
		got, err := lr.ReadLine()
		if !errors.Is(err, w.err) || (err == nil && string(got) != w.line) {
			t.Fatalf("line %d: got %q, %v; want %q, %v", i, got, err, w.line, w.err)
		}
	}
}

// TestLineReaderLimitBoundary: the limit counts the line without its terminator, the same
// for "\n", "\r\n" and a final line with no newline at all (which used to get one byte
// more than the others).
func TestLineReaderLimitBoundary(t *testing.T) {
	for _, c := range []struct {
		in      string
		tooLong bool
	}{
		{"abc\n", false}, {"abcd\n", true},
		{"abc\r\n", false}, {"abcd\r\n", true},
		{"abc", false}, {"abcd", true},
		{"abc\r", false}, {"abcd\r", true},
	} {
		line, err := NewLineReader(strings.NewReader(c.in), 3).ReadLine()
		if c.tooLong != errors.Is(err, ErrLineTooLong) || (!c.tooLong && (err != nil || len(line) != 3)) {
			t.Errorf("%q with limit 3: got %q, %v; want too long = %v", c.in, line, err, c.tooLong)
		}
	}
}

func TestLineReaderLongLineAcrossBuffers(t *testing.T) {
	big := strings.Repeat("y", 200<<10) // several bufio buffers
	lr := NewLineReader(strings.NewReader(big+"\nok\n"), 1<<20)
	got, err := lr.ReadLine()
	if err != nil || len(got) != len(big) {
		t.Fatalf("len %d err %v", len(got), err)
	}
	if got, _ := lr.ReadLine(); string(got) != "ok" {
		t.Fatalf("next line %q", got)
	}
}

func TestErrorIs(t *testing.T) {
	err := error(Errorf(CodeUnknownEvent, "unknown hook event %q", "X"))
	if !errors.Is(err, &Error{Code: CodeUnknownEvent}) {
		t.Fatal("errors.Is by code failed")
	}
	if errors.Is(err, &Error{Code: CodeBadRequest}) {
		t.Fatal("errors.Is matched the wrong code")
	}
	f := ErrorFrame("id1", errors.New("boom"))
	if f.Error.Code != CodeInternal || f.ID != "id1" || !f.Type.Terminal() {
		t.Fatalf("ErrorFrame = %+v", f)
	}
}

func TestRender(t *testing.T) {
	var out, errb bytes.Buffer
	r := &Result{Output: json.RawMessage(`{"continue":false}`), Stderr: "why", ExitCode: 2}
	if code := r.Render(&out, &errb); code != 2 || out.String() != "{\"continue\":false}\n" || errb.String() != "why" {
		t.Fatalf("render: %d %q %q", code, out.String(), errb.String())
	}
	out.Reset()
	r = &Result{Stdout: "/tmp/wt\n"}
	if code := r.Render(&out, &errb); code != 0 || out.String() != "/tmp/wt\n" {
		t.Fatalf("plain render: %d %q", code, out.String())
	}
}

func TestEventName(t *testing.T) {
	for in, want := range map[string]string{
		`{"hook_event_name":"Stop"}`: "Stop", `garbage`: "", `{"hook_event_name":7}`: "", `{}`: "",
	} {
		if got := EventName([]byte(in)); got != want {
			t.Errorf("EventName(%s) = %q, want %q", in, got, want)
		}
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"event":{"hook_event_name":"Stop"}}`, `{"v":1,"op":"ping"}`, `{"v":1,"event":{},"env":["A=1"]}`,
		`{"v":2}`, `[]`, `{"v":1,"event":"x"}`, `{"v":1,"event":{"a":[1,{"b":null}]},"options":{"result_only":true}}`, ``, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := DecodeRequest(line)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Code == "" || pe.Message == "" {
				t.Fatalf("error is not a coded *Error: %v", err)
			}
			return
		}
		if req.V != Version || req.Op == "" {
			t.Fatalf("accepted request with v=%d op=%q", req.V, req.Op)
		}
		if req.Op == OpEvent && (len(req.Event) == 0 || req.Event[0] != '{' || !json.Valid(req.Event)) {
			t.Fatalf("accepted event payload %q", req.Event)
		}
	})
}

// FuzzLineReader checks ReadLine against an oracle built from strings.SplitAfter: every
// line comes back in order, without its terminator, and exactly the lines longer than the
// limit are ErrLineTooLong, after which the stream stays in step.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\n"), 3)
	f.Add([]byte(strings.Repeat("z", 5000)+"\nq"), 100)
	f.Add([]byte("abcd"), 3)
	f.Add([]byte("abc\r\nabcd\r\n\r"), 3)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		var want [][]byte
		for _, l := range bytes.SplitAfter(in, []byte("\n")) {
			if len(l) > 0 {
				want = append(want, trimEOL(l))
			}
		}
		lr := NewLineReader(bytes.NewReader(in), max)
		for i, w := range want {
			line, err := lr.ReadLine()
			if len(w) > max {
				if !errors.Is(err, ErrLineTooLong) {
					t.Fatalf("line %d (%d bytes, limit %d): got %q, %v; want ErrLineTooLong", i, len(w), max, line, err)
				}
				continue
			}
			if err != nil || !bytes.Equal(line, w) {
				t.Fatalf("line %d (limit %d): got %q, %v; want %q", i, max, line, err, w)
			}
		}
		if line, err := lr.ReadLine(); err != io.EOF {
			t.Fatalf("after %d lines: got %q, %v; want io.EOF", len(want), line, err)
		}
	})
}

func TestEventTextPreservesBytes(t *testing.T) {
	ev := "{\n \"hook_event_name\": \"Stop\",\n \"x\": [1, 2]\n}\n"
	line, _ := json.Marshal(&Request{V: 1, EventText: ev})
	if bytes.Contains(line, []byte("\n")) {
		t.Fatal("encoded request spans lines")
	}
	req, err := DecodeRequest(line)
	if err != nil {
		t.Fatal(err)
	}
	if string(req.Event) != ev {
		t.Fatalf("event bytes changed: %q", req.Event)
	}
	for _, bad := range []string{`{"v":1,"event":{},"event_text":"{}"}`, `{"v":1,"event_text":"[1]"}`, `{"v":1,"event_text":"{"}`} {
		if _, err := DecodeRequest([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
