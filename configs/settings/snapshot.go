package settings

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hookd/hookd/configs/settings/internal/plugin"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/rules"
)

// Snapshot is the compiled settings of one project: every file that contributed, the
// pooled permission rules, the resolved hook governance and, per event, the handlers in
// configuration order. It is immutable once built and safe for concurrent readers; the
// daemon swaps whole snapshots (atomic.Pointer) and never edits one.
type Snapshot struct {
	// Revision is sha256 over (path, hash) of every file used, in order; "" when no file
	// contributed.
	Revision string
	// Files are the files that contributed, in configuration order.
	Files []*File
	// Rules are the deny/ask/allow rules pooled from every file — only from managed
	// files when a managed file sets allowManagedPermissionRulesOnly.
	Rules *rules.Set

	// DisableAllHooks is disableAllHooks resolved by precedence (spec §7).
	DisableAllHooks bool
	// DisableManagedToo: the resolved true came from managed settings, so managed hooks
	// are off as well.
	DisableManagedToo bool
	// ManagedOnly: a managed file sets allowManagedHooksOnly; only managed hooks run.
	// A routing drop-in's own allowManagedHooksOnly (see RoutedBy) does not count: it
	// is there to stop Claude Code from running the hooks hookd runs.
	ManagedOnly bool
	// RoutedBy is the managed file through which Claude Code forwards events to hookd
	// (`hookd install claude-code --scope managed`): a managed file with a hookc
	// forwarder, in effect because allowManagedHooksOnly is set in managed settings.
	// Claude Code then runs only managed hooks — the forwarders and the admin's own —
	// and hookd runs the command and http hooks of every other file. "" otherwise.
	RoutedBy string
	// NotForwarded are the catalogue events, sorted, for which no routing file (see
	// RoutedBy) has a forwarder: under the drop-in Claude Code neither runs the user,
	// project and local hooks of these events nor sends them to hookd. nil when RoutedBy
	// is "". The installer's drop-in leaves out FileChanged, WorktreeCreate and
	// WorktreeRemove (configs/install.ManagedForwarding).
	NotForwarded []string
	// RunNowhere are findings, one per hook, on the hooks of NotForwarded events in
	// non-managed files: nothing runs them while the drop-in is in effect.
	RunNowhere []Warning
	// Managed is which managed channel is in effect and which managed files Claude Code
	// (and so hookd) skips: an MDM profile wins over managed-settings.json and its
	// drop-ins unless it sets "managedSourcesBehavior": "merge" (chooseManaged).
	Managed ManagedChoice
	// ManagedRulesOnly: a managed file sets allowManagedPermissionRulesOnly.
	ManagedRulesOnly bool

	// AllowedHTTPURLs is allowedHttpHookUrls merged across files; it applies only when
	// AllowedHTTPURLsSet (an empty list then blocks every HTTP hook).
	AllowedHTTPURLs    []string
	AllowedHTTPURLsSet bool
	// HTTPAllowedEnvVars is httpHookAllowedEnvVars merged across files; when
	// HTTPAllowedEnvVarsSet it further limits header interpolation (see EnvVarsFor).
	HTTPAllowedEnvVars    []string
	HTTPAllowedEnvVarsSet bool

	// Env is "env" merged by precedence (a higher file's value for a name wins).
	Env map[string]string

	// Warnings are every file's warnings, in configuration order.
	Warnings []Warning

	// Plugins are the installed plugins whose hook files contributed (KindPlugin files),
	// by id; PluginEnabled says which are enabled.
	Plugins map[string]*Plugin
	// enabled is enabledPlugins resolved by precedence; forced the managed true values.
	enabled, forced map[string]bool
	// pluginOptions are pluginConfigs' options merged by precedence, as strings.
	pluginOptions map[string]map[string]string
	// execs is Exec for the command handlers of plugins and skills.
	execs map[*Handler]HookExec
	// skills are the skills (and commands) with frontmatter hooks, by name.
	skills map[string]*skillIndex

	all     []*Handler
	byEvent map[string]*eventIndex
	// harness: a harness's own hooks (harness.go), by harness and its event name, in
	// configuration order; harnessOff: the names and commands each harness skips.
	harness    map[string]map[string][]*Handler
	harnessOff map[string]map[string]bool
	reasons    map[*Handler]string
	native     map[*Handler]string // see ClaudeCodeRuns; the reason for ReasonFor
	urlGlobs   []urlGlob
}

