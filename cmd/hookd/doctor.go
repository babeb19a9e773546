package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/protocol/lite"
)

// Finding levels, in increasing severity. doctor exits 0 with nothing above info, 1
// (degraded) with a warning, 2 (broken) with an error.
const (
	levelOK      = "ok"
	levelInfo    = "info"
	levelWarning = "warning"
	levelError   = "error"
)

// finding is one thing doctor found, with what to do about it.
type finding struct {
	Check   string `json:"check"`
	Level   string `json:"level"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

type doctorReport struct {
	Status   string    `json:"status"` // healthy | degraded | broken
	Exit     int       `json:"exit"`
	Findings []finding `json:"findings"`
}

func doctorCommand() *cli.Command {
	return usesGlobals(&cli.Command{
		Name:  "doctor",
		Usage: "check this machine's hookd set-up; exit 0 healthy, 1 degraded, 2 broken",
		Description: `Checks, each finding with what to do: the daemon reachable on a trusted socket; hookd, the
running daemon and each installed hookc the same version; the service installed and
current; Claude Code's settings files forwarding events to a hookc that exists and is
executable, and their installations intact; settings files valid; events whose hooks no
forwarder sends and hooks that run nowhere; the managed settings Claude Code reads and
whether hookd's routing drop-in is in effect; the Claude Code on PATH against the version
this hookd was checked against; the decision log writable, its current file verifying, and
each exporter's backlog. Exit codes: 0 healthy (only ok and info), 1 degraded (a
warning), 2 broken (an error). See docs/doctor.md.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the report as one JSON object"}},
		Action: func(c *cli.Context) error {
			rep := runDoctor(c)
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				printDoctor(c, rep)
			}
			if rep.Exit != 0 {
				return exitError{code: rep.Exit}
			}
			return nil
		},
	}, "socket", "config", "managed-dir", "user-dir", "state-dir")
}

func printDoctor(c *cli.Context, rep doctorReport) {
	w := c.App.Writer
	mark := map[string]string{levelOK: "ok  ", levelInfo: "info", levelWarning: "WARN", levelError: "FAIL"}
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "%s  %-11s %s\n", mark[f.Level], f.Check, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "      %-11s → %s\n", "", f.Fix)
		}
	}
	counts := map[string]int{}
	for _, f := range rep.Findings {
		counts[f.Level]++
	}
	fmt.Fprintf(w, "hookd doctor: %s (%d errors, %d warnings)\n", rep.Status, counts[levelError], counts[levelWarning])
}

// doctorEnv is what the checks read besides the command line: the daemon's status (nil
// when unreachable) and how to run a program.
type doctorEnv struct {
	c       *cli.Context
	st      *protocol.Status
	dialErr error
	add     func(check, level, msg, fix string)
}

func runDoctor(c *cli.Context) doctorReport {
	var rep doctorReport
	e := &doctorEnv{c: c}
	e.add = func(check, level, msg, fix string) {
		rep.Findings = append(rep.Findings, finding{Check: check, Level: level, Message: msg, Fix: fix})
	}
	e.st, e.dialErr = doctorStatus(c)
	fwd := forwarderFiles(c)
	for _, check := range []func(*doctorEnv, []forwarderFile){
		checkDaemon, checkVersions, checkService, checkForwarders, checkSettings, checkRouting, checkClaudeCode, checkAudit,
	} {
		check(e, fwd)
	}
	rep.Status, rep.Exit = "healthy", 0
	for _, f := range rep.Findings {
		switch {
		case f.Level == levelError:
			rep.Status, rep.Exit = "broken", 2
		case f.Level == levelWarning && rep.Exit < 1:
			rep.Status, rep.Exit = "degraded", 1
		}
	}
	return rep
}

