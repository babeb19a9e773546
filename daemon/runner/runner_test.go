package runner

import (
	"bytes"
	"context"
	"github.com/hookd/hookd/test/testutil"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestExecRunnerShellForm(t *testing.T) {
	r := ExecRunner{}
	res := r.Run(context.Background(), ProcSpec{
		Command: `read -r line; echo "got:$line"; echo err >&2; exit 3`,
		Stdin:   []byte("payload\n"), Env: []string{"PATH=/usr/bin:/bin"},
	})
	if res.StartErr != nil || res.ExitCode != 3 {
		t.Fatalf("exit = %d, start err %v", res.ExitCode, res.StartErr)
	}
	if got := string(res.Stdout); got != "got:payload\n" {
		t.Errorf("stdout = %q", got)
	}
	if got := string(res.Stderr); got != "err\n" {
		t.Errorf("stderr = %q", got)
	}
}

func TestExecRunnerExecFormUsesCallerPath(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "myhook")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"args:$*\"; cat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := ExecRunner{}.Run(context.Background(), ProcSpec{
		Command: "myhook", Args: []string{"a b", "$HOME"},
		Env: []string{"PATH=" + dir + ":/usr/bin:/bin"}, Stdin: []byte("in"),
	})
	if res.StartErr != nil {
		t.Fatal(res.StartErr)
	}
	if got := string(res.Stdout); got != "args:a b $HOME\nin" {
		t.Errorf("stdout = %q (exec form must not expand or split)", got)
	}
}

func TestExecRunnerMissingCommand(t *testing.T) {
	// Exec form: cannot start at all.
	res := ExecRunner{}.Run(context.Background(), ProcSpec{Command: "/nonexistent/hook", Args: []string{}})
	if res.StartErr == nil {
		t.Fatal("missing exec-form command started")
	}
	// Shell form: the shell reports 127.
	res = ExecRunner{}.Run(context.Background(), ProcSpec{Command: "/nonexistent/hook.sh", Env: []string{"PATH=/usr/bin:/bin"}})
	if res.ExitCode != 127 {
		t.Fatalf("exit = %d, want 127", res.ExitCode)
	}
}

func TestExecRunnerTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	start := time.Now()
	res := ExecRunner{WaitDelay: 500 * time.Millisecond}.Run(context.Background(), ProcSpec{
		// A grandchild that holds stdout open and would outlive the shell.
		Command: `sleep 30 & echo $! > ` + pidFile + `; wait`,
		Timeout: 300 * time.Millisecond, Env: []string{"PATH=/usr/bin:/bin"},
	})
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	// The bound is the grandchild's own 30 s, not the machine's speed: Run must not wait
	// for a grandchild that holds stdout.
	if d := time.Since(start); d >= 30*time.Second {
		t.Fatalf("Run took %v after a 300ms timeout: it waited for the grandchild", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if testutil.ProcessGone(pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still alive after timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestExecRunnerCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	res := ExecRunner{}.Run(ctx, ProcSpec{Command: "sleep 30", Env: []string{"PATH=/usr/bin:/bin"}})
	if !res.Cancelled || res.TimedOut {
		t.Fatalf("want cancelled: %+v", res)
	}
}

func TestExecRunnerOutputCap(t *testing.T) {
	res := ExecRunner{}.Run(context.Background(), ProcSpec{
		Command:   `head -c 3000000 /dev/zero`,
		OutputCap: 1 << 20, Env: []string{"PATH=/usr/bin:/bin"},
	})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	if len(res.Stdout) != 1<<20 || !res.StdoutTruncated {
		t.Fatalf("stdout len %d truncated %v", len(res.Stdout), res.StdoutTruncated)
	}
	if !bytes.Equal(res.Stdout[:10], make([]byte, 10)) {
		t.Fatal("kept the wrong bytes")
	}
}