// ReasonClaudeCodeRuns is the reason a managed hook is not run by hookd for an event
// Claude Code sent (Query.FromClaudeCode); the audit record carries it.
const ReasonClaudeCodeRuns = "run by Claude Code: managed hook (Claude Code runs the hooks of its managed settings files itself; hookd runs them only for events Claude Code did not send)"

// ReasonClaudeCodeRunsFile is the same for a hook of a user, project or local settings
// file that no install has moved into hookd's file beside it, without a routing drop-in.
const ReasonClaudeCodeRunsFile = "run by Claude Code: this settings file's hooks were not moved by `hookd install claude-code` (Claude Code runs them itself; hookd runs them only for events Claude Code did not send)"

// PluginEnabled reports whether plugin id is enabled: enabledPlugins of the settings
// files, the highest-precedence file that names it deciding, a managed true winning
// over everything (a force-enable), as in Claude Code (spec §7).
func (s *Snapshot) PluginEnabled(id string) bool { return s != nil && (s.forced[id] || s.enabled[id]) }

// PluginForced reports whether managed settings force-enable plugin id: its hooks then
// run under allowManagedHooksOnly too (Claude Code 2.1.101).
func (s *Snapshot) PluginForced(id string) bool { return s != nil && s.forced[id] }

// eventIndex is one event's precompiled handler list.
type eventIndex struct {
	all   []*Handler  // every handler of the event, configuration order
	cands []candidate // those that can run under this snapshot's governance
	nkeys int         // distinct dedup keys among cands
	// static: no candidate has a matcher that can fail or an `if`, so Match's answer
	// does not depend on the query and is precomputed.
	static               bool
	staticRun, staticNot []*Handler
	// the same for Query.FromClaudeCode
	staticRunCC, staticNotCC []*Handler
}

// skillIndex is one skill's hooks: registered in a session when it is invoked
// (SkillMatch), never matched by Match.
type skillIndex struct {
	fm      *Frontmatter
	byEvent map[string]*eventIndex
}

type candidate struct {
	h      *Handler
	key    int  // dense dedup key index
	notRun bool // matched handlers hookd reports but does not run
	// native: Claude Code runs this handler itself (a managed hook); for an event it
	// sent (Query.FromClaudeCode) hookd reports it as not run instead of running it.
	native bool
}

// Query is one event to match.
type Query struct {
	Event *events.Event
	// MatchValue is the value of the event's matcher field (tool_name, source, …); for
	// MatchBasename events the full value, whose base name is compared.
	MatchValue string
	// Tool is the tool call, for `if` filters; nil for non-tool events.
	Tool *rules.Call
	// FromClaudeCode: Claude Code sent the event (through its hookc forwarder, or hookc's
	// in-process fallback) and runs the hooks of its own settings files itself: always
	// those of its managed files — the installer never moves them — and, without a
	// routing drop-in, those of user, project and local files that no install moved into
	// a hookd-owned file (one scope installed, another not). Those hooks are then reported
	// as not run (ReasonClaudeCodeRuns, ReasonClaudeCodeRunsFile) rather than run a second
	// time. For any other caller — Codex, Gemini CLI, a raw socket client — hookd is the
	// only runner and runs them: one policy for every harness.
	FromClaudeCode bool
	// AgentType is the payload's agent_type: the subagent the event belongs to ("" on
	// the main thread). A subagent's frontmatter hooks match only its own events.
	AgentType string
}

// Empty returns the seed snapshot: no files, no hooks, no rules.
func Empty() *Snapshot { return Compile(nil) }

