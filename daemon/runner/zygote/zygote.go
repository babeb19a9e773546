// Package zygote runs unmodified Python hook scripts by forking them from a warm
// interpreter instead of starting Python per event (docs/zygote.md).
//
// A zygote is `PYTHON [options] -c <server.py>` with one end of an AF_UNIX stream socket
// pair as fd 3, carrying frames (frame.go). It is keyed by everything that shapes an
// interpreter before the first line of a script runs: the interpreter (as written and as
// resolved), its options, the working directory and the environment variables read at
// start-up (Key). Per event, hookd sends it the script, arguments, working directory and
// environment, with the event's stdin, stdout and stderr as SCM_RIGHTS descriptors; the
// zygote forks a child that makes itself what `PYTHON [options] SCRIPT ARGS` would be and
// reports the child's pid, with a pidfd for it where the system has them, then its exit
// status.
//
// The contract with the caller: Start either returns a *Child (the hook is running, or is
// about to: its pid and process group exist), an error wrapping ErrRefused (the script is
// a FIFO, a device or a socket: nothing runs it), or an error wrapping ErrFallback, in
// which case the hook has not run and the caller must run it another way (cold). No wait
// on a zygote outlasts the hook's deadline: a zygote that does not answer in time is
// killed with its children. A zygote that dies is replaced on a later event; a child whose
// zygote dies under it is killed and reported as lost (ErrLost: the caller runs the hook
// again, cold).
//
// Who kills what (docs/reliability.md): the zygote, the children's parent, kills a child's
// group after the child exited and before it reaps it. hookd signals a child's group only
// through the child's pidfd (Linux ≥ 6.9: the group as the kernel's object, never a number
// that may have been reused); without that it asks the zygote, and kills the child itself
// (not its group) through the pidfd if it has one.
//
// This package imports no hookd package (it sits under daemon/runner).
package zygote

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/hookd/hookd/daemon/runner/osproc"
)

//go:embed server.py
var serverScript string

// ErrFallback means the zygote did not run the hook; run it cold.
var ErrFallback = errors.New("zygote: not served")

// ErrLost means the zygote died (or was stopped for not answering) while the hook ran: the
// hook was killed and its exit status is unknown.
var ErrLost = errors.New("zygote died while the hook ran; exit status unknown")

// ErrRefused means the script is not a regular file (a FIFO, a device, a socket): the
// zygote never reads such a file, and a cold run would wait on it; the hook fails.
var ErrRefused = errors.New("not a script file")

func fallback(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrFallback, fmt.Sprintf(format, a...))
}

// Spec is one `PYTHON [options] SCRIPT ARGS` to run.
type Spec struct {
	// Python is the interpreter as written (argv[0] of a cold run); Path is the file it
	// resolves to, as exec would find it.
	Python, Path string
	// Options are the interpreter's options before the script; only modelledOptions are
	// served.
	Options []string
	Script  string // as written: sys.argv[0]
	Args    []string
	Dir     string // working directory; must be absolute
	Env     []string
}

// modelledOptions are the interpreter options a zygote reproduces: each is a start-up
// flag that the children inherit unchanged from the zygote. Anything else (-I, -P, -X,
// -W, -c, -m, combined flags, ...) is served cold.
var modelledOptions = map[string]bool{"-S": true, "-s": true, "-E": true, "-B": true, "-u": true, "-O": true, "-OO": true, "-b": true, "-bb": true}

// startupEnv reports whether an environment variable can change what an interpreter is
// before the script's first line: Python's own variables, the locale (stdio encodings),
// HOME (user site), TZ (the time module), PATH (sys.executable from a bare name), the
// dynamic loader's and the allocator's variables, and setuptools' .pth switch.
func startupEnv(name string) bool {
	switch {
	case strings.HasPrefix(name, "PYTHON"), strings.HasPrefix(name, "LC_"), strings.HasPrefix(name, "LD_"),
		strings.HasPrefix(name, "MALLOC_"):
		return true
	}
	switch name {
	case "LANG", "LANGUAGE", "HOME", "TZ", "PATH", "GLIBC_TUNABLES", "SETUPTOOLS_USE_DISTUTILS":
		return true
	}
	return false
}

