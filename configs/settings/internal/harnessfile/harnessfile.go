// Package harnessfile decodes a harness's own hook file (~/.codex/hookd.json,
// ~/.gemini/hookd.json and their project twins) strictly, into hooks and warnings, with
// errors that carry the byte offset of the bad value. Package settings lists these files,
// turns the hooks into Handlers and compiles them into the Snapshot (settings/harness.go
// has the schema and the rules).
package harnessfile

import (
	"fmt"
	"math"
	"time"

	"github.com/hookd/hookd/configs/internal/jsontree"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/harness"
	"github.com/hookd/hookd/matcher"
)

// Hook is one command hook of a harness hook file.
type Hook struct {
	Native       string        // the harness's event name it is listed under
	Event        *events.Event // the catalogue event (or the harness's local one)
	Group, Index int
	MatcherText  string
	Matcher      *matcher.Matcher // compiled for tool events; nil: every value
	Sequential   bool             // its group's "sequential"
	Command      string
	Name         string
	Timeout      time.Duration // 0: the event's default
	Raw          []byte        // the hook's JSON as written
}

// Warning is something skipped or ignored, by field path.
type Warning struct{ Field, Message string }

// Error is why the file is invalid: the field path, the byte offset of the bad value (-1
// when none) and what is wrong.
type Error struct {
	Field string
	Off   int
	Msg   string
}

func (e *Error) Error() string { return e.Field + ": " + e.Msg }

type decoder struct {
	ad    *harness.Adapter
	data  []byte
	hooks []Hook
	warns []Warning
}

// Decode reads the hooks of harnessName's hook file, whose bytes are data and parsed
// tree root.
func Decode(harnessName string, data []byte, root *jsontree.Node) ([]Hook, []Warning, error) {
	d := &decoder{ad: harness.For(harnessName), data: data}
	if root.Kind != jsontree.Object {
		return nil, nil, d.fail(root, "", "a harness hook file must be a JSON object (found %s)", root.What())
	}
	for i, key := range root.Keys {
		switch key {
		case "hookd": // the installer's record
		case "hooks":
			if err := d.events(root.Vals[i]); err != nil {
				return nil, nil, err
			}
		default:
			d.warn(key, "unknown top-level key in a %s hook file; ignored", d.ad.Name)
		}
	}
	return d.hooks, d.warns, nil
}

func (d *decoder) fail(n *jsontree.Node, field, format string, args ...any) *Error {
	e := &Error{Field: field, Off: -1, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Off = n.Start
	}
	return e
}

