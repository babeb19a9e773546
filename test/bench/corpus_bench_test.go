package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/claudeapi"
	"github.com/hookd/hookd/test/testutil"
)

// BenchmarkCorpus runs whole Claude Code 2.1.330 sessions (real binary, loopback model
// stand-in) for each setup of the real-world hook corpus (test/bench/corpus/manifest.tsv,
// fetched by test/bench/corpus/fetch.sh — public npm packages, not ours), natively and
// through hookd (`hookd install claude-code` into the settings scopes the setup uses,
// daemon running with the embedded default configuration), in pairs whose order alternates.
// It reports per setup and model delay: median wall time and CPU seconds per session (Claude
// Code's rusage, which includes the hooks and hookc it waited for, plus the daemon's whole
// process tree), per-event hook times as Claude Code reports them, hookd's counters (forked,
// prewarmed, cold), whether the tool results and permission outcomes were identical, and
// whether a hookd run left a file a native run did not.
//
//	make bench-corpus                               # 5 pairs, model delay 0, 500 ms, 2 s
//	HOOKD_CORPUS_PAIRS=1 HOOKD_CORPUS_SETUPS=claudia,selfish HOOKD_CORPUS_DELAYS=0 make bench-corpus
//
// HOOKD_CORPUS_MODES=native,hookd,exec,http runs each pair in those modes side by side
// (the order rotating per pair): "hookd" is the hookc transport with shell-form forwarders
// (`sh -c 'hookc …'` per event), "exec" with exec-form forwarders (Claude Code spawns hookc
// itself; what install writes for Claude Code 2.1.139+), "http" installs with `--transport
// http` (docs/http-forwarder.md; its remaining hookc forwarders in the exec form),
// "exec-noahead" is "exec" with HOOKD_PREWARM_AHEAD=off for install and daemon (no Node
// hook prewarmed before its first event, no SessionStart forwarder for that), "exec-fg"
// is "exec" with HOOKD_PREWARM_BACKGROUND=off for the daemon (spares start at normal
// priority after 250 ms, as before they booted in the background), "exec-limited" is
// "exec" with HOOKD_PREWARM_BACKGROUND=limited (background starts keeping to the kernel's
// rate limit for unprivileged processes — one priority change per 100 ms — as a daemon
// without CAP_SYS_ADMIN must, which this root-run bench otherwise is not); each
// non-native mode gets its own rows ("setup [hookc]", "setup [hookc exec]", "setup
// [http]") against the same native runs. The http transport
// installs only into user and local settings, so with "http" among the modes a setup's
// project-scope hooks are written to the project's settings.local.json in every mode (the
// same hooks, run the same way by Claude Code; until 2026-11-28 session 5 they went to the
// user's settings.json, where install cannot analyse a relative script). Default: native,hookd. "nohooks" runs the same
// session with every "hooks" key removed from the settings: native ÷ nohooks is the
// ceiling — the most any hook runner, however fast, could give that setup (its rows go to
// a table of their own; tool results may differ there, since no guard runs).
//
// HOOKD_BENCH_MD=BENCHMARKS.md writes the table into that file's "corpus" section;
// HOOKD_CORPUS_PARTIAL=FILE rewrites FILE after every row (a long run's figures so far).
func BenchmarkCorpus(b *testing.B) {
	claude, corpus := os.Getenv("HOOKD_CLAUDE_BIN"), os.Getenv("HOOKD_CORPUS_DIR")
	if claude == "" || corpus == "" {
		b.Skip("SKIPPING the real-world corpus: HOOKD_CLAUDE_BIN and HOOKD_CORPUS_DIR must be set (`make bench-corpus` sets both)")
	}
	pairs := 5 // 0: only say how hookd would run each hook (no sessions)
	if v, err := strconv.Atoi(os.Getenv("HOOKD_CORPUS_PAIRS")); err == nil && v >= 0 {
		pairs = v
	}
	delays := []time.Duration{0, 500 * time.Millisecond, 2 * time.Second}
	if v := os.Getenv("HOOKD_CORPUS_DELAYS"); v != "" {
		delays = nil
		for _, f := range strings.Split(v, ",") {
			if f == "0" {
				delays = append(delays, 0)
				continue
			}
			d, err := time.ParseDuration(f)
			if err != nil {
				b.Fatalf("HOOKD_CORPUS_DELAYS: %v", err)
			}
			delays = append(delays, d)
		}
	}
	setups := corpusSetups
	if v := os.Getenv("HOOKD_CORPUS_SETUPS"); v != "" {
		want := map[string]bool{}
		for _, id := range strings.Split(v, ",") {
			want[id] = true
		}
		setups = nil
		for _, s := range corpusSetups {
			if want[s.id] {
				setups = append(setups, s)
			}
		}
	}
	manifest, err := readCorpusManifest()
	if err != nil {
		b.Fatal(err)
	}
	classes := classifyCorpusHooks(corpus, setups)
	if pairs == 0 {
		delays = nil
	}
	modes := []string{"native", "hookd"}
	if v := os.Getenv("HOOKD_CORPUS_MODES"); v != "" {
		modes = strings.Split(v, ",")
		if modes[0] != "native" {
			b.Fatalf("HOOKD_CORPUS_MODES: the first mode must be native (the baseline), got %q", v)
		}
		for _, m := range modes[1:] {
			if corpusModeLabel[m] == "" {
				b.Fatalf("HOOKD_CORPUS_MODES: %q is not native, hookd, exec, exec-noahead, exec-fg, exec-limited, http or nohooks", m)
			}
		}
	}
	hookd, hookc := Bins(b)
	if out, err := exec.Command(claude, "--version").Output(); err == nil {
		corpusClaudeVersion = strings.TrimSpace(string(out))
	}
	_, corpusPathNote = SessionPATH(b)
	b.Log(corpusPathNote)
	load0 := loadAvg3()
	start := time.Now()
	var rows []corpusRow
	for i := 0; i < b.N; i++ {
		for _, delay := range delays {
			for _, s := range setups {
				mrows := map[string]*corpusRow{}
				for _, m := range modes[1:] {
					id := s.id
					if len(modes) > 2 || m != "hookd" {
						id += " [" + corpusModeLabel[m] + "]"
					}
					mrows[m] = &corpusRow{setup: id, delay: delay, ceiling: m == "nohooks"}
				}
				for p := 0; p < pairs; p++ {
					order := append(append([]string{}, modes[p%len(modes):]...), modes[:p%len(modes)]...)
					runs := map[string]*corpusRun{}
					for _, mode := range order {
						r, err := runCorpusSession(b, claude, corpus, hookd, hookc, s, mode, delay, slices.Contains(modes, "http"))
						if err != nil {
							b.Fatalf("%s %s model=%v pair %d: %v", s.id, mode, delay, p, err)
						}
						runs[mode] = r
					}
					n := runs["native"]
					for _, m := range modes[1:] {
						h := runs[m]
						if m == "nohooks" {
							if len(h.started) > 0 {
								b.Fatalf("%s nohooks model=%v pair %d: hooks ran with every hooks key removed: %v", s.id, delay, p, h.started)
							}
							mrows[m].add(n, h)
							b.Logf("%s model=%v pair %d: native %.2fs %.2f CPU-s, no hooks %.2fs %.2f CPU-s", s.id, delay, p, n.wall.Seconds(), n.cpu().Seconds(), h.wall.Seconds(), h.cpu().Seconds())
							continue
						}
						if err := checkHooksRan(n, h); err != nil {
							b.Fatalf("%s %s model=%v pair %d: %v", s.id, m, delay, p, err)
						}
						mrows[m].add(n, h)
						b.Logf("%s model=%v pair %d: native %.2fs (result at %.2fs) %.2f CPU-s, %s %.2fs (result at %.2fs) %.2f CPU-s (daemon tree %.2f, its own process %.2f); hook runs %+v; %s", s.id, delay, p,
							n.wall.Seconds(), n.resultAt.Seconds(), n.cpu().Seconds(), m, h.wall.Seconds(), h.resultAt.Seconds(), h.cpu().Seconds(), h.daemonCPU.Seconds(), h.daemonSelfCPU.Seconds(), h.ran, h.counters)
					}
				}
				for _, m := range modes[1:] {
					rows = append(rows, *mrows[m])
				}
				if p := os.Getenv("HOOKD_CORPUS_PARTIAL"); p != "" { // a long run's figures so far
					_ = os.WriteFile(p, []byte(renderCorpus(rows, classes, manifest, pairs, load0, loadAvg3(), time.Since(start))), 0o644)
				}
			}
		}
	}
	b.ReportMetric(0, "ns/op")
	Section(b, "corpus", renderCorpus(rows, classes, manifest, pairs, load0, loadAvg3(), time.Since(start)))
}