// key is the identity of the zygote that may serve spec: sha256 over the interpreter as
// written and resolved, its options, the working directory and the start-up environment.
// When the interpreter is not an ELF binary (a launcher script such as pyenv's shim, which
// may read any variable and changes PATH), the key takes the whole environment except the
// harness's own per-event variables (CLAUDE_*: Claude Code sets CLAUDE_EFFORT for some
// events and not others), which no interpreter launcher reads.
func key(spec Spec) string {
	h := sha256.New()
	put := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put(spec.Python)
	put(spec.Path)
	put(strings.Join(spec.Options, "\x00"))
	put(spec.Dir)
	whole := !isELF(spec.Path)
	for _, kv := range spec.Env {
		name, _, _ := strings.Cut(kv, "=")
		if whole && !strings.HasPrefix(name, "CLAUDE_") || startupEnv(name) {
			put(kv)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

var elfCache sync.Map // path → bool

func isELF(path string) bool {
	if v, ok := elfCache.Load(path); ok {
		return v.(bool)
	}
	b := make([]byte, 4)
	f, err := osproc.OpenRegular(path) // never waits on a FIFO
	ok := false
	if err == nil {
		_, err = f.ReadAt(b, 0)
		f.Close()
		ok = err == nil && string(b) == "\x7fELF"
	}
	elfCache.Store(path, ok)
	return ok
}

// check reports why spec cannot be served by a zygote, or nil.
func check(spec Spec) error {
	for _, o := range spec.Options {
		if !modelledOptions[o] {
			return fallback("interpreter option %q is not modelled", o)
		}
	}
	if !filepath.IsAbs(spec.Dir) || !filepath.IsAbs(spec.Path) {
		return fallback("working directory or interpreter path is not absolute")
	}
	if spec.Script == "" || spec.Script == "-" || strings.HasPrefix(spec.Script, "-") {
		return fallback("no script file")
	}
	for _, s := range append(append([]string{spec.Script, spec.Dir}, spec.Args...), spec.Env...) {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return fallback("argument or environment is not valid UTF-8")
		}
	}
	if !slices.Contains(spec.Options, "-E") {
		for _, kv := range spec.Env {
			if v, ok := strings.CutPrefix(kv, "PYTHONSAFEPATH="); ok && v != "" {
				return fallback("PYTHONSAFEPATH is not modelled")
			}
		}
	}
	return nil
}

// Options configure a Manager.
type Options struct {
	// Max is how many zygotes may run at once [4]; the least recently used one is stopped
	// to make room.
	Max int
	// IdleTimeout stops a zygote unused that long [10m].
	IdleTimeout time.Duration
	// Preload names third-party modules to import into every zygote in addition to the
	// standard-library modules the hooks import at top level.
	Preload []string
	// Logf, if set, receives diagnostics (a zygote that failed, fell back, died).
	Logf func(format string, a ...any)
	// NoPrefault turns off the spares' pre-faulting of the pages children write
	// (docs/zygote.md, "Pre-faulting"): for measuring it, and as a way out.
	NoPrefault bool
	// AnswerTimeout bounds how long an event waits for its zygote to answer (take the
	// event and name the child) [5s], within the hook's own deadline. A zygote that does
	// not answer in time is stopped with its children; the event runs cold.
	AnswerTimeout time.Duration
	// PreloadTimeout bounds a pre-import [60s]; a zygote that has not finished by then is
	// stopped.
	PreloadTimeout time.Duration
	// Track and Untrack, if set, are told of each zygote process as it starts and ends
	// (the daemon's group reaper: a zygote must not outlive the daemon). Track's alive is
	// nil: the zygote is the manager's own unreaped child when Track is called.
	Track   func(pid int, alive func() bool)
	Untrack func(pid int)
}

// Manager starts, serves from and stops zygotes. Safe for concurrent use.
type Manager struct {
	opts Options

	mu     sync.Mutex
	zs     map[string]*zygote
	closed bool
	// failed counts, per key, the zygotes in a row that ended before they were ready
	// (noteEnd); from maxStartFailures on, get keeps the last one instead of starting more.
	failed map[string]int
	wg     sync.WaitGroup
	stop   chan struct{}

	Stats Stats
}

// Stats counts what the manager did.
type Stats struct {
	mu                                     sync.Mutex
	Forked, Fallbacks, Started, Died, Lost uint64
	LastFallback                           string
	// Refused counts scripts refused as special files; Unresponsive, zygotes stopped
	// because they did not answer in time.
	Refused, Unresponsive uint64
	// Populated is how many pages the spares that took events had pre-faulted, Prefaulted
	// how many of those events had a spare that populated any.
	Populated, Prefaulted uint64
	// ChildFaults and ChildCPU add up the minor page faults and CPU time of forked
	// children over their whole lives (as spares too), Exited counts them.
	ChildFaults, Exited uint64
	ChildCPU            time.Duration
	// EventFaults adds up the minor faults children took after their spare was ready (the
	// event's path and exit), over Reported children.
	EventFaults, Reported uint64
}

func (s *Stats) add(f func(*Stats)) { s.mu.Lock(); f(s); s.mu.Unlock() }

// Counts is a copy of Stats' counters.
type Counts struct {
	Forked, Fallbacks, Started, Died, Lost uint64
	LastFallback                           string
	Refused, Unresponsive                  uint64
	Populated, Prefaulted                  uint64
	ChildFaults, Exited                    uint64
	ChildCPU                               time.Duration
	EventFaults, Reported                  uint64
}

// Get returns a copy of the counters.
func (s *Stats) Get() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Counts{Forked: s.Forked, Fallbacks: s.Fallbacks, Started: s.Started, Died: s.Died, Lost: s.Lost, LastFallback: s.LastFallback,
		Refused: s.Refused, Unresponsive: s.Unresponsive,
		Populated: s.Populated, Prefaulted: s.Prefaulted, ChildFaults: s.ChildFaults, Exited: s.Exited, ChildCPU: s.ChildCPU,
		EventFaults: s.EventFaults, Reported: s.Reported}
}

// New returns a manager; call Close when done.
func New(o Options) *Manager {
	if o.Max <= 0 {
		o.Max = 4
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 10 * time.Minute
	}
	if o.AnswerTimeout <= 0 {
		o.AnswerTimeout = 5 * time.Second
	}
	if o.PreloadTimeout <= 0 {
		o.PreloadTimeout = time.Minute
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	m := &Manager{opts: o, zs: map[string]*zygote{}, failed: map[string]int{}, stop: make(chan struct{})}
	m.wg.Add(1)
	go m.janitor()
	return m
}

// zygote is one warm interpreter.
type zygote struct {
	m       *Manager
	key     string
	proc    *osproc.Child // the zygote process: hookd's own child, its group signalled only while unreaped
	fc      *frameConn
	ready   chan struct{} // closed when the ready message arrived or the zygote failed
	dead    chan struct{} // closed when the zygote exited and its reader ended
	stderr  bytes.Buffer  // its own diagnostics (bounded)
	err     error         // why it is unusable; read only after dead is closed
	killed  bool          // guarded by mu, like proc, pid, fc and stopWhy
	stopWhy string        // why it was stopped (kill), for err
	delta   []string      // what start-up did to the environment (envDelta); set before ready closes
	usable  bool          // the ready message came and passed the checks; set before ready closes
	pid     int
	lastUse time.Time // guarded by m.mu
	scripts map[string]bool

	mu        sync.Mutex
	preloads  int           // pre-imports in flight (guarded by mu)
	preloaded chan struct{} // closed when preloads drops to 0 (guarded by mu)
	nextID    uint64
	waiting   map[uint64]*request
}

type request struct {
	reply     chan reply // pid, refusal or fallback (buffered 1)
	child     *Child
	abandoned bool // the caller gave up waiting: a child that arrives now is killed at once
}

type reply struct {
	child    *Child
	fallback string
	refuse   string
	hot      [][2]uint64
}

type message struct {
	Op         string      `json:"op,omitempty"`
	ID         uint64      `json:"id,omitempty"`
	Pid        int         `json:"pid,omitempty"`
	Code       *int        `json:"code,omitempty"`
	Fallback   string      `json:"fallback,omitempty"`
	Refuse     string      `json:"refuse,omitempty"`
	SetupError string      `json:"setup_error,omitempty"`
	Error      string      `json:"error,omitempty"`
	Environ    []string    `json:"environ,omitempty"`
	Preloaded  []string    `json:"preloaded,omitempty"`
	Populated  uint64      `json:"populated,omitempty"`    // with Code: pages the child's spare pre-faulted
	ReadyFlt   uint64      `json:"ready_minflt,omitempty"` // with Code: its minor faults when its spare was ready
	Minflt     uint64      `json:"minflt,omitempty"`       // with Code: the child's minor faults
	CPUus      uint64      `json:"cpu_us,omitempty"`       // with Code: the child's CPU time
	Hot        [][2]uint64 `json:"hot,omitempty"`          // answer to "hot" (tests): the ranges spares now populate
}

// Child is a hook process forked from a zygote.
type Child struct {
	Pid  int
	id   uint64
	z    *zygote
	done chan struct{}
	code int
	err  error

	hmu    sync.Mutex
	h      osproc.Handle // a pidfd for it (Linux); empty elsewhere
	closed bool          // h is closed: its number may name another file now
}

// Done is closed when the child has exited (or was lost with its zygote).
func (c *Child) Done() <-chan struct{} { return c.done }

// Result is the child's exit code (-N when killed by signal N), or ErrLost. Valid after
// Done is closed.
func (c *Child) Result() (int, error) { return c.code, c.err }

// handle is the child's pidfd, or none once closed; call with hmu held.
func (c *Child) handle() osproc.Handle {
	if c.closed {
		return osproc.NoHandle
	}
	return c.h
}

// Alive reports whether the child is provably still the process the zygote forked (its
// pidfd says it is not reaped); false without a pidfd.
func (c *Child) Alive() bool {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	return c.handle().Alive()
}

// Kill kills the child's process group, never a group that merely has its number: through
// the child's pidfd (Linux ≥ 6.9: the group as the kernel's object); else the zygote — the
// child's parent, which holds it unreaped — is asked to; and only if it cannot be (it is
// gone or stuck), the child itself is killed through its pidfd where there is one.
func (c *Child) Kill() {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	h := c.handle()
	if err := h.KillGroup(); !errors.Is(err, osproc.ErrUnsupported) {
		return // killed, or nobody left in the group
	}
	if c.z != nil && c.z.requestKill(c.id) == nil {
		return
	}
	_ = h.Kill()
}

// Stop kills the child (Kill) and waits until it is gone. A zygote that does not report
// it gone within AnswerTimeout (it is stuck: it took the kill request and did nothing) is
// stopped, which ends the wait: failAll kills the child through its pidfd.
func (c *Child) Stop() {
	c.Kill()
	t := time.NewTimer(c.z.m.opts.AnswerTimeout)
	defer t.Stop()
	select {
	case <-c.done:
		return
	case <-t.C:
	}
	c.z.m.Stats.add(func(s *Stats) { s.Unresponsive++ })
	c.z.kill("did not report a killed child gone")
	<-c.done
}

// Close releases the child's pidfd; call it once the child is done with.
func (c *Child) Close() {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if !c.closed {
		c.closed = true
		c.h.Close()
	}
}

// Warm makes sure the zygote for spec is started and has pre-imported what spec's script
// imports. It returns at once.
func (m *Manager) Warm(spec Spec) {
	if check(spec) != nil {
		return
	}
	m.get(spec, true)
}

// get returns the zygote for spec, starting it if start is set. A zygote that is not
// ready yet is returned too; callers check.
func (m *Manager) get(spec Spec, start bool) *zygote {
	k := key(spec)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	z := m.zs[k]
	if z != nil {
		select {
		case <-z.dead:
			if m.failed[k] >= maxStartFailures {
				return z // its error says why; the caller falls back (cold)
			}
			delete(m.zs, k)
			z = nil
		default:
		}
	}
	if z == nil {
		if !start {
			return nil
		}
		for len(m.zs) >= m.opts.Max && m.evictLocked() {
		}
		z = m.startLocked(k, spec)
		m.zs[k] = z
	}
	z.lastUse = time.Now()
	if !z.scripts[spec.Script] {
		z.scripts[spec.Script] = true
		z.beginPreload()
		go func() {
			defer z.endPreload()
			_ = z.preload(spec)
		}()
	}
	return z
}

// maxStartFailures is how many zygotes in a row may end before they are ready (an
// interpreter without os.pidfd_open, a start-up that exits or crashes) before no more are
// started for that key: each one costs an interpreter's start beside the event's cold run.
// A key changes with the interpreter and its start-up environment; a zygote that gets
// ready clears the count.
const maxStartFailures = 3

// noteEnd counts z, which has ended, if it never got ready and was not stopped on purpose.
// It runs in z's run goroutine before z.dead is closed, so the error it may extend is the
// one callers read.
func (m *Manager) noteEnd(z *zygote) {
	z.mu.Lock()
	stopped := z.killed
	z.mu.Unlock()
	if z.usable || stopped {
		return
	}
	m.mu.Lock()
	m.failed[z.key]++
	n := m.failed[z.key]
	m.mu.Unlock()
	if n >= maxStartFailures {
		z.err = fmt.Errorf("%v (%d zygotes in a row ended before they were ready: no more are started for this interpreter and environment; its hooks run cold)", z.err, n)
		m.opts.Logf("python zygote: %v", z.err)
	}
}

// evictLocked stops the least recently used idle zygote to make room. A zygote with
// children or requests in flight is not evicted (they would be lost).
func (m *Manager) evictLocked() bool {
	var victim string
	var at time.Time
	for k, z := range m.zs {
		if z.busy() {
			continue
		}
		if victim == "" || z.lastUse.Before(at) {
			victim, at = k, z.lastUse
		}
	}
	if victim == "" {
		return false
	}
	m.zs[victim].kill("evicted to make room for another zygote")
	delete(m.zs, victim)
	return true
}

func (z *zygote) busy() bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	return len(z.waiting) > 0
}

// startLocked starts a zygote in the background.
func (m *Manager) startLocked(k string, spec Spec) *zygote {
	z := &zygote{m: m, key: k, ready: make(chan struct{}), dead: make(chan struct{}), waiting: map[uint64]*request{}, scripts: map[string]bool{}}
	m.Stats.add(func(s *Stats) { s.Started++ })
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		z.run(spec)
	}()
	return z
}

