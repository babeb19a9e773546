// Package bench holds hookd's benchmark suite (`make bench`; figures in BENCHMARKS.md).
// The benchmarks build release binaries (as `make build` does), start real daemons on
// scratch sockets, and time whole processes and socket round trips.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/testutil"
)

// ReleaseFlags are `make build`'s flags: what ships is what is measured.
var ReleaseFlags = []string{"-trimpath", "-ldflags", "-s -w"}

var (
	binMu  sync.Mutex
	binDir string
)

// Bins builds hookd and hookc with the release flags and CGO_ENABLED=0 into a temporary
// directory, once while benchmarks that use them run, and returns their paths. The
// directory is removed when the benchmark that built it ends.
func Bins(tb testing.TB) (hookd, hookc string) {
	tb.Helper()
	binMu.Lock()
	defer binMu.Unlock()
	if binDir == "" {
		dir, err := os.MkdirTemp("", "hookd-bench-")
		if err != nil {
			tb.Fatal(err)
		}
		for _, p := range []string{"hookd", "hookc"} {
			if err := GoBuild(filepath.Join(dir, p), "./cmd/"+p, RepoRoot()); err != nil {
				os.RemoveAll(dir)
				tb.Fatal(err)
			}
		}
		binDir = dir
		tb.Cleanup(func() {
			binMu.Lock()
			defer binMu.Unlock()
			os.RemoveAll(binDir)
			binDir = ""
		})
	}
	return filepath.Join(binDir, "hookd"), filepath.Join(binDir, "hookc")
}

// GoBuild builds pkg (a path or a file) in dir with the release flags.
func GoBuild(out, pkg, dir string) error {
	args := append([]string{"build", "-o", out}, ReleaseFlags...)
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// RepoRoot is the module root.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// Daemon is a running `hookd serve` in a scratch world.
type Daemon struct {
	tb      testing.TB
	Root    string
	Home    string
	Project string
	Socket  string
	*testutil.Daemon
}

// DaemonOptions configure StartDaemon.
type DaemonOptions struct {
	// Settings is the project's .claude/settings.json ("" for none).
	Settings string
	// HookdFile puts Settings into the project's .claude/hookd.json instead, as `hookd
	// install claude-code` leaves a project: hookd runs those hooks for Claude Code's events
	// (it leaves hooks of a settings file no install moved to Claude Code, when the client's
	// environment says Claude Code sent the event: CLAUDECODE=1).
	HookdFile bool
	// Config is hookd's own configuration ("" for the embedded default).
	Config string
	// Env is added to the daemon's environment (GOMAXPROCS=…, for instance).
	Env []string
	// Bin is the hookd binary to run ("": the one built from this tree) — a baseline
	// build, for before/after comparisons in one run.
	Bin string
}

// StartDaemon starts hookd serve and waits until it answers a ping. It is stopped when
// the benchmark ends.
func StartDaemon(tb testing.TB, o DaemonOptions) *Daemon {
	tb.Helper()
	hookd, _ := Bins(tb)
	if o.Bin != "" {
		hookd = o.Bin
	}
	root := tb.TempDir()
	sockDir, err := os.MkdirTemp("", "hkb")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(sockDir) })
	d := &Daemon{tb: tb, Root: root, Home: filepath.Join(root, "home"), Socket: filepath.Join(sockDir, "s")}
	d.Project = filepath.Join(d.Home, "proj")
	for _, dir := range []string{filepath.Join(d.Project, ".claude"), filepath.Join(d.Home, ".claude"), filepath.Join(root, "managed"), filepath.Join(root, "state")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	if o.Settings != "" {
		name := "settings.json"
		if o.HookdFile {
			name = "hookd.json"
		}
		if err := os.WriteFile(filepath.Join(d.Project, ".claude", name), []byte(o.Settings), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	args := []string{"--socket", d.Socket, "--managed-dir", filepath.Join(root, "managed"), "--user-dir", filepath.Join(d.Home, ".claude"),
		"--state-dir", filepath.Join(root, "state")}
	if o.Config != "" {
		p := filepath.Join(root, "hookd.json")
		if err := os.WriteFile(p, []byte(o.Config), 0o644); err != nil {
			tb.Fatal(err)
		}
		args = append(args, "--config", p)
	}
	d.Daemon = testutil.StartDaemon(tb, testutil.DaemonOptions{Bin: hookd, Args: append(args, "serve"), Socket: d.Socket,
		Env: append(d.BaseEnv(), o.Env...)})
	return d
}

// BaseEnv is the environment of the daemon and of the clients the benchmarks start.
func (d *Daemon) BaseEnv() []string {
	return []string{"HOME=" + d.Home, "PATH=" + os.Getenv("PATH"), protocol.EnvSocket + "=" + d.Socket,
		"CLAUDE_PROJECT_DIR=" + d.Project, "LANG=C.UTF-8"}
}

// Status returns the daemon's status document.
func (d *Daemon) Status() map[string]any {
	c, err := protocol.Dial(context.Background(), d.Socket)
	if err != nil {
		d.tb.Fatal(err)
	}
	defer c.Close()
	f, err := c.Do(context.Background(), &protocol.Request{Op: protocol.OpStatus}, nil)
	if err != nil {
		d.tb.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(f.Data, &m)
	return m
}

// Request builds an event request as hookc would send it.
func (d *Daemon) Request(payload string) *protocol.Request {
	return &protocol.Request{EventText: payload, ProjectDir: d.Project, Env: d.BaseEnv(), Options: protocol.Options{Client: "bench", ResultOnly: true}}
}

// Payload returns a captured Claude Code 2.1.330 payload (test/testdata/payloads) with its
// paths moved into d's project and the given top-level fields replaced.
func (d *Daemon) Payload(name string, set map[string]any) string {
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "test", "testdata", "payloads", "claude-code-2.1.330", name+".json"))
	if err != nil {
		d.tb.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte("/home/dev/proj"), []byte(d.Project))
	b = bytes.ReplaceAll(b, []byte("/home/dev"), []byte(d.Home))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		d.tb.Fatal(err)
	}
	for k, v := range set {
		m[k] = v
	}
	out, _ := json.Marshal(m)
	return string(out)
}

