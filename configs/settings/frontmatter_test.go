package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/events"
)

const reviewerMD = `---
name: reviewer
description: Reviews code
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: ./guard.sh
  Stop:
    - hooks:
        - type: command
          command: ./stop.sh
          once: true
---
You review code.
`

const greetMD = "\ufeff---\nname: greet\ndescription: Greets\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - {type: command, command: ./pre.sh, once: true}\n        - type: command\n          command: sh\n          args: [\"${CLAUDE_PLUGIN_ROOT}/x.sh\", '${CLAUDE_PLUGIN_DATA}']\n  Stop:\n    - hooks:\n        - type: command\n          command: ./stop.sh\n---\nGreet: !`echo hi`\n"

func agentRef(path string) FileRef {
	return FileRef{Path: path, Kind: KindAgent, Frontmatter: &Frontmatter{Kind: KindAgent, Name: "file-name"}}
}

func skillRef(path, name string) FileRef {
	return FileRef{Path: path, Kind: KindSkill, Frontmatter: &Frontmatter{Kind: KindSkill, Name: name, Dir: filepath.Dir(path)}}
}

// TestFrontmatterAgent: a subagent's hooks are decoded strictly, named agent:<name> (the
// frontmatter's, not the file's), and its Stop is SubagentStop.
func TestFrontmatterAgent(t *testing.T) {
	f, err := ParseFile(agentRef("/p/.claude/agents/sub/rev.md"), []byte(reviewerMD), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Handlers) != 2 {
		t.Fatalf("handlers %d", len(f.Handlers))
	}
	pre, stop := f.Handlers[0], f.Handlers[1]
	if pre.Event.Name != "PreToolUse" || stop.Event.Name != "SubagentStop" {
		t.Errorf("events %s %s, want PreToolUse SubagentStop", pre.Event.Name, stop.Event.Name)
	}
	if pre.Label() != "agent:reviewer" || !strings.HasPrefix(pre.ID, "agent:reviewer:/p/.claude/agents/sub/rev.md#PreToolUse[0]") || pre.Ref().Source != "agent:reviewer" {
		t.Errorf("label %q id %q", pre.Label(), pre.ID)
	}
	if stop.Once {
		t.Errorf("once is honoured only in skills")
	}
	var onceWarned bool
	for _, w := range f.Warnings {
		onceWarned = onceWarned || strings.Contains(w.Field, "once")
	}
	if !onceWarned {
		t.Errorf("no warning for once in an agent: %v", f.Warnings)
	}
}

