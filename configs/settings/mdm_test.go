package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/rules"
)

// The fixtures in testdata/mdm were written by Python's plistlib (make.py), not by the
// decoder under test.
func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "mdm", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The deny rule and the hook of an MDM profile are managed settings.
func TestMDMProfileIsManagedSettings(t *testing.T) {
	ref := FileRef{Path: "/Library/Managed Preferences/ann/com.anthropic.claudecode.plist", Kind: KindManaged, Channel: ChannelMDM}
	f, err := ParseFile(ref, readFixture(t, "profile.binary.plist"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Handlers) != 1 || f.Handlers[0].Command != "mdm-guard" || f.Handlers[0].Source != KindManaged {
		t.Fatalf("handlers: %+v", f.Handlers)
	}
	if len(f.Rules) != 1 || f.Rules[0].Text != "Bash(curl:*)" || f.Rules[0].Origin.Source != "managed" {
		t.Fatalf("rules: %+v", f.Rules)
	}
	// A profile Claude Code cannot read is an invalid file that names it.
	if _, err := ParseFile(ref, readFixture(t, "date.xml.plist"), ""); err == nil || !strings.Contains(err.Error(), ref.Path+": MDM profile: deployed:") {
		t.Fatalf("date profile: %v", err)
	}
}

func parseManaged(t *testing.T, path, channel, content string) *File {
	t.Helper()
	f, err := ParseFile(FileRef{Path: path, Kind: KindManaged, Channel: channel}, []byte(content), "")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Claude Code's channel precedence: the MDM profile alone unless it says "merge";
// hookd's drop-in skipped under it is an error-level finding.
func TestManagedChannelPrecedence(t *testing.T) {
	dropIn := parseManaged(t, "/etc/claude-code/managed-settings.d/50-hookd.json", ChannelFile,
		`{"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "hookc"}]}]}}`)
	base := parseManaged(t, "/etc/claude-code/managed-settings.json", ChannelFile, `{"permissions": {"deny": ["Read(//secrets/**)"]}}`)
	mdmRef := "/Library/Managed Preferences/com.anthropic.claudecode.plist"
	firstWins, err := ParseFile(FileRef{Path: mdmRef, Kind: KindManaged, Channel: ChannelMDM}, readFixture(t, "profile.binary.plist"), "")
	if err != nil {
		t.Fatal(err)
	}
	merge, err := ParseFile(FileRef{Path: mdmRef, Kind: KindManaged, Channel: ChannelMDM}, readFixture(t, "merge.binary.plist"), "")
	if err != nil {
		t.Fatal(err)
	}
	user := parseManaged(t, "/home/u/.claude/settings.json", ChannelFile, `{}`)
	user.Ref.Kind = KindUser

	// No MDM profile: the file channel.
	s := Compile([]*File{base, dropIn, user})
	if s.Managed.Channel != "file" || s.Managed.Behavior != "first-wins" || len(s.Managed.Skipped) != 0 || s.RoutedBy != dropIn.Ref.Path {
		t.Fatalf("file channel: %+v routed by %q", s.Managed, s.RoutedBy)
	}

	// The MDM profile wins alone: the drop-in and managed-settings.json are skipped.
	s = Compile([]*File{base, dropIn, firstWins, user})
	if s.Managed.Channel != "mdm" || s.Managed.Behavior != "first-wins" || !reflect.DeepEqual(s.Managed.InEffect, []string{mdmRef}) {
		t.Fatalf("first-wins: %+v", s.Managed)
	}
	if s.RoutedBy != "" {
		t.Errorf("the skipped drop-in still routes: %q", s.RoutedBy)
	}
	if len(s.Managed.Skipped) != 2 || s.Managed.Skipped[0].IsError() || !s.Managed.Skipped[1].IsError() ||
		!strings.Contains(s.Managed.Skipped[1].Message, "forwards no event to hookd") {
		t.Fatalf("skipped: %+v", s.Managed.Skipped)
	}
	if m := s.Rules.Evaluate(readCall("/secrets/k")); m.Decision == "deny" {
		t.Errorf("the skipped managed-settings.json's deny rule still binds")
	}
	if !strings.Contains(s.Managed.String(), "mdm (first-wins): "+mdmRef) {
		t.Errorf("String() = %q", s.Managed.String())
	}

	// managedSourcesBehavior "merge": every channel applies.
	s = Compile([]*File{base, dropIn, merge, user})
	if s.Managed.Channel != "mdm" || s.Managed.Behavior != "merge" || len(s.Managed.Skipped) != 0 || len(s.Managed.InEffect) != 3 || s.RoutedBy != dropIn.Ref.Path {
		t.Fatalf("merge: %+v routed by %q", s.Managed, s.RoutedBy)
	}
	if m := s.Rules.Evaluate(readCall("/secrets/k")); m.Decision != "deny" {
		t.Errorf("under merge managed-settings.json's deny rule does not bind")
	}
	run, _ := s.Match(Query{Event: mustEvent(t, "PreToolUse"), MatchValue: "Bash"})
	if len(run) != 1 || run[0].Command != "mdm-guard" {
		t.Errorf("the MDM hook is not matched: %v", run)
	}

	// An untrusted MDM profile cannot switch the file channel off.
	untrusted, _ := ParseFile(FileRef{Path: mdmRef, Kind: KindManaged, Channel: ChannelMDM}, readFixture(t, "profile.binary.plist"), "")
	Untrust(untrusted, "untrusted managed file: x")
	s = Compile([]*File{base, dropIn, untrusted, user})
	if len(s.Managed.Skipped) != 0 || s.RoutedBy != dropIn.Ref.Path {
		t.Fatalf("untrusted MDM profile skipped files: %+v", s.Managed)
	}
}

func mustEvent(t *testing.T, name string) *events.Event {
	t.Helper()
	ev, ok := events.Lookup(name)
	if !ok {
		t.Fatal(name)
	}
	return ev
}

func readCall(path string) rules.Call {
	return rules.Call{Tool: "Read", Input: map[string]any{"file_path": path}, Cwd: "/p", Home: "/home/u"}
}

func TestServerManagedCache(t *testing.T) {
	dir := t.TempDir()
	if got := ServerManagedCache(dir); got != "" {
		t.Fatalf("no cache: %q", got)
	}
	p := filepath.Join(dir, "remote-settings.json")
	if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := ServerManagedCache(dir); got != "" {
		t.Fatalf("an empty object is no settings: %q", got)
	}
	if err := os.WriteFile(p, []byte(`{"permissions":{"deny":["Bash(curl:*)"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := ServerManagedCache(dir); got != p {
		t.Fatalf("cache %q, want %s", got, p)
	}
}