// Compile builds a snapshot from files in configuration order (Sources.Files order); nil
// entries (absent files) are skipped.
func Compile(files []*File) *Snapshot {
	s := &Snapshot{byEvent: map[string]*eventIndex{}, reasons: map[*Handler]string{}, native: map[*Handler]string{}}
	for _, f := range files {
		if f != nil {
			s.Files = append(s.Files, f)
		}
	}
	// Claude Code applies one managed channel unless told to merge; so does hookd.
	s.Files, s.Managed = chooseManaged(s.Files)
	s.Warnings = append(s.Warnings, s.Managed.Skipped...)
	s.Revision = revision(s.Files)

	// Governance (spec §7). disableAllHooks: the highest-precedence file that sets it
	// wins; among files of equal rank the later one (drop-ins override the base file,
	// later --settings files earlier ones).
	disableRank, disableFrom := -1, ""
	var disableManaged, ccManagedOnly bool
	routing := map[*File]bool{}    // managed files holding a hookc forwarder
	forwarded := map[string]bool{} // events those forwarders are configured for
	for _, f := range s.Files {
		if f.Ref.Managed() && f.Ref.Kind == KindManaged {
			for _, h := range f.Handlers {
				if h.Refused == "" && h.Type == events.Command && IsForwarder(h.Command, h.Args) {
					routing[f] = true
					forwarded[h.Event.Name] = true
				}
			}
		}
	}
	for _, f := range s.Files {
		st := f.Settings
		if st == nil {
			continue
		}
		if st.DisableAllHooks != nil && f.Ref.precedence() >= disableRank {
			disableRank = f.Ref.precedence()
			s.DisableAllHooks = *st.DisableAllHooks
			disableManaged = f.Ref.Managed()
			disableFrom = f.Ref.Path
		}
		if f.Ref.Managed() {
			if st.AllowManagedHooksOnly != nil && *st.AllowManagedHooksOnly {
				ccManagedOnly = true // what Claude Code sees
				if !routing[f] {
					s.ManagedOnly = true
				}
			}
			if routing[f] && s.RoutedBy == "" {
				s.RoutedBy = f.Ref.Path
			}
			if st.AllowManagedPermissionRulesOnly != nil && *st.AllowManagedPermissionRulesOnly {
				s.ManagedRulesOnly = true
			}
		}
		if st.AllowedHTTPHookURLs != nil {
			s.AllowedHTTPURLsSet = true
			s.AllowedHTTPURLs = appendUnique(s.AllowedHTTPURLs, st.AllowedHTTPHookURLs...)
		}
		if st.HTTPHookAllowedEnvVars != nil {
			s.HTTPAllowedEnvVarsSet = true
			s.HTTPAllowedEnvVars = appendUnique(s.HTTPAllowedEnvVars, st.HTTPHookAllowedEnvVars...)
		}
		s.Warnings = append(s.Warnings, f.Warnings...)
	}
	if !ccManagedOnly {
		// Without the flag Claude Code runs every file's hooks itself: hookd running
		// them too would run them twice, so a forwarder alone does not route.
		s.RoutedBy = ""
	}
	if s.RoutedBy != "" {
		s.NotForwarded = []string{}
		for _, name := range events.Names() {
			if !forwarded[name] {
				s.NotForwarded = append(s.NotForwarded, name)
			}
		}
		sort.Strings(s.NotForwarded)
	}
	s.DisableManagedToo = s.DisableAllHooks && disableManaged
	if s.AllowedHTTPURLs == nil && s.AllowedHTTPURLsSet {
		s.AllowedHTTPURLs = []string{}
	}
	for _, p := range s.AllowedHTTPURLs {
		s.urlGlobs = append(s.urlGlobs, compileURLGlob(p))
	}

	// env and enabledPlugins: apply files from lowest to highest precedence so the higher
	// value wins; a managed true force-enables.
	byRank := append([]*File(nil), s.Files...)
	sort.SliceStable(byRank, func(i, j int) bool { return byRank[i].Ref.precedence() < byRank[j].Ref.precedence() })
	s.enabled, s.forced = map[string]bool{}, map[string]bool{}
	for _, f := range byRank {
		if f.Settings == nil || f.Ref.Kind == KindPlugin {
			continue
		}
		for id, on := range f.Settings.EnabledPlugins {
			s.enabled[id] = on
			if on && f.Ref.Managed() {
				s.forced[id] = true
			}
		}
	}
	for _, f := range byRank {
		if f.Settings == nil || f.Ref.Kind == KindPlugin {
			continue
		}
		for id, opts := range f.Settings.PluginOptions {
			if s.pluginOptions == nil {
				s.pluginOptions = map[string]map[string]string{}
			}
			if s.pluginOptions[id] == nil {
				s.pluginOptions[id] = map[string]string{}
			}
			for k, v := range opts {
				s.pluginOptions[id][k] = plugin.OptionString(v)
			}
		}
	}
	for _, f := range s.Files {
		if f.Ref.Plugin != nil {
			if s.Plugins == nil {
				s.Plugins = map[string]*Plugin{}
			}
			s.Plugins[f.Ref.Plugin.ID] = f.Ref.Plugin
		}
	}
	for _, f := range byRank {
		if f.Settings == nil || f.Settings.Env == nil || f.Ref.Kind == KindPlugin {
			continue
		}
		if s.Env == nil {
			s.Env = map[string]string{}
		}
		for k, v := range f.Settings.Env {
			s.Env[k] = v
		}
	}

	// Permission rules, pooled (spec §8).
	var pooled []*rules.Rule
	for _, f := range s.Files {
		if s.ManagedRulesOnly && !f.Ref.Managed() {
			continue
		}
		pooled = append(pooled, f.Rules...)
	}
	s.Rules = rules.NewSet(pooled)

	// Claude Code files whose command and http hooks `hookd install claude-code` moved into
	// a hookd-owned file: what is left in them (the forwarder, prompt/agent/mcp_tool
	// handlers, hooks added after the install) is run by Claude Code itself, so hookd
	// running it too would run it twice.
	// Under a managed routing drop-in Claude Code runs none of them (allowManagedHooksOnly),
	// so they are hookd's again.
	delegated := map[string]string{}
	for _, f := range s.Files {
		if s.RoutedBy == "" && f.Ref.Kind == KindHookd && f.Settings != nil && f.Settings.Hookd != nil {
			if p := ClaudePathFor(f.Ref); p != "" {
				delegated[filepath.Clean(p)] = f.Ref.Path
			}
		}
	}

	// Handlers per event, configuration order.
	keyIDs := map[string]map[string]int{}
	for _, f := range s.Files {
		if f.Ref.Kind == KindHarness || f.Ref.Kind == KindHarnessConfig {
			s.addHarness(f)
			continue
		}
		movedTo := ""
		if f.Ref.Kind != KindHookd {
			movedTo = delegated[filepath.Clean(f.Ref.Path)]
		}
		for _, h := range f.Handlers {
			name := h.Event.Name
			ix := s.byEvent[name]
			if ix == nil {
				ix = &eventIndex{}
				s.byEvent[name] = ix
				keyIDs[name] = map[string]int{}
			}
			ix.all = append(ix.all, h)
			s.all = append(s.all, h)

			reason, blocked := s.reason(h, disableFrom)
			third := h.Plugin != nil || h.Frontmatter != nil // a plugin's, a subagent's or a skill's
			if third && !blocked {
				reason, blocked = s.thirdPartyReason(h, disableFrom)
			}
			if movedTo != "" && !blocked {
				reason, blocked = "run by Claude Code: hookd install claude-code moved this file's command and http hooks to "+movedTo, true
			}
			if third && h.Type == events.Command && !blocked {
				if s.execs == nil {
					s.execs = map[*Handler]HookExec{}
				}
				s.execs[h] = s.hookExec(h)
			}
			// Claude Code runs the hooks of its own files itself — managed files always
			// (beside hookd's drop-in, or beside a user/project install's forwarder alike),
			// the others unless the drop-in routes them — so for the events it sends hookd
			// leaves them to it (Query.FromClaudeCode). A hook neither would run (an http
			// URL outside the allowlist) stays as reason says.
			native := false
			// A hook of an untrusted managed file is never native: hookd must see it to
			// fail its event closed (Handler.Refused).
			if third && !blocked && s.thirdPartyNative(h) {
				native, s.native[h] = true, "run by Claude Code: a hook of "+sourceName(h)+" (Claude Code runs the hooks of enabled plugins, subagents and skills itself)"
			}
			if !blocked && h.Refused == "" && !third && (reason == "" || !h.Runnable) {
				switch f.Ref.Kind {
				case KindManaged:
					native, s.native[h] = true, ReasonClaudeCodeRuns
				case KindUser, KindProject, KindLocal:
					if s.RoutedBy == "" {
						native, s.native[h] = true, ReasonClaudeCodeRunsFile
					}
				}
			}
			if s.RoutedBy != "" && !blocked && !native && !f.Ref.Managed() && !forwarded[name] {
				s.RunNowhere = append(s.RunNowhere, Warning{File: f.Ref.Path, Field: "hooks." + name,
					Message: fmt.Sprintf("%s runs nowhere: under hookd's managed drop-in %s (allowManagedHooksOnly) Claude Code does not run it and does not forward %s to hookd", h.ID, s.RoutedBy, name)})
			}
			if reason != "" {
				s.reasons[h] = reason
			}
			if blocked {
				continue
			}
			if fm := h.Frontmatter; fm != nil && fm.Kind == KindSkill {
				s.addSkillHandler(h, reason != "", native)
				continue
			}
			k, ok := keyIDs[name][h.Key]
			if !ok {
				k = len(keyIDs[name])
				keyIDs[name][h.Key] = k
			}
			ix.cands = append(ix.cands, candidate{h: h, key: k, notRun: reason != "", native: native})
		}
	}
	for name, ix := range s.byEvent {
		ix.nkeys = len(keyIDs[name])
		ix.static = true
		for _, c := range ix.cands {
			if c.h.If != nil || !c.h.Matcher.MatchesAll() || c.h.Frontmatter != nil {
				ix.static = false
				break
			}
		}
		if ix.static {
			run, not := s.match(ix, "", nil, false, "")
			ix.staticRun, ix.staticNot = run[:len(run):len(run)], not[:len(not):len(not)]
			run, not = s.match(ix, "", nil, true, "")
			ix.staticRunCC, ix.staticNotCC = run[:len(run):len(run)], not[:len(not):len(not)]
		}
	}
	return s
}