func doctorStatus(c *cli.Context) (*protocol.Status, error) {
	ctx, cancel := context.WithTimeout(c.Context, 10*time.Second)
	defer cancel()
	cl, err := protocol.Dial(ctx, c.String("socket"))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	f, err := cl.Do(ctx, &protocol.Request{Op: protocol.OpStatus}, nil)
	if err != nil {
		return nil, err
	}
	var st protocol.Status
	if err := json.Unmarshal(f.Data, &st); err != nil {
		return nil, fmt.Errorf("decoding the daemon's status: %w", err)
	}
	return &st, nil
}

func checkDaemon(e *doctorEnv, fwd []forwarderFile) {
	sock := e.c.String("socket")
	if err := protocol.CheckSocket(sock); err != nil && errors.Is(err, lite.ErrUntrustedSocket) {
		e.add("socket", levelError, err.Error(), "remove it, or point --socket/$HOOKD_SOCKET at a path in a 0700 directory of yours; hookc sends nothing to an untrusted socket")
		return
	}
	if e.st == nil {
		level, why := levelWarning, "hookc answers every event in-process meanwhile (hookd run: slower, no prewarming, no session state)"
		for _, f := range fwd {
			if f.http > 0 {
				level, why = levelError, "Claude Code's http hooks in "+f.path+" fail and block every call meanwhile"
			}
		}
		e.add("daemon", level, "hookd is not running: "+e.dialErr.Error()+"; "+why,
			"start it: hookd service install (or hookd setup), or hookd serve")
		return
	}
	e.add("daemon", levelOK, fmt.Sprintf("reachable at %s (pid %d, up %s, %d events answered)", sock, e.st.PID, e.st.Uptime, e.st.Counters.Events), "")
}

func checkVersions(e *doctorEnv, fwd []forwarderFile) {
	mine := protocol.BuildInfo().Version
	if e.st != nil {
		if e.st.Version != mine {
			e.add("version", levelWarning, fmt.Sprintf("the running daemon is %s, this hookd is %s", e.st.Version, mine),
				"restart the daemon so it runs this binary: systemctl --user restart hookd.service (or stop and start hookd serve)")
		} else {
			e.add("version", levelOK, "daemon and this hookd are both "+mine, "")
		}
	}
	seen := map[string]bool{}
	for _, f := range fwd {
		for _, h := range f.hookc {
			if seen[h] {
				continue
			}
			seen[h] = true
			v, err := hookcVersion(h)
			switch {
			case err != nil:
				// checkForwarders says why it cannot run.
			case v != mine:
				e.add("version", levelWarning, fmt.Sprintf("the forwarder %s is %s, hookd is %s", h, v, mine),
					"install hookd and hookc from the same release (or reinstall: hookd install claude-code --hookc PATH)")
			default:
				e.add("version", levelOK, "the forwarder "+h+" is "+v, "")
			}
		}
	}
}

// hookcVersion runs `hookc --version` and returns the version on its first line.
func hookcVersion(path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(string(out), "\n")
	v, ok := strings.CutPrefix(first, "hookc ")
	if !ok {
		return "", fmt.Errorf("%s --version printed %q", path, first)
	}
	return v, nil
}

func checkService(e *doctorEnv, _ []forwarderFile) {
	m, _, err := serviceManager(e.c)
	if err != nil {
		e.add("service", levelInfo, err.Error(), "")
		return
	}
	st := m.Status()
	switch {
	case !st.Available && !st.Installed():
		e.add("service", levelInfo, fmt.Sprintf("no %s service manager runs for this user here (%s): nothing restarts hookd after a crash or reboot", st.Manager, st.Why),
			"keep hookd running with your own supervisor (hookd serve), or log in with a session that runs it")
	case !st.Installed():
		e.add("service", levelWarning, "hookd is not installed as a "+st.Manager+" service: nothing starts it at login or restarts it after a crash", "hookd service install")
	case !st.Current():
		e.add("service", levelWarning, "the "+st.Manager+" service files are not what this hookd would write (another binary path, socket or version)", "hookd service install")
	case !st.Available:
		e.add("service", levelInfo, "the "+st.Manager+" service files are installed, but the manager does not run for this user here ("+st.Why+")", "")
	case st.Manager == "systemd" && st.Socket != "active":
		e.add("service", levelWarning, "hookd.socket is "+st.Socket+" (enabled: "+st.Enabled+")", "systemctl --user enable --now hookd.socket")
	default:
		e.add("service", levelOK, fmt.Sprintf("%s service installed and current (enabled: %s, service: %s)", st.Manager, st.Enabled, or(st.Service, st.Socket)), "")
	}
}

