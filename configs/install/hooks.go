package install

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/jsonobj"
	"github.com/hookd/hookd/matcher"
	"github.com/hookd/hookd/protocol"
)

// hooksValue is a settings file's "hooks" object: event → raw array of matcher groups,
// in file order.
type hooksValue = jsonobj.Object

// handlerInfo is what the installer reads of one handler.
type handlerInfo struct {
	Type      string   `json:"type"`
	Command   string   `json:"command"`
	Args      []string `json:"args"`
	Timeout   *float64 `json:"timeout"`
	OnFailure string   `json:"onFailure"`
	Async     bool     `json:"async"`
	URL       string   `json:"url"`
}

// isForwarder: a hookc command or hookd's own http forwarder (settings.IsHTTPForwarder).
func (hi handlerInfo) isForwarder() bool {
	return hi.Type == "command" && settings.IsForwarder(hi.Command, hi.Args) ||
		hi.Type == "http" && settings.IsHTTPForwarder(hi.URL)
}

// movable reports whether hookd runs handlers of this type itself (command and http);
// prompt, agent and mcp_tool handlers need Claude Code's model or MCP connections and
// stay in Claude Code's file.
func movable(typ string) bool { return typ == "command" || typ == "http" }

// split divides a hooks object into what stays in Claude Code's file (kept: handlers
// hookd cannot run, events and entries it does not understand) and what moves to
// hookd's file (moved: command and http handlers). Forwarders (handlers running hookc)
// are dropped from both: the installer writes its own. Each group keeps its matcher and
// any other keys on both sides; a side that ends up with no handler for a group does
// not get the group. forwarders counts the dropped forwarders.
func split(h hooksValue) (kept, moved hooksValue, forwarders int) {
	kept, moved = jsonobj.Object{}, jsonobj.Object{}
	for _, ev := range h {
		if _, known := events.Lookup(ev.Key); !known {
			kept = append(kept, ev) // Claude Code's business (it warns and skips)
			continue
		}
		groups, err := parseArray(ev.Value)
		if err != nil {
			kept = append(kept, ev)
			continue
		}
		var kg, mg []json.RawMessage
		for _, g := range groups {
			grp, err := parseObject(g)
			hraw, ok := grp.Lookup("hooks")
			if err != nil || !ok {
				kg = append(kg, g)
				continue
			}
			hs, err := parseArray(hraw)
			if err != nil {
				kg = append(kg, g)
				continue
			}
			var kh, mh []json.RawMessage
			for _, x := range hs {
				var hi handlerInfo
				if json.Unmarshal(x, &hi) != nil {
					kh = append(kh, x)
					continue
				}
				switch {
				case hi.isForwarder():
					forwarders++
				case movable(hi.Type):
					mh = append(mh, x)
				default:
					kh = append(kh, x)
				}
			}
			if len(kh) > 0 || len(hs) == 0 && len(mh) == 0 {
				kg = append(kg, grp.SetRaw("hooks", array(kh)).JSON())
			}
			if len(mh) > 0 {
				mg = append(mg, grp.SetRaw("hooks", array(mh)).JSON())
			}
		}
		if len(kg) > 0 || len(groups) == 0 {
			kept = append(kept, jsonobj.Member{Key: ev.Key, Value: array(kg)})
		}
		if len(mg) > 0 {
			moved = append(moved, jsonobj.Member{Key: ev.Key, Value: array(mg)})
		}
	}
	return kept, moved, forwarders
}

