//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/test/claudeapi"
)

// PreSkillShellCommand (Claude Code 2.1.332): a project skill "greet" with one embedded
// shell line (touch ran.txt && echo MARK-OUT), invoked by the user ("/greet") or by the
// model (the Skill tool). Natively and through hookd the same line must run or not run,
// the model must read the same skill text ("[not run: blocked by hook: <reason>]" is
// compared as a hook text) and the user the same notice ("Not run in /greet: …").

const greetSkill = "---\nname: greet\ndescription: Say hello with a marker\n---\nMarker: !`touch ran.txt && echo MARK-OUT`\nThen say hi.\n"

func skillShellHook(name, body string) hook {
	return hook{Name: name, Event: "PreSkillShellCommand", Matcher: "Bash", Body: body}
}

func skillDecide(decision, reason string) string {
	return `{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"` + decision + `","permissionDecisionReason":"` + reason + `"}}`
}

// skillShellScenario runs /greet with hooks; ran says whether the skill's line must run.
func skillShellScenario(name, doc string, ran bool, hooks ...hook) *scenario {
	counts := map[string]int{}
	for _, h := range hooks {
		if h.Command == "" {
			counts[h.Name] = 1
		}
	}
	return &scenario{Name: name, Doc: doc, Hooks: hooks, Prompt: "/greet",
		Allow:  []string{"Bash(echo *)", "Bash(touch *)"},
		Script: []claudeapi.Turn{say("finished")},
		Counts: counts,
		Prepare: func(t *testing.T, w *world) {
			w.Write(t, filepath.Join(w.Proj, ".claude", "skills", "greet", "SKILL.md"), greetSkill, 0o644)
		},
		Check: func(t *testing.T, native, hookd *obs) { checkSkillShell(t, ran, native, hookd) },
	}
}

var skillShellScenarios = []*scenario{
	skillShellScenario("skill-shell-allow", "PreSkillShellCommand allow: the line runs (allow adds nothing)", true,
		skillShellHook("a", emit(skillDecide("allow", "fine"), "", 0))),
	skillShellScenario("skill-shell-deny", "PreSkillShellCommand deny: the line does not run, the model reads the reason", false,
		skillShellHook("a", emit(skillDecide("deny", "R-deny"), "", 0))),
	skillShellScenario("skill-shell-ask", "PreSkillShellCommand ask blocks: a skill cannot wait for approval", false,
		skillShellHook("a", emit(skillDecide("ask", "R-ask"), "", 0))),
	skillShellScenario("skill-shell-exit2", "PreSkillShellCommand exit 2: the stderr is the reason, without the command", false,
		skillShellHook("a", emit("", "E2", 2))),
	skillShellScenario("skill-shell-rewrite", "PreSkillShellCommand updatedInput blocks", false,
		skillShellHook("a", emit(`{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"allow","updatedInput":{"command":"echo other"}}}`, "", 0))),
	skillShellScenario("skill-shell-timeout", "a PreSkillShellCommand hook that times out lets the line run", true,
		hook{Name: "slow", Event: "PreSkillShellCommand", Matcher: "Bash", Timeout: 1, Body: "sleep 4\n" + emit(skillDecide("deny", "late"), "", 0)}),
	skillShellScenario("skill-shell-timeout-onfailure", `... unless its handler says onFailure:"block"`, false,
		hook{Name: "slow", Event: "PreSkillShellCommand", Matcher: "Bash", Timeout: 1, OnFailure: "block", Body: "sleep 4\n" + emit("", "", 0)}),
	skillShellScenario("skill-shell-matcher-if", "the matcher is tool_name; `if` is evaluated", false,
		hook{Name: "ps", Event: "PreSkillShellCommand", Matcher: "PowerShell", Body: emit(skillDecide("deny", "never"), "", 0)},
		hook{Name: "rm", Event: "PreSkillShellCommand", Matcher: "Bash", If: "Bash(rm *)", Body: emit(skillDecide("deny", "never"), "", 0)},
		hook{Name: "touch", Event: "PreSkillShellCommand", Matcher: "Bash", If: "Bash(touch *)", Body: emit(skillDecide("deny", "no touching"), "", 0)}),
}

func init() {
	for _, sc := range skillShellScenarios {
		switch sc.Name {
		case "skill-shell-matcher-if":
			sc.Counts = map[string]int{"touch": 1} // ps and rm never run
		}
	}
	// The model invokes the skill (invoked_by "claude") instead of the user.
	byModel := skillShellScenario("skill-shell-deny-model-invoked", "PreSkillShellCommand deny when the model invokes the skill", false,
		skillShellHook("a", emit(skillDecide("deny", "R-deny"), "", 0)))
	byModel.Prompt = ""
	byModel.Script = []claudeapi.Turn{{ToolName: "Skill", ToolInput: map[string]any{"skill": "greet"}}, say("finished")}
	scenarios = append(scenarios, append(skillShellScenarios, byModel)...)
}

// checkSkillShell: the line ran in both modes or in neither, as the scenario says, and the
// user saw the same skill_shell_hook notices.
func checkSkillShell(t *testing.T, ran bool, native, hookd *obs) {
	t.Helper()
	for mode, o := range map[string]*obs{"native": native, "hookd": hookd} {
		_, err := os.Stat(filepath.Join(o.root, "proj", "ran.txt"))
		if got := err == nil; got != ran {
			t.Errorf("%s: the skill's shell line ran = %v, want %v", mode, got, ran)
		}
	}
	// "Ran anyway in /greet: … (hook timed out)" is Claude Code's notice about a hook of
	// its own that gave no verdict; through hookd the hook is hookd's and hookc answers
	// (docs/differences.md, like the hook_no_verdict warning on other events).
	var nn []string
	for _, n := range skillNotices(native) {
		if !strings.HasPrefix(n, "Ran anyway in ") {
			nn = append(nn, n)
		}
	}
	hn := skillNotices(hookd)
	if strings.Join(nn, "\n") != strings.Join(hn, "\n") {
		t.Errorf("skill shell notices differ:\n native %q\n hookd  %q", nn, hn)
	}
}

// skillNotices are the warnings Claude Code prints about a skill's shell lines (stream-json
// system records tagged skill_shell_hook), with the scratch root replaced.
func skillNotices(o *obs) []string {
	var out []string
	for _, m := range o.stream {
		if m["type"] == "system" && m["tag"] == "skill_shell_hook" {
			out = append(out, strings.ReplaceAll(str(m["content"]), o.root, "$ROOT"))
		}
	}
	return out
}
