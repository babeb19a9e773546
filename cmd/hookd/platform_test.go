package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The macOS answers of the path resolver reach the command line: with hostOS set to
// darwin, `install claude-code --scope managed --dry-run` plans hookd's drop-in in
// /Library/Application Support/ClaudeCode/managed-settings.d/, where Claude Code reads
// managed settings on macOS. Nothing is written (dry run), so this runs on Linux.
func TestInstallManagedDryRunOnMacOS(t *testing.T) {
	defer func(os string) { hostOS = os }(hostOS)
	hostOS = "darwin"
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USER", "ann")
	for _, k := range []string{"HOOKD_MANAGED_DIR", "HOOKD_STATE_DIR", "HOOKD_USER_DIR", "HOOKD_CONFIG"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	app := App()
	var out, errb bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errb
	err := app.Run([]string{"hookd", "install", "claude-code", "--scope", "managed", "--dry-run", "--hookc", "/usr/local/bin/hookc"})
	if err != nil {
		t.Fatalf("install --dry-run: %v\n%s%s", err, out.String(), errb.String())
	}
	want := "/Library/Application Support/ClaudeCode/managed-settings.d/50-hookd.json"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("the dry run does not target %s:\n%s%s", want, out.String(), errb.String())
	}
	for _, linux := range []string{"/etc/claude-code", ".local/state"} {
		if strings.Contains(out.String()+errb.String(), linux) {
			t.Errorf("the macOS dry run mentions the Linux path %s:\n%s", linux, out.String())
		}
	}
}