// withoutForwarders is h with every forwarder removed (groups left empty by it dropped).
func withoutForwarders(h hooksValue) hooksValue {
	out := jsonobj.Object{}
	for _, ev := range h {
		groups, err := parseArray(ev.Value)
		if err != nil {
			out = append(out, ev)
			continue
		}
		var gs []json.RawMessage
		for _, g := range groups {
			grp, err := parseObject(g)
			hraw, ok := grp.Lookup("hooks")
			hs, err2 := parseArray(hraw)
			if err != nil || !ok || err2 != nil {
				gs = append(gs, g)
				continue
			}
			var keep []json.RawMessage
			for _, x := range hs {
				var hi handlerInfo
				if json.Unmarshal(x, &hi) == nil && hi.isForwarder() {
					continue
				}
				keep = append(keep, x)
			}
			if len(keep) == 0 && len(hs) > 0 {
				continue
			}
			gs = append(gs, grp.SetRaw("hooks", array(keep)).JSON())
		}
		if len(gs) == 0 && len(groups) > 0 {
			continue
		}
		out = append(out, jsonobj.Member{Key: ev.Key, Value: array(gs)})
	}
	return out
}

// merge appends b's groups to a's, event by event (a's events first, in order, then b's
// new ones).
func merge(a, b hooksValue) hooksValue {
	out := append(jsonobj.Object{}, a...)
	for _, ev := range b {
		if cur, ok := out.Lookup(ev.Key); ok {
			x, err1 := parseArray(cur)
			y, err2 := parseArray(ev.Value)
			if err1 == nil && err2 == nil {
				out = out.SetRaw(ev.Key, array(append(x, y...)))
				continue
			}
		}
		out = append(out, ev)
	}
	return out
}

// count is the number of handlers in h.
func count(h hooksValue) int {
	n := 0
	eachHandler(h, func(string, *string, handlerInfo) { n++ })
	return n
}

// eachHandler calls fn for every decodable handler of h, with its event and group matcher
// (nil when the group has none).
func eachHandler(h hooksValue, fn func(event string, matcher *string, hi handlerInfo)) {
	for _, ev := range h {
		groups, _ := parseArray(ev.Value)
		for _, g := range groups {
			grp, err := parseObject(g)
			if err != nil {
				continue
			}
			var m *string
			if mraw, ok := grp.Lookup("matcher"); ok {
				var s string
				if json.Unmarshal(mraw, &s) == nil {
					m = &s
				}
			}
			hraw, _ := grp.Lookup("hooks")
			hs, _ := parseArray(hraw)
			for _, x := range hs {
				var hi handlerInfo
				if json.Unmarshal(x, &hi) == nil {
					fn(ev.Key, m, hi)
				}
			}
		}
	}
}

// DefaultForwarderTimeout is the forwarder's timeout when the moved hooks of its event
// need no more: Claude Code's own default for command hooks (spec §3.2).
const DefaultForwarderTimeout = 600 * time.Second

// forwarderMargin is how much longer the forwarder may take than the slowest moved hook:
// hookd enforces each hook's own timeout and then still has to merge and answer, so
// Claude Code must not give up on hookc at the same instant.
const forwarderMargin = 30 * time.Second

// Forwarding says whether the installer puts a forwarder on event, given whether
// hookd's file holds hooks for it, and why not when it does not. Claude Code starts the
// forwarder — a hookc process, 20–46 ms per event as Claude Code measures it — for every
// event it fires and every group whose matcher matches, so an event nobody hooks must
// have no forwarder: only events with hooks in hookd's file get one, with a matcher that
// is the union of their groups' matchers. A hook added to hookd's file later gets its
// forwarder from the running daemon (PlanResync, docs/claude-code.md), or from running
// `hookd install` again.
//
// Three events would be changed by a forwarder with nothing behind it even without the
// cost: WorktreeCreate and WorktreeRemove (a hook replaces Claude Code's own worktree
// handling) and FileChanged (the matchers are the list of watched files; FileChanged gets
// one group per matcher, so Claude Code watches exactly the files it watched before).
func Forwarding(event string, hooked bool) (forward bool, why string) {
	if !hooked {
		switch event {
		case "WorktreeCreate", "WorktreeRemove":
			return false, "a hook there replaces Claude Code's own worktree handling"
		case "FileChanged":
			return false, "matchers there are the list of watched files"
		}
		return false, "no hook in hookd's file for this event"
	}
	return true, ""
}

