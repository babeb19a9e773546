package httpfwd_test

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// attacker is a python3 process running as another uid that holds n connections to addr,
// each with a request head it never finishes, and opens a new one whenever the server
// closes one, until its stdin closes (or 120 s pass). It prints "ready" once it has
// opened n.
const attackerPy = `
import socket, sys, threading, time, select
addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
head = b"POST /hookd/event HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
stop = time.time() + 120
conns = []
def one():
    while True:
        try:
            s = socket.create_connection((addr, port)); s.sendall(head); return s
        except OSError:
            if time.time() > stop: return None
            time.sleep(0.001)
for _ in range(n):
    conns.append(one())
print("ready", flush=True)
while time.time() < stop:
    r, _, _ = select.select([sys.stdin] + [c for c in conns if c], [], [], 0.05)
    if sys.stdin in r:
        break
    for i, c in enumerate(conns):
        if c in r:
            try:
                gone = c.recv(4096) == b""
            except OSError:
                gone = True
            if gone:
                c.close(); conns[i] = one()
`

// TestHTTPForwarderServesItsOwnerFirst (issue 28, item 6): another local user holding more
// half-sent requests than the forwarder has connection slots — and re-opening each one the
// server closes — must not keep the owner's Stop posts from being answered. On main before
// the fix the 256-connection cap was global and counted before authentication: 7 of 8
// posts failed. Needs root (to run the neighbour as another uid); CI runs as root.
func TestHTTPForwarderServesItsOwnerFirst(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must run this test as root: it starts a neighbour as another uid")
		}
		t.Skip("needs root to start a neighbour under another uid (CI runs it as root)")
	}
	// The system interpreter: a python3 under root's home (pyenv) is not executable as
	// another uid.
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Fatal("/usr/bin/python3 is needed for the neighbour:", err)
	}
	w := newWorld(t, "", nil)
	w.sessionStart(t, "owner", hookEnv("m"))
	host, port, _ := strings.Cut(w.d.HTTPAddr(), ":")
	cmd := exec.Command(py, "-c", attackerPy, host, port, "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = "/"
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("neighbour did not get ready: %q %v", line, err)
	}
	start := time.Now()
	answered := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failures []string
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, w.url, strings.NewReader(payload("Stop", "owner", "")))
			req.Header.Set("Authorization", "Bearer "+token)
			// A fresh connection per post, as a Claude Code process that starts per session.
			resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}).Do(req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, "post "+strconv.Itoa(i)+": "+err.Error())
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failures = append(failures, "post "+strconv.Itoa(i)+": "+resp.Status+": "+string(b))
				return
			}
			answered++
		}()
	}
	wg.Wait()
	if answered != 8 {
		t.Fatalf("%d of 8 Stop posts answered while another uid held half-sent requests: %v", answered, failures)
	}
	t.Logf("faults_http: another uid holding 300 half-sent request heads (re-opening each one closed): 8 of 8 of the owner's Stop posts answered, all within %v", time.Since(start).Round(time.Millisecond))
}