// corpusModeLabel names a mode in the table's rows.
var corpusModeLabel = map[string]string{"hookd": "hookc", "exec": "hookc exec", "exec-noahead": "hookc exec, HOOKD_PREWARM_AHEAD=off", "exec-fg": "hookc exec, HOOKD_PREWARM_BACKGROUND=off", "exec-limited": "hookc exec, HOOKD_PREWARM_BACKGROUND=limited", "http": "http", "nohooks": "no hooks"}

// corpusClaudeVersion is what the benchmarked Claude Code's --version says.
var corpusClaudeVersion = "Claude Code (version unknown)"

// corpusPathNote says what `python3` is in the sessions (SessionPATH), for the table.
var corpusPathNote string

// corpusRun is one session's measurements.
type corpusRun struct {
	wall                 time.Duration
	claudeCPU, daemonCPU time.Duration
	daemonSelfCPU        time.Duration        // of daemonCPU, the daemon process's own (not its hooks', zygotes' or prewarmed processes')
	results              []string             // normalised tool results and permission outcomes, in order
	events               map[string][]float64 // event → per-occurrence ms from the first hook_started to the last hook_response
	hookdHooks           map[string][]float64 // hookd's audit: event → hook durations (ms)
	started              map[string]int       // stream-json: event → hook_started lines (natively one per hook, through hookd one per forwarder)
	records              map[string]int       // hookd's audit: event → decision records
	ran                  ranHow               // through hookd: how its hook processes ran
	files                map[string]bool      // normalised paths the session left in its world
	counters             string               // hookd's status counters after the session
	resultAt             time.Duration        // when stream-json printed the result (wall − this = Claude Code's exit)
	status               protocol.Status
}

