package syslog

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hookd/hookd/daemon/audit"
)

var rfc5424 = regexp.MustCompile(`^<(\d{1,3})>1 (\S+) (\S+) (\S+) (\d+) (\S+) (\[.*\]) \x{FEFF}(.*)$`)

func TestFormat(t *testing.T) {
	r := &audit.Record{Kind: audit.KindDecision, Time: time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC), Seq: 42,
		PrevHash: "ff", DecisionID: "01ABC", Event: "PreToolUse", ToolName: "Bash", Decision: "deny",
		Reason: `said "no" ] \ here`, Caller: &audit.Caller{UID: 1000, Client: "hookc"},
		Override: &audit.Override{HookDecision: "allow", Final: "deny", Rule: "Bash(rm:*)", List: "deny",
			Command: "rm f", Unresolved: "command name is not a literal: `$x`"}}
	line := []byte(`{"v":1,"kind":"decision","seq":42}`)
	msg := string(Format(audit.Entry{Record: r, Line: line}, Facilities["auth"], "host a", "hookd", 99, 8192))
	m := rfc5424.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("not RFC 5424: %q", msg)
	}
	if m[1] != "36" || m[2] != "2026-01-02T03:04:05.123456Z" || m[3] != "hosta" || m[4] != "hookd" || m[5] != "99" || m[6] != "decision" {
		t.Fatalf("header %q", m[1:7])
	}
	sd := m[7]
	for _, want := range []string{`[hookd@32473 `, `seq="42"`, `decision_id="01ABC"`, `decision="deny"`, `event="PreToolUse"`, `reason="said \"no\" \] \\ here"`,
		`override_rule="Bash(rm:*)"`, `override_command="rm f"`, "override_unresolved=\"command name is not a literal: `$x`\""} {
		if !strings.Contains(sd, want) {
			t.Errorf("SD %s lacks %s", sd, want)
		}
	}
	if m[8] != string(line) {
		t.Fatalf("MSG %q", m[8])
	}

	// Too long: header and SD stay, the JSON is cut on a character boundary, and the SD
	// says so.
	big := []byte(`{"x":"` + strings.Repeat("é", 5000) + `"}`)
	msg = string(Format(audit.Entry{Record: r, Line: big}, Facilities["local0"], "h", "hookd", 1, 1024))
	if len(msg) > 1024 || !utf8.ValidString(msg) {
		t.Fatalf("len %d valid %v", len(msg), utf8.ValidString(msg))
	}
	if m := rfc5424.FindStringSubmatch(msg); m == nil || !strings.Contains(m[7], `truncated="true"`) || m[1] != "132" {
		t.Fatalf("truncated message %q", msg[:200])
	}
}