// forwarderFile is one Claude Code settings file and the hookd forwarders in it.
type forwarderFile struct {
	path    string
	scope   settings.Kind
	command int      // command forwarders (hookc)
	http    int      // http forwarders
	hookc   []string // the programs the command forwarders run
}

// forwarderFiles reads the user's, the current project's and the managed drop-in
// settings files for hookd's forwarders.
func forwarderFiles(c *cli.Context) []forwarderFile {
	home, _ := os.UserHomeDir()
	files := []forwarderFile{{path: filepath.Join(c.String("user-dir"), "settings.json"), scope: settings.KindUser}}
	if wd, err := os.Getwd(); err == nil {
		if p := settings.ProjectDirFor(wd, home); p != "" {
			files = append(files, forwarderFile{path: filepath.Join(p, ".claude", "settings.json"), scope: settings.KindProject},
				forwarderFile{path: filepath.Join(p, ".claude", "settings.local.json"), scope: settings.KindLocal})
		}
	}
	files = append(files, forwarderFile{path: filepath.Join(c.String("managed-dir"), "managed-settings.d", install.DropInName), scope: settings.KindManaged})
	var out []forwarderFile
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			continue
		}
		var doc struct {
			Hooks map[string][]struct {
				Hooks []struct {
					Type    string   `json:"type"`
					Command string   `json:"command"`
					Args    []string `json:"args"`
					URL     string   `json:"url"`
				} `json:"hooks"`
			} `json:"hooks"`
		}
		if json.Unmarshal(b, &doc) != nil {
			continue // validate and status report an invalid file
		}
		seen := map[string]bool{}
		for _, groups := range doc.Hooks {
			for _, g := range groups {
				for _, h := range g.Hooks {
					switch {
					case h.Type == "http" && settings.IsHTTPForwarder(h.URL):
						f.http++
					case h.Type == "command" && settings.IsForwarder(h.Command, h.Args):
						f.command++
						prog := h.Command
						if h.Args == nil {
							prog = firstShellWord(h.Command)
						}
						if !seen[prog] {
							seen[prog] = true
							f.hookc = append(f.hookc, prog)
						}
					}
				}
			}
		}
		if f.command+f.http > 0 {
			out = append(out, f)
		}
	}
	return out
}

// firstShellWord is the program of a sh -c command line as install writes it: a word,
// possibly in single or double quotes, after any VAR=value assignments.
func firstShellWord(s string) string {
	for {
		s = strings.TrimLeft(s, " \t")
		var w strings.Builder
		i := 0
		for ; i < len(s) && s[i] != ' ' && s[i] != '\t'; i++ {
			switch s[i] {
			case '\'':
				j := strings.IndexByte(s[i+1:], '\'')
				if j < 0 {
					return w.String() + s[i+1:]
				}
				w.WriteString(s[i+1 : i+1+j])
				i += j + 1
			case '"':
				j := strings.IndexByte(s[i+1:], '"')
				if j < 0 {
					return w.String() + s[i+1:]
				}
				w.WriteString(s[i+1 : i+1+j])
				i += j + 1
			case '\\':
				if i+1 < len(s) {
					i++
					w.WriteByte(s[i])
				}
			default:
				w.WriteByte(s[i])
			}
		}
		word := w.String()
		if k := strings.IndexByte(word, '='); k > 0 && !strings.Contains(word[:k], "/") {
			s = s[i:] // an assignment
			continue
		}
		return word
	}
}

