package settings

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookd/hookd/configs/internal/jsontree"
	"github.com/hookd/hookd/configs/settings/internal/keys"
	"github.com/hookd/hookd/configs/settings/internal/mdm"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/matcher"
	"github.com/hookd/hookd/rules"
)

// File is one parsed, validated and compiled settings file.
type File struct {
	Ref      FileRef
	Hash     string // sha256 hex of the raw bytes; ":untrusted" follows for an untrusted managed file (the same bytes, another revision)
	Settings *Settings
	Handlers []*Handler    // compiled, in file order
	Rules    []*rules.Rule // permission rules: deny, then ask, then allow, each in file order
	Warnings []Warning     // things skipped or ignored, each naming file and field
	// Untrusted says why a managed file failed CheckManaged ("" when it passed or is not
	// managed): the file keeps only the power to restrict (see untrust).
	Untrusted string
	// HarnessConfig is what hookd read of a harness's own settings file
	// (KindHarnessConfig); nil for every other kind.
	HarnessConfig *HarnessConfig
}

// Settings is the part of a settings file hookd understands, decoded strictly: every
// field is type-checked and errors name its path. Keys hookd does not act on are not
// decoded (Keys still lists them).
type Settings struct {
	// Keys are the top-level keys in file order.
	Keys []string
	// Hooks are the hook definitions of known events, in file order (unknown events are
	// skipped with a warning).
	Hooks []EventHooks

	Permissions *Permissions

	DisableAllHooks *bool
	// AllowManagedHooksOnly and AllowManagedPermissionRulesOnly are managed-only keys: set
	// only when a managed file has them (a mistyped value there reads as true, spec §7).
	AllowManagedHooksOnly           *bool
	AllowManagedPermissionRulesOnly *bool

	// AllowedHTTPHookURLs is nil when the key is absent; an empty (non-nil) slice when it
	// is [] (which blocks every HTTP hook, spec §4.2).
	AllowedHTTPHookURLs    []string
	HTTPHookAllowedEnvVars []string // nil when absent

	Env map[string]string

	// ManagedSourcesBehavior is a managed file's "managedSourcesBehavior": "first-wins",
	// "merge", or "" when absent (first-wins). See Compile.
	ManagedSourcesBehavior string
	// EnabledPlugins is "enabledPlugins": plugin id → enabled (nil when absent; a
	// non-boolean value is skipped with a warning).
	EnabledPlugins map[string]bool
	// PluginOptions are "pluginConfigs": plugin id → its "options" (option key → value
	// as written). nil when absent.
	PluginOptions map[string]map[string]json.RawMessage

	// Hookd is the "hookd" object of a hookd-owned file (KindHookd): present when `hookd
	// install claude-code` wrote the file. nil in Claude Code's own files, where the key
	// would be unknown (and make Claude Code ignore the file, spec §12).
	Hookd *HookdMeta
}

// HookdMeta is what the loader reads of a hookd-owned file's "hookd" object. The
// installer keeps more there (the original hooks, for uninstall); the loader needs only
// to know the file is an installation, which makes hookd leave the hooks still in the
// Claude Code file (the forwarder and the handlers hookd cannot run) to Claude Code.
type HookdMeta struct {
	Version       int
	InstalledFrom string // the Claude Code settings file the hooks came from
	Forwarder     string // the forwarding command put in its place
}

// EventHooks are one event's matcher groups.
type EventHooks struct {
	Event  string
	Groups []HookGroup
}

// HookGroup is one matcher group.
type HookGroup struct {
	Matcher *string // nil when absent
	Hooks   []HookSpec
}

// HookSpec is one handler as written (spec §3.2).
type HookSpec struct {
	Type            string
	Command         string
	Args            []string // nil when absent
	Shell           string
	If              string
	Timeout         *float64 // seconds
	StatusMessage   string
	Async           bool
	AsyncRewake     bool
	Once            bool
	OnFailure       string // "continue" | "block"; "" when absent
	URL             string
	Headers         map[string]string
	AllowedEnvVars  []string
	Server, Tool    string
	Input           json.RawMessage
	Prompt, Model   string
	ContinueOnBlock bool
}

// Permissions is the "permissions" object (spec §8).
type Permissions struct {
	Allow, Ask, Deny                    []string
	AdditionalDirectories               []string
	DefaultMode                         string
	DisableBypassPermissionsMode        string
	DisableAutoMode                     string
	BlockReadsOutsideWorkingDirectories *bool
}

// LoadFile reads (ReadFile: non-blocking, regular files only, bounded size and time)
// and parses ref.Path. A leading "~/" in the path is expanded with home. When the file
// does not exist the error is an *fs.PathError wrapping os.ErrNotExist (errors.Is
// works): the daemon treats that as "absent", not "invalid".
func LoadFile(ref FileRef, home string) (*File, error) {
	return Sources{Home: home}.Load(ref)
}