// run starts the zygote process and reads its messages until it ends.
func (z *zygote) run(spec Spec) {
	readyOnce := sync.OnceFunc(func() { close(z.ready) })
	defer func() {
		readyOnce()
		z.failAll()
		z.m.noteEnd(z)
		close(z.dead)
	}()
	fds, err := osproc.Socketpair()
	if err != nil {
		z.err = err
		return
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "zygote"), os.NewFile(uintptr(fds[1]), "zygote-child")
	c, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		theirs.Close()
		z.err = err
		return
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	fc := newFrameConn(conn)
	defer fc.closeQueued()
	z.mu.Lock()
	z.fc = fc
	killed := z.killed
	z.mu.Unlock()
	if killed {
		theirs.Close()
		z.err = errors.New("stopped")
		return
	}
	args := append(slices.Clone(spec.Options), "-c", serverScript)
	cmd := exec.Command(spec.Path, args...)
	cmd.Args[0] = spec.Python
	cmd.Dir = spec.Dir
	cmd.Env = slices.Clone(spec.Env)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = &capWriter{b: &z.stderr, max: 16 << 10, mu: &z.mu}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		theirs.Close()
		z.err = err
		return
	}
	theirs.Close()
	pc := osproc.NewChild(cmd.Process.Pid)
	if z.m.opts.Track != nil {
		z.m.opts.Track(pc.Pid(), nil) // unreaped: its own start time
	}
	z.mu.Lock()
	z.proc = pc
	z.pid = pc.Pid()
	killed = z.killed
	z.mu.Unlock()
	if killed {
		pc.KillGroup()
	}
	waited := make(chan struct{})
	go func() { _ = pc.Reap(false, cmd.Wait); close(waited) }()
	defer func() {
		pc.KillGroup() // only the zygote is in its group: its children lead their own sessions
		<-waited
		if z.m.opts.Untrack != nil {
			z.m.opts.Untrack(z.pid)
		}
		z.mu.Lock()
		msg := strings.TrimSpace(z.stderr.String())
		why := z.stopWhy
		z.mu.Unlock()
		if z.err == nil && why != "" {
			z.err = errors.New("stopped: " + why)
		}
		if z.err == nil {
			z.err = fmt.Errorf("zygote exited (%s) %s", cmd.ProcessState, msg)
		}
		z.m.Stats.add(func(s *Stats) { s.Died++ })
		z.m.opts.Logf("python zygote %d ended: %v", z.pid, z.err)
	}()
	for {
		body, fds, err := fc.read()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				z.err = fmt.Errorf("zygote connection: %v", err)
			}
			return
		}
		var msg message
		if err := json.Unmarshal(body, &msg); err != nil {
			closeFDs(fds)
			z.err = fmt.Errorf("zygote sent garbage: %v", err)
			return
		}
		if msg.Op == "ready" {
			closeFDs(fds)
			z.delta = envDelta(spec.Env, msg.Environ)
			z.usable = true
			z.m.mu.Lock()
			delete(z.m.failed, z.key)
			z.m.mu.Unlock()
			readyOnce()
			continue
		}
		z.deliver(msg, fds)
	}
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		_ = syscall.Close(fd)
	}
}