func checkForwarders(e *doctorEnv, fwd []forwarderFile) {
	if len(fwd) == 0 {
		e.add("forwarders", levelWarning, "no Claude Code settings file forwards events to hookd: Claude Code runs its hooks itself",
			"hookd setup claude-code (or hookd install claude-code)")
	}
	for _, f := range fwd {
		e.add("forwarders", levelOK, fmt.Sprintf("%s (%s): %d hookc and %d http forwarders", f.path, f.scope, f.command, f.http), "")
		for _, h := range f.hookc {
			fi, err := os.Stat(h)
			switch {
			case !filepath.IsAbs(h):
				if _, err := exec.LookPath(h); err != nil {
					e.add("forwarders", levelError, fmt.Sprintf("%s runs %q, which is not on PATH: every forwarded event fails", f.path, h), "hookd install claude-code --scope "+string(f.scope)+" --hookc /path/to/hookc")
				}
			case err != nil:
				e.add("forwarders", levelError, fmt.Sprintf("%s runs %s, which does not exist: every forwarded event fails (Claude Code reports a hook error)", f.path, h),
					"reinstall hookc there, or hookd install claude-code --scope "+string(f.scope)+" --hookc /path/to/hookc")
			case fi.IsDir() || fi.Mode()&0o111 == 0:
				e.add("forwarders", levelError, fmt.Sprintf("%s runs %s, which is not executable", f.path, h), "chmod +x "+h)
			}
		}
	}
	for _, f := range installFindings(e.c, e.st) {
		e.add("install", levelError, f.String(), "hookd install claude-code again, or hookd uninstall claude-code")
	}
}

func checkSettings(e *doctorEnv, _ []forwarderFile) {
	if e.st == nil {
		return
	}
	p := statusProblems(e.st, nil)
	for _, s := range p.failing {
		e.add("settings", levelError, s, "fix the file (hookd validate names the field); the last good version stays in force meanwhile")
	}
	for _, s := range p.findings {
		e.add("settings", levelWarning, s, "hookd validate")
	}
	if len(p.failing)+len(p.findings) == 0 {
		e.add("settings", levelOK, fmt.Sprintf("%d settings files loaded without errors", len(e.st.Sources)), "")
	}
}

func checkRouting(e *doctorEnv, _ []forwarderFile) {
	paths := lite.PathsHere(os.Getenv)
	managed := e.c.String("managed-dir")
	for _, p := range paths.MDMProfiles {
		if _, err := os.Stat(p); err == nil {
			e.add("managed", levelInfo, "Claude Code reads its managed settings from the MDM profile "+p+" (it wins over "+managed+")", "")
			break
		}
	}
	drop := filepath.Join(managed, "managed-settings.d", install.DropInName)
	_, dropErr := os.Stat(drop)
	files := 0
	if _, err := os.Stat(filepath.Join(managed, "managed-settings.json")); err == nil {
		files++
	}
	if ents, err := os.ReadDir(filepath.Join(managed, "managed-settings.d")); err == nil {
		files += len(ents)
	}
	e.add("managed", levelInfo, fmt.Sprintf("managed settings: %s (%d files); hookd's routing drop-in %s", managed, files,
		map[bool]string{true: "is installed", false: "is not installed"}[dropErr == nil]), "")
	if e.st == nil {
		return
	}
	for _, p := range e.st.Projects {
		if p.RoutedBy != "" {
			e.add("managed", levelInfo, "project "+p.Dir+": routed by "+p.RoutedBy+" (Claude Code runs only managed hooks)", "")
		} else if dropErr == nil {
			e.add("managed", levelWarning, "project "+p.Dir+": hookd's drop-in "+drop+" is not in effect (Claude Code does not read it there, or another managed source wins)",
				"hookd status; see docs/fleet.md")
		}
		if len(p.NotForwarded) > 0 {
			e.add("routing", levelWarning, "project "+p.Dir+": no forwarder sends "+strings.Join(p.NotForwarded, ", ")+"; their user, project and local hooks run nowhere",
				"add forwarders for them (hookd install claude-code --scope managed again), or move those hooks into managed settings")
		}
		for _, r := range p.RunNowhere {
			e.add("routing", levelWarning, "hook runs nowhere: "+r, "see docs/fleet.md, \"what runs where\"")
		}
	}
}