// RSS returns a process's resident set size in KiB (VmRSS).
func RSS(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return 0
}

// Descendants lists pid's descendant processes (children first).
func Descendants(pid int) []int {
	parent := map[int]int{}
	es, _ := os.ReadDir("/proc")
	for _, e := range es {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st := procStat(p); st != nil {
			pp, _ := strconv.Atoi(st[1])
			parent[p] = pp
		}
	}
	var out []int
	frontier := []int{pid}
	for len(frontier) > 0 {
		var next []int
		for p, pp := range parent {
			for _, f := range frontier {
				if pp == f {
					next = append(next, p)
				}
			}
		}
		sort.Ints(next)
		out = append(out, next...)
		frontier = next
	}
	return out
}

// procStat returns the fields of /proc/pid/stat after the command name: state, ppid, ….
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// Settle waits until every descendant of the given processes sleeps and has used no CPU
// for three consecutive 10 ms samples (a prewarmed interpreter has finished starting and
// blocks on stdin), or until max passes. Measurements start from a quiet machine.
func Settle(max time.Duration, pids ...int) {
	deadline := time.Now().Add(max)
	sample := func() (string, bool) {
		var b strings.Builder
		quiet := true
		for _, root := range pids {
			for _, p := range Descendants(root) {
				st := procStat(p)
				if st == nil {
					continue
				}
				if st[0] != "S" && st[0] != "Z" {
					quiet = false
				}
				fmt.Fprintf(&b, "%d:%s:%s;", p, st[11], st[12]) // utime, stime
			}
		}
		return b.String(), quiet
	}
	last, _ := sample()
	stable := 0
	for time.Now().Before(deadline) && stable < 3 {
		time.Sleep(10 * time.Millisecond)
		cur, quiet := sample()
		if cur == last && quiet {
			stable++
		} else {
			stable = 0
		}
		last = cur
	}
}

// Samples are durations of one variant.
type Samples []time.Duration

