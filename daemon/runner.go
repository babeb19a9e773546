package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ProcSpec is one hook process to run.
type ProcSpec struct {
	// Command is the shell-form command line, run with `sh -c` (spec §6), or, when Args is
	// non-nil, the executable of the exec form (resolved on PATH from Env, no shell).
	Command string
	Args    []string
	Dir     string
	Env     []string
	Stdin   []byte
	Timeout time.Duration
	// OutputCap bounds what is kept of stdout and of stderr; the rest is drained and
	// dropped so a chatty hook can neither block on a full pipe nor exhaust memory.
	OutputCap int
}

// ProcResult is what running a ProcSpec produced.
type ProcResult struct {
	ExitCode        int
	Stdout, Stderr  []byte
	StdoutTruncated bool
	StderrTruncated bool
	// StartErr is set when the process could not be started at all.
	StartErr  error
	TimedOut  bool
	Cancelled bool
	Duration  time.Duration
}

// Runner runs hook processes. The daemon's dispatcher depends on this interface only, so
// a prewarming runner can stand in for the plain one.
type Runner interface {
	Run(ctx context.Context, spec ProcSpec) ProcResult
}

// ExecRunner starts a fresh process per hook: its own process group, a deadline that
// kills the whole group, and bounded output capture (STYLE §9).
type ExecRunner struct {
	// WaitDelay bounds how long Run waits for output pipes after the process exited or
	// was killed: a grandchild that inherited stdout cannot hang the daemon.
	WaitDelay time.Duration
}

// DefaultOutputCap is the default per-stream capture limit.
const DefaultOutputCap = 1 << 20

// Command builds the exec.Cmd for spec: `sh -c` for the shell form, the executable
// itself for the exec form. Both the cold runner and the prewarm pool use it, so a
// prewarmed process is started exactly as a cold one would be.
func Command(spec ProcSpec) (*exec.Cmd, error) {
	var cmd *exec.Cmd
	if spec.Args != nil {
		path, err := lookPath(spec.Command, spec.Env)
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(path, spec.Args...)
		cmd.Args[0] = spec.Command
	} else {
		cmd = exec.Command("/bin/sh", "-c", spec.Command)
	}
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	// Own process group (so a timeout kills grandchildren too) and no controlling
	// terminal, as Claude Code runs hooks since 2.1.139 (spec §6).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, nil
}

// Run runs spec to completion, timeout, or cancellation of ctx.
func (r ExecRunner) Run(ctx context.Context, spec ProcSpec) ProcResult {
	start := time.Now()
	cmd, err := Command(spec)
	if err != nil {
		return ProcResult{ExitCode: -1, StartErr: err, Duration: time.Since(start)}
	}
	return wait(ctx, cmd, spec, start, r.WaitDelay, func() error {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
		return cmd.Start()
	})
}

// wait starts cmd (via start), enforces the timeout and cancellation by killing the
// process group, and collects capped output.
func wait(ctx context.Context, cmd *exec.Cmd, spec ProcSpec, start time.Time, waitDelay time.Duration, startFn func() error) ProcResult {
	capN := spec.OutputCap
	if capN <= 0 {
		capN = DefaultOutputCap
	}
	if waitDelay <= 0 {
		waitDelay = 2 * time.Second
	}
	var stdout, stderr capBuffer
	stdout.max, stderr.max = capN, capN
	if cmd.Stdout == nil {
		cmd.Stdout = &stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	cmd.WaitDelay = waitDelay
	if err := startFn(); err != nil {
		return ProcResult{ExitCode: -1, StartErr: err, Duration: time.Since(start)}
	}

	var timedOut, cancelled bool
	done := make(chan struct{})
	var timer <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timer = t.C
	}
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-timer:
		timedOut = true
		killGroup(cmd)
		<-done
	case <-ctx.Done():
		cancelled = true
		killGroup(cmd)
		<-done
	}
	res := ProcResult{
		Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
		StdoutTruncated: stdout.truncated, StderrTruncated: stderr.truncated,
		TimedOut: timedOut, Cancelled: cancelled, Duration: time.Since(start),
	}
	if timedOut || cancelled {
		// The group may hold grandchildren that outlived the shell; make sure they are gone.
		killGroup(cmd)
	}
	res.ExitCode = exitCode(cmd, waitErr)
	return res
}

func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return cmd.ProcessState.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// killGroup sends SIGKILL to the process group led by cmd's process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	pid := cmd.Process.Pid
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = cmd.Process.Kill()
	}
}

// lookPath resolves an exec-form executable against the PATH of the hook's environment,
// not the daemon's: the hook must find what it would have found under the harness.
func lookPath(file string, env []string) (string, error) {
	if file == "" {
		return "", errors.New("empty command")
	}
	if strings.Contains(file, "/") {
		if err := executable(file); err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
		return file, nil
	}
	path := ""
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			path = v
			break
		}
	}
	if env == nil {
		path = os.Getenv("PATH")
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: executable file not found in $PATH", file)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("is a directory")
	}
	if fi.Mode()&0o111 == 0 {
		return os.ErrPermission
	}
	return nil
}

// capBuffer keeps the first max bytes written and counts the rest.
type capBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
			b.truncated = true
		} else {
			b.buf.Write(p)
		}
	} else if len(p) > 0 {
		b.truncated = true
	}
	return len(p), nil
}

func (b *capBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}