func (z *zygote) deliver(msg message, fds []int) {
	z.mu.Lock()
	r := z.waiting[msg.ID]
	z.mu.Unlock()
	if r == nil {
		closeFDs(fds)
		return
	}
	switch {
	case msg.Pid != 0:
		// Created here, by the one reader, so the exit message (which always follows the
		// pid) finds it.
		c := &Child{Pid: msg.Pid, id: msg.ID, z: z, h: osproc.NoHandle, done: make(chan struct{})}
		if len(fds) == 1 {
			c.h, fds = osproc.HandleFromFD(fds[0]), nil
		}
		closeFDs(fds)
		z.mu.Lock()
		r.child = c
		abandoned := r.abandoned
		z.mu.Unlock()
		if abandoned {
			c.Kill() // its caller stopped waiting: nobody would supervise it
		}
		r.reply <- reply{child: c}
		return
	}
	closeFDs(fds)
	switch {
	case msg.Refuse != "":
		z.forget(msg.ID)
		z.m.Stats.add(func(s *Stats) { s.Refused++ })
		r.reply <- reply{refuse: msg.Refuse}
	case msg.Fallback != "" || msg.Error != "":
		z.forget(msg.ID)
		r.reply <- reply{fallback: msg.Fallback + msg.Error}
	case msg.Hot != nil:
		z.forget(msg.ID)
		r.reply <- reply{hot: msg.Hot}
	case msg.Preloaded != nil:
		z.forget(msg.ID)
		r.reply <- reply{}
	case msg.Code != nil:
		z.mu.Lock()
		delete(z.waiting, msg.ID)
		c := r.child
		z.mu.Unlock()
		ready := msg.ReadyFlt > 0 && msg.ReadyFlt <= msg.Minflt
		z.m.Stats.add(func(s *Stats) {
			if ready {
				s.EventFaults += msg.Minflt - msg.ReadyFlt
				s.Reported++
			}
			if msg.Populated > 0 {
				s.Populated += msg.Populated
				s.Prefaulted++
			}
			s.ChildFaults += msg.Minflt
			s.ChildCPU += time.Duration(msg.CPUus) * time.Microsecond
			s.Exited++
		})
		if msg.SetupError != "" {
			// The child failed before the hook's first line (or never got its event): nothing ran.
			z.m.opts.Logf("python zygote child setup failed: %s", msg.SetupError)
		}
		if c != nil {
			c.code = *msg.Code
			if msg.SetupError != "" {
				c.err = fmt.Errorf("%w: child setup failed: %s", ErrFallback, msg.SetupError)
			}
			close(c.done)
		}
	}
}

