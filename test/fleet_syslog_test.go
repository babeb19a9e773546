//go:build fleet

package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rsyslogdBin installs (test/fleet/install-rsyslog.sh) or finds rsyslogd.
func rsyslogdBin(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(), "test", "fleet", "install-rsyslog.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("installing rsyslog failed in CI: %v", err)
		}
		t.Skipf("SKIP (loud): rsyslog is not installed and could not be installed (%v); the syslog export test did not run", err)
	}
	return strings.TrimSpace(string(out))
}

// rsyslog is a private rsyslogd: a unix datagram socket, UDP and TCP on loopback, every
// message written as one JSON object per line with the RFC 5424 fields it parsed.
type rsyslog struct {
	dir, sock, out string
	udp, tcp       int
	cmd            *exec.Cmd
	done           chan struct{}
	logs           *syncBuffer
}

func startRsyslog(t *testing.T) *rsyslog {
	t.Helper()
	bin := rsyslogdBin(t)
	dir, err := os.MkdirTemp("", "rsl") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &rsyslog{dir: dir, sock: filepath.Join(dir, "log.sock"), out: filepath.Join(dir, "out.jsonl"),
		udp: freePort(t), tcp: freePort(t)}
	if err := os.MkdirAll(filepath.Join(dir, "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	// useSpecialParser off: the socket's messages go through the normal parser chain,
	// whose first parser is RFC 5424's.
	conf := fmt.Sprintf(`global(workDirectory="%[1]s/work")
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket="%[2]s" UseSpecialParser="off" ParseHostname="on")
module(load="imudp")
input(type="imudp" address="127.0.0.1" port="%[3]d")
module(load="imtcp")
input(type="imtcp" address="127.0.0.1" port="%[4]d")
template(name="j" type="list" option.jsonf="on") {
  property(outname="input" name="inputname" format="jsonf")
  property(outname="version" name="protocol-version" format="jsonf")
  property(outname="pri" name="pri" format="jsonf")
  property(outname="app" name="app-name" format="jsonf")
  property(outname="msgid" name="msgid" format="jsonf")
  property(outname="sd" name="structured-data" format="jsonf")
  property(outname="msg" name="msg" format="jsonf")
}
*.* action(type="omfile" file="%[5]s" template="j")
`, dir, r.sock, r.udp, r.tcp, r.out)
	cf := filepath.Join(dir, "rsyslog.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-N1", "-f", cf).CombinedOutput(); err != nil {
		t.Fatalf("rsyslogd rejects the test config: %v\n%s", err, out)
	}
	r.cmd = exec.Command(bin, "-n", "-f", cf, "-i", filepath.Join(dir, "rsyslogd.pid"))
	r.logs = &syncBuffer{}
	r.cmd.Stdout, r.cmd.Stderr = r.logs, r.logs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.done = make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	})
	Eventually(t, 30*time.Second, "rsyslogd listening", func() bool {
		select {
		case <-r.done:
			t.Fatalf("rsyslogd exited:\n%s", r.logs.String())
		default:
		}
		_, err := os.Stat(r.sock)
		return err == nil && tcpOpen(r.tcp)
	})
	return r
}

func tcpOpen(port int) bool {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	c.Close()
	return true
}

type syslogMsg struct {
	Input, Version, Pri, App, MsgID, SD, Msg string
}

func (r *rsyslog) messages(t *testing.T) []syslogMsg {
	data, err := os.ReadFile(r.out)
	if err != nil {
		return nil
	}
	var out []syslogMsg
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]string
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("rsyslog output is not JSON: %q", sc.Text())
		}
		out = append(out, syslogMsg{Input: m["input"], Version: m["version"], Pri: m["pri"], App: m["app"],
			MsgID: m["msgid"], SD: m["sd"], Msg: m["msg"]})
	}
	return out
}

// rsyslog receives the decisions over the local socket, UDP and TCP: one RFC 5424
// message per record, structured data with the decision id and decision, and the
// exact audit line (minus rsyslog's leading-BOM handling) as the message.
func TestFleetSyslogRsyslog(t *testing.T) {
	rs := startRsyslog(t)
	for _, tc := range []struct{ network, address, input string }{
		{"unixgram", rs.sock, "imuxsock"},
		{"udp", fmt.Sprintf("127.0.0.1:%d", rs.udp), "imudp"},
		{"tcp", fmt.Sprintf("127.0.0.1:%d", rs.tcp), "imtcp"},
	} {
		t.Run(tc.network, func(t *testing.T) {
			e := NewEnv(t)
			writeHookdConfig(t, e, map[string]any{"audit": map[string]any{"syslog": map[string]any{
				"network": tc.network, "address": tc.address, "facility": "local3",
			}}})
			e.WriteSettings("user", preToolUse(cmdHook(`case "$(cat)" in *rm*) echo "no rm" >&2; exit 2;; esac`)))
			e.Start()
			const n = 30
			for i := 0; i < n; i++ {
				cmd := "ls"
				if i%3 == 0 {
					cmd = "rm -rf x"
				}
				e.Event(bashPayload(e, cmd))
			}
			local := map[string]map[string]any{}
			lines := map[string]string{}
			for _, r := range auditLines(t, e) {
				if r["kind"] == "decision" {
					id := r["decision_id"].(string)
					local[id] = r
				}
			}
			for _, f := range []string{e.auditFile()} {
				data, _ := os.ReadFile(f)
				for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
					var r map[string]any
					_ = json.Unmarshal([]byte(l), &r)
					if id, ok := r["decision_id"].(string); ok {
						lines[id] = l
					}
				}
			}
			if len(local) != n {
				t.Fatalf("local log holds %d decisions; want %d", len(local), n)
			}
			got := map[string]syslogMsg{}
			Eventually(t, time.Minute, "every decision at rsyslog via "+tc.input, func() bool {
				for _, m := range rs.messages(t) {
					if m.Input != tc.input {
						continue
					}
					for id := range local {
						if strings.Contains(m.SD, `decision_id="`+id+`"`) {
							got[id] = m
						}
					}
				}
				if len(got) < n {
					time.Sleep(100 * time.Millisecond)
				}
				return len(got) == n
			})
			denied := 0
			for id, m := range got {
				r := local[id]
				if m.Version != "1" || m.App != "hookd" || m.MsgID != "decision" {
					t.Errorf("%s: not parsed as RFC 5424 by rsyslog: %+v", id, m)
				}
				if !strings.Contains(m.SD, `decision="`+r["decision"].(string)+`"`) || !strings.HasPrefix(m.SD, "[hookd@32473 ") {
					t.Errorf("%s: SD %s lacks decision %v", id, m.SD, r["decision"])
				}
				if strings.TrimPrefix(m.Msg, "\ufeff") != lines[id] {
					t.Errorf("%s: MSG differs from the audit line:\n got %q\nwant %q", id, m.Msg, lines[id])
				}
				if r["decision"] == "deny" {
					denied++
					if m.Pri != "156" { // local3.warning
						t.Errorf("deny PRI %s; want 156 (local3.warning)", m.Pri)
					}
				}
			}
			if denied != n/3 {
				t.Errorf("%d denies; want %d", denied, n/3)
			}
		})
	}
}
