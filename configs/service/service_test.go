package service

import (
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func testDescription(t *testing.T) Description {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Description{Exe: exe, Socket: "/run/user/1000/hookd/hookd.sock", HTTP: "127.0.0.1:21000",
		Args: []string{"--config", "/home/a b/100% $HOME \"q\".json"}, Grace: 10 * time.Second, LogDir: "/Users/a/Library/Logs/hookd"}
}

// TestSystemdUnitsVerify: the generated units pass `systemd-analyze verify` (as user
// units) with no warning at all, with and without the http port, with a binary path and
// flags that need quoting. systemd is not running as init here; verify loads the files
// itself. .ci/run installs systemd when it is missing.
func TestSystemdUnitsVerify(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze not found: .ci/run installs the systemd package")
		}
		t.Skip("systemd-analyze not found (apt-get install systemd); CI installs it")
	}
	// A binary whose path needs quoting: a copy of this test binary (executable).
	dir := t.TempDir()
	exe := filepath.Join(dir, "bin dir %h", "hookd")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, http := range []string{"", "127.0.0.1:21000", "[::1]:21001"} {
		d := testDescription(t)
		d.Exe, d.HTTP = exe, http
		unitDir := filepath.Join(dir, "units"+strings.NewReplacer(":", "", ".", "", "[", "", "]", "").Replace(http))
		files, err := Systemd(d, unitDir)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, f := range files {
			if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.Path, f.Content, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, f.Path)
		}
		xrd := t.TempDir()
		cmd := exec.Command(sa, append([]string{"verify", "--user"}, paths...)...)
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+xrd, "SYSTEMD_LOG_LEVEL=notice")
		out, err := cmd.CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Fatalf("http %q: systemd-analyze verify: %v\n%s\n%s\n%s", http, err, out, files[0].Content, files[1].Content)
		}
		sock := string(files[0].Content)
		if got := strings.Contains(sock, "ListenStream="+http+"\n"); got != (http != "") {
			t.Fatalf("http %q: socket unit\n%s", http, sock)
		}
	}
}

// The verify test above must be able to fail: a unit with a mistake does not pass.
func TestSystemdVerifyCatchesMistakes(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not found (CI installs it; TestSystemdUnitsVerify says so)")
	}
	d := testDescription(t)
	d.Exe = "/nonexistent/hookd"
	files, err := Systemd(d, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		_ = os.WriteFile(f.Path, f.Content, 0o644)
	}
	cmd := exec.Command(sa, "verify", "--user", files[0].Path, files[1].Path)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err == nil && !strings.Contains(string(out), "not executable") {
		t.Fatalf("a unit naming a missing binary verified: %s", out)
	}
}

// systemdUnquote splits an ExecStart= line as systemd does for the forms systemdQuote
// writes: words separated by spaces, "…" with \\ and \" escapes, %% and $$ doubled.
func systemdUnquote(line string) []string {
	var words []string
	for line != "" {
		line = strings.TrimLeft(line, " ")
		if line == "" {
			break
		}
		var w strings.Builder
		if line[0] == '"' {
			i := 1
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' {
					i++
				}
				w.WriteByte(line[i])
			}
			line = line[i+1:]
		} else {
			end := strings.IndexByte(line, ' ')
			if end < 0 {
				end = len(line)
			}
			w.WriteString(line[:end])
			line = line[end:]
		}
		words = append(words, strings.NewReplacer("%%", "%", "$$", "$").Replace(w.String()))
	}
	return words
}