// claudeVersion runs `claude --version` ("2.1.332 (Claude Code)").
func claudeVersion(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", err
	}
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return v, nil
}

// compareVersions compares dotted numeric versions (2.1.332 < 2.1.1000).
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func checkClaudeCode(e *doctorEnv, _ []forwarderFile) {
	checked := lite.CheckedVersion("Claude Code")
	bin, err := exec.LookPath("claude")
	if err != nil {
		e.add("claude-code", levelInfo, "no claude on PATH (hookd was checked against Claude Code "+checked+")", "")
		return
	}
	v, err := claudeVersion(bin)
	if err != nil || v == "" {
		e.add("claude-code", levelWarning, fmt.Sprintf("%s --version failed: %v", bin, err), "")
		return
	}
	switch compareVersions(v, checked) {
	case 0:
		e.add("claude-code", levelOK, fmt.Sprintf("%s is Claude Code %s, the version hookd was checked against", bin, v), "")
	case 1:
		e.add("claude-code", levelWarning, fmt.Sprintf("%s is Claude Code %s, newer than the %s hookd was checked against: events or fields it added may not be forwarded or understood", bin, v, checked),
			"upgrade hookd; meanwhile hookd validate and hookd events list what hookd knows")
	default:
		e.add("claude-code", levelInfo, fmt.Sprintf("%s is Claude Code %s, older than the %s hookd was checked against", bin, v, checked), "")
	}
}

// exporterBacklog is how many records an exporter may lag before doctor warns.
const exporterBacklog = 1000

func checkAudit(e *doctorEnv, _ []forwarderFile) {
	if e.st == nil {
		return
	}
	a := e.st.Audit
	if a == nil {
		e.add("audit", levelInfo, "the decision log is off (hookd's configuration: audit.enabled)", "")
		return
	}
	if !a.Healthy {
		e.add("audit", levelError, "the decision log "+a.Path+" cannot be written ("+a.LastError+"): events that can block are denied until it can",
			"free disk space or fix the directory's permissions; hookd status shows when it recovers")
	} else {
		e.add("audit", levelOK, fmt.Sprintf("decision log %s written (seq %d, fsync %s)", a.Path, a.Seq, a.Fsync), "")
	}
	if a.Path != "" {
		if rep, err := audit.VerifyFiles(a.Path); err != nil {
			e.add("audit", levelError, "verifying the decision log's current file: "+err.Error(), "hookd audit verify")
		} else if !rep.OK() {
			e.add("audit", levelError, fmt.Sprintf("the decision log's current file does not verify: %s", rep.Problems[0]), "hookd audit verify names every problem; docs/audit.md, \"repair\"")
		} else {
			e.add("audit", levelOK, fmt.Sprintf("the current file verifies (%d records)", rep.Records), "")
		}
	}
	for _, x := range a.Exporters {
		backlog := uint64(0)
		if a.Seq > x.Cursor {
			backlog = a.Seq - x.Cursor
		}
		switch {
		case backlog > exporterBacklog:
			e.add("exporter", levelWarning, fmt.Sprintf("%s is %d records behind (last error: %s)", x.Name, backlog, or(x.LastError, "none")), "check the destination; hookd status shows retries")
		case x.LastError != "":
			e.add("exporter", levelInfo, fmt.Sprintf("%s: %d records behind; last error: %s", x.Name, backlog, x.LastError), "")
		default:
			e.add("exporter", levelOK, fmt.Sprintf("%s: %d records behind", x.Name, backlog), "")
		}
	}
}