func (z *zygote) forget(id uint64) {
	z.mu.Lock()
	delete(z.waiting, id)
	z.mu.Unlock()
}

// failAll ends every request still waiting when the zygote is gone: one without a pid
// never ran (fallback), a child that did is killed and lost.
func (z *zygote) failAll() {
	z.mu.Lock()
	w := z.waiting
	z.waiting = nil
	z.mu.Unlock()
	for _, r := range w {
		if r.child == nil {
			r.reply <- reply{fallback: "zygote ended"}
			continue
		}
		r.child.Kill() // through its pidfd: the zygote that could have done it is gone
		if r.child.err == nil {
			r.child.err = ErrLost
		}
		r.child.code = -1
		z.m.Stats.add(func(s *Stats) { s.Lost++ })
		close(r.child.done)
	}
}

// kill stops the zygote: its process (and group, which is itself alone) is killed and
// its connection closed, so its reader ends even if the process cannot die at once; the
// children it leaves are killed by failAll.
func (z *zygote) kill(why string) {
	z.mu.Lock()
	if !z.killed {
		z.killed, z.stopWhy = true, why
	}
	pc, fc := z.proc, z.fc
	z.mu.Unlock()
	if pc != nil {
		pc.KillGroup()
	}
	if fc != nil {
		fc.c.Close()
	}
}

