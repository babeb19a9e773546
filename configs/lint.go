package configs

import (
	"fmt"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/configs/suggest"
	"github.com/hookd/hookd/events"
)

// UnmatchedOverrides checks each "hooks" entry of hookd's configuration against the
// handlers of the settings files given (what `hookd validate` loaded): an entry whose
// "match" names no handler — by ID, command as written or exec-form command line,
// compared exactly, as Override does — changes nothing, so its prewarm, worker or
// on_timeout setting silently never applies. Each such entry is one message naming its
// field, with the closest command or ID when one is near.
func (c *DaemonConfig) UnmatchedOverrides(hs []*settings.Handler) []string {
	if c == nil {
		return nil
	}
	var names []string
	for _, h := range hs {
		names = append(names, h.ID)
		if h.Type == events.Command {
			names = append(names, h.Command, h.CommandLine())
		}
	}
	var out []string
	for i, o := range c.Hooks {
		matched := false
		for _, h := range hs {
			if c.Override(h).Match == o.Match {
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		msg := fmt.Sprintf("hooks[%d].match %q matches no hook in the settings files checked (it is compared exactly with a hook's command as written, its exec-form command line, or its ID); its settings never apply", i, o.Match)
		if s := suggest.Closest(o.Match, names); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		out = append(out, msg)
	}
	return out
}