// Load is LoadFile for a file of s: a managed file or MDM profile is checked with
// s.CheckTrust first, and one that fails is loaded untrusted (File.Untrusted; Untrust).
func (s Sources) Load(ref FileRef) (*File, error) {
	home := s.Home
	ref.Path = ExpandHome(ref.Path, home)
	why := ""
	if err := s.CheckTrust(ref); err != nil {
		why = err.Error()
	}
	data, err := ReadFile(ref.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("load settings %s: %w", ref.Path, err)
		}
		return nil, &FileError{File: ref.Path, Err: err}
	}
	f, err := ParseFile(ref, data, home)
	if err == nil && why != "" {
		untrust(f, why)
	}
	return f, err
}

// Untrust marks a parsed managed file that failed CheckManaged (why is the check's
// error): it keeps only the power to restrict — its deny and ask rules; its hooks are
// markers hookd never runs (Handler.Refused), which make an event they match fail closed
// where it can block; its other keys are ignored. An error-level finding says why.
func Untrust(f *File, why string) { untrust(f, why) }

// ExpandHome resolves a leading "~" or "~/" against home (unchanged when home is "").
func ExpandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, p[1:])
	}
	return p
}

// ParseFile parses, validates and compiles one settings file. Any error makes the whole
// file invalid (the daemon then keeps the file's last good version: a broken edit must
// never drop a guard). Things hookd can safely skip — unknown events and fields, keys it
// does not act on, handler types it cannot run — are warnings instead.
func ParseFile(ref FileRef, data []byte, home string) (*File, error) {
	ref.Path = ExpandHome(ref.Path, home)
	if ref.Kind == KindAgent || ref.Kind == KindSkill {
		return parseFrontmatterFile(ref, data)
	}
	sum := sha256.Sum256(data)
	if ref.Channel == ChannelMDM {
		// Claude Code reads the profile as `plutil -convert json` writes it; so does
		// hookd, and then decodes the JSON like any settings file (positions below refer
		// to that JSON, fields to the profile's keys).
		j, err := mdm.Decode(data)
		if err != nil {
			return nil, &FileError{File: ref.Path, Err: fmt.Errorf("MDM profile: %w", err)}
		}
		data = j
	}
	d := &decoder{ref: ref, data: bytes.Clone(data)}
	d.origin = rules.Origin{File: ref.Path, Source: string(ref.Source()), Base: ref.base()}
	// A UTF-8 byte order mark (Windows editors) becomes spaces, which keeps offsets right.
	if bytes.HasPrefix(d.data, []byte("\xef\xbb\xbf")) {
		copy(d.data, "   ")
		d.bom = true
	}
	if ref.Kind == KindHarnessConfig {
		return d.harnessConfigFile(hex.EncodeToString(sum[:])), nil
	}
	if len(bytes.TrimSpace(d.data)) == 0 {
		// An editor that truncates before writing produces this for a moment; rejecting it
		// keeps the last good version until the write lands.
		return nil, &FileError{File: ref.Path, Line: 1, Col: 1, Err: errors.New("empty file (expected a JSON object)")}
	}
	root, dups, err := jsontree.Parse(d.data)
	if err != nil {
		var se *jsontree.SyntaxError
		fe := &FileError{File: ref.Path, Err: fmt.Errorf("invalid JSON: %w", err)}
		if errors.As(err, &se) {
			fe.Line, fe.Col = d.pos(se.Off)
		}
		return nil, fe
	}
	for _, dk := range dups {
		line, col := d.pos(dk.Off)
		d.warn(dk.Key, "duplicate key at %d:%d; the last value wins (as in Claude Code)", line, col)
	}
	f := &File{Ref: ref, Hash: hex.EncodeToString(sum[:])}
	decode := d.settings
	switch ref.Kind {
	case KindPlugin:
		decode = d.pluginFile
	case KindPluginRegistry:
		decode = func(_ *jsontree.Node, f *File) error { f.Settings = &Settings{}; return nil } // valid JSON; no hooks
	case KindHarness:
		decode = d.harnessHooks
	}
	if err := decode(root, f); err != nil {
		return nil, err
	}
	d.lint(f)
	f.Warnings = d.warns
	return f, nil
}

// decoder carries one file's state while it is decoded.
type decoder struct {
	ref    FileRef
	data   []byte
	origin rules.Origin
	warns  []Warning
	bom    bool // data started with a byte order mark (now three spaces)
	// at, when set, maps data (JSON written from a Markdown file's YAML frontmatter) back
	// to the file's lines and columns.
	at func(off int) (line, col int)
	// eventAlias renames events as they are read (a subagent's Stop is SubagentStop).
	eventAlias map[string]string
}