// send writes one message to the zygote, waiting at most until deadline (zero: up to
// AnswerTimeout). A zygote that cannot take a message in time is stopped.
func (z *zygote) send(v any, fds []int, deadline time.Time) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if deadline.IsZero() {
		deadline = time.Now().Add(z.m.opts.AnswerTimeout)
	}
	z.mu.Lock()
	fc := z.fc
	z.mu.Unlock()
	if fc == nil {
		return errors.New("zygote not started")
	}
	if err := fc.write(b, fds, deadline); err != nil {
		z.kill(fmt.Sprintf("writing to it failed: %v", err))
		return err
	}
	return nil
}

// requestKill asks the zygote to kill a child's group (it is the child's parent and has
// not reaped it). A zygote that cannot take the request is stopped (failAll then kills the
// child through its pidfd).
func (z *zygote) requestKill(id uint64) error {
	select {
	case <-z.dead:
		return errors.New("zygote gone")
	default:
	}
	return z.send(map[string]any{"op": "kill", "id": id}, nil, time.Now().Add(time.Second))
}

func (z *zygote) beginPreload() {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.preloads == 0 {
		z.preloaded = make(chan struct{})
	}
	z.preloads++
}

func (z *zygote) endPreload() {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.preloads--; z.preloads == 0 {
		close(z.preloaded)
	}
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// preloadsDone is closed once no pre-import is in flight.
func (z *zygote) preloadsDone() <-chan struct{} {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.preloads == 0 {
		return closedChan
	}
	return z.preloaded
}

// preload has the zygote import what spec's script imports at top level (standard
// library modules only, plus Options.Preload), and waits for it — at most PreloadTimeout,
// after which the zygote is stopped. The caller counts it (beginPreload, endPreload).
func (z *zygote) preload(spec Spec) error {
	select {
	case <-z.ready:
	case <-z.dead:
		return fallback("zygote ended")
	}
	if !z.usable {
		return fallback("zygote unusable")
	}
	script := spec.Script
	if !filepath.IsAbs(script) {
		script = filepath.Join(spec.Dir, script)
	}
	id, r := z.register()
	if id == 0 {
		return fallback("zygote ended")
	}
	deadline := time.Now().Add(z.m.opts.PreloadTimeout)
	if err := z.send(map[string]any{"op": "preload", "id": id, "scripts": []string{script}, "modules": nonNil(z.m.opts.Preload)}, nil, deadline); err != nil {
		z.forget(id)
		return err
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case rep := <-r.reply:
		if rep.fallback != "" {
			return fallback("%s", rep.fallback)
		}
		return nil
	case <-t.C:
		z.m.Stats.add(func(s *Stats) { s.Unresponsive++ })
		z.kill(fmt.Sprintf("pre-import did not finish within %v", z.m.opts.PreloadTimeout))
		return fallback("pre-import timed out")
	}
}

// register adds a request waiting for the zygote's answer; id 0 means the zygote ended.
func (z *zygote) register() (uint64, *request) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.waiting == nil {
		return 0, nil
	}
	z.nextID++
	r := &request{reply: make(chan reply, 1)}
	z.waiting[z.nextID] = r
	return z.nextID, r
}

