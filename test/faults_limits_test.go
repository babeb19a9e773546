package test

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

// Issue 13, defect 6: no resource limits — idle and half-sent connections were held
// forever, 32 concurrent 16 MiB requests took the daemon to 2.8 GB and it stayed there.
// And defect 8: hookc's size check disagreed with the daemon's.

func (e *Env) withLimits(t *testing.T, limits string) {
	t.Helper()
	e.Config = filepath.Join(e.Root, "hookd.json")
	if err := os.WriteFile(e.Config, []byte(`{"limits":`+limits+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
}

// procStatus reads a field of /proc/<pid>/status (VmRSS in kB, Threads).
func procStatus(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return -1
}

func fdsOf(t *testing.T, pid int) int {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestFaultLimitsIdleAndHalfSent(t *testing.T) {
	e := NewEnv(t)
	e.withLimits(t, `{"request_read_timeout_ms":500,"idle_connection_timeout_ms":700}`)
	e.Start()
	pid := e.daemon.Process.Pid
	base := fdsOf(t, pid)
	var conns []net.Conn
	for i := 0; i < 40; i++ {
		c, err := net.Dial("unix", e.Socket)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			c.Write([]byte(`{"v":1,"event":{"hook_event_name":"Sto`)) // half a request, never finished
		}
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	held := fdsOf(t, pid) - base // some may be closed already: the timeout is short
	// Every connection is closed by the daemon; half-sent ones get an error frame first.
	halfErrors := 0
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if i%2 == 1 {
			if !strings.Contains(line, "not completed within") {
				t.Fatalf("half-sent connection %d: %q %v", i, line, err)
			}
			halfErrors++
		} else if line != "" || err == nil {
			t.Fatalf("idle connection %d: %q %v", i, line, err)
		}
	}
	Eventually(t, 10*time.Second, "the daemon to let go of the connections", func() bool { return fdsOf(t, pid) <= base+2 })
	t.Logf("40 idle/half-sent connections: fds %d before, %d more while held, %d after; %d error frames", base, held, fdsOf(t, pid), halfErrors)
}

// A harness keeping its connection between turns is not cut by the request read timeout:
// that one starts with a request's first byte. (Before, an idle connection was closed
// after request_read_timeout_ms, and its next request failed.)
func TestFaultLimitsIdleOutlivesReadTimeout(t *testing.T) {
	e := NewEnv(t)
	e.withLimits(t, `{"request_read_timeout_ms":300}`) // idle timeout: the default, 10 min
	e.Start()
	c, err := protocol.Dial(context.Background(), e.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 3; i++ {
		if _, err := c.Do(context.Background(), &protocol.Request{Op: protocol.OpPing}, nil); err != nil {
			t.Fatalf("ping %d on a connection idle for 5× the read timeout: %v", i, err)
		}
		time.Sleep(1500 * time.Millisecond) // idle for 5× request_read_timeout_ms
	}
	// A half-sent request on another connection is still cut at the read timeout.
	h, err := net.Dial("unix", e.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.Write([]byte(`{"v":1,"op":"pi`))
	h.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(h).ReadString('\n')
	if !strings.Contains(line, "not completed within") {
		t.Fatalf("half-sent request: %q %v", line, err)
	}
}

func TestFaultLimitsConnectionsPerUID(t *testing.T) {
	e := NewEnv(t)
	e.withLimits(t, `{"max_connections_per_uid":8}`)
	e.Start()
	var held []*protocol.Client
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < 8; i++ {
		c, err := protocol.Dial(context.Background(), e.Socket)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do(context.Background(), &protocol.Request{Op: protocol.OpPing}, nil); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		held = append(held, c)
	}
	c, err := protocol.Dial(context.Background(), e.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Do(context.Background(), &protocol.Request{Op: protocol.OpPing}, nil)
	var perr *protocol.Error
	if !asProtoErr(err, &perr) || perr.Code != protocol.CodeBusy {
		t.Fatalf("9th connection: want busy, got %v", err)
	}
	// hookc over the limit fails closed (never an allow with nothing).
	r := e.Hookc(bashPayload(e, "rm -rf /"), "--fallback=false")
	if r.Code != 2 || !strings.Contains(r.Stderr, "busy") && !strings.Contains(r.Stderr, "connections") {
		t.Fatalf("hookc over the connection limit: exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	held[0].Close()
	held = held[1:]
	Eventually(t, 10*time.Second, "a slot to free up", func() bool {
		c, err := protocol.Dial(context.Background(), e.Socket)
		if err != nil {
			return false
		}
		defer c.Close()
		_, err = c.Do(context.Background(), &protocol.Request{Op: protocol.OpPing}, nil)
		return err == nil
	})
}

func asProtoErr(err error, target **protocol.Error) bool {
	pe, ok := err.(*protocol.Error)
	if ok {
		*target = pe
	}
	return ok
}

// 16 connections each send 3 MiB of a request line and hold it unfinished (the way 32
// concurrent 16 MiB requests took the old daemon to 2.8 GB): with a 16 MiB in-flight
// budget, at most two large lines are read at a time, the rest are answered "busy",
// RSS stays bounded, and memory comes back down once the connections are gone.
func TestFaultLimitsInFlightBytes(t *testing.T) {
	e := NewEnv(t)
	e.Config = filepath.Join(e.Root, "hookd.json")
	os.WriteFile(e.Config, []byte(`{"max_request_bytes":4194304,"limits":{"max_inflight_request_bytes":16777216,"request_read_timeout_ms":3000}}`), 0o600)
	e.Start()
	pid := e.daemon.Process.Pid
	rssBase := procStatus(t, pid, "VmRSS")
	chunk := []byte(`{"v":1,"event":{"hook_event_name":"PreToolUse","tool_input":{"content":"` + strings.Repeat("x", 3<<20))
	var mu sync.Mutex
	answers := map[string]int{}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("unix", e.Socket)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			go c.Write(chunk) // never finished: no closing quote, no newline
			c.SetReadDeadline(time.Now().Add(60 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			k := "closed without a frame"
			switch {
			case strings.Contains(line, `"busy"`):
				k = "busy"
			case strings.Contains(line, "not completed within"):
				k = "read timeout"
			case line != "":
				k = line
			}
			mu.Lock()
			answers[k]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	rssPeak := procStatus(t, pid, "VmHWM")
	if answers["busy"] == 0 || answers["closed without a frame"] > 0 {
		t.Fatalf("16 × 3 MiB half-sent lines with a 16 MiB budget: %v", answers)
	}
	var rssAfter int
	Eventually(t, 30*time.Second, "memory to come back down", func() bool {
		rssAfter = procStatus(t, pid, "VmRSS")
		return rssAfter < rssBase+64<<10 // kB
	})
	t.Logf("16 × 3 MiB half-sent lines, budget 16 MiB (2 large-request slots): %v; RSS %d MiB before, peak %d MiB, %d MiB after", answers, rssBase>>10, rssPeak>>10, rssAfter>>10)
}

// A 9 MiB Write full of quotes — fine for hookc's check — is not refused by the daemon
// because its JSON escaping makes the request line longer than the payload.
func TestFaultLimitsSizeAgreement(t *testing.T) {
	e := NewEnv(t)
	// This test is about sizes, not time: a race-built hookc escaping ~12 MB on a loaded
	// machine has taken over the default 30 s to send the line.
	e.withLimits(t, `{"request_read_timeout_ms":600000}`)
	e.WriteSettings("project", preToolUse(allowHook("")))
	e.Start()
	quotes := strings.Repeat(`"\`, 6<<20/2)
	payload := e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "cat > f", "description": quotes}, "tool_use_id": "t"})
	if len(payload) <= 6<<20 || len(payload) > protocol.DefaultMaxRequestBytes {
		t.Fatalf("payload is %d bytes", len(payload))
	}
	r := e.Hookc(payload)
	if r.Code != 0 || !strings.Contains(r.Stdout, `"permissionDecision":"allow"`) {
		t.Fatalf("quote-heavy %d-byte payload: exit %d stdout %.200q stderr %.300q", len(payload), r.Code, r.Stdout, r.Stderr)
	}
}