// TestFrontmatterErrors: errors point at the Markdown file's line and column; what
// Claude Code does not load as an agent has no hooks and says why.
func TestFrontmatterErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"bad timeout", "---\nname: r\ndescription: d\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: x\n          timeout: soon\n---\n", "/a.md:10:20: hooks.PreToolUse[0].hooks[0].timeout: must be a number"},
		{"no hooks array", "---\nname: r\ndescription: d\nhooks:\n  PreToolUse:\n    - matcher: Bash\n---\n", "/a.md:6:7: hooks.PreToolUse[0].hooks: missing"},
		{"yaml", "---\nname: r\ndescription: d\nhooks:\n  PreToolUse: [\n---\n", "/a.md:5:1: invalid YAML frontmatter"},
		{"top-level guard", "---\nname: r\ndescription: d\nPreToolUse:\n  - hooks: []\n---\n", "/a.md:5:3: PreToolUse: declared at the frontmatter's top level"},
		{"bad type", "---\nname: r\ndescription: d\nhooks:\n  Stop:\n    - hooks:\n        - type: shell\n          command: x\n---\n", "/a.md:7:17: hooks.Stop[0].hooks[0].type: unknown handler type"},
	} {
		_, err := ParseFile(agentRef("/a.md"), []byte(tc.doc), "")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want prefix %q", tc.name, err, tc.want)
		}
	}
	for _, doc := range []string{
		"---\ndescription: d\nhooks:\n  Stop:\n    - hooks:\n        - {type: command, command: x}\n---\n",            // no name
		"---\nname: a:b\ndescription: d\nhooks:\n  Stop:\n    - hooks:\n        - {type: command, command: x}\n---\n", // reserved ":"
		"---\nname: r\nhooks:\n  Stop:\n    - hooks:\n        - {type: command, command: x}\n---\n",                   // no description
	} {
		f, err := ParseFile(agentRef("/a.md"), []byte(doc), "")
		if err != nil || len(f.Handlers) != 0 || len(f.Warnings) != 1 || !f.Warnings[0].IsError() {
			t.Errorf("%q: %v %+v", doc, err, f)
		}
	}
	// No frontmatter, an empty one, a list: valid, no hooks.
	for _, doc := range []string{"just text\n", "---\n---\nbody\n", "---\n- a\n---\n", "--- not closed\n"} {
		if f, err := ParseFile(agentRef("/a.md"), []byte(doc), ""); err != nil || len(f.Handlers) != 0 {
			t.Errorf("%q: %v %+v", doc, err, f)
		}
	}
	// Claude Code's block ends at the first "---", even inside a line: the hooks below
	// it are not frontmatter.
	doc := "---\nname: r\ndescription: uses --- dashes\nhooks:\n  Stop:\n    - hooks:\n        - {type: command, command: x}\n---\n"
	if f, err := ParseFile(agentRef("/a.md"), []byte(doc), ""); err != nil || len(f.Handlers) != 0 {
		t.Errorf("a --- inside a line ends the frontmatter: %v %+v", err, f)
	}
	// Aliases expand, within bounds.
	bomb := "---\nname: r\ndescription: d\nx: &a [1,1,1,1,1,1,1,1,1,1]\nhooks:\n  Stop:\n    - hooks:\n        - {type: command, command: x}\n          \n"
	for i, prev := 0, "a"; i < 8; i++ {
		cur := string(rune('b' + i))
		bomb = strings.Replace(bomb, "hooks:\n", "y"+cur+": &"+cur+" [*"+prev+",*"+prev+",*"+prev+",*"+prev+",*"+prev+",*"+prev+",*"+prev+",*"+prev+",*"+prev+",*"+prev+"]\nhooks:\n", 1)
		prev = cur
	}
	bomb = strings.Replace(bomb, "command: x}", "command: x, statusMessage: *i}", 1) + "---\n"
	if _, err := ParseFile(agentRef("/a.md"), []byte(bomb), ""); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("alias bomb: %v", err)
	}
}

// TestFrontmatterLineBreaks: YAML also ends a line at a lone \r, NEL, LS and PS; the
// file has lines only at \n, and every position hookd reports is the file's (a fuzz find:
// a warning at line 4 of a 2-line file).
func TestFrontmatterLineBreaks(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"---\n\r\r- a\n---", "/a.md:2:3: the frontmatter is not a mapping"},
		{"---\r\n\r\n- a\r\n---", "/a.md:3:1: the frontmatter is not a mapping"},
		{"---\nx: 1\u2028\u2029- a\n---", "/a.md:2:6: invalid YAML frontmatter"},
		{"---\nx: \u0085y: [\n---", "/a.md:2:5: invalid YAML frontmatter"},
		{"---\nname: r\ndescription: d\nhooks:\r  Stop:\r    - hooks:\r        - {type: command, command: x, timeout: soon}\n---\n",
			"/a.md:4:76: hooks.Stop[0].hooks[0].timeout: must be a number"},
	} {
		f, err := ParseFile(agentRef("/a.md"), []byte(tc.doc), "")
		got := fmt.Sprint(err)
		if err == nil && len(f.Warnings) == 1 {
			got = f.Warnings[0].String()
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q: %s, want prefix %q", tc.doc, got, tc.want)
		}
	}
}

