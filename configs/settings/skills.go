package settings

// Skills' hooks are session-scoped: Claude Code 2.1.332 registers them when the skill is
// invoked and keeps them for the rest of the session, on the main thread's events only
// (probes fm-1 … fm-12, test/e2e/FINDINGS.md "Frontmatter hooks"). The snapshot knows a
// skill's hooks; which skills a session invoked is the daemon's to track
// (daemon/internal/skills).

func (s *Snapshot) addSkillHandler(h *Handler, notRun, native bool) {
	fm := h.Frontmatter
	if s.skills == nil {
		s.skills = map[string]*skillIndex{}
	}
	sk := s.skills[fm.Name]
	if sk == nil {
		sk = &skillIndex{fm: fm, byEvent: map[string]*eventIndex{}}
		s.skills[fm.Name] = sk
	}
	ix := sk.byEvent[h.Event.Name]
	if ix == nil {
		ix = &eventIndex{}
		sk.byEvent[h.Event.Name] = ix
	}
	// Each handler its own dedup key within the skill: a skill's hooks run as written.
	ix.cands = append(ix.cands, candidate{h: h, key: ix.nkeys, notRun: notRun, native: native})
	ix.nkeys++
}

// Skill returns the skill (or slash command) with frontmatter hooks that name invokes
// (Frontmatter.Invokes); nil when no such skill has hooks.
func (s *Snapshot) Skill(name string) *Frontmatter {
	if s == nil {
		return nil
	}
	if sk := s.skills[name]; sk != nil {
		return sk.fm
	}
	for _, sk := range s.skills {
		if sk.fm.Invokes(name) {
			return sk.fm
		}
	}
	return nil
}

// SkillMatch returns the hooks of skill name (Frontmatter.Name) that match q, like
// Match: run are hookd's to run, notRun are reported (Claude Code runs them itself, or
// hookd cannot). q.AgentType is not consulted: the caller decides which events a
// skill's hooks see (the main thread's).
func (s *Snapshot) SkillMatch(name string, q Query) (run, notRun []*Handler) {
	if s == nil || q.Event == nil || s.skills[name] == nil {
		return nil, nil
	}
	ix := s.skills[name].byEvent[q.Event.Name]
	if ix == nil {
		return nil, nil
	}
	value := q.MatchValue
	if q.Event.MatchBasename && value != "" {
		value = baseName(value)
	}
	return s.match(ix, value, q.Tool, q.FromClaudeCode, "")
}
