package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hookd/hookd/events"
)

// Channels of Claude Code's managed settings (FileRef.Channel), highest priority
// first after server-managed settings, which hookd cannot read: an MDM profile
// (macOS: the com.anthropic.claudecode managed-preferences plist), then the file channel
// (managed-settings.json with managed-settings.d). Claude Code takes managed policy from
// the highest channel present alone ("first-wins", its default) unless that channel sets
// "managedSourcesBehavior": "merge" (Compile; docs/platforms.md "MDM").
const (
	ChannelFile = ""    // managed-settings.json, managed-settings.d/*.json
	ChannelMDM  = "mdm" // an MDM profile plist
)

// ManagedChoice is which of Claude Code's managed channels is in effect (Compile).
type ManagedChoice struct {
	// Channel is "mdm", "file" or "" (no managed settings present).
	Channel string
	// Behavior is "first-wins" or "merge": the managedSourcesBehavior of the highest
	// channel present, first-wins when it sets none.
	Behavior string
	// InEffect are the managed files Claude Code (and so hookd) applies, in
	// configuration order.
	InEffect []string
	// Skipped are the managed files present that Claude Code ignores, one finding each
	// (error-level for hookd's own routing drop-in: Claude Code then forwards nothing).
	Skipped []Warning
}

// String is the choice as status prints it: "mdm (first-wins): /path/x.plist".
func (c ManagedChoice) String() string {
	if c.Channel == "" {
		return "none"
	}
	return c.Channel + " (" + c.Behavior + "): " + strings.Join(c.InEffect, ", ")
}

// chooseManaged models Claude Code's managed-channel precedence (2.1.332, read from the
// binary: the managed tier is the highest channel present — server-managed settings,
// then the MDM profile, then managed-settings.json with managed-settings.d — alone,
// unless that channel sets "managedSourcesBehavior": "merge", when every present
// channel applies). Server-managed settings live in Claude Code's account state and
// cannot be seen by hookd. Of the MDM profiles, the first present one is Claude Code's
// (the user's before the device's).
//
// It returns files without the managed files Claude Code skips, and the choice. A
// channel whose winning file is untrusted (File.Untrusted) skips nothing: a file that
// only restricts must not be able to switch off the administrator's other files.
func chooseManaged(files []*File) ([]*File, ManagedChoice) {
	present := func(f *File) bool { return f.Settings != nil && len(f.Settings.Keys) > 0 }
	var mdm *File
	var fileCh []*File
	for _, f := range files {
		if f.Ref.Kind != KindManaged || !present(f) {
			continue
		}
		switch {
		case f.Ref.Channel == ChannelMDM && mdm == nil:
			mdm = f
		case f.Ref.Channel == ChannelFile:
			fileCh = append(fileCh, f)
		}
	}
	c := ManagedChoice{Behavior: "first-wins"}
	skip := map[*File]string{}
	switch {
	case mdm != nil:
		c.Channel = "mdm"
		if b := mdm.Settings.ManagedSourcesBehavior; b != "" {
			c.Behavior = b
		}
		if c.Behavior == "merge" || mdm.Untrusted != "" {
			break
		}
		for _, f := range fileCh {
			skip[f] = fmt.Sprintf("Claude Code ignores this file: the MDM profile %s is present and sets no managedSourcesBehavior \"merge\" (the first managed source wins)", mdm.Ref.Path)
		}
	case len(fileCh) > 0:
		c.Channel = "file"
		if b := fileCh[0].Settings.ManagedSourcesBehavior; b != "" {
			c.Behavior = b
		}
	}
	for _, f := range files {
		if f.Ref.Kind == KindManaged && f.Ref.Channel == ChannelMDM && f != mdm && present(f) {
			skip[f] = fmt.Sprintf("Claude Code ignores this MDM profile: %s comes first", mdm.Ref.Path)
		}
	}
	out := files[:0:0]
	for _, f := range files {
		why, skipped := skip[f]
		if !skipped {
			if f.Ref.Kind == KindManaged && present(f) {
				c.InEffect = append(c.InEffect, f.Ref.Path)
			}
			out = append(out, f)
			continue
		}
		w := Warning{File: f.Ref.Path, Message: why + "; hookd ignores it too"}
		if routes(f) {
			w.Level = LevelError
			w.Message = "hookd's drop-in is ignored by Claude Code, which therefore forwards no event to hookd: " + why +
				". Put hookd's forwarders and allowManagedHooksOnly in the MDM profile, or set \"managedSourcesBehavior\": \"merge\" there"
		}
		c.Skipped = append(c.Skipped, w)
	}
	return out, c
}

// routes reports whether f holds a hookc forwarder (hookd's routing drop-in).
func routes(f *File) bool {
	for _, h := range f.Handlers {
		if h.Type == events.Command && IsForwarder(h.Command, h.Args) {
			return true
		}
	}
	return false
}

// ServerManagedCache returns Claude Code's cached copy of server-managed settings in the
// user dir (remote-settings.json, named so in the 2.1.332 binary), or "" when there is
// none. Server-managed settings outrank the MDM profile and the file channel, and hookd
// cannot read them (they are fetched and verified by Claude Code's account state); when
// the cache exists, status and validate say that the managed source they name may not be
// the one in effect.
func ServerManagedCache(userDir string) string {
	if userDir == "" {
		return ""
	}
	p := filepath.Join(userDir, "remote-settings.json")
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() > 2 {
		return p
	}
	return ""
}

// ServerManagedNote is what status and validate print about such a cache.
func ServerManagedNote(cache string) string {
	return "Claude Code has server-managed settings cached at " + cache + ": where they are in effect they outrank the MDM profile and managed-settings.json (first-wins), and hookd cannot read them"
}
