package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelSwitchThroughDaemon: the captured PreModelSwitch payload, with a "[1m]"
// to_model, reaches the hook whose matcher names the model without the suffix; its deny
// comes back through hookc as PreToolUse-style JSON; a hook that times out refuses the
// switch. PostModelSwitch context comes back as additionalContext.
func TestModelSwitchThroughDaemon(t *testing.T) {
	e := NewEnv(t)
	deny := e.Script("deny.sh", `cat > "$0.stdin"; printf '{"hookSpecificOutput":{"hookEventName":"PreModelSwitch","permissionDecision":"deny","permissionDecisionReason":"no sonnet here"}}'`)
	slow := e.Script("slow.sh", "cat >/dev/null; sleep 30")
	ctx := e.Script("ctx.sh", `cat >/dev/null; printf '{"hookSpecificOutput":{"hookEventName":"PostModelSwitch","additionalContext":"switched"}}'`)
	e.WriteSettings("project", `{"hooks":{
		"PreModelSwitch":[{"matcher":"claude-sonnet-4-5","hooks":[{"type":"command","command":"`+deny+`"}]},
		                  {"matcher":"claude-haiku.*","hooks":[{"type":"command","command":"`+slow+`","timeout":1}]}],
		"PostModelSwitch":[{"matcher":"*","hooks":[{"type":"command","command":"`+ctx+`"}]}]}}`)
	e.Start()
	golden := func(name, toModel string) string {
		b, err := os.ReadFile(filepath.Join(GoldenPayloadDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), "/home/dev/proj", e.Project)
		s = strings.ReplaceAll(s, "/home/dev", e.Home)
		return strings.Replace(s, `"to_model":"claude-sonnet-4-5"`, `"to_model":"`+toModel+`"`, 1)
	}

	r := e.Hookc(golden("PreModelSwitch.json", "claude-sonnet-4-5[1m]"))
	h := hso(t, r)
	if r.Code != 0 || h["permissionDecision"] != "deny" || h["permissionDecisionReason"] != "no sonnet here" || h["hookEventName"] != "PreModelSwitch" {
		t.Fatalf("PreModelSwitch deny through hookc: exit %d %v", r.Code, h)
	}
	if got, _ := os.ReadFile(deny + ".stdin"); !strings.Contains(string(got), `"to_model":"claude-sonnet-4-5[1m]"`) {
		t.Errorf("the hook did not get the payload untouched: %s", got)
	}

	res, _ := e.Event(golden("PreModelSwitch.json", "claude-haiku-4-5"))
	if res.Permission == nil || res.Permission.Decision != "deny" || !strings.Contains(res.Permission.Reason, "did not respond before its timeout") {
		t.Fatalf("PreModelSwitch timeout: %+v", res.Permission)
	}

	r = e.Hookc(golden("PostModelSwitch.json", "claude-sonnet-4-5"))
	if h := hso(t, r); h["additionalContext"] != "switched" {
		t.Fatalf("PostModelSwitch context: %v", h)
	}
}