// reason says why h would not run under this snapshot. blocked handlers never run and are
// not reported by Match (disabled by governance, or `if` on a non-tool event); the others
// (types hookd cannot run, URLs outside the allowlist) are returned by Match as notRun.
func (s *Snapshot) reason(h *Handler, disableFrom string) (reason string, blocked bool) {
	managed := h.Source == KindManaged
	if h.Plugin != nil {
		// Governance for plugins (disableAllHooks, allowManagedHooksOnly, force-enables)
		// is pluginReason's; only managed-wide disabling and the per-handler checks apply.
		managed = s.forced[h.Plugin.ID]
	}
	switch {
	case s.DisableManagedToo:
		return "disableAllHooks is set in managed settings (" + disableFrom + "): no hooks run", true
	case s.DisableAllHooks && !managed:
		return "disableAllHooks is set (" + disableFrom + "): only managed hooks run", true
	case s.ManagedOnly && !managed:
		return "allowManagedHooksOnly is set in managed settings: only managed hooks run", true
	case h.Type == events.Command && IsForwarder(h.Command, h.Args):
		return "forwards events to hookd (hookc); hookd never runs it, it would call itself", true
	case h.Type == events.HTTP && IsHTTPForwarder(h.URL):
		return "forwards events to hookd (its http forwarder); hookd never runs it, it would call itself", true
	case h.Refused != "":
		return "", false // never run: the engine answers for it (fails closed where it can block)
	case s.RoutedBy != "" && !h.Runnable && !managed:
		return fmt.Sprintf("%s hooks need the harness, and under hookd's managed drop-in (%s, allowManagedHooksOnly) Claude Code does not run them either; not run", h.Type, s.RoutedBy), false
	case h.If != nil && !h.Event.ToolEvent:
		return fmt.Sprintf("\"if\" is evaluated only on tool events; never runs on %s", h.Event.Name), true
	case !h.Runnable:
		return fmt.Sprintf("%s hooks need the harness (hookd runs command and http hooks); not run", h.Type), false
	case h.Type == events.HTTP && s.AllowedHTTPURLsSet && !s.urlAllowed(h.URL):
		return fmt.Sprintf("url %s does not match allowedHttpHookUrls; not run", h.URL), false
	}
	return "", false
}