// pos is the line and column of a byte offset, not counting a byte order mark (editors
// do not show it).
func (d *decoder) pos(off int) (line, col int) {
	if d.at != nil {
		return d.at(off)
	}
	line, col = jsontree.LineCol(d.data, off)
	if d.bom && line == 1 {
		col = max(1, col-3)
	}
	return line, col
}

func (d *decoder) fail(n *jsontree.Node, field, format string, args ...any) *FileError {
	e := &FileError{File: d.ref.Path, Field: field, Err: fmt.Errorf(format, args...)}
	if n != nil {
		e.Line, e.Col = d.pos(n.Start)
	}
	return e
}

func (d *decoder) warn(field, format string, args ...any) {
	d.warns = append(d.warns, Warning{File: d.ref.Path, Field: field, Message: fmt.Sprintf(format, args...)})
}

// finding is an error-level warning (Warning.Level): the file still loads.
func (d *decoder) finding(field, format string, args ...any) {
	d.warns = append(d.warns, Warning{File: d.ref.Path, Field: field, Message: fmt.Sprintf(format, args...), Level: LevelError})
}

// findingAt is a finding at the value n (line and column).
func (d *decoder) findingAt(n *jsontree.Node, field, format string, args ...any) {
	w := Warning{File: d.ref.Path, Field: field, Message: fmt.Sprintf(format, args...), Level: LevelError}
	if n != nil {
		w.Line, w.Col = d.pos(n.Start)
	}
	d.warns = append(d.warns, w)
}

func (d *decoder) str(n *jsontree.Node, field string) (string, error) {
	if n.Kind != jsontree.String {
		return "", d.fail(n, field, "must be a string (found %s)", n.What())
	}
	return n.Str, nil
}

func (d *decoder) boolean(n *jsontree.Node, field string) (bool, error) {
	if n.Kind != jsontree.Bool {
		return false, d.fail(n, field, "must be a boolean (found %s)", n.What())
	}
	return n.Boolean, nil
}