// Quantile returns the q-quantile (0.5 = median), nearest rank.
func (s Samples) Quantile(q float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	c := append(Samples(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	i := int(math.Ceil(q*float64(len(c)))) - 1
	return c[max(0, min(i, len(c)-1))]
}

// Ms formats a duration in milliseconds.
func Ms(d time.Duration) string {
	ms := float64(d) / 1e6
	switch {
	case ms >= 10:
		return fmt.Sprintf("%.1f ms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.2f ms", ms)
	default:
		return fmt.Sprintf("%.3f ms", ms)
	}
}

// Section replaces the text between "<!-- bench:NAME:begin -->" and
// "<!-- bench:NAME:end -->" in the markdown file named by $HOOKD_BENCH_MD (appending the
// section if absent), and always prints it. Other engineers' sections are left alone.
func Section(tb testing.TB, name, body string) {
	begin, end := "<!-- bench:"+name+":begin -->", "<!-- bench:"+name+":end -->"
	fmt.Printf("\n%s\n%s%s\n", begin, body, end)
	path := os.Getenv("HOOKD_BENCH_MD")
	if path == "" {
		return
	}
	if !filepath.IsAbs(path) { // relative to the repository root, not to test/bench
		_, file, _, _ := runtime.Caller(0)
		path = filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(file))), path)
	}
	old, _ := os.ReadFile(path)
	s := string(old)
	block := begin + "\n" + body + end
	if i, j := strings.Index(s, begin), strings.Index(s, end); i >= 0 && j > i {
		s = s[:i] + block + s[j+len(end):]
	} else {
		if s != "" && !strings.HasSuffix(s, "\n\n") {
			s += "\n"
		}
		s += block + "\n"
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		tb.Error(err)
	}
}

// SessionPATH is the PATH the whole-session benchmarks (BenchmarkClaudeSession,
// BenchmarkCorpus) give Claude Code, natively and through hookd alike, and a sentence
// saying what `python3` is on it. When `python3` on this process's PATH is a version
// manager's shim (pyenv's is a bash script that runs a dozen more bash processes per call
// — ≈ 400 ms per hook event on this machine), the directory of the interpreter it resolves
// to is put first, so the native baseline pays the real interpreter's start-up and not the
// shim's; hookd's zygote would skip the shim anyway, which would flatter hookd.
// HOOKD_BENCH_SHIMS=keep measures with the shim (a pyenv user's real setup). Resolved once
// per process: resolving runs the shim (≈ 0.4 s here), which would otherwise land right
// before every measured session.
func SessionPATH(tb testing.TB) (path, note string) {
	sessionPATH.once.Do(func() {
		sessionPATH.path, sessionPATH.note, sessionPATH.err = resolveSessionPATH()
	})
	if sessionPATH.err != nil {
		tb.Fatal(sessionPATH.err)
	}
	return sessionPATH.path, sessionPATH.note
}

var sessionPATH struct {
	once       sync.Once
	path, note string
	err        error
}

func resolveSessionPATH() (path, note string, err error) {
	path = os.Getenv("PATH")
	py, err := exec.LookPath("python3")
	if err != nil {
		return path, "no python3 on PATH", nil
	}
	if head := readHead(py); strings.HasPrefix(head, "\x7fELF") {
		return path, "`python3` on PATH is the interpreter itself (" + py + ")", nil
	}
	if os.Getenv("HOOKD_BENCH_SHIMS") == "keep" {
		return path, "`python3` on PATH is the shim " + py + " (HOOKD_BENCH_SHIMS=keep): every native Python hook pays the shim", nil
	}
	out, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return "", "", fmt.Errorf("resolving the python3 shim %s: %v", py, err)
	}
	real := strings.TrimSpace(string(out))
	if !strings.HasPrefix(readHead(real), "\x7fELF") {
		return "", "", fmt.Errorf("python3 shim %s resolves to %q, not an executable", py, real)
	}
	return filepath.Dir(real) + string(os.PathListSeparator) + path,
		"`python3` on PATH is a shim (" + py + "); its interpreter's directory " + filepath.Dir(real) + " is put first on PATH, so hooks run the real interpreter natively and through hookd (HOOKD_BENCH_SHIMS=keep measures the shim)", nil
}
