// Package zygote runs unmodified Python hook scripts by forking them from a warm
// interpreter instead of starting Python per event (docs/zygote.md).
//
// A zygote is `PYTHON [options] -c <server.py>` with one end of a SOCK_SEQPACKET socket
// pair as fd 3. It is keyed by everything that shapes an interpreter before the first line
// of a script runs: the interpreter (as written and as resolved), its options, the
// working directory and the environment variables read at start-up (Key). Per event, hookd
// sends it the script, arguments, working directory and environment, with the event's
// stdin, stdout and stderr as SCM_RIGHTS descriptors; the zygote forks a child that makes
// itself what `PYTHON [options] SCRIPT ARGS` would be and reports the child's pid, then
// its exit status.
//
// The contract with the caller: Start either returns a *Child (the hook is running, or is
// about to: its pid and process group exist) or an error wrapping ErrFallback, in which
// case the hook has not run and the caller must run it another way (cold). A zygote that
// dies is replaced on a later event; a child whose zygote dies under it is killed and
// reported as lost (never as a success).
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
)

//go:embed server.py
var serverScript string

// ErrFallback means the zygote did not run the hook; run it cold.
var ErrFallback = errors.New("zygote: not served")

// ErrLost means the zygote died while the hook ran: its exit status is unknown.
var ErrLost = errors.New("zygote died while the hook ran; exit status unknown")

func fallback(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrFallback, fmt.Sprintf(format, a...))
}

// Spec is one `PYTHON [options] SCRIPT ARGS` to run.
type Spec struct {
	// Python is the interpreter as written (argv[0] of a cold run); Path is the file it
	// resolves to, as exec would find it.
	Python, Path string
	// Options are the interpreter's options before the script; only ModelledOptions are
	// served.
	Options []string
	Script  string // as written: sys.argv[0]
	Args    []string
	Dir     string // working directory; must be absolute
	Env     []string
}

// ModelledOptions are the interpreter options a zygote reproduces: each is a start-up
// flag that the children inherit unchanged from the zygote. Anything else (-I, -P, -X,
// -W, -c, -m, combined flags, ...) is served cold.
var ModelledOptions = map[string]bool{"-S": true, "-s": true, "-E": true, "-B": true, "-u": true, "-O": true, "-OO": true, "-b": true, "-bb": true}

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

// Key is the identity of the zygote that may serve spec: sha256 over the interpreter as
// written and resolved, its options, the working directory and the start-up environment.
// When the interpreter is not an ELF binary (a launcher script such as pyenv's shim, which
// may read any variable and changes PATH), the key takes the whole environment except the
// harness's own per-event variables (CLAUDE_*: Claude Code sets CLAUDE_EFFORT for some
// events and not others), which no interpreter launcher reads.
func Key(spec Spec) string {
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
	f, err := os.Open(path)
	ok := false
	if err == nil {
		_, err = f.ReadAt(b, 0)
		f.Close()
		ok = err == nil && string(b) == "\x7fELF"
	}
	elfCache.Store(path, ok)
	return ok
}

