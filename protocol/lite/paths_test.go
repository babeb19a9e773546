package lite

import (
	"reflect"
	"strings"
	"testing"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// Every path decision for both OSes, answered on whichever OS runs the test.
func TestPathsFor(t *testing.T) {
	long := "/Users/" + strings.Repeat("x", 80)
	for _, tt := range []struct {
		name string
		goos string
		env  func(string) string
		want Paths
	}{
		{"linux, XDG", Linux, env("HOME", "/home/ann", "USER", "ann", "XDG_RUNTIME_DIR", "/run/user/1000", "XDG_STATE_HOME", "/s", "XDG_CONFIG_HOME", "/c"), Paths{
			Socket: "/run/user/1000/hookd/hookd.sock", StateDir: "/s/hookd", ConfigFile: "/c/hookd/config.json", LogDir: "/s/hookd/log",
			UserDir: "/home/ann/.claude", ManagedDir: "/etc/claude-code", MaxSocketPath: 107}},
		{"linux, HOME only", Linux, env("HOME", "/home/ann"), Paths{
			Socket: "/home/ann/.hookd/run/hookd.sock", StateDir: "/home/ann/.local/state/hookd", ConfigFile: "/home/ann/.config/hookd/config.json",
			LogDir: "/home/ann/.local/state/hookd/log", UserDir: "/home/ann/.claude", ManagedDir: "/etc/claude-code", MaxSocketPath: 107}},
		{"linux, no HOME", Linux, env("TMPDIR", "/var/tmp"), Paths{
			Socket: "/var/tmp/hookd-501/hookd.sock", ManagedDir: "/etc/claude-code", MaxSocketPath: 107}},
		{"macOS", MacOS, env("HOME", "/Users/ann", "USER", "ann", "TMPDIR", "/var/folders/zz/abc/T/", "XDG_RUNTIME_DIR", "/ignored", "XDG_STATE_HOME", "/ignored"), Paths{
			Socket:        "/Users/ann/Library/Caches/hookd/hookd.sock",
			StateDir:      "/Users/ann/Library/Application Support/hookd",
			ConfigFile:    "/Users/ann/Library/Application Support/hookd/config.json",
			LogDir:        "/Users/ann/Library/Logs/hookd",
			UserDir:       "/Users/ann/.claude",
			ManagedDir:    "/Library/Application Support/ClaudeCode",
			MDMProfiles:   []string{"/Library/Managed Preferences/ann/com.anthropic.claudecode.plist", "/Library/Managed Preferences/com.anthropic.claudecode.plist"},
			MaxSocketPath: 103}},
		{"macOS, HOOKD_SOCKET, no USER", MacOS, env("HOME", "/Users/ann", "HOOKD_SOCKET", "/x/s.sock"), Paths{
			Socket: "/x/s.sock", StateDir: "/Users/ann/Library/Application Support/hookd", ConfigFile: "/Users/ann/Library/Application Support/hookd/config.json",
			LogDir: "/Users/ann/Library/Logs/hookd", UserDir: "/Users/ann/.claude", ManagedDir: "/Library/Application Support/ClaudeCode",
			MDMProfiles: []string{"/Library/Managed Preferences/com.anthropic.claudecode.plist"}, MaxSocketPath: 103}},
		{"macOS, a USER that is not a name", MacOS, env("HOME", "/Users/ann", "USER", "../etc"), Paths{
			Socket: "/Users/ann/Library/Caches/hookd/hookd.sock", StateDir: "/Users/ann/Library/Application Support/hookd", ConfigFile: "/Users/ann/Library/Application Support/hookd/config.json",
			LogDir: "/Users/ann/Library/Logs/hookd", UserDir: "/Users/ann/.claude", ManagedDir: "/Library/Application Support/ClaudeCode",
			MDMProfiles: []string{"/Library/Managed Preferences/com.anthropic.claudecode.plist"}, MaxSocketPath: 103}},
		{"macOS, HOME too long for sun_path", MacOS, env("HOME", long, "TMPDIR", "/var/folders/zz/abc/T/"), Paths{
			Socket: "/var/folders/zz/abc/T/hookd-501/hookd.sock", StateDir: long + "/Library/Application Support/hookd", ConfigFile: long + "/Library/Application Support/hookd/config.json",
			LogDir: long + "/Library/Logs/hookd", UserDir: long + "/.claude", ManagedDir: "/Library/Application Support/ClaudeCode",
			MDMProfiles: []string{"/Library/Managed Preferences/com.anthropic.claudecode.plist"}, MaxSocketPath: 103}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := PathsFor(tt.goos, tt.env, 501)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PathsFor(%s)\n got %+v\nwant %+v", tt.goos, got, tt.want)
			}
			if len(got.Socket) > got.MaxSocketPath && tt.env(EnvSocket) == "" {
				t.Errorf("socket %q is longer than %d bytes", got.Socket, got.MaxSocketPath)
			}
		})
	}
}