func (r *corpusRun) cpu() time.Duration { return r.claudeCPU + r.daemonCPU }

// corpusStandIn is the model's side of a session: a realistic turn mix over a small git
// project — a Bash look around, two Reads, an Edit, a Write, three more Bash calls — then a
// final answer.
func corpusScript(delay time.Duration) []claudeapi.Turn {
	t := func(tool string, in map[string]any) claudeapi.Turn {
		return claudeapi.Turn{ToolName: tool, ToolInput: in, Delay: delay}
	}
	return []claudeapi.Turn{
		t("Bash", map[string]any{"command": "git status --short", "description": "Show changed files"}),
		t("Read", map[string]any{"file_path": "$PROJ/README.md"}),
		t("Read", map[string]any{"file_path": "$PROJ/src/app.py"}),
		t("Edit", map[string]any{"file_path": "$PROJ/src/app.py", "old_string": "return a + b", "new_string": "return int(a) + int(b)"}),
		t("Write", map[string]any{"file_path": "$PROJ/src/util.js", "content": "export function clamp(x, lo, hi) {\n  return Math.min(hi, Math.max(lo, x));\n}\n"}),
		t("Bash", map[string]any{"command": "ls src", "description": "List sources"}),
		t("Bash", map[string]any{"command": "wc -l src/app.py src/util.js", "description": "Count lines"}),
		t("Bash", map[string]any{"command": "git diff --stat", "description": "Summarise the change"}),
		{Text: "Done: app.py now converts its arguments, and src/util.js has clamp().", Delay: delay},
	}
}

func expandScript(turns []claudeapi.Turn, proj string) []claudeapi.Turn {
	out := make([]claudeapi.Turn, len(turns))
	for i, t := range turns {
		out[i] = t
		if t.ToolInput != nil {
			in := map[string]any{}
			for k, v := range t.ToolInput {
				if s, ok := v.(string); ok {
					v = strings.ReplaceAll(s, "$PROJ", proj)
				}
				in[k] = v
			}
			out[i].ToolInput = in
		}
	}
	return out
}

const corpusToolCalls = 8