func TestSystemdExecStartQuoting(t *testing.T) {
	d := testDescription(t)
	d.Exe = "/opt/my tools/hookd"
	files, err := Systemd(d, "/u")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(files[1].Content), "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			line = v
		}
	}
	if got, want := systemdUnquote(line), d.serveArgs(); !slices.Equal(got, want) {
		t.Fatalf("ExecStart=%s\nreads as %q\nwant      %q", line, got, want)
	}
	if _, err := Systemd(Description{Exe: "hookd", Socket: "/s"}, "/u"); err == nil {
		t.Fatal("a relative binary path was accepted")
	}
	if _, err := Systemd(Description{Exe: "/h", Socket: "/s", Args: []string{"a\nExecStartPre=/bin/evil"}}, "/u"); err == nil {
		t.Fatal("a line break in an argument was accepted")
	}
}

// plist is the generated agent read back with encoding/xml: the keys of the top dict with
// their raw values.
type plistNode struct {
	XMLName xml.Name
	Content string      `xml:",chardata"`
	Nodes   []plistNode `xml:",any"`
}

func plistDict(n plistNode) map[string]plistNode {
	m := map[string]plistNode{}
	for i := 0; i+1 < len(n.Nodes); i += 2 {
		m[n.Nodes[i].Content] = n.Nodes[i+1]
	}
	return m
}

func TestLaunchdAgent(t *testing.T) {
	d := testDescription(t)
	d.Exe = "/opt/homebrew/Cellar/hookd/1.0/bin/hookd"
	files, err := Launchd(d, "/Users/a/Library/LaunchAgents")
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Path != "/Users/a/Library/LaunchAgents/dev.hookd.hookd.plist" {
		t.Fatal(files[0].Path)
	}
	dec := xml.NewDecoder(strings.NewReader(string(files[0].Content)))
	dec.Strict = true
	var root plistNode
	if err := dec.Decode(&root); err != nil {
		t.Fatalf("not well-formed XML: %v\n%s", err, files[0].Content)
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if cd, ok := tok.(xml.CharData); err != nil || !ok || strings.TrimSpace(string(cd)) != "" {
			t.Fatalf("content after the plist: %v %v", tok, err)
		}
	}
	top := plistDict(root.Nodes[0])
	if top["Label"].Content != Label || top["RunAtLoad"].XMLName.Local != "true" || top["KeepAlive"].XMLName.Local != "true" {
		t.Fatalf("agent keys: %+v", top)
	}
	var args []string
	for _, n := range top["ProgramArguments"].Nodes {
		args = append(args, n.Content)
	}
	if !slices.Equal(args, d.serveArgs()) {
		t.Fatalf("ProgramArguments %q, want %q", args, d.serveArgs())
	}
	socks := plistDict(top["Sockets"])
	l := plistDict(socks["Listeners"])
	if l["SockPathName"].Content != d.Socket || l["SockPathMode"].Content != "384" {
		t.Fatalf("Listeners: %+v", l)
	}
	h := plistDict(socks["HTTP"])
	if h["SockNodeName"].Content != "127.0.0.1" || h["SockServiceName"].Content != "21000" || h["SockFamily"].Content != "IPv4" {
		t.Fatalf("HTTP: %+v", h)
	}
}

// fakeManager records commands; avail says whether the manager answers.
func fakeManager(t *testing.T, goos string, avail bool) (*Manager, *[]string, string) {
	home := t.TempDir()
	var ran []string
	run := func(name string, args ...string) (string, error) {
		c := name + " " + strings.Join(args, " ")
		ran = append(ran, c)
		if !avail {
			return "Failed to connect to bus: No medium found", errors.New("exit status 1")
		}
		if strings.Contains(c, "is-active") || strings.Contains(c, "is-system-running") {
			return "active", nil
		}
		if strings.Contains(c, "is-enabled") {
			return "enabled", nil
		}
		return "", nil
	}
	d := testDescription(t)
	m, err := For(goos, d, Paths{Home: home, Getenv: func(string) string { return "" }, UID: 501}, run)
	if err != nil {
		t.Fatal(err)
	}
	return m, &ran, home
}

