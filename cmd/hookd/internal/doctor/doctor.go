// Package doctor checks a machine's hookd set-up (`hookd doctor`, docs/install.md): each
// check turns what cmd/hookd gathered — the daemon's status, the settings files, the
// service, the installations — into findings with what to do, and the worst finding sets
// the exit code: 0 healthy, 1 degraded, 2 broken.
package doctor

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

	"github.com/hookd/hookd/cmd/hookd/internal/show"
	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/service"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/protocol/lite"
)

// Input is what the checks read.
type Input struct {
	Socket, UserDir, ManagedDir string
	Cwd, Home                   string // the project is found from Cwd
	Version                     string // this hookd's
	Status                      *protocol.Status
	DialErr                     error // why Status is nil
	// InstallFindings are configs/install.Check's; Failing and Warnings the status problems
	// (invalid or refused files; error-level validation findings, a failing log).
	InstallFindings   []install.Finding
	Failing, Warnings []string
	Service           *service.Manager // nil: ServiceErr says why
	ServiceErr        error
	MDMProfiles       []string // the managed-preferences plists Claude Code reads, in order
}

// Finding is one thing doctor found, with what to do about it.
type Finding struct {
	Check   string `json:"check"`
	Level   string `json:"level"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// Report is doctor's answer.
type Report struct {
	Status   string    `json:"status"` // healthy | degraded | broken
	Exit     int       `json:"exit"`
	Findings []Finding `json:"findings"`
}

type env struct {
	in  Input
	add func(check, level, msg, fix string)
}

// Run runs every check.
func Run(in Input) Report {
	var rep Report
	e := &env{in: in}
	e.add = func(check, level, msg, fix string) {
		rep.Findings = append(rep.Findings, Finding{Check: check, Level: level, Message: msg, Fix: fix})
	}
	fwd := forwarderFiles(in)
	for _, check := range []func(*env, []forwarderFile){
		checkDaemon, checkVersions, checkService, checkForwarders, checkSettings, checkRouting, checkClaudeCode, checkAudit,
	} {
		check(e, fwd)
	}
	rep.Status, rep.Exit = "healthy", 0
	for _, f := range rep.Findings {
		switch {
		case f.Level == LevelError:
			rep.Status, rep.Exit = "broken", 2
		case f.Level == LevelWarning && rep.Exit < 1:
			rep.Status, rep.Exit = "degraded", 1
		}
	}
	return rep
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// The finding levels, in increasing severity. doctor exits 0 with nothing above info, 1
// (degraded) with a warning, 2 (broken) with an error.
const (
	LevelOK      = "ok"
	LevelInfo    = "info"
	LevelWarning = "warning"
	LevelError   = "error"
)

func checkDaemon(e *env, fwd []forwarderFile) {
	sock := e.in.Socket
	if err := protocol.CheckSocket(sock); err != nil && errors.Is(err, lite.ErrUntrustedSocket) {
		e.add("socket", LevelError, err.Error(), "remove it, or point --socket/$HOOKD_SOCKET at a path in a 0700 directory of yours; hookc sends nothing to an untrusted socket")
		return
	}
	if e.in.Status == nil {
		level, why := LevelWarning, "hookc answers every event in-process meanwhile (hookd run: slower, no prewarming, no session state)"
		for _, f := range fwd {
			if f.http > 0 {
				level, why = LevelError, "Claude Code's http hooks in "+f.path+" fail and block every call meanwhile"
			}
		}
		e.add("daemon", level, "hookd is not running: "+e.in.DialErr.Error()+"; "+why,
			"start it: hookd service install (or hookd setup), or hookd serve")
		return
	}
	e.add("daemon", LevelOK, fmt.Sprintf("reachable at %s (pid %d, up %s, %d events answered)", sock, e.in.Status.PID, e.in.Status.Uptime, e.in.Status.Counters.Events), "")
}

func checkVersions(e *env, fwd []forwarderFile) {
	mine := e.in.Version
	if e.in.Status != nil {
		if e.in.Status.Version != mine {
			e.add("version", LevelWarning, fmt.Sprintf("the running daemon is %s, this hookd is %s", e.in.Status.Version, mine),
				"restart the daemon so it runs this binary: systemctl --user restart hookd.service (or stop and start hookd serve)")
		} else {
			e.add("version", LevelOK, "daemon and this hookd are both "+mine, "")
		}
		// The hookc processes that did send events: the forwarders below are only the
		// ones hookd installed.
		for _, c := range e.in.Status.Clients {
			if c.Skew {
				e.add("version", LevelWarning, show.ClientSkew(c, e.in.Status.Version),
					"restart the daemon (systemctl --user restart hookd.service, or stop and start hookd serve); if it persists, find the forwarder that runs another hookc")
			}
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
				e.add("version", LevelWarning, fmt.Sprintf("the forwarder %s is %s, hookd is %s", h, v, mine),
					"install hookd and hookc from the same release (or reinstall: hookd install claude-code --hookc PATH)")
			default:
				e.add("version", LevelOK, "the forwarder "+h+" is "+v, "")
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

func checkService(e *env, _ []forwarderFile) {
	if e.in.Service == nil {
		if e.in.ServiceErr != nil {
			e.add("service", LevelInfo, e.in.ServiceErr.Error(), "")
		}
		return
	}
	st := e.in.Service.Status()
	switch {
	case !st.Available && !st.Installed():
		e.add("service", LevelInfo, fmt.Sprintf("no %s service manager runs for this user here (%s): nothing restarts hookd after a crash or reboot", st.Manager, st.Why),
			"keep hookd running with your own supervisor (hookd serve), or log in with a session that runs it")
	case !st.Installed():
		e.add("service", LevelWarning, "hookd is not installed as a "+st.Manager+" service: nothing starts it at login or restarts it after a crash", "hookd service install")
	case !st.Current():
		e.add("service", LevelWarning, "the "+st.Manager+" service files are not what this hookd would write (another binary path, socket or version)", "hookd service install")
	case !st.Available:
		e.add("service", LevelInfo, "the "+st.Manager+" service files are installed, but the manager does not run for this user here ("+st.Why+")", "")
	case st.Manager == "systemd" && st.Socket != "active":
		e.add("service", LevelWarning, "hookd.socket is "+st.Socket+" (enabled: "+st.Enabled+")", "systemctl --user enable --now hookd.socket")
	default:
		e.add("service", LevelOK, fmt.Sprintf("%s service installed and current (enabled: %s, service: %s)", st.Manager, st.Enabled, orString(st.Service, st.Socket)), "")
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
func forwarderFiles(in Input) []forwarderFile {
	files := []forwarderFile{{path: filepath.Join(in.UserDir, "settings.json"), scope: settings.KindUser}}
	if in.Cwd != "" {
		if p := settings.ProjectDirFor(in.Cwd, in.Home); p != "" {
			files = append(files, forwarderFile{path: filepath.Join(p, ".claude", "settings.json"), scope: settings.KindProject},
				forwarderFile{path: filepath.Join(p, ".claude", "settings.local.json"), scope: settings.KindLocal})
		}
	}
	files = append(files, forwarderFile{path: filepath.Join(in.ManagedDir, "managed-settings.d", install.DropInName), scope: settings.KindManaged})
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
			case '\'', '"':
				j := strings.IndexByte(s[i+1:], s[i])
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

func checkForwarders(e *env, fwd []forwarderFile) {
	if len(fwd) == 0 {
		e.add("forwarders", LevelWarning, "no Claude Code settings file forwards events to hookd: Claude Code runs its hooks itself",
			"hookd setup claude-code (or hookd install claude-code)")
	}
	for _, f := range fwd {
		e.add("forwarders", LevelOK, fmt.Sprintf("%s (%s): %d hookc and %d http forwarders", f.path, f.scope, f.command, f.http), "")
		for _, h := range f.hookc {
			fi, err := os.Stat(h)
			switch {
			case !filepath.IsAbs(h):
				if _, err := exec.LookPath(h); err != nil {
					e.add("forwarders", LevelError, fmt.Sprintf("%s runs %q, which is not on PATH: every forwarded event fails", f.path, h), "hookd install claude-code --scope "+string(f.scope)+" --hookc /path/to/hookc")
				}
			case err != nil:
				e.add("forwarders", LevelError, fmt.Sprintf("%s runs %s, which does not exist: every forwarded event fails (Claude Code reports a hook error)", f.path, h),
					"reinstall hookc there, or hookd install claude-code --scope "+string(f.scope)+" --hookc /path/to/hookc")
			case fi.IsDir() || fi.Mode()&0o111 == 0:
				e.add("forwarders", LevelError, fmt.Sprintf("%s runs %s, which is not executable", f.path, h), "chmod +x "+h)
			}
		}
	}
	for _, f := range e.in.InstallFindings {
		e.add("install", LevelError, f.String(), "hookd install claude-code again, or hookd uninstall claude-code")
	}
}

func checkSettings(e *env, _ []forwarderFile) {
	if e.in.Status == nil {
		return
	}
	for _, s := range e.in.Failing {
		e.add("settings", LevelError, s, "fix the file (hookd validate names the field); the last good version stays in force meanwhile")
	}
	for _, s := range e.in.Warnings {
		e.add("settings", LevelWarning, s, "hookd validate")
	}
	if len(e.in.Failing)+len(e.in.Warnings) == 0 {
		e.add("settings", LevelOK, fmt.Sprintf("%d settings files loaded without errors", len(e.in.Status.Sources)), "")
	}
}

func checkRouting(e *env, _ []forwarderFile) {
	managed := e.in.ManagedDir
	for _, p := range e.in.MDMProfiles {
		if _, err := os.Stat(p); err == nil {
			e.add("managed", LevelInfo, "Claude Code reads its managed settings from the MDM profile "+p+" (it wins over "+managed+")", "")
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
	e.add("managed", LevelInfo, fmt.Sprintf("managed settings: %s (%d files); hookd's routing drop-in %s", managed, files,
		map[bool]string{true: "is installed", false: "is not installed"}[dropErr == nil]), "")
	if e.in.Status == nil {
		return
	}
	for _, p := range e.in.Status.Projects {
		if p.RoutedBy != "" {
			e.add("managed", LevelInfo, "project "+p.Dir+": routed by "+p.RoutedBy+" (Claude Code runs only managed hooks)", "")
		} else if dropErr == nil {
			e.add("managed", LevelWarning, "project "+p.Dir+": hookd's drop-in "+drop+" is not in effect (Claude Code does not read it there, or another managed source wins)",
				"hookd status; see docs/fleet.md")
		}
		if len(p.NotForwarded) > 0 {
			e.add("routing", LevelWarning, "project "+p.Dir+": no forwarder sends "+strings.Join(p.NotForwarded, ", ")+"; their user, project and local hooks run nowhere",
				"add forwarders for them (hookd install claude-code --scope managed again), or move those hooks into managed settings")
		}
		for _, r := range p.RunNowhere {
			e.add("routing", LevelWarning, "hook runs nowhere: "+r, "see docs/fleet.md, \"what runs where\"")
		}
	}
}

// ClaudeVersion runs `claude --version` ("2.1.332 (Claude Code)").
func ClaudeVersion(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", err
	}
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return v, nil
}

// CompareVersions compares dotted numeric versions (2.1.332 < 2.1.1000).
func CompareVersions(a, b string) int {
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

func checkClaudeCode(e *env, _ []forwarderFile) {
	checked := lite.CheckedVersion("Claude Code")
	bin, err := exec.LookPath("claude")
	if err != nil {
		e.add("claude-code", LevelInfo, "no claude on PATH (hookd was checked against Claude Code "+checked+")", "")
		return
	}
	v, err := ClaudeVersion(bin)
	if err != nil || v == "" {
		e.add("claude-code", LevelWarning, fmt.Sprintf("%s --version failed: %v", bin, err), "")
		return
	}
	switch CompareVersions(v, checked) {
	case 0:
		e.add("claude-code", LevelOK, fmt.Sprintf("%s is Claude Code %s, the version hookd was checked against", bin, v), "")
	case 1:
		e.add("claude-code", LevelWarning, fmt.Sprintf("%s is Claude Code %s, newer than the %s hookd was checked against: events or fields it added may not be forwarded or understood", bin, v, checked),
			"upgrade hookd; meanwhile hookd validate and hookd events list what hookd knows")
	default:
		e.add("claude-code", LevelInfo, fmt.Sprintf("%s is Claude Code %s, older than the %s hookd was checked against", bin, v, checked), "")
	}
}

// exporterBacklog is how many records an exporter may lag before doctor warns.
const exporterBacklog = 1000

func checkAudit(e *env, _ []forwarderFile) {
	if e.in.Status == nil {
		return
	}
	a := e.in.Status.Audit
	if a == nil {
		e.add("audit", LevelInfo, "the decision log is off (hookd's configuration: audit.enabled)", "")
		return
	}
	if !a.Healthy {
		e.add("audit", LevelError, "the decision log "+a.Path+" cannot be written ("+a.LastError+"): events that can block are denied until it can",
			"free disk space or fix the directory's permissions; hookd status shows when it recovers")
	} else {
		e.add("audit", LevelOK, fmt.Sprintf("decision log %s written (seq %d, fsync %s)", a.Path, a.Seq, a.Fsync), "")
	}
	if a.Path != "" {
		if rep, err := audit.VerifyFiles(a.Path); err != nil {
			e.add("audit", LevelError, "verifying the decision log's current file: "+err.Error(), "hookd audit verify")
		} else if !rep.OK() {
			e.add("audit", LevelError, fmt.Sprintf("the decision log's current file does not verify: %s", rep.Problems[0]), "hookd audit verify names every problem; docs/audit.md, \"repair\"")
		} else {
			e.add("audit", LevelOK, fmt.Sprintf("the current file verifies (%d records)", rep.Records), "")
		}
	}
	for _, x := range a.Exporters {
		backlog := uint64(0)
		if a.Seq > x.Cursor {
			backlog = a.Seq - x.Cursor
		}
		switch {
		case backlog > exporterBacklog:
			e.add("exporter", LevelWarning, fmt.Sprintf("%s is %d records behind (last error: %s)", x.Name, backlog, orString(x.LastError, "none")), "check the destination; hookd status shows retries")
		case x.LastError != "":
			e.add("exporter", LevelInfo, fmt.Sprintf("%s: %d records behind; last error: %s", x.Name, backlog, x.LastError), "")
		default:
			e.add("exporter", LevelOK, fmt.Sprintf("%s: %d records behind", x.Name, backlog), "")
		}
	}
}