// forwarders builds the forwarding hooks for every event: one matcher group per event
// (matcher "*" where the event has a matcher field, none otherwise) running hookc in
// fwd's form, with a timeout covering the slowest moved hook of that event.
//
// With ep (--transport http), the events of HTTPEvents get an http handler posting to
// hookd instead (httpHandler), and SessionStart gets a hookc forwarder: its environment
// is what the session's http events run with (async, and not on compaction, when no
// SessionStart hook is behind it; none at all when the file's UserPromptSubmit forwarder
// brings the environment first: envSessionStart). Without ep, warmStart gives SessionStart
// the same env-only forwarder: it tells hookd the session has begun, so that hookd
// prepares the hooks it can ahead of the session's first tool call (Options.StartsWarm).
func forwarders(moved hooksValue, fwd hookcCmd, ep *HTTPEndpoint, warmStart bool) hooksValue {
	slowest := map[string]time.Duration{}
	explicit := map[string]time.Duration{}
	fileMatchers := []*string{}
	seenMatcher := map[string]bool{}
	movedEvents := map[string]bool{}
	failClosed := map[string]bool{}
	groupMatchers := map[string][]*string{}
	eachHandler(moved, func(event string, m *string, hi handlerInfo) {
		movedEvents[event] = true
		groupMatchers[event] = append(groupMatchers[event], m)
		if hi.OnFailure == "block" && !hi.Async {
			failClosed[event] = true
		}
		ev, _ := events.Lookup(event)
		d := time.Duration(0)
		if hi.Timeout != nil && *hi.Timeout > 0 && !math.IsInf(*hi.Timeout, 0) {
			d = time.Duration(*hi.Timeout * float64(time.Second))
			explicit[event] = max(explicit[event], d)
		} else if ev != nil {
			d = ev.DefaultTimeout
		}
		slowest[event] = max(slowest[event], d)
		if event == "FileChanged" {
			key := "\x00none"
			if m != nil {
				key = *m
			}
			if !seenMatcher[key] {
				seenMatcher[key] = true
				fileMatchers = append(fileMatchers, m)
			}
		}
	})
	out := jsonobj.Object{}
	for _, name := range events.Names() {
		ev, _ := events.Lookup(name)
		envOnly := (ep != nil || warmStart) && name == "SessionStart" && !movedEvents[name]
		if fwd, _ := Forwarding(name, movedEvents[name]); !fwd && !(envOnly && (ep == nil || envSessionStart(movedEvents))) {
			continue
		}
		timeout := DefaultForwarderTimeout
		if s := slowest[name] + forwarderMargin; slowest[name] > 0 && s > timeout {
			timeout = s
		}
		// hookc gets its own --timeout, a margin below the handler's, so that it answers
		// fail-closed before Claude Code's timeout lets the tool run (issue 13); without
		// one it derives the same from the event's default timeout.
		handler := jsonobj.Object{}.Set("type", "command")
		switch {
		case name == "SessionEnd":
			// SessionEnd hooks share a budget of 1.5 s that the largest timeout in the
			// settings files raises (spec §3.2): a forwarder timeout of its own would
			// change how long Claude Code waits at exit. Carry over only what the moved
			// hooks asked for.
			d := explicit[name]
			handler = fwd.set(handler, d)
			if d > 0 {
				handler = append(handler, jsonobj.Member{Key: "timeout", Value: seconds(d)})
			}
		default:
			handler = fwd.set(handler, timeout)
			handler = append(handler, jsonobj.Member{Key: "timeout", Value: seconds(timeout)})
		}
		if ep != nil && HTTPEvents[name] {
			handler = httpHandler(ep, ev, timeout)
		} else if envOnly {
			// Only the session's environment rides on it (no SessionStart hook to answer
			// for): async, so the session does not wait for an exec. The daemon lets the
			// session's first http events wait for the environment (daemon/sessionenv.go),
			// and prepares the session's hooks (daemon/warm_session.go).
			handler = append(handler, jsonobj.Member{Key: "async", Value: json.RawMessage("true")})
		} else if failClosed[name] {
			// A moved hook fails closed: so must its forwarder. Should hookc itself time
			// out or fail to start, Claude Code then blocks as it would have for the
			// hook (a Claude Code key, 2.1.295+; not one of hookd's own).
			handler = append(handler, jsonobj.Member{Key: "onFailure", Value: jsonobj.Marshal("block")})
		}
		hooks := array([]json.RawMessage{handler.JSON()})
		var groups []json.RawMessage
		switch {
		case name == "FileChanged":
			for _, m := range fileMatchers {
				g := jsonobj.Object{}
				if m != nil {
					g = append(g, jsonobj.Member{Key: "matcher", Value: jsonobj.Marshal(*m)})
				}
				groups = append(groups, append(g, jsonobj.Member{Key: "hooks", Value: hooks}).JSON())
			}
		case envOnly:
			// The env-only SessionStart (--transport http, or warmStart): every source that
			// can begin a session hookd has not seen (envSessionStartSources).
			groups = append(groups, jsonobj.Object{}.Set("matcher", envSessionStartSources).SetRaw("hooks", hooks).JSON())
		case ev.MatcherField != "":
			groups = append(groups, jsonobj.Object{}.Set("matcher", UnionMatcher(groupMatchers[name])).SetRaw("hooks", hooks).JSON())
		default:
			groups = append(groups, jsonobj.Object{}.SetRaw("hooks", hooks).JSON())
		}
		out = append(out, jsonobj.Member{Key: name, Value: array(groups)})
	}
	return out
}