// Check reports why spec cannot be served by a zygote, or nil.
func Check(spec Spec) error {
	for _, o := range spec.Options {
		if !ModelledOptions[o] {
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
}

// Manager starts, serves from and stops zygotes. Safe for concurrent use.
type Manager struct {
	opts Options

	mu     sync.Mutex
	zs     map[string]*zygote
	closed bool
	wg     sync.WaitGroup
	stop   chan struct{}

	Stats Stats
}

// Stats counts what the manager did.
type Stats struct {
	mu                                     sync.Mutex
	Forked, Fallbacks, Started, Died, Lost uint64
	LastFallback                           string
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
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	m := &Manager{opts: o, zs: map[string]*zygote{}, stop: make(chan struct{})}
	m.wg.Add(1)
	go m.janitor()
	return m
}

// zygote is one warm interpreter.
type zygote struct {
	m       *Manager
	key     string
	cmd     *exec.Cmd
	conn    *net.UnixConn
	ready   chan struct{} // closed when the ready message arrived or the zygote failed
	dead    chan struct{} // closed when the zygote exited and its reader ended
	stderr  bytes.Buffer  // its own diagnostics (bounded)
	err     error         // why it is unusable; read only after dead is closed
	killed  bool          // guarded by mu, like cmd, pid and conn
	delta   []string      // what start-up did to the environment (envDelta); set before ready closes
	usable  bool          // the ready message came and passed the checks; set before ready closes
	pid     int
	lastUse time.Time // guarded by m.mu
	scripts map[string]bool

	wmu     sync.Mutex // serialises writes
	mu      sync.Mutex
	nextID  uint64
	waiting map[uint64]*request
}

type request struct {
	reply chan reply // pid or fallback (buffered 1)
	child *Child
}

type reply struct {
	child    *Child
	fallback string
	hot      [][2]uint64
}

type message struct {
	Op         string      `json:"op,omitempty"`
	ID         uint64      `json:"id,omitempty"`
	Pid        int         `json:"pid,omitempty"`
	Code       *int        `json:"code,omitempty"`
	Fallback   string      `json:"fallback,omitempty"`
	SetupError string      `json:"setup_error,omitempty"`
	Error      string      `json:"error,omitempty"`
	Environ    []string    `json:"environ,omitempty"`
	Preloaded  []string    `json:"preloaded,omitempty"`
	Populated  uint64      `json:"populated,omitempty"`    // from a child: pages its spare pre-faulted
	ReadyFlt   uint64      `json:"ready_minflt,omitempty"` // from a child: its minor faults when its spare was ready
	Minflt     uint64      `json:"minflt,omitempty"`       // with Code: the child's minor faults
	CPUus      uint64      `json:"cpu_us,omitempty"`       // with Code: the child's CPU time
	Hot        [][2]uint64 `json:"hot,omitempty"`          // answer to "hot" (tests): the ranges spares now populate
}

// Child is a hook process forked from a zygote.
type Child struct {
	Pid      int
	readyFlt uint64 // its minor faults when its spare was ready (guarded by the zygote's mu)
	done     chan struct{}
	code     int
	err      error
}

// Done is closed when the child has exited (or was lost with its zygote).
func (c *Child) Done() <-chan struct{} { return c.done }

// Result is the child's exit code (-N when killed by signal N), or ErrLost. Valid after
// Done is closed.
func (c *Child) Result() (int, error) { return c.code, c.err }

// Kill kills the child's process group.
func (c *Child) Kill() { _ = syscall.Kill(-c.Pid, syscall.SIGKILL) }

// Warm makes sure the zygote for spec is started and has pre-imported what spec's script
// imports. It returns at once.
func (m *Manager) Warm(spec Spec) {
	if Check(spec) != nil {
		return
	}
	m.get(spec, true)
}

// get returns the zygote for spec, starting it if start is set. A zygote that is not
// ready yet is returned too; callers check.
func (m *Manager) get(spec Spec, start bool) *zygote {
	k := Key(spec)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	z := m.zs[k]
	if z != nil {
		select {
		case <-z.dead:
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
		go func() { _ = z.preload(spec) }()
	}
	return z
}

func (m *Manager) evictLocked() bool {
	var victim string
	var at time.Time
	for k, z := range m.zs {
		if victim == "" || z.lastUse.Before(at) {
			victim, at = k, z.lastUse
		}
	}
	if victim == "" {
		return false
	}
	m.zs[victim].kill()
	delete(m.zs, victim)
	return true
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
		close(z.dead)
	}()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
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
	z.mu.Lock()
	z.conn = conn
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
	z.mu.Lock()
	z.cmd = cmd
	z.pid = cmd.Process.Pid
	killed = z.killed
	z.mu.Unlock()
	if killed {
		_ = syscall.Kill(-z.pid, syscall.SIGKILL)
	}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	defer func() {
		_ = syscall.Kill(-z.pid, syscall.SIGKILL)
		<-waited
		z.mu.Lock()
		msg := strings.TrimSpace(z.stderr.String())
		z.mu.Unlock()
		if z.err == nil {
			z.err = fmt.Errorf("zygote exited (%s) %s", cmd.ProcessState, msg)
		}
		z.m.Stats.add(func(s *Stats) { s.Died++ })
		z.m.opts.Logf("python zygote %d ended: %v", z.pid, z.err)
	}()
	buf := make([]byte, 64<<10)
	for {
		n, _, _, _, err := conn.ReadMsgUnix(buf, nil)
		if err != nil || n == 0 {
			return
		}
		var msg message
		if err := json.Unmarshal(buf[:n], &msg); err != nil {
			z.err = fmt.Errorf("zygote sent garbage: %v", err)
			return
		}
		if msg.Op == "ready" {
			z.delta = envDelta(spec.Env, msg.Environ)
			z.usable = true
			readyOnce()
			continue
		}
		z.deliver(msg)
	}
}

func (z *zygote) deliver(msg message) {
	z.mu.Lock()
	r := z.waiting[msg.ID]
	var c *Child
	if r != nil {
		c = r.child
	}
	z.mu.Unlock()
	if r == nil {
		return
	}
	switch {
	case msg.Fallback != "" || msg.Error != "":
		z.forget(msg.ID)
		r.reply <- reply{fallback: msg.Fallback + msg.Error}
	case msg.SetupError != "":
		// The child failed before running the hook; its exit follows. Nothing ran.
		z.m.opts.Logf("python zygote child setup failed: %s", msg.SetupError)
		if c != nil {
			c.err = fmt.Errorf("%w: child setup failed: %s", ErrFallback, msg.SetupError)
		}
	case msg.ReadyFlt > 0:
		// The child, before its hook runs: how many pages its spare pre-faulted, and its
		// faults so far (the rest are the event's).
		if c != nil {
			z.mu.Lock()
			c.readyFlt = msg.ReadyFlt
			z.mu.Unlock()
		}
		if msg.Populated > 0 {
			z.m.Stats.add(func(s *Stats) { s.Populated += msg.Populated; s.Prefaulted++ })
		}
	case msg.Hot != nil:
		z.forget(msg.ID)
		r.reply <- reply{hot: msg.Hot}
	case msg.Preloaded != nil:
		z.forget(msg.ID)
		r.reply <- reply{}
	case msg.Pid != 0:
		// Created here, by the one reader, so the exit message (which always follows the
		// pid) finds it.
		c := &Child{Pid: msg.Pid, done: make(chan struct{})}
		z.mu.Lock()
		r.child = c
		z.mu.Unlock()
		r.reply <- reply{child: c}
	case msg.Code != nil:
		z.mu.Lock()
		delete(z.waiting, msg.ID)
		c := r.child
		z.mu.Unlock()
		z.mu.Lock()
		ready := c != nil && c.readyFlt > 0 && c.readyFlt <= msg.Minflt
		var evFlt uint64
		if ready {
			evFlt = msg.Minflt - c.readyFlt
		}
		z.mu.Unlock()
		z.m.Stats.add(func(s *Stats) {
			if ready {
				s.EventFaults += evFlt
				s.Reported++
			}
			s.ChildFaults += msg.Minflt
			s.ChildCPU += time.Duration(msg.CPUus) * time.Microsecond
			s.Exited++
		})
		if c != nil {
			c.code = *msg.Code
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
		r.child.Kill()
		if r.child.err == nil {
			r.child.err = ErrLost
		}
		r.child.code = -1
		z.m.Stats.add(func(s *Stats) { s.Lost++ })
		close(r.child.done)
	}
}

func (z *zygote) kill() {
	z.mu.Lock()
	z.killed = true
	pid, conn := z.pid, z.conn
	z.mu.Unlock()
	if pid != 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	if conn != nil {
		conn.Close()
	}
}

func (z *zygote) send(v any, fds []int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	z.wmu.Lock()
	defer z.wmu.Unlock()
	z.mu.Lock()
	conn := z.conn
	z.mu.Unlock()
	_, _, err = conn.WriteMsgUnix(b, oob, nil)
	return err
}

// preload has the zygote import what spec's script imports at top level (standard
// library modules only, plus Options.Preload), and waits for it.
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
	if err := z.send(map[string]any{"op": "preload", "id": id, "scripts": []string{script}, "modules": nonNil(z.m.opts.Preload)}, nil); err != nil {
		z.forget(id)
		return err
	}
	if rep := <-r.reply; rep.fallback != "" {
		return fallback("%s", rep.fallback)
	}
	return nil
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
	return z.preload(spec)
}

// Start runs spec with the given stdin (read end), stdout and stderr (write ends). On
// success the caller still owns (and should close) its copies of the three files. An
// error wrapping ErrFallback means nothing ran. Start does not wait for a zygote that is
// still starting: it starts one if needed and falls back.
func (m *Manager) Start(spec Spec, stdin, stdout, stderr *os.File) (*Child, error) {
	if err := Check(spec); err != nil {
		m.noteFallback(err)
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
	id, r := z.register()
	if id == 0 {
		return nil, fallback("zygote ended")
	}
	req := map[string]any{"op": "run", "id": id, "script": spec.Script, "args": nonNil(spec.Args),
		"options": nonNil(spec.Options), "cwd": spec.Dir, "env": applyDelta(spec.Env, z.delta), "prefault": !m.opts.NoPrefault}
	if err := z.send(req, []int{int(stdin.Fd()), int(stdout.Fd()), int(stderr.Fd())}); err != nil {
		z.forget(id)
		err = fallback("send: %v", err)
		m.noteFallback(err)
		return nil, err
	}
	rep := <-r.reply
	if rep.fallback != "" {
		err := fallback("%s", rep.fallback)
		m.noteFallback(err)
		return nil, err
	}
	m.Stats.add(func(s *Stats) { s.Forked++ })
	return rep.child, nil
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
					z.kill()
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
		z.kill()
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
