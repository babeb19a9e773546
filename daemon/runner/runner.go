package runner

import (
	"bytes"
	"context"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/hookd/hookd/daemon/runner/osproc"
	"github.com/hookd/hookd/daemon/runner/reaper"
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

	// The fields below do not change how the process is started; they tell a Pool
	// which hook it is and how the daemon's configuration wants it run. ExecRunner
	// ignores them.

	// Shell is the handler's "shell" as written (part of the prewarm key).
	Shell string
	// HookID is the handler's ID; HookRev changes whenever the handler's definition in
	// the settings does. A pool discards a hook's processes when its HookRev changes.
	HookID, HookRev string
	// Prewarm is hookd's configuration for prewarming this hook (see PrewarmPolicy).
	Prewarm PrewarmPolicy
	// Worker runs the hook as a persistent worker (docs/workers.md).
	Worker bool
	// KeepGroup leaves the hook's process group alone when the hook exits, for hooks
	// that deliberately leave work running in the background. By default the group is
	// killed when the hook's process exits (docs/reliability.md). A timeout, a
	// cancellation and the daemon's death kill the group either way.
	KeepGroup bool
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
	// Own session, as Claude Code starts hooks (node's spawn with detached: true; spec §6,
	// 2.1.139): no controlling terminal, and its own process group (the session's id is
	// the pid), so a timeout kills grandchildren too. The session matters for speed as
	// well: with the kernel's autogroup scheduling (sched_autogroup_enabled, the default
	// on desktop and most server kernels) CPU is shared fairly between sessions first. A
	// hook in its own session competes with other work on the machine as one session, as
	// it does natively; hooks left in the daemon's session would all share one session's
	// slice — a setup with many parallel hooks (ECC: up to 7 per event) ran 2–3× slower
	// through hookd than natively on a loaded machine with the same CPU seconds.
	// No parent-death signal: a daemon that dies takes its hooks along through the group
	// reaper, and the hook's own process must outlive a daemon that died together with its
	// reaper, so that the next daemon can still prove whose group it kills (package reaper).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, nil
}

// Run runs spec to completion, timeout, or cancellation of ctx.
func (r ExecRunner) Run(ctx context.Context, spec ProcSpec) ProcResult {
	start := time.Now()
	cmd, err := Command(spec)
	if err != nil {
		return ProcResult{ExitCode: -1, StartErr: err, Duration: time.Since(start)}
	}
	cmd.Stdin = bytes.NewReader(spec.Stdin)
	p, err := startProc(cmd, spec.OutputCap, r.WaitDelay, spec.KeepGroup, nil)
	if err != nil {
		return ProcResult{ExitCode: -1, StartErr: err, Duration: time.Since(start)}
	}
	return p.supervise(ctx, spec.Timeout, start)
}

// proc is a started hook process: its capped output buffers and the result of cmd.Wait.
// Its own goroutine calls cmd.Wait as soon as it is started, so a process that exits
// while nobody is looking (a prewarmed one that died waiting for its event) is reaped at
// once and never lingers as a zombie.
type proc struct {
	cmd            *exec.Cmd
	group          *osproc.Child // signals the group only while the process is unreaped
	stdout, stderr *capBuffer
	done           chan struct{} // closed once cmd.Wait returned
	waitErr        error         // set before done is closed
}

// startProc starts cmd with stdout and stderr captured up to capN bytes each (the rest
// drained and dropped) and WaitDelay set. When the process exits its group is killed,
// unless keepGroup; then it is reaped. onExit, if not nil, runs on the reaping goroutine
// after done is closed.
func startProc(cmd *exec.Cmd, capN int, waitDelay time.Duration, keepGroup bool, onExit func()) (*proc, error) {
	if capN <= 0 {
		capN = DefaultOutputCap
	}
	if waitDelay <= 0 {
		waitDelay = 2 * time.Second
	}
	p := &proc{cmd: cmd, stdout: &capBuffer{max: capN}, stderr: &capBuffer{max: capN}, done: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = p.stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = p.stderr
	}
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	p.group = osproc.NewChild(pid)
	reaper.Track(pid, nil) // unreaped: its start time is its own
	go func() {
		// The group is killed (unless keepGroup) once the process has exited and before it
		// is reaped, so the group id is still ours (package reaper). Grandchildren holding stdout
		// also stop holding it: Wait need not sit out WaitDelay.
		p.waitErr = p.group.Reap(!keepGroup, cmd.Wait)
		reaper.Untrack(pid)
		close(p.done)
		if onExit != nil {
			onExit()
		}
	}()
	return p, nil
}

// exited reports whether the process has been reaped.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// supervise waits for the process to end, enforcing timeout (measured from start) and
// cancellation of ctx by killing its process group, and returns what it produced.
func (p *proc) supervise(ctx context.Context, timeout time.Duration, start time.Time) ProcResult {
	var timedOut, cancelled bool
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(time.Until(start.Add(timeout)))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-p.done:
	case <-timer:
		timedOut = true
		p.kill()
		<-p.done
	case <-ctx.Done():
		cancelled = true
		p.kill()
		<-p.done
	}
	// Nothing is killed after the reap: the whole group got its SIGKILL at once while the
	// process was alive (or at its exit, unless KeepGroup); after it, the group's number
	// may belong to anyone.
	res := ProcResult{
		Stdout: p.stdout.Bytes(), Stderr: p.stderr.Bytes(),
		StdoutTruncated: p.stdout.truncated, StderrTruncated: p.stderr.truncated,
		TimedOut: timedOut, Cancelled: cancelled, Duration: time.Since(start),
	}
	res.ExitCode = exitCode(p.cmd, p.waitErr)
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

// kill sends SIGKILL to the process group the process leads, if the process is not
// reaped yet (after that its number may be anyone's: nothing is sent).
func (p *proc) kill() { p.group.KillGroup() }

// lookPath resolves an exec-form executable against the hook's PATH (osproc.LookPath).
var lookPath = osproc.LookPath

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

// LookupEnv returns the value of key in env (KEY=value entries, the last one wins, as
// exec does), or "" when it is absent (osproc.Getenv).
func LookupEnv(env []string, key string) string { return osproc.Getenv(env, key) }