func TestManagerInstallUninstall(t *testing.T) {
	m, ran, home := fakeManager(t, "linux", true)
	if st := m.Status(); st.Installed() || st.Files[0].State != "absent" {
		t.Fatalf("before install: %+v", st)
	}
	changed, err := m.Install()
	if err != nil || len(changed) != 2 {
		t.Fatalf("install: %v %v", changed, err)
	}
	if !strings.HasPrefix(m.Files[0].Path, filepath.Join(home, ".config", "systemd", "user")) {
		t.Fatal(m.Files[0].Path)
	}
	if !slices.Contains(*ran, "systemctl --user enable --now hookd.socket") {
		t.Fatalf("commands: %q", *ran)
	}
	if changed, _ := m.Install(); len(changed) != 0 {
		t.Fatalf("a second install changed %v", changed)
	}
	st := m.Status()
	if !st.Current() || st.Enabled != "enabled" || st.Socket != "active" {
		t.Fatalf("status: %+v", st)
	}
	if err := os.WriteFile(m.Files[1].Path, []byte("[Service]\nExecStart=/old/hookd serve\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := m.Status(); st.Current() || st.Files[1].State != "stale" {
		t.Fatalf("status after an edit: %+v", st)
	}
	removed, err := m.Uninstall()
	if err != nil || len(removed) != 2 || !slices.Contains(*ran, "systemctl --user disable --now hookd.socket hookd.service") {
		t.Fatalf("uninstall: %v %v %q", removed, err, *ran)
	}
	if st := m.Status(); st.Installed() {
		t.Fatalf("after uninstall: %+v", st)
	}
}

func TestManagerWithoutServiceManager(t *testing.T) {
	m, _, _ := fakeManager(t, "linux", false)
	changed, err := m.Install()
	if !errors.Is(err, ErrNoManager) || len(changed) != 2 || !strings.Contains(err.Error(), "Failed to connect to bus") {
		t.Fatalf("install without systemd --user: %v %v", changed, err)
	}
	if st := m.Status(); st.Available || !st.Installed() || st.Why == "" {
		t.Fatalf("status: %+v", st)
	}
	if removed, err := m.Uninstall(); err != nil || len(removed) != 2 {
		t.Fatalf("uninstall: %v %v", removed, err)
	}
}

func TestManagerLaunchd(t *testing.T) {
	m, ran, home := fakeManager(t, "darwin", true)
	if _, err := m.Install(); err != nil {
		t.Fatal(err)
	}
	want := "launchctl bootstrap gui/501 " + filepath.Join(home, "Library", "LaunchAgents", Label+".plist")
	if !slices.Contains(*ran, want) {
		t.Fatalf("commands %q, want %q", *ran, want)
	}
	if _, err := For("windows", testDescription(t), Paths{}, nil); err == nil {
		t.Fatal("windows: no error")
	}
}

var updateExamples = flag.Bool("update", false, "rewrite configs/examples' service files from the generator")

// TestExamplesAreGenerated: the shipped examples (configs/examples) are what `hookd service
// install` writes for a binary in /usr/local/bin and the default socket, so they cannot
// drift from the generator. `go test ./configs/service -run Examples -update` rewrites them.
func TestExamplesAreGenerated(t *testing.T) {
	d := Description{Exe: "/usr/local/bin/hookd", Socket: "/run/user/1000/hookd/hookd.sock", Grace: 10 * time.Second}
	units, err := Systemd(d, "../examples")
	if err != nil {
		t.Fatal(err)
	}
	d.Socket, d.LogDir = "/Users/me/Library/Caches/hookd/hookd.sock", "/Users/me/Library/Logs/hookd"
	agent, err := Launchd(d, "../examples")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(units, agent...) {
		if *updateExamples {
			if err := os.WriteFile(f.Path, f.Content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(f.Path)
		if err != nil || string(got) != string(f.Content) {
			t.Errorf("%s is not what the generator writes (%v); run go test ./configs/service -run Examples -update", f.Path, err)
		}
	}
}