// mode is native, hookd (shell-form hookc forwarders: Claude Code runs `sh -c 'hookc
// --timeout …'`), exec (exec-form hookc forwarders: Claude Code spawns hookc itself, what
// install writes for Claude Code 2.1.139+), http (--transport http; its remaining hookc
// forwarders in the exec form) or nohooks; projectAsLocal
// writes project-scope hooks into the project's settings.local.json (the http transport
// installs into user and local settings only). Local, not the user's settings: hooks there
// run in the project as project hooks do, and `hookd install` knows their directory, so it
// can tell a relative script (`node .claude/hooks/x.js`) is one hookd prewarms when the
// session starts — for a user-scope hook the directory is unknown until a session runs it.
// The project's .claude/ is untracked either way, so `git status` shows the same.
func runCorpusSession(tb testing.TB, claude, corpus, hookdBin, hookcBin string, s corpusSetup, mode string, delay time.Duration, projectAsLocal bool) (*corpusRun, error) {
	root, err := os.MkdirTemp("", "hkcorpus-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	// hookd's socket and state live outside the world, so that the footprint check sees
	// only what Claude Code and the hooks wrote.
	side, err := os.MkdirTemp("", "hkcs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(side)
	w := &corpusWorld{root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "home", "proj"), prefix: filepath.Join(root, "npm-global"), cache: corpus}
	if err := makeCorpusProject(w); err != nil {
		return nil, err
	}
	scopes, err := s.prepare(w)
	if err != nil {
		return nil, err
	}
	if mode == "nohooks" { // the ceiling: the same session, no hook at all
		for _, content := range scopes {
			delete(content, "hooks")
		}
	}
	if _, hasLocal := scopes["local"]; projectAsLocal && scopes["project"] != nil && !hasLocal {
		scopes["local"] = scopes["project"]
		delete(scopes, "project")
	}
	// Permissions a user of these setups would have granted; the same on both sides.
	user := scopes["user"]
	if user == nil {
		user = map[string]any{}
		scopes["user"] = user
	}
	user["permissions"] = map[string]any{"allow": []string{"Bash", "Read", "Edit", "Write"}}
	for scope, content := range scopes {
		var p string
		switch scope {
		case "user":
			p = filepath.Join(w.home, ".claude", "settings.json")
		case "project":
			p = filepath.Join(w.proj, ".claude", "settings.json")
		case "local":
			p = filepath.Join(w.proj, ".claude", "settings.local.json")
		}
		b, _ := json.MarshalIndent(content, "", "  ")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, err
		}
	}
	sock := filepath.Join(side, "s.sock")
	path, _ := SessionPATH(tb)
	env := []string{"HOME=" + w.home, "PATH=" + filepath.Join(w.prefix, "bin") + ":" + path, "LANG=C.UTF-8",
		"ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "NPM_CONFIG_PREFIX=" + w.prefix,
		"npm_config_update_notifier=false", "XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"), "XDG_STATE_HOME=" + filepath.Join(w.home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(w.home, ".cache")}
	r := &corpusRun{events: map[string][]float64{}, hookdHooks: map[string][]float64{}, started: map[string]int{}}
	var daemon *testutil.Daemon
	if mode != "native" && mode != "nohooks" { // through hookd
		env = append(env, protocol.EnvSocket+"="+sock)
		if mode == "exec-noahead" { // for install (no SessionStart forwarder for it) and the daemon
			env = append(env, "HOOKD_PREWARM_AHEAD=off")
		}
		switch mode {
		case "exec-fg":
			env = append(env, "HOOKD_PREWARM_BACKGROUND=off")
		case "exec-limited":
			env = append(env, "HOOKD_PREWARM_BACKGROUND=limited")
		}
		global := []string{"--user-dir", filepath.Join(w.home, ".claude"), "--managed-dir", filepath.Join(side, "managed"), "--state-dir", filepath.Join(side, "state"), "--socket", sock}
		port := ""
		if mode == "http" {
			if port, err = freeLoopbackPort(); err != nil { // one endpoint for every scope
				return nil, err
			}
		}
		for scope := range scopes {
			args := append(append([]string{}, global...), "install", "claude-code", "--scope", scope, "--project", w.proj, "--hookc", hookcBin)
			switch mode {
			case "hookd":
				args = append(args, "--forwarder-form", "shell")
			case "exec", "exec-noahead", "exec-fg", "exec-limited":
				args = append(args, "--forwarder-form", "exec")
			case "http":
				args = append(args, "--forwarder-form", "exec", "--transport", "http", "--http-port", port)
			}
			cmd := exec.Command(hookdBin, args...)
			cmd.Env, cmd.Dir = env, w.proj
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("hookd install --scope %s: %v\n%s", scope, err, out)
			}
		}
		daemon = testutil.StartDaemon(tb, testutil.DaemonOptions{Bin: hookdBin, Args: append(global, "serve"), Socket: sock, Env: env})
		defer daemon.Stop()
		Settle(3*time.Second, daemon.PID())
	}
	srv, err := claudeapi.New(expandScript(corpusScript(delay), w.proj))
	if err != nil {
		return nil, err
	}
	defer srv.Close()

	var cpu0, self0 time.Duration
	if daemon != nil {
		cpu0, self0 = treeCPU(daemon.PID()), selfCPU(daemon.PID())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Tidy up src/app.py and add a clamp helper.", "--output-format", "stream-json", "--verbose", "--include-hook-events")
	cmd.Dir = w.proj
	cmd.Env = append(env, "ANTHROPIC_BASE_URL="+srv.URL)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr testutil.SyncBuffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	type line struct {
		at   time.Duration
		text []byte
	}
	var lines []line
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		lines = append(lines, line{time.Since(t0), append([]byte(nil), sc.Bytes()...)})
	}
	err = cmd.Wait()
	r.wall = time.Since(t0)
	if err != nil {
		return nil, fmt.Errorf("claude: %v\n%s", err, stderr.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.claudeCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if daemon != nil {
		Settle(3*time.Second, daemon.PID())
		r.daemonCPU = treeCPU(daemon.PID()) - cpu0
		r.daemonSelfCPU = selfCPU(daemon.PID()) - self0
		if c, err := protocol.Dial(context.Background(), sock); err == nil {
			if f, err := c.Do(context.Background(), &protocol.Request{Op: protocol.OpStatus}, nil); err == nil {
				_ = json.Unmarshal(f.Data, &r.status)
			}
			c.Close()
		}
		r.counters = statusCounters(&r.status)
		r.hookdHooks, r.records = auditDurations(filepath.Join(side, "state"))
		r.ran = ranHowOf(&r.status)
	}

	// What happened, from stream-json.
	toolNames := map[string]string{}
	eventOf := map[string]string{} // hook_id → event
	type span struct{ first, last time.Duration }
	spans := map[string]*span{} // event → its current occurrence
	flush := func(ev string) {
		if sp := spans[ev]; sp != nil && sp.last > 0 {
			r.events[ev] = append(r.events[ev], float64(sp.last-sp.first)/1e6)
		}
		delete(spans, ev)
	}
	results := 0
	var dump strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&dump, "%d %s\n", l.at.Milliseconds(), l.text)
		var m map[string]any
		if json.Unmarshal(l.text, &m) != nil {
			continue
		}
		switch m["type"] {
		case "system":
			id, _ := m["hook_id"].(string)
			switch m["subtype"] {
			case "hook_started":
				ev, _ := m["hook_event"].(string)
				eventOf[id] = ev
				r.started[ev]++
				// One occurrence of an event: Claude Code starts all its hooks together, so
				// a hook that starts after one of the event's hooks answered begins the
				// next occurrence.
				if sp := spans[ev]; sp != nil && sp.last > 0 {
					flush(ev)
				}
				if spans[ev] == nil {
					spans[ev] = &span{first: l.at}
				}
			case "hook_response":
				if sp := spans[eventOf[id]]; sp != nil && l.at > sp.last {
					sp.last = l.at
				}
			}
		case "assistant":
			for _, c := range contentBlocks(m) {
				if c["type"] == "tool_use" {
					id, _ := c["id"].(string)
					name, _ := c["name"].(string)
					toolNames[id] = name
				}
			}
		case "user":
			for _, c := range contentBlocks(m) {
				if c["type"] == "tool_result" {
					id, _ := c["tool_use_id"].(string)
					results++
					r.results = append(r.results, fmt.Sprintf("%s is_error=%v %s", toolNames[id], c["is_error"], normaliseText(fmt.Sprint(c["content"]), w.root)))
				}
			}
		case "result":
			r.resultAt = l.at
			den, _ := json.Marshal(m["permission_denials"])
			r.results = append(r.results, fmt.Sprintf("result subtype=%v is_error=%v denials=%s", m["subtype"], m["is_error"], normaliseText(string(den), w.root)))
		}
	}
	for _, ev := range mapKeys(spans) {
		flush(ev)
	}
	if d := os.Getenv("HOOKD_CORPUS_DUMP"); d != "" {
		_ = os.MkdirAll(d, 0o755)
		base := filepath.Join(d, fmt.Sprintf("%s-%s-%v-%d", s.id, mode, delay, time.Now().UnixNano()))
		_ = os.WriteFile(base+".stream", []byte(dump.String()), 0o644)
		if daemon != nil {
			_ = os.WriteFile(base+".daemon", []byte(daemon.Logs()), 0o644)
			files, _ := filepath.Glob(filepath.Join(side, "state", "audit", "*"))
			for _, f := range files {
				if b, err := os.ReadFile(f); err == nil {
					_ = os.WriteFile(base+".audit-"+filepath.Base(f), b, 0o644)
				}
			}
		}
	}
	if results != corpusToolCalls {
		return nil, fmt.Errorf("%d tool results, want %d; stderr:\n%s", results, corpusToolCalls, stderr.String())
	}
	r.files = worldFiles(w.root)
	return r, nil
}

func mapKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func contentBlocks(m map[string]any) []map[string]any {
	msg, _ := m["message"].(map[string]any)
	cs, _ := msg["content"].([]any)
	var out []map[string]any
	for _, c := range cs {
		if cm, ok := c.(map[string]any); ok {
			out = append(out, cm)
		}
	}
	return out
}

var (
	uuidRE   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	numRE    = regexp.MustCompile(`[0-9a-f]*[0-9][0-9a-f]*`)
	hookdRE  = regexp.MustCompile(`(^|/)(hookd(\.local)?\.json|[^/]*\.hookd-backup-[^/]*)$`)
	tmpDirRE = regexp.MustCompile(`/tmp/hkcorpus-[0-9]+`)
)

func normaliseText(s, root string) string {
	s = strings.ReplaceAll(s, root, "<root>")
	s = tmpDirRE.ReplaceAllString(s, "<root>")
	s = uuidRE.ReplaceAllString(s, "<uuid>")
	return numRE.ReplaceAllString(s, "<n>")
}

// worldFiles lists every file and directory under root, normalised (session ids and
// timestamps replaced), without hookd's own install artefacts (hookd.json beside the
// settings file it moved hooks from, and that file's backup).
func worldFiles(root string) map[string]bool {
	out := map[string]bool{}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if hookdRE.MatchString(rel) {
			return nil
		}
		out[normaliseText(rel, root)] = true
		return nil
	})
	return out
}

func makeCorpusProject(w *corpusWorld) error {
	files := map[string]string{
		"README.md":      "# demo\n\nA small project for the hook corpus benchmark.\n",
		"src/app.py":     "def add(a, b):\n    return a + b\n\n\nif __name__ == \"__main__\":\n    print(add(1, 2))\n",
		"src/index.js":   "console.log('hello');\n",
		"package.json":   "{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\",\n  \"private\": true\n}\n",
		".gitignore":     "node_modules/\n",
		"docs/design.md": "# Design\n\nNothing yet.\n",
	}
	for name, content := range files {
		p := filepath.Join(w.proj, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(w.home, ".claude"), 0o755); err != nil {
		return err
	}
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{w.proj: map[string]any{"hasTrustDialogAccepted": true}}})
	if err := os.WriteFile(filepath.Join(w.home, ".claude.json"), trust, 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = w.proj
		cmd.Env = append(os.Environ(), "HOME="+w.home)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	return nil
}

