package settings

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/hookd/hookd/configs/internal/jsontree"
	"github.com/hookd/hookd/configs/settings/internal/frontmatter"
	"github.com/hookd/hookd/rules"
)

// Subagent and skill frontmatter hooks (issue 23). A Markdown file's YAML frontmatter may
// hold "hooks:" in the settings schema. Claude Code 2.1.332 registers them, as observed
// with the binary (test/e2e/probe_frontmatter_test.go, FINDINGS.md "Frontmatter hooks"):
//
//   - subagents (<user dir>/agents/**/*.md, <project>/.claude/agents/**/*.md; the type is
//     the frontmatter "name", the file name does not matter): when the subagent starts,
//     for the events of that subagent only (payloads with its agent_id / agent_type); a
//     frontmatter Stop becomes SubagentStop. Plugin agents' hooks are ignored (Claude Code
//     says so), so hookd does not read them.
//   - skills (<user dir>/skills/<name>/SKILL.md, <project>/.claude/skills/<name>/SKILL.md,
//     <plugin root>/skills/<name>/SKILL.md; the name is the directory's, a plugin's
//     "<plugin>:<dir>"): when the skill is invoked, for the rest of the session, on the
//     main thread's events (not inside subagents); Stop stays Stop; a hook with
//     "once": true is removed after its first successful run (see Handler.Once).
//     CLAUDE_PLUGIN_ROOT is the skill's directory.
//
// The frontmatter is found as Claude Code finds it: the file (byte order mark removed)
// starts with "---", and the block runs to the next "---" (its regular expression
// /^---\s*\n([\s\S]*?)---\s*\n?/ — even a "---" inside a line ends it). hookd decodes the
// hooks strictly, like a settings file, with errors at the Markdown file's line and
// column.

// Frontmatter names the subagent or skill a KindAgent or KindSkill file defines.
type Frontmatter struct {
	Kind Kind // KindAgent or KindSkill
	// Name is the agent type (the frontmatter "name") or the skill's name (its
	// directory; "<plugin>:<directory>" for a plugin's skill) — what payloads carry as
	// agent_type, and what invokes a skill (/name, the Skill tool's "skill", the
	// command_name of UserPromptExpansion and PreSkillShellCommand).
	Name string
	// Aliases are other names that invoke the same skill: its frontmatter "name" when
	// it differs from the directory's.
	Aliases []string
	// Dir is a skill's directory: CLAUDE_PLUGIN_ROOT for its hooks.
	Dir string
	// Plugin is the plugin a skill comes from (nil for user and project skills).
	Plugin *Plugin
	// Skills are the skills an agent preloads (its frontmatter "skills"): their hooks
	// are registered for the agent's own events when it starts.
	Skills []string
	// Command marks a slash command (<dir>/commands/**/*.md): registered like a skill
	// when invoked, without a directory of its own (no CLAUDE_PLUGIN_ROOT).
	Command bool
}

// Label is the source name of the frontmatter's hooks in status, validate and the audit
// record: "agent:<type>", "skill:<name>", "plugin:<name>@<marketplace>/skill:<dir>".
func (f *Frontmatter) Label() string {
	switch {
	case f.Kind == KindAgent:
		return "agent:" + f.Name
	case f.Plugin != nil:
		_, dir, _ := strings.Cut(f.Name, ":")
		return f.Plugin.Label() + "/skill:" + dir
	case f.Command:
		return "command:" + f.Name
	}
	return "skill:" + f.Name
}

// Invokes reports whether name (as a prompt's /name, the Skill tool's "skill", or a
// command_name carries it; a leading "/" is ignored) names this skill.
func (f *Frontmatter) Invokes(name string) bool {
	name = strings.TrimPrefix(strings.TrimSpace(name), "/")
	if name == "" {
		return false
	}
	if name == f.Name {
		return true
	}
	for _, a := range f.Aliases {
		if name == a {
			return true
		}
	}
	return false
}

// Kinds of frontmatter files.
const (
	KindAgent Kind = "agent" // a subagent definition (Markdown with YAML frontmatter)
	KindSkill Kind = "skill" // a skill's SKILL.md
)

// parseFrontmatterFile parses an agent or skill file: its frontmatter's hooks become the
// file's handlers. A file without frontmatter, or without "hooks", is valid and has none.
func parseFrontmatterFile(ref FileRef, data []byte) (*File, error) {
	sum := sha256.Sum256(data)
	f := &File{Ref: ref, Hash: hex.EncodeToString(sum[:]), Settings: &Settings{}}
	doc, ferr := frontmatter.Read(data, ref.Kind == KindAgent)
	if ferr != nil {
		msg := ferr.Msg
		if ferr.Field == "" {
			msg += fmt.Sprintf(" (Claude Code then loads the %s without any of its frontmatter, hooks included; hookd keeps the last good version)", ref.Kind)
		}
		return nil, &FileError{File: ref.Path, Field: ferr.Field, Line: ferr.Line, Col: ferr.Col, Err: fmt.Errorf("%s", msg)}
	}
	if doc.NotMapping != nil {
		f.Warnings = append(f.Warnings, Warning{File: ref.Path, Line: doc.NotMapping.Line, Col: doc.NotMapping.Col,
			Message: "the frontmatter is not a mapping (key: value pairs): Claude Code reads no fields from it"})
	}
	if !doc.Found || doc.NotMapping != nil {
		return f, nil
	}
	fm := *ref.Frontmatter
	if ref.Kind == KindAgent {
		if doc.Invalid != "" {
			w := Warning{File: ref.Path, Field: "name", Line: doc.At.Line, Col: doc.At.Col, Message: doc.Invalid}
			if doc.HasHooks {
				w.Level = LevelError
			}
			f.Warnings = append(f.Warnings, w)
			return f, nil
		}
		fm.Name, fm.Skills = doc.Name, doc.Skills
	} else if doc.Name != "" && fm.Plugin == nil && doc.Name != fm.Name {
		fm.Aliases = []string{doc.Name}
	}
	ref.Frontmatter = &fm
	f.Ref = ref
	if doc.Hooks == nil {
		return f, nil
	}
	d := &decoder{ref: ref, data: doc.Hooks, at: doc.Pos}
	d.origin = rules.Origin{File: ref.Path, Source: string(ref.Source()), Base: ref.base()}
	if ref.Kind == KindAgent {
		d.eventAlias = map[string]string{"Stop": "SubagentStop"} // Claude Code: "subagents trigger SubagentStop"
	}
	tree, dups, err := jsontree.Parse(d.data)
	if err != nil {
		return nil, &FileError{File: ref.Path, Field: "hooks", Err: err}
	}
	for _, dk := range dups {
		line, col := d.pos(dk.Off)
		d.warns = append(d.warns, Warning{File: ref.Path, Field: "hooks." + dk.Key, Line: line, Col: col, Message: "duplicate key; the last value wins"})
	}
	if err := d.hooks(tree, f.Settings, f); err != nil {
		return nil, err
	}
	for _, h := range f.Handlers {
		h.Frontmatter = &fm
	}
	d.lint(f)
	f.Warnings = append(f.Warnings, d.warns...)
	return f, nil
}