// Preload starts spec's zygote if needed, waits for it, and has it import what spec's
// script imports. Warm does the same in the background.
func (m *Manager) Preload(spec Spec) error {
	if err := m.WaitReady(spec, time.Minute); err != nil {
		return err
	}
	z := m.get(spec, true)
	if z == nil {
		return fallback("closed")
	}
	z.beginPreload()
	defer z.endPreload()
	return z.preload(spec)
}

// RunOptions are how one event is run.
type RunOptions struct {
	// Deadline is the hook's own deadline: no wait on the zygote outlasts it. Zero: only
	// Options.AnswerTimeout bounds the wait.
	Deadline time.Time
	// KeepGroup leaves what the hook started running when it exits (ProcSpec.KeepGroup);
	// otherwise the zygote kills the child's group after it exits, before it reaps it.
	KeepGroup bool
}

// Start runs spec with the given stdin (read end), stdout and stderr (write ends). On
// success the caller still owns (and should close) its copies of the three files, and
// closes the Child when done with it. An error wrapping ErrFallback means nothing ran;
// ErrRefused, that the script is a special file nobody should run. Start does not wait
// for a zygote that is still starting or pre-importing: it falls back. It waits for the
// zygote's answer at most until min(o.Deadline, now+AnswerTimeout); a zygote that has not
// answered by then is stopped with its children, and nothing of this event runs there.
func (m *Manager) Start(spec Spec, stdin, stdout, stderr *os.File, o RunOptions) (*Child, error) {
	if err := check(spec); err != nil {
		m.noteFallback(err)
		return nil, err
	}
	if err := preCheck(spec); err != nil {
		m.Stats.add(func(s *Stats) { s.Refused++ })
		return nil, err
	}
	z := m.get(spec, true)
	if z == nil {
		return nil, fallback("zygotes closed")
	}
	select {
	case <-z.ready:
	default:
		err := fallback("zygote still starting")
		m.noteFallback(err)
		return nil, err
	}
	select {
	case <-z.dead:
		err := fallback("zygote ended: %v", z.err)
		m.noteFallback(err)
		return nil, err
	default:
	}
	if !z.usable {
		err := fallback("zygote unusable")
		m.noteFallback(err)
		return nil, err
	}
	answerBy := func() time.Time {
		w := time.Now().Add(m.opts.AnswerTimeout)
		if !o.Deadline.IsZero() && o.Deadline.Before(w) {
			w = o.Deadline
		}
		return w
	}
	// A pre-import in flight (the script's first event, a new script) is waited for, as
	// long as an answer would be: a slow one (a configured third-party module) leaves the
	// event to run cold, and one that never ends is stopped by PreloadTimeout.
	wait := answerBy()
	pt := time.NewTimer(time.Until(wait))
	select {
	case <-z.preloadsDone():
		pt.Stop()
	case <-pt.C:
		err := fallback("zygote busy pre-importing")
		m.noteFallback(err)
		return nil, err
	}
	wait = answerBy()
	limit := time.Until(wait).Round(time.Millisecond)
	id, r := z.register()
	if id == 0 {
		return nil, fallback("zygote ended")
	}
	req := map[string]any{"op": "run", "id": id, "script": spec.Script, "args": nonNil(spec.Args),
		"options": nonNil(spec.Options), "cwd": spec.Dir, "env": applyDelta(spec.Env, z.delta), "prefault": !m.opts.NoPrefault,
		"kill_group": !o.KeepGroup}
	if err := z.send(req, []int{int(stdin.Fd()), int(stdout.Fd()), int(stderr.Fd())}, wait); err != nil {
		// The zygote is stopped (send): a child it may have forked for this request is
		// killed by failAll; the reply says what happened.
		<-r.reply
		err = fallback("send: %v", err)
		m.noteFallback(err)
		return nil, err
	}
	t := time.NewTimer(time.Until(wait))
	defer t.Stop()
	var rep reply
	select {
	case rep = <-r.reply:
	case <-t.C:
		// Stuck (a wedged import, a stopped process) or far too slow: stopped with its
		// children. A child it forked for this event meanwhile is killed (failAll, or
		// deliver for an abandoned request); the event runs cold.
		z.mu.Lock()
		r.abandoned = true
		z.mu.Unlock()
		m.Stats.add(func(s *Stats) { s.Unresponsive++ })
		z.kill(fmt.Sprintf("did not answer an event within %v", limit))
		select {
		case rep = <-r.reply:
		case <-z.dead:
		}
		if rep.child != nil {
			rep.child.Kill()
			<-rep.child.done // failAll, as the zygote is stopped
			rep.child.Close()
		}
		err := fallback("zygote did not answer in time; stopped")
		m.noteFallback(err)
		return nil, err
	}
	if rep.refuse != "" {
		return nil, fmt.Errorf("%w: %s", ErrRefused, rep.refuse)
	}
	if rep.fallback != "" {
		err := fallback("%s", rep.fallback)
		m.noteFallback(err)
		return nil, err
	}
	m.Stats.add(func(s *Stats) { s.Forked++ })
	return rep.child, nil
}