func (d *decoder) warn(field, format string, args ...any) {
	d.warns = append(d.warns, Warning{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (d *decoder) str(n *jsontree.Node, field string) (string, error) {
	if n.Kind != jsontree.String {
		return "", d.fail(n, field, "must be a string (found %s)", n.What())
	}
	return n.Str, nil
}

func (d *decoder) events(n *jsontree.Node) error {
	if n.Kind != jsontree.Object {
		return d.fail(n, "hooks", "must be an object of %s event names (found %s)", d.ad.Name, n.What())
	}
	for i, native := range n.Keys {
		v, field := n.Vals[i], "hooks."+native
		ev, _, ok := d.ad.Event(native)
		if !ok {
			d.warn(field, "unknown %s hook event; skipped", d.ad.Name)
			continue
		}
		if v.Kind != jsontree.Array {
			return d.fail(v, field, "must be an array of matcher groups (found %s)", v.What())
		}
		for gi, g := range v.Elems {
			if err := d.group(ev, native, g, fmt.Sprintf("%s[%d]", field, gi), gi); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *decoder) group(ev *events.Event, native string, g *jsontree.Node, field string, gi int) error {
	if g.Kind != jsontree.Object {
		return d.fail(g, field, "must be an object with \"matcher\" and \"hooks\" (found %s)", g.What())
	}
	grp := Hook{Native: native, Event: ev, Group: gi}
	for i, k := range g.Keys {
		v, err := g.Vals[i], error(nil)
		switch k {
		case "matcher":
			if grp.MatcherText, err = d.str(v, field+".matcher"); err == nil && ev.ToolEvent && grp.MatcherText != "" && grp.MatcherText != "*" {
				if grp.Matcher, err = matcher.Compile(grp.MatcherText, false); err != nil {
					err = d.fail(v, field+".matcher", "%v", err)
				}
			}
		case "sequential":
			if v.Kind != jsontree.Bool {
				err = d.fail(v, field+".sequential", "must be a boolean (found %s)", v.What())
			}
			grp.Sequential = v.Boolean
		case "hooks":
		default:
			d.warn(field+"."+k, "unknown field in a %s matcher group; ignored", d.ad.Name)
		}
		if err != nil {
			return err
		}
	}
	hn := g.Get("hooks")
	if hn == nil || hn.Kind != jsontree.Array {
		return d.fail(g, field+".hooks", "missing or not an array (a matcher group needs a \"hooks\" array)")
	}
	for hi, e := range hn.Elems {
		h := grp
		h.Index = hi
		run, err := d.hook(&h, e, fmt.Sprintf("%s.hooks[%d]", field, hi))
		if err != nil {
			return err
		}
		if run {
			d.hooks = append(d.hooks, h)
		}
	}
	return nil
}

// hook decodes one hook into h; false for a hook hookd does not run (a type other than
// command: skipped with a warning).
func (d *decoder) hook(h *Hook, n *jsontree.Node, field string) (bool, error) {
	if n.Kind != jsontree.Object {
		return false, d.fail(n, field, "must be an object (found %s)", n.What())
	}
	h.Raw = append([]byte(nil), d.data[n.Start:n.End]...)
	for i, k := range n.Keys {
		v, err := n.Vals[i], error(nil)
		switch k {
		case "type":
			var t string
			if t, err = d.str(v, field+".type"); err == nil && t != "command" {
				d.warn(field+".type", "%q hooks are not run by hookd (only command hooks); skipped", t)
				return false, nil
			}
		case "command":
			h.Command, err = d.str(v, field+".command")
		case "name":
			h.Name, err = d.str(v, field+".name")
		case "timeout":
			h.Timeout, err = d.timeout(v, field+".timeout")
		default:
			d.warn(field+"."+k, "not read by hookd; ignored")
		}
		if err != nil {
			return false, err
		}
	}
	if h.Command == "" {
		return false, d.fail(n, field+".command", "missing (a command hook needs a command)")
	}
	return true, nil
}

// timeout is a hook's timeout in the harness's unit (Codex: seconds, Gemini CLI:
// milliseconds).
func (d *decoder) timeout(v *jsontree.Node, field string) (time.Duration, error) {
	if v.Kind != jsontree.Number {
		return 0, d.fail(v, field, "must be a number (found %s)", v.What())
	}
	unit, name := d.ad.TimeoutUnit, "seconds"
	if unit == time.Millisecond {
		name = "milliseconds"
	}
	x, err := v.Num.Float64()
	if err != nil || x < 0 || math.IsInf(x, 0) || x*float64(unit) > float64(math.MaxInt64) {
		return 0, d.fail(v, field, "must be a non-negative number of %s (found %s)", name, v.Num)
	}
	return time.Duration(x * float64(unit)), nil
}

// DecodeConfig reads what hookd honours of a harness's own settings file: Gemini CLI's
// hooksConfig.disabled. The file is the harness's (it may hold comments, which Gemini CLI
// allows): anything hookd cannot read there is a warning, never an error.
func DecodeConfig(data []byte) (disabled []string, warns []Warning) {
	root, _, err := jsontree.Parse(data)
	switch {
	case err != nil:
		return nil, []Warning{{Message: fmt.Sprintf("not read (%v): the hooks its hooksConfig.disabled may name are run by hookd", err)}}
	case root.Kind != jsontree.Object:
		return nil, []Warning{{Message: "not a JSON object: the hooks its hooksConfig.disabled may name are run by hookd"}}
	}
	dis := root.Get("hooksConfig").Get("disabled")
	if dis == nil {
		return nil, nil
	}
	bad := []Warning{{Field: "hooksConfig.disabled", Message: "not read (not an array of strings): the hooks it names are run by hookd"}}
	if dis.Kind != jsontree.Array {
		return nil, bad
	}
	for _, e := range dis.Elems {
		if e.Kind != jsontree.String {
			return nil, bad
		}
		disabled = append(disabled, e.Str)
	}
	return disabled, nil
}
