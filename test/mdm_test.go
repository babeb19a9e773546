package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 22 item 3: hooks and permission rules delivered by an MDM profile (the
// com.anthropic.claudecode managed-preferences plist on macOS) are managed settings, and
// status says which managed source Claude Code uses. The profile is a binary plist
// written by Python's plistlib (configs/settings/testdata/mdm/make.py), handed to hookd
// with --mdm-profile as the resolver hands it the /Library/Managed Preferences paths on
// macOS.

// mdmEnv is an Env with the MDM profile fixture name at <root>/mp/com.anthropic.claudecode.plist,
// its hook (mdm-guard) a script that leaves a marker.
func mdmEnv(t *testing.T, fixture string) (e *Env, profile, marker string) {
	t.Helper()
	e = NewEnv(t)
	data, err := os.ReadFile(filepath.Join(repoRoot(), "configs", "settings", "testdata", "mdm", fixture))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.Root, "mp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	profile = filepath.Join(dir, "com.anthropic.claudecode.plist")
	if err := os.WriteFile(profile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The profile's hook runs the command "mdm-guard": put one on the hook's PATH.
	marker = filepath.Join(e.Root, "mdm-guard-ran")
	bin := filepath.Join(e.Root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "mdm-guard"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.extraEnv = append(e.extraEnv, "PATH="+bin+":"+os.Getenv("PATH"))
	return e, profile, marker
}

func projectStatus(t *testing.T, e *Env) map[string]any {
	t.Helper()
	ps, _ := e.Status()["projects"].([]any)
	for _, p := range ps {
		if m := p.(map[string]any); m["dir"] == e.Project {
			return m
		}
	}
	t.Fatalf("status has no project %s: %v", e.Project, ps)
	return nil
}

func TestMDMProfileIsManagedSettings(t *testing.T) {
	e, profile, marker := mdmEnv(t, "profile.binary.plist")
	e.Start("--mdm-profile", profile)

	// The profile's deny rule binds.
	res, _ := e.Event(bashPayload(e, "curl https://example.com"))
	if ra := res.RuleAnswer; ra == nil || ra.Decision != "deny" || ra.OverriddenBy == nil || ra.OverriddenBy.Rule != "Bash(curl:*)" || ra.OverriddenBy.File != profile || ra.OverriddenBy.Source != "managed" {
		t.Fatalf("want the MDM profile's managed deny rule, got %+v", res.RuleAnswer)
	}
	// Its hook runs as a managed hook (this caller is not Claude Code, so hookd runs it).
	res, _ = e.Event(bashPayload(e, "ls"))
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the MDM profile's hook did not run: %+v", res)
	}
	var src string
	for _, h := range res.Hooks {
		if h.Hook.Command == "mdm-guard" {
			src = h.Hook.Source + " " + h.Hook.File
		}
	}
	if src != "managed "+profile {
		t.Errorf("the hook's source is %q, want managed %s", src, profile)
	}
	// status: the source in effect.
	if got := projectStatus(t, e)["managed_source"]; got != "mdm (first-wins): "+profile {
		t.Errorf("status managed_source = %v", got)
	}
	r := e.Hookd("", "status")
	if !strings.Contains(r.Stdout, "managed settings Claude Code uses: mdm (first-wins): "+profile) {
		t.Errorf("hookd status does not say which managed source is in effect:\n%s", r.Stdout)
	}
}

// Under an MDM profile that does not say "merge", Claude Code ignores managed-settings.d
// — hookd's routing drop-in too, so it forwards nothing: status and validate say so as an
// error-level finding. With "merge" in the profile both apply and nothing is said.
func TestMDMProfileIgnoresHookdDropIn(t *testing.T) {
	for _, tt := range []struct {
		fixture string
		ignored bool
	}{{"profile.binary.plist", true}, {"merge.binary.plist", false}} {
		t.Run(tt.fixture, func(t *testing.T) {
			e, profile, _ := mdmEnv(t, tt.fixture)
			if r := e.Hookd("", "install", "claude-code", "--scope", "managed", "--hookc", bins.hookc); r.Code != 0 {
				t.Fatalf("install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			dropIn := filepath.Join(e.Managed, "managed-settings.d", "50-hookd.json")
			e.Start("--mdm-profile", profile)
			e.Event(bashPayload(e, "ls")) // projects load with their first event
			ps := projectStatus(t, e)
			skipped, _ := ps["managed_skipped"].([]any)
			v := e.Hookd("", "validate", "--mdm-profile", profile)
			if !tt.ignored {
				if len(skipped) != 0 || ps["routed_by"] != dropIn || ps["managed_source"] != "mdm (merge): "+dropIn+", "+profile {
					t.Fatalf("merge: status %v", ps)
				}
				if v.Code != 0 {
					t.Fatalf("validate under merge: exit %d\n%s", v.Code, v.Stdout)
				}
				return
			}
			if len(skipped) != 1 || !strings.HasPrefix(skipped[0].(string), "error: "+dropIn) || !strings.Contains(skipped[0].(string), "forwards no event to hookd") {
				t.Fatalf("status managed_skipped = %v", skipped)
			}
			if ps["routed_by"] != nil && ps["routed_by"] != "" {
				t.Errorf("status says the ignored drop-in routes: %v", ps["routed_by"])
			}
			if r := e.Hookd("", "status", "--check"); r.Code != 1 || !strings.Contains(r.Stdout+r.Stderr, "forwards no event to hookd") {
				t.Errorf("status --check: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			if v.Code != 1 || !strings.Contains(v.Stdout, "managed settings Claude Code uses: mdm (first-wins): "+profile) || !strings.Contains(v.Stdout, "error: "+dropIn) {
				t.Errorf("validate: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
			}
		})
	}
}
