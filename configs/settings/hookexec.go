package settings

import "github.com/hookd/hookd/configs/settings/internal/plugin"

// HookExec is how one command handler runs under a snapshot: its command and exec-form
// arguments after the substitutions Claude Code makes for its source, the variables its
// source adds to the event's environment (CLAUDE_PLUGIN_ROOT, CLAUDE_PLUGIN_DATA,
// CLAUDE_PLUGIN_OPTION_<KEY>), or why it cannot run at all (RunError).
type HookExec = plugin.Exec

// Exec returns how h runs under this snapshot. For a hook of a settings file it is the
// handler as written.
func (s *Snapshot) Exec(h *Handler) HookExec {
	if s != nil {
		if e, ok := s.execs[h]; ok {
			return e
		}
	}
	return HookExec{Command: h.Command, Args: h.Args}
}

// hookExec computes Exec for a plugin's or a skill's command handler (observed with
// Claude Code 2.1.332: test/e2e probes plug-* and fm-*). A skill's hooks get its directory
// (a plugin's skill: the plugin's root) as CLAUDE_PLUGIN_ROOT; a subagent's nothing.
func (s *Snapshot) hookExec(h *Handler) HookExec {
	fm, p := h.Frontmatter, h.Plugin
	switch {
	case fm != nil && fm.Kind == KindAgent:
	case fm != nil && p != nil:
		return plugin.SkillExec(p.Root, h.Command, h.Args, h.CommandLine())
	case fm != nil:
		return plugin.SkillExec(fm.Dir, h.Command, h.Args, h.CommandLine())
	case p != nil:
		return p.Exec(s.pluginOptions[p.ID], h.Command, h.Args)
	}
	return HookExec{Command: h.Command, Args: h.Args}
}
