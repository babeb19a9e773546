package rules

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The real-bash oracle: commands generated from constructs × wrappers ×
// nesting × quoting (realbash_gen_test.go) are each run by real bash, and
// the test fails when bash ran rm while hookd, with deny Bash(rm:*) and a
// hook that allows, did not deny. "Ran rm" is decided by bash, not by the
// analysis: an rm on PATH that logs its arguments, and canary files that
// every generated rm targets by absolute path, so that /bin/rm and
// /usr/bin/rm called by path, by a wrapper's default PATH or after a cd
// are seen too.
//
// Each command runs in a sandbox: as nobody (setpriv, no capabilities, no
// new privileges), in new network, PID and mount namespaces (unshare: no
// network; the helper is PID 1 and kills everything a command left behind
// before the canaries are read), with resource limits and a time limit,
// in a fresh directory. Without root the helper tries an unprivileged user
// namespace, and otherwise runs as the (unprivileged) user with a process
// group per command; the test log says which.
//
// `go test ./rules` runs a seeded slice (HOOKD_ORACLE_N, default 300, 100
// with -short); `make fuzz` runs 100,000 (test/fuzz.sh).

const (
	oracleTimeout = 3 * time.Second
	oracleEnvDir  = "HOOKD_ORACLE_HELPER"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(oracleEnvDir); dir != "" {
		os.Exit(oracleHelper(dir))
	}
	os.Exit(m.Run())
}

type oracleJob struct {
	Cmd string `json:"cmd"`
}

type oracleResult struct {
	Ran      bool          `json:"ran"`      // the rm shim logged, or a canary vanished
	Log      string        `json:"log"`      // what the shim logged
	Gone     string        `json:"gone"`     // canaries that vanished
	TimedOut bool          `json:"timedOut"` // killed at the time limit
	Err      string        `json:"err"`      // the sandbox failed (not the command)
	Took     time.Duration `json:"took"`
}

// oracleCanaries are the files every slot's work directory starts with;
// generated commands name them through the tokens @X@, @Y@ and @D@.
var oracleCanaries = []string{"x", "y", "d/f"}

// oracleHelper runs in the sandbox: it reads jobs from standard input and
// answers one result per line.
func oracleHelper(dir string) int {
	pid1 := os.Getpid() == 1
	// Limits the commands inherit. No RLIMIT_CPU: it would count the helper's own CPU,
	// which grows with every command it runs (≈ 3 ms each), and kill the helper itself
	// after ~6,000 commands (a 100,000-command run lost a slot that way); a command's
	// time is bounded by oracleTimeout's SIGKILL to its process group instead.
	for _, l := range []struct {
		res int
		max uint64
	}{{6 /* RLIMIT_NPROC */, 512}, {syscall.RLIMIT_FSIZE, 16 << 20}, {syscall.RLIMIT_AS, 2 << 30}} {
		_ = syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: l.max, Max: l.max})
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var j oracleJob
		if err := json.Unmarshal(in.Bytes(), &j); err != nil {
			_ = out.Encode(oracleResult{Err: err.Error()})
			continue
		}
		_ = out.Encode(oracleRun(dir, j.Cmd, pid1))
	}
	return 0
}

func oracleRun(dir, cmd string, pid1 bool) (r oracleResult) {
	start := time.Now()
	defer func() { r.Took = time.Since(start) }()
	work := filepath.Join(dir, "work")
	_ = filepath.Walk(work, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() {
			_ = os.Chmod(p, 0o755) // a command may have taken rights away
		}
		return nil
	})
	if err := os.RemoveAll(work); err != nil {
		r.Err = err.Error()
		return r
	}
	for _, c := range oracleCanaries {
		p := filepath.Join(work, c)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.Err = err.Error()
			return r
		}
		if err := os.WriteFile(p, []byte("canary\n"), 0o644); err != nil {
			r.Err = err.Error()
			return r
		}
	}
	logPath := filepath.Join(dir, "rm.log")
	if err := os.WriteFile(logPath, nil, 0o644); err != nil {
		r.Err = err.Error()
		return r
	}
	c := exec.Command("/usr/bin/bash", "-c", cmd)
	c.Dir = work
	c.Env = []string{"PATH=" + filepath.Join(dir, "bin") + ":/usr/bin:/bin", "HOME=" + work, "LC_ALL=C",
		"TMPDIR=" + work, "SHELL=/usr/bin/bash"}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		r.Err = err.Error()
		return r
	}
	done, timedOut := make(chan struct{}), make(chan bool, 1)
	go func() {
		select {
		case <-done:
			timedOut <- false
		case <-time.After(oracleTimeout):
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			timedOut <- true
		}
	}()
	_ = c.Wait()
	close(done)
	r.TimedOut = <-timedOut
	// What the command left running (coprocesses, `&`, setsid) may still
	// run rm: give it a moment, then kill everything.
	if pid1 {
		deadline := time.Now().Add(500 * time.Millisecond)
		for time.Now().Before(deadline) {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.ECHILD) {
				break
			}
			if pid <= 0 {
				time.Sleep(5 * time.Millisecond)
			}
		}
		_ = syscall.Kill(-1, syscall.SIGKILL)
		for {
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(-1, &ws, 0, nil); err != nil {
				break
			}
		}
	} else {
		time.Sleep(50 * time.Millisecond)
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
	if b, err := os.ReadFile(logPath); err == nil && len(b) > 0 {
		r.Ran, r.Log = true, string(b)
	}
	for _, cn := range oracleCanaries {
		if _, err := os.Lstat(filepath.Join(work, cn)); err != nil {
			r.Ran = true
			r.Gone += cn + " "
		}
	}
	return r
}