func (d *decoder) strings(n *jsontree.Node, field string) ([]string, error) {
	if n.Kind != jsontree.Array {
		return nil, d.fail(n, field, "must be an array of strings (found %s)", n.What())
	}
	out := make([]string, 0, len(n.Elems))
	for i, e := range n.Elems {
		s, err := d.str(e, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (d *decoder) stringMap(n *jsontree.Node, field string) (map[string]string, error) {
	if n.Kind != jsontree.Object {
		return nil, d.fail(n, field, "must be an object of strings (found %s)", n.What())
	}
	out := make(map[string]string, len(n.Keys))
	for i, k := range n.Keys {
		s, err := d.str(n.Vals[i], field+"."+k)
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

// settings decodes the top-level object into f.
// enabledPlugins decodes "enabledPlugins": an object of plugin ids to booleans.
func (d *decoder) enabledPlugins(n *jsontree.Node) (map[string]bool, error) {
	if n.Kind != jsontree.Object {
		return nil, d.fail(n, "enabledPlugins", "must be an object of plugin ids (found %s)", n.What())
	}
	m := make(map[string]bool, len(n.Keys))
	for i, id := range n.Keys {
		v := n.Vals[i]
		if v.Kind != jsontree.Bool {
			d.findingAt(v, "enabledPlugins."+id, "a %s, not true or false: hookd does not know whether Claude Code enables the plugin; skipped", v.What())
			continue
		}
		m[id] = v.Boolean
	}
	return m, nil
}

// pluginConfigs decodes "pluginConfigs": {"<plugin id>": {"options": {"<key>": value}}}.
// What does not fit is skipped with a warning: the options are only the values plugin
// hooks get (CLAUDE_PLUGIN_OPTION_<KEY>, ${user_config.KEY}).
func (d *decoder) pluginConfigs(n *jsontree.Node) map[string]map[string]json.RawMessage {
	if n.Kind != jsontree.Object {
		d.warn("pluginConfigs", "must be an object of plugin ids (found %s); ignored", n.What())
		return nil
	}
	out := map[string]map[string]json.RawMessage{}
	for i, id := range n.Keys {
		opts := n.Vals[i].Get("options")
		if opts == nil {
			continue
		}
		if opts.Kind != jsontree.Object {
			d.warn("pluginConfigs."+id+".options", "must be an object (found %s); ignored", opts.What())
			continue
		}
		m := map[string]json.RawMessage{}
		for j, k := range opts.Keys {
			v := opts.Vals[j]
			m[k] = json.RawMessage(d.data[v.Start:v.End])
		}
		out[id] = m
	}
	return out
}

// pluginFile decodes a plugin's hooks file ({"description": …, "hooks": {…}}) or, for
// its manifest, the manifest's "hooks" member when that is an object (inline hooks,
// either that same shape or the event map itself); a path or list of paths there names
// hooks files, which are files of their own (PluginHookFiles).
func (d *decoder) pluginFile(root *jsontree.Node, f *File) error {
	if root.Kind != jsontree.Object {
		return d.fail(root, "", "a plugin hooks file must be a JSON object (found %s)", root.What())
	}
	s := &Settings{Keys: append([]string(nil), root.Keys...)}
	f.Settings = s
	hooks := root.Get("hooks")
	if d.ref.Manifest {
		if hooks == nil || hooks.Kind != jsontree.Object {
			return nil // no inline hooks; the manifest's other keys are not hooks
		}
		if inner := hooks.Get("hooks"); inner != nil {
			hooks = inner
		}
		return d.hooks(hooks, s, f)
	}
	for i, key := range root.Keys {
		switch key {
		case "hooks":
		case "description":
			if _, err := d.str(root.Vals[i], key); err != nil {
				return err
			}
		default:
			d.warn(key, "unknown key in a plugin hooks file; ignored")
		}
	}
	if hooks == nil {
		d.warn("hooks", "a plugin hooks file without \"hooks\": nothing to run")
		return nil
	}
	return d.hooks(hooks, s, f)
}

func (d *decoder) settings(root *jsontree.Node, f *File) error {
	if root.Kind != jsontree.Object {
		return d.fail(root, "", "settings must be a JSON object (found %s)", root.What())
	}
	s := &Settings{Keys: append([]string(nil), root.Keys...)}
	f.Settings = s
	managed := d.ref.Managed()
	for i, key := range root.Keys {
		v := root.Vals[i]
		var err error
		switch key {
		case "hooks":
			err = d.hooks(v, s, f)
		case "permissions":
			err = d.permissions(v, s, f)
		case "disableAllHooks":
			var b bool
			if b, err = d.boolean(v, key); err == nil {
				s.DisableAllHooks = &b
			}
		case "allowManagedHooksOnly", "allowManagedPermissionRulesOnly":
			if !managed {
				d.warn(key, "only honoured in managed settings; ignored in %s settings", d.ref.Source())
				continue
			}
			b := true
			if v.Kind == jsontree.Bool {
				b = v.Boolean
			} else {
				// Spec §7: an invalid value is treated as true. A lock that is present but
				// mistyped is safest read as locked.
				d.warn(key, "must be a boolean (found %s); treated as true, as Claude Code does", v.What())
			}
			if key == "allowManagedHooksOnly" {
				s.AllowManagedHooksOnly = &b
			} else {
				s.AllowManagedPermissionRulesOnly = &b
			}
		case "allowedHttpHookUrls":
			var xs []string
			if xs, err = d.strings(v, key); err == nil {
				s.AllowedHTTPHookURLs = xs
			}
		case "httpHookAllowedEnvVars":
			var xs []string
			if xs, err = d.strings(v, key); err == nil {
				s.HTTPHookAllowedEnvVars = xs
			}
		case "env":
			s.Env, err = d.env(v)
		case "managedSourcesBehavior":
			if !managed {
				d.warn(key, "only honoured in managed settings; ignored in %s settings", d.ref.Source())
				continue
			}
			var b string
			if b, err = d.str(v, key); err == nil {
				if b != "first-wins" && b != "merge" {
					return d.fail(v, key, "must be \"first-wins\" or \"merge\" (found %q)", b)
				}
				s.ManagedSourcesBehavior = b
			}
		case "enabledPlugins":
			s.EnabledPlugins, err = d.enabledPlugins(v)
		case "pluginConfigs":
			s.PluginOptions = d.pluginConfigs(v)
		case "hookd":
			if d.ref.Kind != KindHookd {
				d.warn(key, "hookd's installation record belongs in hookd's own files (hookd.json), never in a Claude Code settings file: claude code ignores this entire file (none of its hooks run under Claude Code)")
				continue
			}
			s.Hookd = d.hookdMeta(v)
		default:
			if !keys.TopLevel[key] {
				d.warn(key, "unknown top-level key: claude code ignores this entire file (none of its hooks run under Claude Code); hookd still loads it")
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// hookdMeta decodes the "hookd" object leniently: it is hookd's own bookkeeping, and a
// mistyped field must not cost the moved hooks.
func (d *decoder) hookdMeta(n *jsontree.Node) *HookdMeta {
	if n.Kind != jsontree.Object {
		d.warn("hookd", "must be an object (found %s); ignored", n.What())
		return nil
	}
	m := &HookdMeta{}
	for i, k := range n.Keys {
		v := n.Vals[i]
		switch k {
		case "version":
			if v.Kind == jsontree.Number {
				if x, err := v.Num.Int64(); err == nil {
					m.Version = int(x)
				}
			}
		case "installed_from":
			if v.Kind == jsontree.String {
				m.InstalledFrom = v.Str
			}
		case "forwarder":
			if v.Kind == jsontree.String {
				m.Forwarder = v.Str
			}
		}
	}
	return m
}

// env decodes "env". Values should be strings; numbers and booleans are accepted with a
// warning (hookd does not act on env, so rejecting the file for it would only lose hooks).
func (d *decoder) env(n *jsontree.Node) (map[string]string, error) {
	if n.Kind != jsontree.Object {
		return nil, d.fail(n, "env", "must be an object (found %s)", n.What())
	}
	out := make(map[string]string, len(n.Keys))
	for i, k := range n.Keys {
		v := n.Vals[i]
		switch v.Kind {
		case jsontree.String:
			out[k] = v.Str
		case jsontree.Number:
			out[k] = v.Num.String()
			d.warn("env."+k, "should be a string (found a number)")
		case jsontree.Bool:
			out[k] = fmt.Sprint(v.Boolean)
			d.warn("env."+k, "should be a string (found a boolean)")
		default:
			return nil, d.fail(v, "env."+k, "must be a string (found %s)", v.What())
		}
	}
	return out, nil
}

func (d *decoder) permissions(n *jsontree.Node, s *Settings, f *File) error {
	if n.Kind != jsontree.Object {
		return d.fail(n, "permissions", "must be an object (found %s)", n.What())
	}
	p := &Permissions{}
	s.Permissions = p
	for i, key := range n.Keys {
		v := n.Vals[i]
		field := "permissions." + key
		var err error
		switch key {
		case "allow", "ask", "deny":
			// rules are compiled below, in deny/ask/allow order
		case "additionalDirectories":
			p.AdditionalDirectories, err = d.strings(v, field)
		case "defaultMode":
			if p.DefaultMode, err = d.str(v, field); err == nil && !keys.DefaultModes[p.DefaultMode] {
				d.warn(field, "unknown permission mode %q", p.DefaultMode)
			}
		case "disableBypassPermissionsMode", "disableAutoMode":
			var val string
			switch v.Kind {
			case jsontree.String:
				val = v.Str
			case jsontree.Bool:
				val = fmt.Sprint(v.Boolean)
			default:
				err = d.fail(v, field, "must be a string (found %s)", v.What())
			}
			if key == "disableAutoMode" {
				p.DisableAutoMode = val
			} else {
				p.DisableBypassPermissionsMode = val
			}
		case "blockReadsOutsideWorkingDirectories":
			var b bool
			if b, err = d.boolean(v, field); err == nil {
				p.BlockReadsOutsideWorkingDirectories = &b
			}
		default:
			if !keys.Permission[key] {
				d.warn(field, "unknown field; ignored")
			}
		}
		if err != nil {
			return err
		}
	}
	for _, l := range []struct {
		key  string
		list rules.List
		dst  *[]string
	}{{"deny", rules.Deny, &p.Deny}, {"ask", rules.Ask, &p.Ask}, {"allow", rules.Allow, &p.Allow}} {
		v := n.Get(l.key)
		if v == nil {
			continue
		}
		field := "permissions." + l.key
		texts, err := d.strings(v, field)
		if err != nil {
			return err
		}
		*l.dst = texts
		for i, text := range texts {
			r, err := rules.Parse(text, l.list, d.origin)
			if errors.Is(err, rules.ErrIgnored) {
				d.warn(fmt.Sprintf("%s[%d]", field, i), "rule skipped: %s", ruleErr(err))
				continue
			}
			if err != nil {
				// As Claude Code does, a rule that does not parse costs only itself:
				// the file's other rules and hooks still load. An error-level finding
				// says so (validate, status, the load log).
				d.findingAt(v.Elems[i], fmt.Sprintf("%s[%d]", field, i), "invalid rule %s; dropped: %s", ruleErr(err), droppedMeans[l.list])
				continue
			}
			f.Rules = append(f.Rules, r)
		}
	}
	return nil
}

// droppedMeans says what a dropped rule no longer does, by list.
var droppedMeans = map[rules.List]string{
	rules.Deny:  "it denies nothing until fixed (the file's other rules and hooks still apply)",
	rules.Ask:   "it asks for nothing until fixed (the file's other rules and hooks still apply)",
	rules.Allow: "it allows nothing until fixed (the file's other rules and hooks still apply)",
}

func (d *decoder) hooks(n *jsontree.Node, s *Settings, f *File) error {
	if n.Kind != jsontree.Object {
		return d.fail(n, "hooks", "must be an object of event names (found %s)", n.What())
	}
	for i, name := range n.Keys {
		v := n.Vals[i]
		field := "hooks." + name
		if alias, ok := d.eventAlias[name]; ok {
			name = alias
		}
		ev, ok := events.Lookup(name)
		if !ok {
			d.finding(field, "%s", unknownEvent(name)) // lint.go
			continue
		}
		if v.Kind != jsontree.Array {
			return d.fail(v, field, "must be an array of matcher groups (found %s)", v.What())
		}
		eh := EventHooks{Event: name}
		for gi, g := range v.Elems {
			grp, hs, err := d.group(ev, g, fmt.Sprintf("%s[%d]", field, gi), gi)
			if err != nil {
				return err
			}
			eh.Groups = append(eh.Groups, grp)
			f.Handlers = append(f.Handlers, hs...)
		}
		s.Hooks = append(s.Hooks, eh)
	}
	return nil
}

func (d *decoder) group(ev *events.Event, g *jsontree.Node, field string, gi int) (HookGroup, []*Handler, error) {
	var grp HookGroup
	if g.Kind != jsontree.Object {
		return grp, nil, d.fail(g, field, "must be an object with \"matcher\" and \"hooks\" (found %s)", g.What())
	}
	for _, k := range g.Keys {
		if k != "matcher" && k != "hooks" {
			d.warn(field+"."+k, "unknown field in matcher group; ignored")
		}
	}
	var m *matcher.Matcher
	matcherText := ""
	if mn := g.Get("matcher"); mn != nil {
		text, err := d.str(mn, field+".matcher")
		if err != nil {
			return grp, nil, err
		}
		grp.Matcher, matcherText = &text, text
		if ev.MatcherField == "" {
			// Spec §1.1: Claude Code ignores a matcher on these events. Still say so, and
			// flag a pattern that would not even compile, but do not fail the file.
			if t := strings.TrimSpace(text); t != "" && t != "*" {
				d.warn(field+".matcher", "%s has no matcher field; the matcher is ignored and the group always runs", ev.Name)
			}
			if _, err := matcher.Compile(text, ev.NarrowMatcher); err != nil {
				d.warn(field+".matcher", "%v (ignored on %s)", err, ev.Name)
			}
		} else {
			if ev.ModelMatch {
				text = events.ModelMatcherText(text) // Claude Code strips "[1m]" before matching
			}
			m, err = matcher.Compile(text, ev.NarrowMatcher)
			if err != nil {
				return grp, nil, d.fail(mn, field+".matcher", "%v", err)
			}
		}
	}
	hn := g.Get("hooks")
	if hn == nil {
		return grp, nil, d.fail(g, field+".hooks", "missing (a matcher group needs a \"hooks\" array)")
	}
	if hn.Kind != jsontree.Array {
		return grp, nil, d.fail(hn, field+".hooks", "must be an array of handlers (found %s)", hn.What())
	}
	var out []*Handler
	for hi, e := range hn.Elems {
		spec, h, err := d.handler(ev, e, fmt.Sprintf("%s.hooks[%d]", field, hi))
		if err != nil {
			return grp, nil, err
		}
		grp.Hooks = append(grp.Hooks, spec)
		h.ID = fmt.Sprintf("%s:%s#%s[%d].hooks[%d]", d.ref.Label(), d.ref.Path, ev.Name, gi, hi)
		h.Matcher, h.MatcherText = m, matcherText
		h.Group, h.Index = gi, hi
		out = append(out, h)
	}
	return grp, out, nil
}

// fieldTypes lists which handler fields apply to which types (spec §3.2). Fields not
// listed for a type are ignored for it, with a warning.
var fieldTypes = map[string][]events.HandlerType{
	"type": nil, "if": nil, "timeout": nil, "statusMessage": nil, "once": nil, // all types
	"command": {events.Command}, "args": {events.Command}, "shell": {events.Command},
	"async": {events.Command}, "asyncRewake": {events.Command},
	"onFailure": {events.Command, events.HTTP, events.MCPTool},
	"url":       {events.HTTP}, "headers": {events.HTTP}, "allowedEnvVars": {events.HTTP},
	"server": {events.MCPTool}, "tool": {events.MCPTool}, "input": {events.MCPTool},
	"prompt": {events.Prompt, events.Agent}, "model": {events.Prompt, events.Agent},
	"continueOnBlock": {events.Prompt},
}

// ignoredHandlerFields are the handler fields Claude Code 2.1.330's settings schema
// accepts that hookd knows and deliberately does not act on, with the reason. Together
// with fieldTypes they are every field the pinned binary accepts: `make conformance`
// fails when the binary has one that is in neither (HandlerFields).
var ignoredHandlerFields = map[string]string{
	"holdsTools": "@internal in Claude Code: UserPromptSubmit hooks of its official security-guidance plugin only",
	"rewakeMessage": "@internal in Claude Code: the system-reminder prefix of an asyncRewake hook's exit 2, " +
		"which Claude Code itself writes when it wakes the model",
	"rewakeSummary": "@internal in Claude Code: the one-line summary Claude Code's terminal shows for an asyncRewake exit 2",
	"cloud":         "@internal in Claude Code: whether a cloud session driven from this machine may run the hook",
}

// HandlerFields returns every handler field hookd knows: the ones it decodes, each with
// the handler types it applies to (nil: every type), and the ones it deliberately ignores
// (with why). `make conformance` compares this with the fields the pinned Claude Code
// binary's settings schema accepts.
func HandlerFields() (decoded map[string][]events.HandlerType, ignored map[string]string) {
	decoded = make(map[string][]events.HandlerType, len(fieldTypes))
	for k, v := range fieldTypes {
		decoded[k] = append([]events.HandlerType(nil), v...)
	}
	ignored = make(map[string]string, len(ignoredHandlerFields))
	for k, v := range ignoredHandlerFields {
		ignored[k] = v
	}
	return decoded, ignored
}

// maxTimeout bounds "timeout" (seconds) so the duration cannot overflow; a year is far
// beyond any sensible hook.
const maxTimeout = 365 * 24 * 3600

func (d *decoder) handler(ev *events.Event, n *jsontree.Node, field string) (HookSpec, *Handler, error) {
	var spec HookSpec
	if n.Kind != jsontree.Object {
		return spec, nil, d.fail(n, field, "must be a handler object (found %s)", n.What())
	}
	tn := n.Get("type")
	if tn == nil {
		return spec, nil, d.fail(n, field+".type", "missing (one of command, http, mcp_tool, prompt, agent)")
	}
	typ, err := d.str(tn, field+".type")
	if err != nil {
		return spec, nil, err
	}
	ht := events.HandlerType(typ)
	if !ht.Valid() {
		return spec, nil, d.fail(tn, field+".type", "unknown handler type %q (one of command, http, mcp_tool, prompt, agent)", typ)
	}
	if !ev.Accepts(ht) {
		return spec, nil, d.fail(tn, field+".type", "%s does not accept %s handlers (it accepts %s; spec §3.4)", ev.Name, typ, typeList(ev.Types))
	}
	spec.Type = typ
	h := &Handler{Event: ev, Type: ht, Source: d.ref.Source(), File: d.ref.Path, Runnable: ht.Runnable(), Plugin: d.ref.Plugin, Frontmatter: d.ref.Frontmatter,
		Raw: json.RawMessage(d.data[n.Start:n.End])}

	for i, key := range n.Keys {
		v := n.Vals[i]
		kf := field + "." + key
		types, known := fieldTypes[key]
		if !known {
			if why, ok := ignoredHandlerFields[key]; ok {
				d.warn(kf, "ignored: %s", why)
				continue
			}
			// A field hookd does not know may be one Claude Code acts on (onFailure was,
			// from 2.1.295, while hookd ignored it): an error-level finding, never a quiet
			// skip. The hook still runs, as Claude Code would still run it.
			d.finding(kf, "unknown handler field: hookd does not know what it does and ignores it (Claude Code may act on it; see `make conformance` in docs/claude-code.md); the hook still runs")
			continue
		}
		if types != nil && !containsType(types, ht) {
			d.warn(kf, "applies to %s handlers; ignored for %s", typeList(types), typ)
			continue
		}
		var err error
		switch key {
		case "type":
		case "command":
			spec.Command, err = d.str(v, kf)
		case "args":
			spec.Args, err = d.strings(v, kf)
		case "shell":
			if spec.Shell, err = d.str(v, kf); err == nil && spec.Shell != "bash" && spec.Shell != "powershell" {
				err = d.fail(v, kf, "must be \"bash\" or \"powershell\" (found %q)", spec.Shell)
			}
		case "if":
			spec.If, err = d.str(v, kf)
			if err == nil && strings.TrimSpace(spec.If) != "" {
				h.If, err = rules.ParseIf(spec.If, d.origin)
				if err != nil {
					err = d.fail(v, kf, "invalid if rule %s", ruleErr(err))
				}
			}
		case "timeout":
			if v.Kind != jsontree.Number {
				err = d.fail(v, kf, "must be a number of seconds (found %s)", v.What())
				break
			}
			secs, perr := v.Num.Float64()
			switch {
			case perr != nil || math.IsNaN(secs) || math.IsInf(secs, 0):
				err = d.fail(v, kf, "must be a number of seconds (found %s)", v.Num)
			case secs < 0:
				err = d.fail(v, kf, "must not be negative (found %s)", v.Num)
			case secs > maxTimeout:
				err = d.fail(v, kf, "too large (%s seconds; at most %d)", v.Num, maxTimeout)
			default:
				spec.Timeout = &secs
				h.Timeout = time.Duration(math.Round(secs * float64(time.Second)))
				if h.Timeout == 0 {
					d.warn(kf, "0 means the event default (%s)", h.EffectiveTimeout())
				}
			}
		case "statusMessage":
			spec.StatusMessage, err = d.str(v, kf)
		case "async":
			spec.Async, err = d.boolean(v, kf)
		case "asyncRewake":
			spec.AsyncRewake, err = d.boolean(v, kf)
		case "once":
			if spec.Once, err = d.boolean(v, kf); err == nil && spec.Once {
				if d.ref.Kind == KindSkill {
					h.Once = true
				} else {
					d.warn(kf, "honoured only in skill frontmatter (spec §3.2); ignored: the handler runs every time")
				}
			}
		case "onFailure":
			// Claude Code 2.1.295 (delta "Fail-closed handlers"): "continue" (the default)
			// or "block". Its schema rejects any other value for command and http
			// handlers, so hookd rejects the file too rather than guess which was meant.
			if spec.OnFailure, err = d.str(v, kf); err == nil && spec.OnFailure != OnFailureContinue && spec.OnFailure != OnFailureBlock {
				err = d.fail(v, kf, "must be %q or %q (found %q)", OnFailureContinue, OnFailureBlock, spec.OnFailure)
			}
		case "url":
			spec.URL, err = d.str(v, kf)
		case "headers":
			spec.Headers, err = d.stringMap(v, kf)
		case "allowedEnvVars":
			spec.AllowedEnvVars, err = d.strings(v, kf)
		case "server":
			spec.Server, err = d.str(v, kf)
		case "tool":
			spec.Tool, err = d.str(v, kf)
		case "input":
			if v.Kind != jsontree.Object {
				err = d.fail(v, kf, "must be an object (found %s)", v.What())
			} else {
				spec.Input = json.RawMessage(d.data[v.Start:v.End])
			}
		case "prompt":
			spec.Prompt, err = d.str(v, kf)
		case "model":
			spec.Model, err = d.str(v, kf)
		case "continueOnBlock":
			spec.ContinueOnBlock, err = d.boolean(v, kf)
		}
		if err != nil {
			return spec, nil, err
		}
	}

	// Required fields (spec §3.2).
	switch ht {
	case events.Command:
		if strings.TrimSpace(spec.Command) == "" {
			return spec, nil, d.fail(n, field+".command", "missing (a command handler needs \"command\")")
		}
		if spec.Args != nil && spec.Shell != "" {
			d.warn(field+".shell", "ignored: \"args\" selects the exec form, which runs without a shell")
		}
	case events.HTTP:
		if strings.TrimSpace(spec.URL) == "" {
			return spec, nil, d.fail(n, field+".url", "missing (an http handler needs \"url\")")
		}
	case events.MCPTool:
		if spec.Server == "" {
			return spec, nil, d.fail(n, field+".server", "missing (an mcp_tool handler needs \"server\" and \"tool\")")
		}
		if spec.Tool == "" {
			return spec, nil, d.fail(n, field+".tool", "missing (an mcp_tool handler needs \"server\" and \"tool\")")
		}
	case events.Prompt, events.Agent:
		if strings.TrimSpace(spec.Prompt) == "" {
			return spec, nil, d.fail(n, field+".prompt", "missing (a %s handler needs \"prompt\")", typ)
		}
	}
	if !ht.Runnable() {
		d.warn(field, "%s handlers run inside Claude Code's model or MCP connections; hookd reports them as not run", typ)
	}
	if h.If != nil && !ev.ToolEvent {
		d.warn(field+".if", "\"if\" is evaluated only on tool events; on %s this handler never runs (spec §2.1)", ev.Name)
	}

	h.Command, h.Args, h.Shell = spec.Command, spec.Args, spec.Shell
	h.IfText = spec.If
	h.StatusMessage = spec.StatusMessage
	h.AsyncRewake = spec.AsyncRewake
	h.Async = spec.Async || spec.AsyncRewake
	h.OnFailure = spec.OnFailure
	if h.OnFailure == OnFailureBlock {
		switch {
		case h.Async:
			d.warn(field+".onFailure", "ignored for async hooks (as in Claude Code): a failure of this hook never blocks")
		case OnFailureIgnoredOn(ev.Name):
			d.warn(field+".onFailure", "ignored on %s (as in Claude Code): a failure of this hook never blocks", ev.Name)
		}
	}
	h.URL, h.Headers, h.AllowedEnvVars = spec.URL, spec.Headers, spec.AllowedEnvVars
	h.Server, h.Tool, h.Input = spec.Server, spec.Tool, spec.Input
	h.Prompt, h.Model, h.ContinueOnBlock = spec.Prompt, spec.Model, spec.ContinueOnBlock
	h.Key = handlerKey(h)
	return spec, h, nil
}

// ruleErr renders a rules error (`rules: "text": reason`) without the package prefix.
func ruleErr(err error) string { return strings.TrimPrefix(err.Error(), "rules: ") }

func containsType(ts []events.HandlerType, t events.HandlerType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func typeList(ts []events.HandlerType) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}