// TestFrontmatterSkill: a skill's hooks keep Stop, honour once, and run with
// CLAUDE_PLUGIN_ROOT = the skill's directory; ${CLAUDE_PLUGIN_DATA} fails to run.
func TestFrontmatterSkill(t *testing.T) {
	dir := "/p/.claude/skills/greet"
	f, err := ParseFile(skillRef(dir+"/SKILL.md", "greet"), []byte(greetMD), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Handlers) != 3 || f.Handlers[2].Event.Name != "Stop" || !f.Handlers[0].Once || f.Handlers[1].Once {
		t.Fatalf("handlers %+v", f.Handlers)
	}
	if l := f.Handlers[0].Label(); l != "skill:greet" {
		t.Errorf("label %q", l)
	}
	snap := Compile([]*File{f})
	pre, _ := events.Lookup("PreToolUse")
	if run, notRun := snap.Match(Query{Event: pre, MatchValue: "Bash", FromClaudeCode: true}); len(run)+len(notRun) != 0 {
		t.Errorf("a skill's hooks matched without the skill being invoked: %v %v", run, notRun)
	}
	// Without the drop-in, Claude Code runs them.
	run, notRun := snap.SkillMatch("greet", Query{Event: pre, MatchValue: "Bash", FromClaudeCode: true})
	if len(run) != 0 || len(notRun) != 2 || !snap.ClaudeCodeRuns(notRun[0]) {
		t.Errorf("native: run %v notRun %v", run, notRun)
	}
	if fm := snap.Skill("/greet"); fm == nil || fm.Name != "greet" || snap.Skill("other") != nil {
		t.Errorf("Skill lookup %v", fm)
	}
	ex := snap.Exec(f.Handlers[0])
	if len(ex.Env) != 1 || ex.Env[0] != "CLAUDE_PLUGIN_ROOT="+dir || ex.RunError != "" {
		t.Errorf("skill hook exec %+v", ex)
	}
	if ex := snap.Exec(f.Handlers[1]); !strings.Contains(ex.RunError, "only ${CLAUDE_PLUGIN_ROOT} is available for skill hooks") {
		t.Errorf("${CLAUDE_PLUGIN_DATA} in a skill hook: %+v", ex)
	}
}