// oracle is a set of sandboxed helpers, one per slot.
type oracle struct {
	base      string
	isolation string
	slots     []*oracleSlot
}

type oracleSlot struct {
	dir string
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// startOracle prepares the slots and starts their helpers.
func startOracle(t *testing.T, n int) *oracle {
	t.Helper()
	if _, err := os.Stat("/usr/bin/bash"); err != nil {
		t.Fatalf("the real-bash oracle needs /usr/bin/bash: %v", err)
	}
	base, err := os.MkdirTemp("", "hookd-oracle-")
	if err != nil {
		t.Fatal(err)
	}
	o := &oracle{base: base}
	t.Cleanup(func() { o.stop(t); _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(base, "helper.test")
	if err := copyFile(self, helper, 0o755); err != nil {
		t.Fatal(err)
	}
	uid, gid, wrap, isolation := oracleSandbox(t)
	o.isolation = isolation
	for i := 0; i < n; i++ {
		dir := filepath.Join(base, "s"+strconv.Itoa(i))
		for _, d := range []string{dir, filepath.Join(dir, "bin"), filepath.Join(dir, "work")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		shim := "#!/bin/sh\nprintf '%s\\n' \"rm $*\" >> " + filepath.Join(dir, "rm.log") + "\n"
		if err := os.WriteFile(filepath.Join(dir, "bin", "rm"), []byte(shim), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "rm.log"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{dir, filepath.Join(dir, "work"), filepath.Join(dir, "rm.log")} {
			if err := os.Chown(p, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
		args := append(append([]string(nil), wrap...), helper, "-test.run=^$")
		c := exec.Command(args[0], args[1:]...)
		c.Env = append(os.Environ(), oracleEnvDir+"="+dir)
		c.Stderr = os.Stderr
		in, err := c.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		outp, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatalf("start the oracle's sandbox (%s): %v", strings.Join(args, " "), err)
		}
		sc := bufio.NewScanner(outp)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		o.slots = append(o.slots, &oracleSlot{dir: dir, cmd: c, in: in, out: sc})
	}
	return o
}

// oracleSandbox decides how the helpers run. As root: as nobody (setpriv,
// no capabilities) in new network, PID and mount namespaces (unshare). As
// another user: in an unprivileged user namespace with the same new
// namespaces. Where neither works the oracle does not quietly weaken: under
// CI (CI=true) the test fails, saying why; elsewhere (a developer's machine
// without user namespaces) it runs as the user without namespaces and its
// log says so.
func oracleSandbox(t *testing.T) (uid, gid int, wrap []string, isolation string) {
	t.Helper()
	probe := func(wrap []string) error {
		out, err := exec.Command(wrap[0], append(wrap[1:], "true")...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s true: %v: %s", strings.Join(wrap, " "), err, bytes.TrimSpace(out))
		}
		return nil
	}
	ns := []string{"unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child"}
	if os.Geteuid() == 0 {
		wrap = append(ns, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
			"--bounding-set=-all", "--no-new-privs", "--")
		if err := probe(wrap); err != nil {
			t.Fatalf("the real-bash oracle runs its commands as nobody in new namespaces, and as root that failed "+
				"(a container without CAP_SYS_ADMIN? util-linux missing?): %v", err)
		}
		return 65534, 65534, wrap, "as nobody (setpriv, no capabilities), new network, PID and mount namespaces"
	}
	wrap = append([]string{"unshare", "--user", "--map-root-user"}, append(ns[1:], "--")...)
	err := probe(wrap)
	if err == nil {
		return os.Getuid(), os.Getgid(), wrap, "as the (unprivileged) test user in a user namespace with new network, PID and mount namespaces"
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the real-bash oracle needs root or unprivileged user namespaces, and CI must run it "+
			"(run the tests as root, or allow user namespaces: sysctl kernel.unprivileged_userns_clone=1, "+
			"kernel.apparmor_restrict_unprivileged_userns=0): %v", err)
	}
	t.Logf("LOUD: no user namespaces (%v): the oracle runs as this user without them", err)
	return os.Getuid(), os.Getgid(), nil,
		"as the (unprivileged) test user, no namespaces (network not isolated; process groups instead of a PID namespace)"
}

// stop ends the helpers; one that exits with an error (a data race under
// -race, a crash) fails the test.
func (o *oracle) stop(t *testing.T) {
	for i, s := range o.slots {
		_ = s.in.Close()
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("the oracle's helper %d exited: %v (its output is above)", i, err)
		}
	}
	o.slots = nil
}

// canaryPaths replaces the tokens @X@, @Y@ and @D@ with a slot's canaries.
func (s *oracleSlot) canaryPaths(cmd string) string {
	w := filepath.Join(s.dir, "work")
	return strings.NewReplacer("@X@", w+"/x", "@Y@", w+"/y", "@D@", w+"/d").Replace(cmd)
}

func (s *oracleSlot) run(cmd string) (oracleResult, error) {
	b, _ := json.Marshal(oracleJob{Cmd: cmd})
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		return oracleResult{}, err
	}
	if !s.out.Scan() {
		return oracleResult{}, fmt.Errorf("the oracle's helper stopped: %v", s.out.Err())
	}
	var r oracleResult
	if err := json.Unmarshal(s.out.Bytes(), &r); err != nil {
		return r, err
	}
	if r.Err != "" {
		return r, errors.New(r.Err)
	}
	return r, nil
}

// oracleVerdict is hookd's answer for one command.
func oracleVerdict(cmd string) Resolution {
	r, _ := Parse("Bash(rm:*)", Deny, projectOrigin)
	return Resolve(DecisionAllow, NewSet([]*Rule{r}), Call{Tool: "Bash", Input: map[string]any{"command": cmd}, Cwd: "/proj", Home: "/home/u"})
}

// oracleStats sums up a run.
type oracleStats struct {
	mu                             sync.Mutex
	total, ran, denied, overDeny   int
	timedOut, benign, benignDenied int
	misses                         []string
}

func TestRealBashOracle(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 100
	}
	if v := os.Getenv("HOOKD_ORACLE_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatalf("HOOKD_ORACLE_N=%q: %v", v, err)
		}
	}
	seed := uint64(2027)
	if v := os.Getenv("HOOKD_ORACLE_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("HOOKD_ORACLE_SEED=%q: %v", v, err)
		}
	}
	slots := 4
	if v := os.Getenv("HOOKD_ORACLE_SLOTS"); v != "" {
		var err error
		if slots, err = strconv.Atoi(v); err != nil || slots < 1 || slots > 64 {
			t.Fatalf("HOOKD_ORACLE_SLOTS=%q: want 1 to 64", v)
		}
	}
	began := time.Now()
	o := startOracle(t, slots)
	t.Logf("real bash oracle: %d commands, seed %d, %d slots, sandbox %s", n, seed, slots, o.isolation)
	jobs := make(chan genCase)
	go func() {
		g := newOracleGen(rand.New(rand.NewPCG(seed, 0x5eed)))
		for i := 0; i < n; i++ {
			jobs <- g.next()
		}
		close(jobs)
	}()
	var st oracleStats
	var wg sync.WaitGroup
	for _, s := range o.slots {
		wg.Add(1)
		go func(s *oracleSlot) {
			defer wg.Done()
			for c := range jobs {
				cmd := s.canaryPaths(c.cmd)
				res, err := s.run(cmd)
				if err != nil {
					st.mu.Lock()
					st.misses = append(st.misses, fmt.Sprintf("sandbox error on %q: %v", cmd, err))
					st.mu.Unlock()
					continue
				}
				v := oracleVerdict(cmd)
				st.mu.Lock()
				st.total++
				if c.benign {
					st.benign++
					if v.Final == DecisionDeny {
						st.benignDenied++
					}
				}
				if res.TimedOut {
					st.timedOut++
				}
				if os.Getenv("HOOKD_ORACLE_SLOW") != "" && res.Took > 300*time.Millisecond {
					fmt.Printf("slow %v %q\n", res.Took, cmd)
				}
				if v.Final == DecisionDeny {
					st.denied++
				}
				if st.total%1000 == 0 {
					t.Logf("%d commands so far (%v): bash ran rm in %d, %d misses", st.total, time.Since(began).Round(time.Second), st.ran, len(st.misses))
				}
				switch {
				case res.Ran:
					st.ran++
					if v.Final != DecisionDeny && len(st.misses) < 50 {
						m := fmt.Sprintf("bash ran rm (%s%s) but hookd answered %q:\n    %q\n    family %s",
							strings.TrimSpace(res.Log), strings.TrimSpace(" gone: "+res.Gone), v.Final, cmd, c.family)
						st.misses = append(st.misses, m)
						t.Log("MISS " + m) // at once: a long run shows its misses as they come
					}
				case v.Final == DecisionDeny:
					st.overDeny++
				}
				st.mu.Unlock()
			}
		}(s)
	}
	wg.Wait()
	t.Logf("%d commands in %v: bash ran rm in %d, hookd denied %d (%d where bash did not run rm); %d benign, %d of them denied; %d timed out",
		st.total, time.Since(began).Round(time.Second), st.ran, st.denied, st.overDeny, st.benign, st.benignDenied, st.timedOut)
	for _, m := range st.misses {
		t.Error(m)
	}
	if st.total < n {
		t.Errorf("only %d of %d commands ran", st.total, n)
	}
	if st.ran < st.total/4 {
		t.Errorf("bash ran rm in only %d of %d commands: the generator drifted", st.ran, st.total)
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