// forwarderWithTimeout is the forwarder command for a handler whose timeout is d.
func forwarderWithTimeout(cmd string, d time.Duration) string {
	return cmd + " --timeout " + hookcTimeout(d)
}

// hookcTimeout is hookc's --timeout for a forwarder whose handler timeout is d.
func hookcTimeout(d time.Duration) string {
	return protocol.FormatSeconds(protocol.ForwarderTimeout(d))
}

// UnionMatcher is one Claude Code matcher that matches what any of ms matches (nil, "",
// "*": everything). Exact names and lists stay a list ("Bash|Edit|Write"); with a regular
// expression among them, exact names become anchored alternatives and each expression a
// non-capturing group, which JavaScript's RegExp and Go's RE2 read alike: "^(?:Bash)$|(?:mcp__.*)".
// A matcher that does not compile (hookd's validation reports it) gives "*": forward
// everything rather than lose events.
func UnionMatcher(ms []*string) string {
	var names, res []string
	seen := map[string]bool{}
	for _, m := range ms {
		if m == nil {
			return "*"
		}
		c, err := matcher.Compile(*m, false)
		if err != nil || c.MatchesAll() {
			return "*"
		}
		if !c.IsRegex() {
			for _, n := range c.Names() {
				if !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
			continue
		}
		if !seen["\x00"+*m] {
			seen["\x00"+*m] = true
			res = append(res, *m)
		}
	}
	if len(res) == 0 {
		if len(names) == 0 {
			return "*" // only empty lists: nothing to narrow to safely
		}
		return strings.Join(names, "|")
	}
	var parts []string
	if len(names) > 0 {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = regexp.QuoteMeta(n)
		}
		parts = append(parts, "^(?:"+strings.Join(q, "|")+")$")
	}
	for _, r := range res {
		parts = append(parts, "(?:"+r+")")
	}
	return strings.Join(parts, "|")
}

func seconds(d time.Duration) json.RawMessage {
	s := d.Seconds()
	if s == math.Trunc(s) {
		return json.RawMessage(fmt.Sprintf("%d", int64(s)))
	}
	return jsonobj.Marshal(s)
}

// withForwarders puts the forwarders into kept: events already there get the
// forwarder group after their own groups; the others follow in catalogue order.
func withForwarders(kept, fwd hooksValue) hooksValue {
	return merge(kept, fwd)
}

// eventsOf lists the events of h, sorted.
func eventsOf(h hooksValue) []string {
	var out []string
	for _, ev := range h {
		out = append(out, ev.Key)
	}
	sort.Strings(out)
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func joinOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