func statusCounters(st *protocol.Status) string {
	var parts []string
	if z := st.Zygote; z != nil {
		parts = append(parts, fmt.Sprintf("zygote forked=%d ran_cold=%d fallbacks=%d started=%d", z.Forked, z.RanCold, z.Fallbacks, z.Started))
	}
	if p := st.Prewarm; p != nil {
		parts = append(parts, fmt.Sprintf("prewarm hits=%d misses=%d fallbacks=%d spawned=%d keys=%d background=%d late=%d unready=%d", p.Hits, p.Misses, p.Fallbacks, p.Spawned, p.Keys, p.Background, p.LateRestores, p.Unready))
	}
	return strings.Join(parts, "; ")
}

// auditDurations reads hookd's decision log: per event, the slowest hook's run time of
// every decision that ran hooks, and how many decision records there are.
func auditDurations(state string) (map[string][]float64, map[string]int) {
	out, records := map[string][]float64{}, map[string]int{}
	files, _ := filepath.Glob(filepath.Join(state, "audit", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			var rec struct {
				Event string `json:"event"`
				Hooks []struct {
					Command    string  `json:"command"`
					DurationMS float64 `json:"duration_ms"`
				} `json:"hooks"`
			}
			if json.Unmarshal([]byte(l), &rec) != nil || rec.Event == "" {
				continue
			}
			records[rec.Event]++
			var sum float64
			for _, h := range rec.Hooks {
				sum = max(sum, h.DurationMS)
			}
			if len(rec.Hooks) > 0 {
				out[rec.Event] = append(out[rec.Event], sum)
			}
		}
	}
	return out, records
}

// selfCPU is pid's own user + system time, without its children's.
func selfCPU(pid int) time.Duration {
	st := procStat(pid)
	if len(st) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(st[11], 10, 64)
	k, _ := strconv.ParseInt(st[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond // USER_HZ = 100 on Linux
}

// ranHow is how hookd ran a session's hook processes (its status counters): forked from
// the Python zygote, handed to a prewarmed process, or started cold (a first event, a
// hook that is not prewarmed, a zygote or pool miss). Async hooks count too.
type ranHow struct{ total, forked, prewarmed, cold, timeouts int }

func ranHowOf(st *protocol.Status) ranHow {
	r := ranHow{total: int(st.Counters.HooksRun), timeouts: int(st.Counters.Timeouts)}
	if z := st.Zygote; z != nil {
		r.forked = int(z.Forked)
	}
	if p := st.Prewarm; p != nil {
		r.prewarmed = int(p.Hits)
	}
	r.cold = r.total - r.forked - r.prewarmed
	return r
}

// checkHooksRan fails a pair whose hooks did not all run where they should: natively at
// least one hook ran; through hookd Claude Code ran only forwarders (no hook_started
// without a decision record behind it: a hook left in Claude Code's settings would run
// natively beside hookd), every event whose hooks ran natively has a decision record, and
// — when both sessions took the same course — hookd ran at least as many hook processes
// as Claude Code started natively (its count includes async hooks, and SessionEnd's,
// which a -p session does not report in stream-json). A bench whose hooks silently stop
// running through hookd must fail, not report a speed-up.
func checkHooksRan(n, h *corpusRun) error {
	native := 0
	for ev, c := range n.started {
		native += c
		if ev != "SessionEnd" && h.records[ev] == 0 {
			return fmt.Errorf("hooks ran natively on %s (%d) but hookd recorded no %s decision: the forwarders or hookd's copy of the hooks are missing", ev, c, ev)
		}
	}
	if native == 0 {
		return fmt.Errorf("no hook ran in the native session: the setup installed no hooks")
	}
	for ev, c := range h.started {
		if c > h.records[ev] {
			return fmt.Errorf("through hookd Claude Code started %d hooks on %s but hookd recorded %d decisions: hooks ran outside hookd", c, ev, h.records[ev])
		}
	}
	if h.ran.total == 0 {
		return fmt.Errorf("hookd ran no hook process (natively %d hook runs)", native)
	}
	if strings.Join(n.results, "\n") == strings.Join(h.results, "\n") && h.ran.total < native-n.started["SessionEnd"] {
		return fmt.Errorf("hookd ran %d hook processes, Claude Code natively %d: some hooks did not run through hookd", h.ran.total, native-n.started["SessionEnd"])
	}
	return nil
}

func loadAvg3() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

type corpusManifestRow struct{ setup, pkg, version, sha, licence, source, langs string }

func readCorpusManifest() (map[string]corpusManifestRow, error) {
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "test", "bench", "corpus", "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	out := map[string]corpusManifestRow{}
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) != 7 {
			return nil, fmt.Errorf("manifest.tsv: %q: want 7 tab-separated fields", l)
		}
		out[f[0]] = corpusManifestRow{f[0], f[1], f[2], f[3], f[4], f[5], f[6]}
	}
	return out, nil
}

