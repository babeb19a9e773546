package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 28 item 5: managed settings written by another user were trusted — a drop-in
// another uid wrote into the managed dir was loaded and its hook ran as the daemon's
// user (root here). These tests write the files for real as another uid (root chowns
// them to otherUID) or loosen the directories' modes, then drive the daemon as a
// harness other than Claude Code would (hookd then runs managed hooks itself).

// trustEnv is an Env whose managed dir holds managed-settings.d/90-admin.json with a
// PreToolUse hook that leaves a marker when it runs and allows the call. The caller
// sets the hostile part up before the daemon starts.
func trustEnv(t *testing.T) (e *Env, dropIn, marker string) {
	t.Helper()
	requireRoot(t)
	e = NewEnv(t)
	marker = filepath.Join(e.Root, "hook-ran")
	allow := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"managed hook"}}`
	d := filepath.Join(e.Managed, "managed-settings.d")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	dropIn = filepath.Join(d, "90-admin.json")
	if err := os.WriteFile(dropIn, []byte(preToolUse(cmdHook("touch "+marker+"; echo '"+allow+"'"))), 0o644); err != nil {
		t.Fatal(err)
	}
	return e, dropIn, marker
}

// checkFailedClosed sends a Bash call and checks that the managed hook did not run, the
// answer is a deny naming the untrusted file and why, status reports the file untrusted
// with an error-level finding, and validate says so and exits 1.
func checkFailedClosed(t *testing.T, e *Env, dropIn, marker, why string) {
	t.Helper()
	e.Start()
	res, _ := e.Event(bashPayload(e, "ls"))
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the untrusted managed hook ran (as uid %d)", os.Geteuid())
	}
	if res.Permission == nil || res.Permission.Decision != "deny" {
		t.Fatalf("want a fail-closed deny, got %+v", res)
	}
	if !strings.Contains(res.Permission.Reason, "untrusted managed file") || !strings.Contains(res.Permission.Reason, why) {
		t.Fatalf("the deny does not say what is untrusted (want %q): %q", why, res.Permission.Reason)
	}
	st := e.Status()
	found := false
	for _, s := range st["sources"].([]any) {
		src := s.(map[string]any)
		if src["path"] != dropIn {
			continue
		}
		found = true
		if src["state"] != "untrusted" {
			t.Errorf("status: %s is %v, want untrusted", dropIn, src["state"])
		}
		ws, _ := src["warnings"].([]any)
		if len(ws) == 0 || !strings.HasPrefix(ws[0].(string), "error: ") || !strings.Contains(ws[0].(string), why) {
			t.Errorf("status: no error-level finding naming %q: %v", why, ws)
		}
	}
	if !found {
		t.Fatalf("status does not list %s: %v", dropIn, st["sources"])
	}
	r := e.Hookd("", "status")
	if r.Code != 1 || !strings.Contains(r.Stdout, "untrusted") {
		t.Errorf("hookd status: exit %d (want 1), output:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	v := e.Hookd("", "validate")
	if v.Code != 1 || !strings.Contains(v.Stdout, dropIn+": UNTRUSTED") || !strings.Contains(v.Stdout, "error: ") {
		t.Errorf("hookd validate: exit %d (want 1), output:\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	t.Logf("faults_managed_trust: %s → its hook did not run; Bash denied; status exit %d, validate exit %d", strings.TrimPrefix(res.Permission.Reason, "hookd did not run this managed hook: "), r.Code, v.Code)
}

// The control: the same drop-in, root's and not writable by others, runs.
func TestFaultManagedTrustControl(t *testing.T) {
	e, _, marker := trustEnv(t)
	e.Start()
	res, _ := e.Event(bashPayload(e, "ls"))
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the trusted managed hook did not run: %+v", res)
	}
	if res.Permission == nil || res.Permission.Decision != "allow" {
		t.Fatalf("want the managed hook's allow, got %+v", res)
	}
	t.Logf("faults_managed_trust: control, the same drop-in root's and 0644 in 0755 directories: its hook ran and allowed")
}

func TestFaultManagedTrustForeignOwner(t *testing.T) {
	e, dropIn, marker := trustEnv(t)
	if err := os.Chown(dropIn, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	checkFailedClosed(t, e, dropIn, marker, "is owned by uid 54321")
}

func TestFaultManagedTrustWorldWritableDir(t *testing.T) {
	e, dropIn, marker := trustEnv(t)
	// Another user drops a file into a directory anyone can write (o+w, no sticky bit):
	// the daemon must not trust the directory, whoever owns the file in it.
	d := filepath.Dir(dropIn)
	if err := os.Chmod(d, 0o777); err != nil {
		t.Fatal(err)
	}
	checkFailedClosed(t, e, dropIn, marker, d+" is writable by group and others")
}

func TestFaultManagedTrustGroupWritableFile(t *testing.T) {
	e, dropIn, marker := trustEnv(t)
	if err := os.Chmod(dropIn, 0o664); err != nil {
		t.Fatal(err)
	}
	checkFailedClosed(t, e, dropIn, marker, "is writable by group")
}

// A drop-in reached through a directory another uid owns higher up the chain: whoever
// owns that directory could swap the whole managed dir.
func TestFaultManagedTrustForeignAncestor(t *testing.T) {
	e, dropIn, marker := trustEnv(t)
	if err := os.Chown(e.Managed, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	checkFailedClosed(t, e, dropIn, marker, e.Managed+" is owned by uid 54321")
}

// `hookd install claude-code --scope managed` refuses a managed dir others can write,
// and writes nothing there.
func TestFaultManagedTrustInstallRefuses(t *testing.T) {
	requireRoot(t)
	e := NewEnv(t)
	if err := os.Chmod(e.Managed, 0o777); err != nil {
		t.Fatal(err)
	}
	r := e.Hookd("", "install", "claude-code", "--scope", "managed", "--hookc", bins.hookc)
	if r.Code == 0 || !strings.Contains(r.Stderr+r.Stdout, "refusing to install into") || !strings.Contains(r.Stderr+r.Stdout, "writable by group and others") {
		t.Fatalf("install into a world-writable managed dir: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(e.Managed, "managed-settings.d")); err == nil {
		t.Fatal("install wrote into the untrusted managed dir")
	}
	// Fixed, it installs.
	if err := os.Chmod(e.Managed, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := e.Hookd("", "install", "claude-code", "--scope", "managed", "--hookc", bins.hookc); r.Code != 0 {
		t.Fatalf("install into a trusted managed dir: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("faults_managed_trust: install --scope managed into a 0777 managed dir: refused, nothing written; after chmod 0755: installed")
}

// The verdict follows the disk: a running daemon that trusted the drop-in stops trusting
// it once managed-settings.d becomes world-writable (the watcher sees the chmod), and
// trusts it again once fixed.
func TestFaultManagedTrustFollowsChmod(t *testing.T) {
	e, dropIn, marker := trustEnv(t)
	e.Start()
	if res, _ := e.Event(bashPayload(e, "ls")); res.Permission == nil || res.Permission.Decision != "allow" {
		t.Fatalf("trusted: want allow, got %+v", res)
	}
	os.Remove(marker)
	d := filepath.Dir(dropIn)
	if err := os.Chmod(d, 0o777); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 10*time.Second, "the drop-in untrusted after chmod o+w", func() bool {
		res, _ := e.Event(bashPayload(e, "ls"))
		return res.Permission != nil && res.Permission.Decision == "deny"
	})
	// Until the watcher's reload the old verdict may stand; from the first deny on, the
	// hook never runs again.
	os.Remove(marker)
	if res, _ := e.Event(bashPayload(e, "ls")); res.Permission == nil || res.Permission.Decision != "deny" {
		t.Fatalf("untrusted again: want deny, got %+v", res)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the hook ran after its directory became world-writable")
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 10*time.Second, "the drop-in trusted again", func() bool {
		res, _ := e.Event(bashPayload(e, "ls"))
		return res.Permission != nil && res.Permission.Decision == "allow"
	})
	t.Logf("faults_managed_trust: a running daemon, managed-settings.d chmod 0777: denied from the watcher's reload on, the hook never ran again; chmod 0755: allowed again")
}
