package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/claudeapi"
	"github.com/hookd/hookd/test/testutil"
)

// BenchmarkClaudeSession runs one real `claude -p` session (Claude Code 2.1.330 from
// HOOKD_CLAUDE_BIN, against the loopback Messages API stand-in) with 20 Bash tool calls
// and three Python hooks on PreToolUse and three on PostToolUse, configured natively and
// through hookd (`hookd install claude-code`, daemon running), and reports the wall time
// of a session as ms/session. `make bench` sets HOOKD_CLAUDE_BIN; without it the benchmark
// is skipped.
//
//	make bench BENCHTIME=5x
func BenchmarkClaudeSession(b *testing.B) {
	claude := os.Getenv("HOOKD_CLAUDE_BIN")
	if claude == "" {
		b.Skip("HOOKD_CLAUDE_BIN not set (make bench installs Claude Code)")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("python3 not found")
	}
	bins := buildOnce(b)
	_, pathNote := SessionPATH(b)
	b.Log(pathNote)
	// model=0s answers at once: tool calls come back to back, the worst case for
	// prewarming (the next interpreter is still starting when the next event comes) and
	// CPU-bound on 2 cores. model=500ms gives each turn half a second of thinking time —
	// still quicker than a real model — which is the idle time prewarming uses.
	for _, latency := range []time.Duration{0, 500 * time.Millisecond} {
		// "hookd-prewarm" is hookd with HOOKD_ZYGOTE=off: its Python hooks come from the
		// prewarm pool (whole processes started ahead, after each hook's first event)
		// instead of being forked — which of the two wins depends on the idle time.
		for _, mode := range []string{"native", "hookd", "hookd-prewarm"} {
			b.Run(fmt.Sprintf("model=%v/%s", latency, mode), func(b *testing.B) {
				benchSessions(b, bins, claude, mode, latency)
			})
		}
	}
}

func benchSessions(b *testing.B, bins *binaries, claude, mode string, latency time.Duration) {
	{
		{
			var times []time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s := newSession(b, bins, claude, mode, latency)
				b.StartTimer()
				start := time.Now()
				s.run(b)
				times = append(times, time.Since(start))
				b.StopTimer()
				s.close()
				b.StartTimer()
			}
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			med := times[len(times)/2]
			b.ReportMetric(float64(med.Microseconds())/1000, "ms/session(median)")
			b.ReportMetric(0, "ns/op")
		}
	}
}

const toolCalls = 20

var (
	buildMu  sync.Mutex
	built    *binaries
	buildErr error
)

type binaries struct{ hookd, hookc string }

func buildOnce(b *testing.B) *binaries {
	buildMu.Lock()
	defer buildMu.Unlock()
	if built != nil || buildErr != nil {
		if buildErr != nil {
			b.Fatal(buildErr)
		}
		return built
	}
	dir, err := os.MkdirTemp("", "hkbench-bin-")
	if err != nil {
		b.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	bb := &binaries{hookd: filepath.Join(dir, "hookd"), hookc: filepath.Join(dir, "hookc")}
	for out, pkg := range map[string]string{bb.hookd: "./cmd/hookd", bb.hookc: "./cmd/hookc"} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = root
		if o, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building %s: %v\n%s", pkg, err, o)
			b.Fatal(buildErr)
		}
	}
	built = bb
	return bb
}

type session struct {
	mode, claude, root, home, proj, sock string
	hookdBin, path                       string
	env                                  []string
	daemon                               *testutil.Daemon
	srv                                  *claudeapi.Server
}

// pyHook reads the event, looks at it the way a typical guard does, and says nothing.
const pyHook = `import json, sys
event = json.load(sys.stdin)
cmd = event.get("tool_input", {}).get("command", "")
if "rm -rf /" in cmd:
    print("refused", file=sys.stderr)
    sys.exit(2)
`