// corpusRow aggregates the pairs of one setup at one model delay.
type corpusRow struct {
	setup                    string
	delay                    time.Duration
	nWall, hWall, nCPU, hCPU Samples
	ratios                   []float64
	mismatches               []string
	nFiles, hFiles           map[string]int // path → how many runs left it
	nEvents, hEvents         map[string][]float64
	hookdHooks               map[string][]float64
	counters                 []string
	ran                      []ranHow
	daemonSelf               Samples
	pairs                    int
	ceiling                  bool // a nohooks row: h* are sessions without hooks
}

func (row *corpusRow) add(n, h *corpusRun) {
	row.pairs++
	row.nWall = append(row.nWall, n.wall)
	row.hWall = append(row.hWall, h.wall)
	row.nCPU = append(row.nCPU, n.cpu())
	row.hCPU = append(row.hCPU, h.cpu())
	row.ratios = append(row.ratios, n.wall.Seconds()/h.wall.Seconds())
	if strings.Join(n.results, "\n") != strings.Join(h.results, "\n") {
		row.mismatches = append(row.mismatches, fmt.Sprintf("pair %d:\nnative:\n  %s\nhookd:\n  %s", row.pairs, strings.Join(n.results, "\n  "), strings.Join(h.results, "\n  ")))
	}
	if row.nFiles == nil {
		row.nFiles, row.hFiles = map[string]int{}, map[string]int{}
		row.nEvents, row.hEvents, row.hookdHooks = map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	}
	for f := range h.files {
		row.hFiles[f]++
	}
	for f := range n.files {
		row.nFiles[f]++
	}
	for k, v := range n.events {
		row.nEvents[k] = append(row.nEvents[k], v...)
	}
	for k, v := range h.events {
		row.hEvents[k] = append(row.hEvents[k], v...)
	}
	for k, v := range h.hookdHooks {
		row.hookdHooks[k] = append(row.hookdHooks[k], v...)
	}
	row.counters = append(row.counters, h.counters)
	row.ran = append(row.ran, h.ran)
	row.daemonSelf = append(row.daemonSelf, h.daemonSelfCPU)
}

// ranSummary is the median session's hook runs through hookd and how they ran.
func (row *corpusRow) ranSummary() string {
	med := func(f func(ranHow) int) int {
		v := make([]float64, len(row.ran))
		for i, r := range row.ran {
			v[i] = float64(f(r))
		}
		return int(medianF(v))
	}
	return fmt.Sprintf("%d hook runs per session: %d forked, %d prewarmed, %d cold; %d timed out; the daemon process itself %.2f CPU-s",
		med(func(r ranHow) int { return r.total }), med(func(r ranHow) int { return r.forked }),
		med(func(r ranHow) int { return r.prewarmed }), med(func(r ranHow) int { return r.cold }),
		med(func(r ranHow) int { return r.timeouts }), row.daemonSelf.Quantile(0.5).Seconds())
}

func medianF(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	return c[(len(c)-1)/2]
}

