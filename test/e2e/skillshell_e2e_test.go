//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hookd/hookd/test/claudeapi"
)

// PreSkillShellCommand (Claude Code 2.1.332): a project skill "greet" whose body embeds
// shell lines, invoked by the user ("/greet") or by the model (the Skill tool). Natively and
// through hookd the same lines must run or not run, the model must read the same skill text
// ("[not run: blocked by hook: <reason>]" is compared as a hook text) and the user the same
// notices ("Not run in /greet: …"). Each line touches its own file, so "did it run" is a file
// check; one hook answers each line as the line's name says, so one session covers every
// answer (each session costs seconds of the suite's budget).

// skillLine is one embedded line: it creates ran-<Name> and prints <Name>-OUT.
type skillLine struct {
	Name string
	Ran  bool // must the line run?
}

func (l skillLine) command() string { return "touch ran-" + l.Name + " && echo " + l.Name + "-OUT" }

func skillBody(lines []skillLine) string {
	var b strings.Builder
	b.WriteString("---\nname: greet\ndescription: Say hello with markers\n---\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "%s: !`%s`\n", l.Name, l.command())
	}
	b.WriteString("Then say hi.\n")
	return b.String()
}

// skillAnswers is a hook body answering each line by its name.
const skillAnswers = `in=$(cat)
say() { printf '{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"%s","permissionDecisionReason":"R-%s"}}\n' "$1" "$1"; exit 0; }
case "$in" in
*ran-allow*) say allow ;;
*ran-deny*) say deny ;;
*ran-ask*) say ask ;;
*ran-defer*) say defer ;;
*ran-exit2*) echo E2 >&2; exit 2 ;;
*ran-block*) echo '{"decision":"block","reason":"DB"}' ;;
*ran-rewrite*) echo '{"hookSpecificOutput":{"hookEventName":"PreSkillShellCommand","permissionDecision":"allow","updatedInput":{"command":"echo other"}}}' ;;
*ran-prshape*) echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"M-pr"}}}' ;;
esac
exit 0`

func skillShellScenario(name, doc string, lines []skillLine, hooks []hook, counts map[string]int) *scenario {
	return &scenario{Name: name, Doc: doc, Hooks: hooks, Prompt: "/greet",
		Allow:  []string{"Bash(echo *)", "Bash(touch *)"},
		Script: []claudeapi.Turn{say("finished")},
		Counts: counts,
		Prepare: func(t *testing.T, w *world) {
			w.Write(t, filepath.Join(w.Proj, ".claude", "skills", "greet", "SKILL.md"), skillBody(lines), 0o644)
		},
		Check: func(t *testing.T, native, hookd *obs) { checkSkillShell(t, lines, native, hookd) },
	}
}

func init() {
	answers := []skillLine{{"allow", true}, {"deny", false}, {"ask", false}, {"defer", false}, {"exit2", false},
		{"block", false}, {"rewrite", false}, {"prshape", false}, {"nothing", true}}
	failures := []skillLine{{"timeout", true}, {"timeoutblock", false}, {"other", true}}
	byModel := skillShellScenario("skill-shell-model-invoked", "PreSkillShellCommand when the model invokes the skill (invoked_by claude)",
		[]skillLine{{"deny", false}, {"allow", true}}, []hook{{Name: "a", Event: "PreSkillShellCommand", Matcher: "Bash", Body: skillAnswers}},
		map[string]int{"a": 2})
	byModel.Prompt = ""
	byModel.Script = []claudeapi.Turn{{ToolName: "Skill", ToolInput: map[string]any{"skill": "greet"}}, say("finished")}
	scenarios = append(scenarios,
		skillShellScenario("skill-shell-answers", "PreSkillShellCommand: allow adds nothing; deny, ask, defer, exit 2, decision:block, updatedInput and a PermissionRequest-shaped deny keep a line from running",
			answers, []hook{{Name: "a", Event: "PreSkillShellCommand", Matcher: "Bash", Body: skillAnswers}},
			map[string]int{"a": len(answers)}),
		skillShellScenario("skill-shell-failures", "a PreSkillShellCommand hook that times out lets its line run, unless onFailure:block; the matcher is tool_name and `if` is evaluated",
			failures, []hook{
				{Name: "slow", Event: "PreSkillShellCommand", Matcher: "Bash", If: "Bash(touch ran-timeout)", Timeout: 1, Body: "sleep 4\n" + emit("", "", 0)},
				{Name: "slowblock", Event: "PreSkillShellCommand", Matcher: "Bash", If: "Bash(touch ran-timeoutblock)", Timeout: 1, OnFailure: "block", Body: "sleep 4\n" + emit("", "", 0)},
				{Name: "ps", Event: "PreSkillShellCommand", Matcher: "PowerShell", Body: emit(`{"decision":"block","reason":"never"}`, "", 0)},
			}, map[string]int{"slow": 1, "slowblock": 1}),
		byModel,
	)
}

// checkSkillShell: each line ran in both modes or in neither, as the scenario says, and the
// user saw the same skill_shell_hook notices.
func checkSkillShell(t *testing.T, lines []skillLine, native, hookd *obs) {
	t.Helper()
	for mode, o := range map[string]*obs{"native": native, "hookd": hookd} {
		for _, l := range lines {
			_, err := os.Stat(filepath.Join(o.root, "proj", "ran-"+l.Name))
			if got := err == nil; got != l.Ran {
				t.Errorf("%s: the skill's line %s ran = %v, want %v", mode, l.Name, got, l.Ran)
			}
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
	for _, l := range lines {
		if !l.Ran && len(hn) == 0 {
			t.Errorf("line %s was blocked but no skill shell notice came: the check compares nothing", l.Name)
			break
		}
	}
}

// skillNotices are the warnings Claude Code prints about a skill's shell lines (stream-json
// system records tagged skill_shell_hook), with the scratch root replaced, sorted (lines
// are checked concurrently; their notices come in finish order).
func skillNotices(o *obs) []string {
	var out []string
	for _, m := range o.stream {
		if m["type"] == "system" && m["tag"] == "skill_shell_hook" {
			out = append(out, strings.ReplaceAll(str(m["content"]), o.root, "$ROOT"))
		}
	}
	sort.Strings(out)
	return out
}