// TestFrontmatterRouted: under hookd's managed drop-in hookd runs subagent and skill
// hooks — a subagent's only for its own events — and names none as running nowhere
// unless its event is not forwarded.
func TestFrontmatterRouted(t *testing.T) {
	drop, err := ParseFile(FileRef{Path: "/etc/claude-code/managed-settings.d/50-hookd.json", Kind: KindManaged},
		[]byte(`{"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/usr/bin/hookc"}]}], "SubagentStop": [{"hooks": [{"type": "command", "command": "/usr/bin/hookc"}]}], "Stop": [{"hooks": [{"type": "command", "command": "/usr/bin/hookc"}]}]}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	agent, err := ParseFile(agentRef("/p/.claude/agents/rev.md"), []byte(reviewerMD), "")
	if err != nil {
		t.Fatal(err)
	}
	skill, err := ParseFile(skillRef("/p/.claude/skills/greet/SKILL.md", "greet"), []byte(greetMD), "")
	if err != nil {
		t.Fatal(err)
	}
	snap := Compile([]*File{drop, agent, skill})
	if snap.RoutedBy == "" {
		t.Fatal("not routed")
	}
	pre, _ := events.Lookup("PreToolUse")
	for _, tc := range []struct {
		agentType string
		want      int
	}{{"", 0}, {"reviewer", 1}, {"other", 0}} {
		run, notRun := snap.Match(Query{Event: pre, MatchValue: "Bash", FromClaudeCode: true, AgentType: tc.agentType})
		if len(run) != tc.want || len(notRun) != 0 {
			t.Errorf("agent %q: run %v notRun %v, want %d run", tc.agentType, run, notRun, tc.want)
		}
	}
	run, notRun := snap.SkillMatch("greet", Query{Event: pre, MatchValue: "Bash", FromClaudeCode: true})
	if len(run) != 2 || len(notRun) != 0 {
		t.Errorf("skill routed: run %v notRun %v", run, notRun)
	}
	if len(snap.RunNowhere) != 0 {
		t.Errorf("run nowhere: %v", snap.RunNowhere)
	}
	// A drop-in that does not forward Stop: the skill's Stop hook runs nowhere, and says so.
	drop2, _ := ParseFile(FileRef{Path: "/etc/claude-code/managed-settings.d/50-hookd.json", Kind: KindManaged},
		[]byte(`{"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/usr/bin/hookc"}]}]}}`), "")
	snap = Compile([]*File{drop2, agent, skill})
	var nowhere []string
	for _, w := range snap.RunNowhere {
		nowhere = append(nowhere, w.Message)
	}
	if len(nowhere) != 2 || !strings.Contains(strings.Join(nowhere, "\n"), "skill:greet") || !strings.Contains(strings.Join(nowhere, "\n"), "agent:reviewer") {
		t.Errorf("run nowhere %q", nowhere)
	}
}

// TestFrontmatterDiscovery: the files Claude Code reads subagents, skills and commands
// from, and their names.
func TestFrontmatterDiscovery(t *testing.T) {
	home := t.TempDir()
	proj := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ud := filepath.Join(home, ".claude")
	write(filepath.Join(ud, "agents", "deep", "er", "a.md"), "x")
	write(filepath.Join(ud, "agents", ".hidden.md"), "x")
	write(filepath.Join(ud, "skills", "u1", "SKILL.md"), "x")
	write(filepath.Join(ud, "skills", "nofile", "README.md"), "x")
	write(filepath.Join(proj, ".claude", "skills", "p1", "SKILL.md"), "x")
	write(filepath.Join(proj, ".claude", "commands", "fe", "component.md"), "x")
	write(filepath.Join(proj, ".claude", "commands", "top.md"), "x")
	write(filepath.Join(proj, ".claude", "commands", "sk", "SKILL.md"), "x")
	got := map[string]string{}
	for _, r := range (Sources{Home: home, ProjectDir: proj, NoPlugins: true}).FrontmatterFiles() {
		got[r.Frontmatter.Label()] = r.Path
	}
	for label, path := range map[string]string{
		"agent:a":              filepath.Join(ud, "agents", "deep", "er", "a.md"),
		"skill:u1":             filepath.Join(ud, "skills", "u1", "SKILL.md"),
		"skill:p1":             filepath.Join(proj, ".claude", "skills", "p1", "SKILL.md"),
		"command:fe:component": filepath.Join(proj, ".claude", "commands", "fe", "component.md"),
		"command:top":          filepath.Join(proj, ".claude", "commands", "top.md"),
		"skill:sk":             filepath.Join(proj, ".claude", "commands", "sk", "SKILL.md"),
	} {
		if got[label] != path {
			t.Errorf("%s: %q, want %q", label, got[label], path)
		}
	}
	if len(got) != 6 {
		t.Errorf("files %v", got)
	}
}

// FuzzFrontmatter: any agent or skill file either parses or fails with a FileError that
// names the file; it never panics, and a handler it yields has an event and a position
// inside the file.
func FuzzFrontmatter(f *testing.F) {
	for _, s := range []string{reviewerMD, greetMD, "---\nhooks: &a [*a]\n---\n", "---\na: [\n---\n", "---\nname: x\ndescription: y\nhooks:\n  Stop: {x: !!binary aGk=}\n---\n", "--- \n---\n"} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Add([]byte("---\nhooks: {Stop: [{hooks: [{type: command, command: x, timeout: 0x10}]}]}\n---\n"), false)
	f.Add([]byte("---\n\r\rx---"), true)
	f.Add([]byte("---\nhooks:\r  Stop: [\u2028---"), false)
	f.Fuzz(func(t *testing.T, data []byte, agent bool) {
		ref := skillRef("/p/.claude/skills/s/SKILL.md", "s")
		if agent {
			ref = agentRef("/p/.claude/agents/a.md")
		}
		file, err := ParseFile(ref, data, "")
		lines := strings.Count(string(data), "\n") + 1
		if err != nil {
			fe, ok := err.(*FileError)
			if !ok || fe.File != ref.Path {
				t.Fatalf("error %T %v does not name the file", err, err)
			}
			if fe.Line > lines || fe.Line > 0 && fe.Col < 1 {
				t.Fatalf("error at %d:%d of a %d-line file: %v", fe.Line, fe.Col, lines, err)
			}
			return
		}
		for _, h := range file.Handlers {
			if h.Event == nil || h.Frontmatter == nil {
				t.Fatalf("handler without event or source: %+v", h)
			}
		}
		for _, w := range file.Warnings {
			if w.Line > lines || w.Line > 0 && w.Col < 1 {
				t.Fatalf("warning at line %d of a %d-line file: %v", w.Line, lines, w)
			}
		}
		Compile([]*File{file})
	})
}