// thirdPartyReason is reason for a hook of a plugin, a subagent or a skill that
// governance leaves on. A disabled plugin's hooks (and its skills') are off (blocked).
// Claude Code 2.1.332 runs the rest itself (thirdPartyNative) — except under hookd's
// managed drop-in (allowManagedHooksOnly), where it runs only force-enabled plugins'
// hooks.json hooks and drops every subagent and skill hook (probes fm-6, fm-7): hookd
// runs those, so that each runs exactly once.
func (s *Snapshot) thirdPartyReason(h *Handler, disableFrom string) (reason string, blocked bool) {
	if h.Plugin != nil {
		id := h.Plugin.ID
		if !s.PluginEnabled(id) {
			return "plugin " + id + " is not enabled (enabledPlugins); Claude Code does not run its hooks", true
		}
		if h.Frontmatter == nil {
			if s.DisableAllHooks && !s.forced[id] {
				return "disableAllHooks is set (" + disableFrom + "): plugin hooks run only when managed settings force-enable the plugin", true
			}
			if s.ManagedOnly && !s.forced[id] {
				return "allowManagedHooksOnly is set in managed settings: only the hooks of plugins managed settings force-enable run", true
			}
		}
	}
	if h.Frontmatter != nil && (s.DisableAllHooks || s.ManagedOnly) {
		return "disableAllHooks or allowManagedHooksOnly is set: Claude Code runs no subagent or skill frontmatter hooks", true
	}
	if s.thirdPartyNative(h) {
		return ReasonThirdPartyOutsideClaudeCode, false
	}
	return "", false
}