func renderCorpus(rows []corpusRow, classes map[string][]string, manifest map[string]corpusManifestRow, pairs int, load0, load1 string, took time.Duration) string {
	var b strings.Builder
	var knobs []string
	for _, k := range []string{"HOOKD_CORPUS_MODES", "HOOKD_CORPUS_PAIRS", "HOOKD_CORPUS_DELAYS", "HOOKD_CORPUS_SETUPS"} {
		if v := os.Getenv(k); v != "" {
			knobs = append(knobs, k+"="+v)
		}
	}
	fmt.Fprintf(&b, "\nProduced by `make bench-corpus` (`%s`; `HOOKD_BENCH_MD=BENCHMARKS.md` writes it here) on %s/%s, %d CPUs, %s, %d pairs per row. "+
		"Load average (1, 5, 15 min) at the start: %s; at the end: %s; the run took %s. The machine is shared with other engineers' builds and tests: figures are noisy, compare the two columns of one row (paired, order alternating).\n\n",
		strings.Join(knobs, " "), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), corpusClaudeVersion, pairs, load0, load1, took.Round(time.Second))
	fmt.Fprintf(&b, "Python: %s.\n\n", corpusPathNote)
	b.WriteString("Wall and CPU are medians per session; CPU = user + system seconds of Claude Code and everything it waited for (hooks, hookc) plus hookd's whole process tree (daemon, zygotes, prewarmed and forked processes). Ratio = native wall ÷ hookd wall, median over pairs (> 1: hookd faster).\n\n")
	b.WriteString("| setup | model delay | native wall | hookd wall | ratio (min–max) | native CPU | hookd CPU | results identical | files a hookd run left that no native run did (runs) |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n")
	var ceilings []corpusRow
	rows = slices.DeleteFunc(slices.Clone(rows), func(r corpusRow) bool {
		if r.ceiling {
			ceilings = append(ceilings, r)
		}
		return r.ceiling
	})
	for _, r := range rows {
		lo, hi := slices.Min(r.ratios), slices.Max(r.ratios)
		same := fmt.Sprintf("%d/%d", r.pairs-len(r.mismatches), r.pairs)
		extra := "none"
		if e := onlyIn(r.hFiles, r.nFiles); len(e) > 0 {
			extra = strings.Join(e, ", ")
		}
		fmt.Fprintf(&b, "| %s | %v | %.2f s | %.2f s | %.2f× (%.2f–%.2f) | %.2f s | %.2f s | %s | %s |\n", r.setup, r.delay,
			r.nWall.Quantile(0.5).Seconds(), r.hWall.Quantile(0.5).Seconds(), medianF(r.ratios), lo, hi,
			r.nCPU.Quantile(0.5).Seconds(), r.hCPU.Quantile(0.5).Seconds(), same, extra)
	}
	if len(ceilings) > 0 {
		b.WriteString("\n**The ceiling**: the same sessions with every `hooks` key removed from the settings (no hook runs at all), paired with the same native runs. Native ÷ no hooks is the most any hook runner — however fast — could give a setup; the hooks' own share of a native session is 1 − 1/ceiling. Tool results may differ here (no guard runs).\n\n")
		b.WriteString("| setup | model delay | native wall | no-hooks wall | ceiling (min–max) | native CPU | no-hooks CPU |\n|---|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range ceilings {
			lo, hi := slices.Min(r.ratios), slices.Max(r.ratios)
			fmt.Fprintf(&b, "| %s | %v | %.2f s | %.2f s | %.2f× (%.2f–%.2f) | %.2f s | %.2f s |\n", strings.TrimSuffix(r.setup, " [no hooks]"), r.delay,
				r.nWall.Quantile(0.5).Seconds(), r.hWall.Quantile(0.5).Seconds(), medianF(r.ratios), lo, hi,
				r.nCPU.Quantile(0.5).Seconds(), r.hCPU.Quantile(0.5).Seconds())
		}
	}
	b.WriteString("\n**Per event** (median ms from Claude Code's first `hook_started` to its last `hook_response` of one occurrence, as stream-json reports them; natively that spans all of the event's hooks, through hookd the one `hookc`; \"hookd\" = the slowest hook's own run time in hookd's decision log) and hookd's counters after each session:\n\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "- **%s**, model delay %v:", r.setup, r.delay)
		for _, ev := range mapKeys(r.nEvents) {
			fmt.Fprintf(&b, " %s %.0f → %.0f (hookd %.0f, n=%d);", ev, medianF(r.nEvents[ev]), medianF(r.hEvents[ev]), medianF(r.hookdHooks[ev]), len(r.nEvents[ev]))
		}
		for _, ev := range mapKeys(r.hEvents) {
			if _, ok := r.nEvents[ev]; !ok {
				fmt.Fprintf(&b, " %s (forwarder only) %.0f (n=%d);", ev, medianF(r.hEvents[ev]), len(r.hEvents[ev]))
			}
		}
		fmt.Fprintf(&b, " through hookd (median session): %s; counters: %s\n", r.ranSummary(), strings.Join(uniq(r.counters), " | "))
		if e := onlyIn(r.nFiles, r.hFiles); len(e) > 0 {
			fmt.Fprintf(&b, "  - files only a native run left: %s\n", strings.Join(e, ", "))
		}
		for _, m := range r.mismatches {
			fmt.Fprintf(&b, "  - results differ, %s\n", strings.ReplaceAll(m, "\n", "\n    "))
		}
	}
	b.WriteString("\n**How hookd runs each setup's hooks, and why** (the default configuration; from `zygote.FromCommand` and `runner.AnalyzeCommand` on the commands as installed — the counters above are what happened):\n\n")
	for _, id := range mapKeys(classes) {
		fmt.Fprintf(&b, "- **%s**: %s\n", id, strings.Join(classes[id], "; "))
	}
	b.WriteString("\n**The corpus** (test/bench/corpus/manifest.tsv; fetched by test/bench/corpus/fetch.sh, pinned by version and tarball SHA-256, not part of this repository):\n\n| setup | npm package | version | licence | source | languages |\n|---|---|---|---|---|---|\n")
	ids := mapKeys(manifest)
	for _, id := range ids {
		m := manifest[id]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", m.setup, m.pkg, m.version, m.licence, m.source, m.langs)
	}
	return b.String()
}

// onlyIn lists the paths of a that b never has, with how many of a's runs left each.
func onlyIn(a, b map[string]int) []string {
	var out []string
	for _, f := range mapKeys(a) {
		if b[f] == 0 {
			out = append(out, fmt.Sprintf("`%s` (%d)", f, a[f]))
		}
	}
	return out
}

func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// freeLoopbackPort is a loopback port nobody listens on right now (the http forwarder's).
func freeLoopbackPort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}
