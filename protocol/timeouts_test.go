package protocol

import (
	"testing"
	"time"
)

func TestForwarderTimeout(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{
		600 * time.Second: 590 * time.Second, 630 * time.Second: 620 * time.Second,
		30 * time.Second: 27 * time.Second, 1500 * time.Millisecond: 1350 * time.Millisecond, 0: 0,
	} {
		if got := ForwarderTimeout(d); got != want {
			t.Errorf("ForwarderTimeout(%v) = %v, want %v", d, got, want)
		}
	}
	if s := FormatSeconds(1350 * time.Millisecond); s != "1.35s" {
		t.Errorf("FormatSeconds = %q", s)
	}
	if d, err := time.ParseDuration(FormatSeconds(590 * time.Second)); err != nil || d != 590*time.Second {
		t.Errorf("FormatSeconds does not round-trip: %v %v", d, err)
	}
}

func TestPeekEventName(t *testing.T) {
	for in, want := range map[string]string{
		`{"session_id":"s","hook_event_name" : "UserPromptSubmit","prompt":"x"}`: "UserPromptSubmit",
		`{"hook_event_name":"Stop"}`:       "Stop",
		`{"hook_event_name":3}`:            "",
		`{"hook_event_name":"a\"b"}`:       "",
		`{"prompt":"no name"}`:             "",
		`{"hook_event_name":"unterminated`: "",
	} {
		if got := PeekEventName([]byte(in)); got != want {
			t.Errorf("PeekEventName(%s) = %q, want %q", in, got, want)
		}
	}
}