// ReasonThirdPartyOutsideClaudeCode is why hookd does not run a plugin's, a subagent's
// or a skill's hook for an event another harness (or a raw client) sent: they are
// Claude Code's.
const ReasonThirdPartyOutsideClaudeCode = "plugin, subagent and skill hooks are Claude Code's: hookd does not run them for other harnesses"

// thirdPartyNative: Claude Code runs the hook itself — always, except under the managed
// routing drop-in (allowManagedHooksOnly), which leaves it only the hooks.json hooks of
// the plugins managed settings force-enable.
func (s *Snapshot) thirdPartyNative(h *Handler) bool {
	if s.RoutedBy == "" {
		return true
	}
	return h.Frontmatter == nil && h.Plugin != nil && s.forced[h.Plugin.ID]
}

// sourceName is h's source with its plugin's version, for messages.
func sourceName(h *Handler) string {
	if h.Plugin != nil {
		return h.Label() + pluginVersion(h.Plugin)
	}
	return h.Label()
}

func pluginVersion(p *Plugin) string {
	if p.Version == "" {
		return ""
	}
	return " " + p.Version
}

// Reason says why h does not run when its event matches: "" when it runs. Useful for
// status output and for the notRun handlers Match returns.
func (s *Snapshot) Reason(h *Handler) string {
	if s == nil {
		return ""
	}
	return s.reasons[h]
}

// ClaudeCodeRuns reports whether Claude Code runs h itself when it sends h's event (see
// Query.FromClaudeCode): a hook of a managed file, or of a user, project or local file no
// install moved when no drop-in routes, that governance leaves on. Match with
// Query.FromClaudeCode reports such a hook as not run.
func (s *Snapshot) ClaudeCodeRuns(h *Handler) bool {
	return s != nil && s.native[h] != ""
}

// ReasonFor is Reason for an event Claude Code sent (fromClaudeCode) or not: for
// Claude Code's own events a hook it runs itself has ReasonClaudeCodeRuns (managed) or
// ReasonClaudeCodeRunsFile.
func (s *Snapshot) ReasonFor(h *Handler, fromClaudeCode bool) string {
	if fromClaudeCode && s.ClaudeCodeRuns(h) {
		return s.native[h]
	}
	return s.Reason(h)
}

// Match returns the handlers of q.Event that match q, in configuration order and
// deduplicated (identical handlers — same Key — run once; the first in configuration
// order is kept, spec §3.5 and §12): run are the ones hookd runs, notRun the ones it
// reports without running (see Reason). The returned slices must be treated as read-only.
//
// The group matcher is tested against q.MatchValue (its base name for MatchBasename
// events; not at all for events without a matcher field). A handler with `if` runs only
// when its rule matches q.Tool; when the caller has no tool call to offer (q.Tool nil) on
// a tool event, the handler runs: a guard that cannot be evaluated is not skipped.
func (s *Snapshot) Match(q Query) (run []*Handler, notRun []*Handler) {
	if s == nil || q.Event == nil {
		return nil, nil
	}
	ix := s.byEvent[q.Event.Name]
	if ix == nil {
		return nil, nil
	}
	if ix.static {
		if q.FromClaudeCode {
			return ix.staticRunCC, ix.staticNotCC
		}
		return ix.staticRun, ix.staticNot
	}
	value := q.MatchValue
	if q.Event.MatchBasename && value != "" {
		value = baseName(value)
	}
	return s.match(ix, value, q.Tool, q.FromClaudeCode, q.AgentType)
}

