package test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/test/testutil"
)

// Issue 13, defect 5: `audit verify` must fail when the newest records are cut, the head
// is deleted or the newest file is deleted — after a SIGKILL too, when no Close ever
// wrote the head. One real daemon answers 25 events and is SIGKILLed; each tampering is
// applied to its own copy of the audit directory and checked with `hookd audit verify`.
func TestFaultAuditAfterSIGKILL(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", preToolUse(cmdHook("exit 0")))
	e.Start()
	for i := 0; i < 25; i++ {
		res, _ := e.Event(bashPayload(e, "echo "+strings.Repeat("x", i)))
		if res == nil {
			t.Fatal("no result")
		}
	}
	// The 25 answers were sent, so their records are durable; kill without Close.
	_ = e.daemon.Process.Kill()
	<-e.exited
	e.daemon = nil
	src := filepath.Dir(e.auditFile())
	verify := func(dir string) Result {
		return e.Hookd("", "audit", "--audit-dir", dir, "verify")
	}
	pristine := verify(src)
	if pristine.Code != 0 {
		t.Fatalf("the untouched log must verify after SIGKILL: exit %d\n%s%s\n%s", pristine.Code, pristine.Stdout, pristine.Stderr, e.Logs())
	}
	cases := []struct {
		name   string
		tamper func(t *testing.T, current string)
		want   string
	}{
		{"last record cut at a line end", func(t *testing.T, p string) {
			data, _ := os.ReadFile(p)
			lines := bytes.SplitAfter(data, []byte("\n"))
			lines = lines[:len(lines)-1] // SplitAfter leaves an empty last element
			os.WriteFile(p, bytes.Join(lines[:len(lines)-1], nil), 0o600)
		}, "records were removed from the end"},
		{"last five records cut", func(t *testing.T, p string) {
			data, _ := os.ReadFile(p)
			lines := bytes.SplitAfter(data, []byte("\n"))
			lines = lines[:len(lines)-1]
			os.WriteFile(p, bytes.Join(lines[:len(lines)-5], nil), 0o600)
		}, "records were removed from the end"},
		{"head deleted", func(t *testing.T, p string) { os.Remove(audit.HeadPath(p)) }, "head file is missing"},
		{"head deleted and tail cut", func(t *testing.T, p string) {
			os.Remove(audit.HeadPath(p))
			data, _ := os.ReadFile(p)
			lines := bytes.SplitAfter(data, []byte("\n"))
			lines = lines[:len(lines)-1]
			os.WriteFile(p, bytes.Join(lines[:len(lines)-3], nil), 0o600)
		}, "head file is missing"},
		{"newest file deleted", func(t *testing.T, p string) { os.Remove(p) }, "records were removed from the end"},
		{"newest file and head deleted, empty file left", func(t *testing.T, p string) {
			os.Remove(audit.HeadPath(p))
			os.WriteFile(p, nil, 0o600)
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "audit")
			testutil.CopyFiles(t, src, dst)
			c.tamper(t, filepath.Join(dst, audit.DefaultFile))
			r := verify(dst)
			if r.Code == 0 && c.want != "" {
				t.Fatalf("verify passed after %q:\n%s", c.name, r.Stdout)
			}
			if c.want == "" {
				// Everything is gone: nothing on this machine can say records existed (that
				// is what a checkpoint held elsewhere is for). The documented limit; the
				// test pins it so the docs stay true.
				t.Logf("limit, documented: %q → exit %d: %s", c.name, r.Code, strings.TrimSpace(r.Stdout))
				return
			}
			if !strings.Contains(r.Stdout, c.want) {
				t.Fatalf("verify failed for the wrong reason (want %q):\n%s", c.want, r.Stdout)
			}
			t.Logf("%s → %s", c.name, strings.SplitN(r.Stdout, "\n", 2)[0])
		})
	}
	// A daemon started on a log whose head was deleted (and tail cut) says so in a
	// repair record; verify keeps failing after it wrote a new head.
	dst := filepath.Join(e.Root, "restarted-audit")
	testutil.CopyFiles(t, src, dst)
	cur := filepath.Join(dst, audit.DefaultFile)
	os.Remove(audit.HeadPath(cur))
	e2 := NewEnv(t)
	e2.Config = filepath.Join(e2.Root, "hookd.json")
	os.WriteFile(e2.Config, []byte(`{"audit":{"path":"`+dst+`/"}}`), 0o600)
	e2.WriteSettings("project", preToolUse(cmdHook("exit 0")))
	e2.Start()
	e2.Event(bashPayload(e2, "echo after"))
	e2.Stop()
	r := verify(dst)
	if r.Code == 0 || !strings.Contains(r.Stdout, "head_missing") && !strings.Contains(r.Stdout, "head file is missing") {
		t.Fatalf("a daemon that recreated a deleted head must not make the log verify:\n%s", r.Stdout)
	}
}