// preCheck is checkScript (tests turn it off to reach the zygote's own check).
var preCheck = checkScript

// checkScript refuses a script path that names a FIFO, a device or a socket before the
// zygote is asked (the zygote checks again as it opens it, without waiting: O_NONBLOCK).
// Stat does not open the file, so it cannot wait on a FIFO.
func checkScript(spec Spec) error {
	path := spec.Script
	if !filepath.IsAbs(path) {
		path = filepath.Join(spec.Dir, path)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // missing: the zygote answers (the cold run's own error)
	}
	return fmt.Errorf("%w: %s is %s, not a script file", ErrRefused, path, osproc.FileKind(fi.Mode()))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (m *Manager) noteFallback(err error) {
	m.Stats.add(func(s *Stats) { s.Fallbacks++; s.LastFallback = err.Error() })
}

// ZygotePIDs returns the pids of the running zygotes (tests, status).
func (m *Manager) ZygotePIDs() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int
	for _, z := range m.zs {
		select {
		case <-z.dead:
		case <-z.ready:
			if z.usable {
				out = append(out, z.pid)
			}
		default:
		}
	}
	return out
}

// WaitReady waits until the zygote for spec is ready (or failed), for tests and benches.
func (m *Manager) WaitReady(spec Spec, timeout time.Duration) error {
	z := m.get(spec, true)
	if z == nil {
		return errors.New("closed")
	}
	select {
	case <-z.ready:
		if !z.usable {
			<-z.dead
			return z.err
		}
		return nil
	case <-time.After(timeout):
		return errors.New("zygote not ready")
	}
}

func (m *Manager) janitor() {
	defer m.wg.Done()
	t := time.NewTicker(min(m.opts.IdleTimeout/4+time.Millisecond, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case now := <-t.C:
			m.mu.Lock()
			for k, z := range m.zs {
				z.mu.Lock()
				busy := len(z.waiting) > 0
				z.mu.Unlock()
				if !busy && now.Sub(z.lastUse) > m.opts.IdleTimeout {
					z.kill("idle")
					delete(m.zs, k)
				}
			}
			m.mu.Unlock()
		}
	}
}

// Close stops every zygote and waits for the manager's goroutines. Children still running
// are killed and reported lost: Close is for shutdown.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	for k, z := range m.zs {
		z.kill("hookd stopping")
		delete(m.zs, k)
	}
	close(m.stop)
	m.mu.Unlock()
	m.wg.Wait()
}

type capWriter struct {
	b   *bytes.Buffer
	max int
	mu  *sync.Mutex
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// envDelta is what an interpreter's start-up did to the environment it was given: Python
// itself coerces a C locale by setting LC_CTYPE (PEP 538), a version manager's shim
// prepends to PATH. Entries "K=V" are set, entries "K" (no '=') are removed. The zygote's
// key covers every input of that change (the start-up variables; the whole environment for
// a launcher that is not an ELF binary), so each event's environment gets the same change.
func envDelta(given, got []string) []string {
	g := map[string]string{}
	for _, kv := range given {
		k, v, _ := strings.Cut(kv, "=")
		g[k] = v
	}
	seen := map[string]bool{}
	var d []string
	for _, kv := range got {
		k, v, _ := strings.Cut(kv, "=")
		seen[k] = true
		if old, ok := g[k]; !ok || old != v {
			d = append(d, kv)
		}
	}
	for _, kv := range given {
		if k, _, _ := strings.Cut(kv, "="); !seen[k] {
			d = append(d, k)
			seen[k] = true
		}
	}
	return d
}

func applyDelta(env, delta []string) []string {
	if len(delta) == 0 {
		return nonNil(env)
	}
	out := slices.Clone(env)
	for _, d := range delta {
		k, v, set := strings.Cut(d, "=")
		i := slices.IndexFunc(out, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
		switch {
		case !set && i >= 0:
			out = slices.Delete(out, i, i+1)
		case set && i >= 0:
			out[i] = k + "=" + v
		case set:
			out = append(out, d)
		}
	}
	return out
}