// match matches ix's candidates; a subagent's hooks only when agentType is its type.
func (s *Snapshot) match(ix *eventIndex, value string, tool *rules.Call, fromCC bool, agentType string) (run, notRun []*Handler) {
	var buf [4]uint64 // 256 distinct handlers per event without allocating
	seen := buf[:]
	if ix.nkeys > len(buf)*64 {
		seen = make([]uint64, (ix.nkeys+63)/64)
	}
	for _, c := range ix.cands {
		h := c.h
		if fm := h.Frontmatter; fm != nil && fm.Kind == KindAgent && fm.Name != agentType {
			continue
		}
		if !h.Matcher.Match(value) {
			continue
		}
		if h.If != nil && tool != nil && !h.If.Matches(*tool) {
			continue
		}
		w, bit := c.key/64, uint64(1)<<(c.key%64)
		if seen[w]&bit != 0 {
			continue
		}
		seen[w] |= bit
		if c.notRun || fromCC && c.native {
			notRun = append(notRun, h)
		} else {
			run = append(run, h)
		}
	}
	return run, notRun
}

// baseName is the last element of a path in either separator style (FileChanged matches
// the changed file's base name; payloads may carry Windows paths).
func baseName(p string) string {
	p = strings.TrimRight(p, `/\`)
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return filepath.Base(p)
}

// HandlersFor returns every handler of event in configuration order — including those
// that would not run (see Reason) — for status and diffs. Read-only.
func (s *Snapshot) HandlersFor(event string) []*Handler {
	if s == nil {
		return nil
	}
	if ix := s.byEvent[event]; ix != nil {
		return ix.all
	}
	return nil
}

// Handlers returns every handler of every file in configuration order. Read-only.
func (s *Snapshot) Handlers() []*Handler {
	if s == nil {
		return nil
	}
	return s.all
}

// EnvVarsFor returns the environment variables h may interpolate into its headers: its
// own allowedEnvVars, narrowed to httpHookAllowedEnvVars when that key is set (spec §4.2).
func (s *Snapshot) EnvVarsFor(h *Handler) []string {
	if !s.HTTPAllowedEnvVarsSet {
		return h.AllowedEnvVars
	}
	var out []string
	for _, v := range h.AllowedEnvVars {
		for _, a := range s.HTTPAllowedEnvVars {
			if v == a {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

// URLAllowed reports whether an HTTP hook may target url under allowedHttpHookUrls.
func (s *Snapshot) URLAllowed(url string) bool {
	return !s.AllowedHTTPURLsSet || s.urlAllowed(url)
}

func (s *Snapshot) urlAllowed(url string) bool {
	for _, g := range s.urlGlobs {
		if g.match(url) {
			return true
		}
	}
	return false
}

// urlGlob is an allowedHttpHookUrls pattern: literal text with "*" matching any run of
// characters (including "/"), anchored at both ends.
type urlGlob []string

func compileURLGlob(p string) urlGlob { return strings.Split(p, "*") }

func (g urlGlob) match(s string) bool {
	if len(g) == 1 {
		return s == g[0]
	}
	if !strings.HasPrefix(s, g[0]) {
		return false
	}
	s = s[len(g[0]):]
	last := g[len(g)-1]
	for _, part := range g[1 : len(g)-1] {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

func appendUnique(dst []string, xs ...string) []string {
outer:
	for _, x := range xs {
		for _, d := range dst {
			if d == x {
				continue outer
			}
		}
		dst = append(dst, x)
	}
	return dst
}

// revision hashes (path, hash) of every file, in order.
func revision(files []*File) string {
	if len(files) == 0 {
		return ""
	}
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%s\n", f.Ref.Path, f.Hash)
	}
	return hex.EncodeToString(h.Sum(nil))
}