func newSession(b *testing.B, bins *binaries, claude, mode string, modelLatency time.Duration) *session {
	root, err := os.MkdirTemp("", "hkbench-")
	if err != nil {
		b.Fatal(err)
	}
	s := &session{mode: mode, claude: claude, root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj"), sock: filepath.Join(root, "s.sock")}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	s.path, _ = SessionPATH(b)
	must(os.MkdirAll(filepath.Join(s.home, ".claude"), 0o755))
	must(os.MkdirAll(filepath.Join(s.proj, ".claude"), 0o755))
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{s.proj: map[string]any{"hasTrustDialogAccepted": true}}})
	must(os.WriteFile(filepath.Join(s.home, ".claude.json"), trust, 0o644))
	hooks := map[string]any{}
	for _, ev := range []string{"PreToolUse", "PostToolUse"} {
		var hs []any
		for i := 1; i <= 3; i++ {
			p := filepath.Join(root, "hooks", fmt.Sprintf("%s_%d.py", strings.ToLower(ev), i))
			must(os.MkdirAll(filepath.Dir(p), 0o755))
			must(os.WriteFile(p, []byte(pyHook), 0o644))
			hs = append(hs, map[string]any{"type": "command", "command": "python3 " + p})
		}
		hooks[ev] = []any{map[string]any{"matcher": "Bash", "hooks": hs}}
	}
	settings, _ := json.MarshalIndent(map[string]any{"hooks": hooks, "permissions": map[string]any{"allow": []string{"Bash(echo *)"}}}, "", "  ")
	must(os.WriteFile(filepath.Join(s.proj, ".claude", "settings.json"), settings, 0o644))
	s.env = []string{"HOME=" + s.home, "PATH=" + s.path, "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"XDG_CONFIG_HOME=" + filepath.Join(root, "xdg-config"), "XDG_STATE_HOME=" + filepath.Join(root, "xdg-state")}
	if mode == "hookd" || mode == "hookd-prewarm" {
		s.hookdBin = bins.hookd
		s.env = append(s.env, "HOOKD_SOCKET="+s.sock, "HOOKD_BIN="+bins.hookd)
		global := []string{"--user-dir", filepath.Join(s.home, ".claude"), "--managed-dir", filepath.Join(root, "managed")}
		cmd := exec.Command(bins.hookd, append(global, "install", "claude-code", "--scope", "project", "--project", s.proj, "--hookc", bins.hookc)...)
		cmd.Env = s.env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("install: %v\n%s", err, out)
		}
		denv := s.env
		if mode == "hookd-prewarm" {
			denv = append(slices.Clone(s.env), "HOOKD_ZYGOTE=off")
		}
		s.daemon = testutil.StartDaemon(b, testutil.DaemonOptions{Bin: bins.hookd, Socket: s.sock, Env: denv,
			Args: append(global, "--socket", s.sock, "--state-dir", filepath.Join(root, "state"), "serve")})
	}
	var script []claudeapi.Turn
	for i := 0; i < toolCalls; i++ {
		script = append(script, claudeapi.Turn{ToolName: "Bash", ToolInput: map[string]any{"command": fmt.Sprintf("echo %d", i), "description": "count"}, Delay: modelLatency})
	}
	script = append(script, claudeapi.Turn{Text: "done"})
	srv, err := claudeapi.New(script)
	must(err)
	s.srv = srv
	return s
}

func (s *session) run(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.claude, "-p", "go", "--output-format", "stream-json", "--verbose")
	cmd.Dir = s.proj
	cmd.Env = append(s.env, "ANTHROPIC_BASE_URL="+s.srv.URL)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s session: %v\n%s", s.mode, err, out.String())
	}
	if n := strings.Count(out.String(), `"type":"tool_result"`); n != toolCalls {
		b.Fatalf("%s session: %d tool results, want %d", s.mode, n, toolCalls)
	}
	if s.daemon != nil {
		// The hooks must have run through hookd — every one, without error — or the
		// session measured only the forwarders (a bench whose hooks silently stopped
		// running once reported a speed-up). Then say whether they ran prewarmed or
		// forked: the point of the comparison.
		c, err := protocol.Dial(context.Background(), s.sock)
		if err != nil {
			b.Fatalf("hookd session: status: %v", err)
		}
		f, err := c.Do(context.Background(), &protocol.Request{Op: protocol.OpStatus}, nil)
		c.Close()
		if err != nil {
			b.Fatalf("hookd session: status: %v", err)
		}
		var st protocol.Status
		if err := json.Unmarshal(f.Data, &st); err != nil {
			b.Fatalf("hookd session: status: %v", err)
		}
		if want := uint64(2 * 3 * toolCalls); st.Counters.HooksRun != want || st.Counters.HookErrors != 0 {
			b.Fatalf("hookd session: hookd ran %d hooks (%d failed), want %d without error", st.Counters.HooksRun, st.Counters.HookErrors, want)
		}
		b.Logf("hookd session: prewarm %+v, zygote %+v", st.Prewarm, st.Zygote)
		stats := exec.Command(s.hookdBin, "--state-dir", filepath.Join(s.root, "state"), "audit", "stats")
		stats.Env = s.env
		out, _ := stats.CombinedOutput()
		b.Logf("hookd session: audit stats\n%s", out)
	}
}

func (s *session) close() {
	s.srv.Close()
	if s.daemon != nil {
		s.daemon.Stop()
	}
	os.RemoveAll(s.root)
}
