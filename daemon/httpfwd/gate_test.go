package httpfwd

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

const testToken = "0123456789abcdef0123456789abcdef"

type stopHandler struct{}

func (stopHandler) HandleHTTP(ctx context.Context, payload []byte) (*protocol.Result, *events.Event, error) {
	ev, _ := events.Lookup("Stop")
	return &protocol.Result{DecisionID: "d"}, ev, nil
}

// gateServer serves the forwarder with a stub engine; lookup replaces the kernel's answer
// about each peer's uid.
func gateServer(t *testing.T, maxConns, maxPending int, head time.Duration, lookup func(net.Addr, net.Addr) (int, bool)) *HTTPServer {
	t.Helper()
	s := &HTTPServer{Engine: stopHandler{}, Log: zap.NewNop(), Token: testToken, MaxConns: maxConns, MaxPending: maxPending,
		HeadTimeout: head, ReadHeaderTimeout: time.Minute, CallerGone: errors.New("gone"), Shutdown: errors.New("shutdown")}
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if lookup != nil {
		s.ln.lookup = lookup
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

func unknownPeer(net.Addr, net.Addr) (int, bool) { return -1, false }

const halfHead = "POST " + settings.HTTPForwarderPath + " HTTP/1.1\r\nHost: 127.0.0.1:80\r\n"

func ownerPost(s *HTTPServer) error {
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr()+settings.HTTPForwarderPath, strings.NewReader(`{"hook_event_name":"Stop"}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return errors.New(resp.Status + ": " + string(b))
	}
	return nil
}

// waitClosed reads c until the server closes it; it fails the test if that takes a minute.
func waitClosed(t *testing.T, c net.Conn) []byte {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	b, err := io.ReadAll(bufio.NewReader(c))
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset by peer") {
		t.Fatalf("the server did not close the connection: %v", err)
	}
	return b
}

// Where the peer's uid is unknown, more half-sent requests than the pending pool holds do
// not refuse the owner: the oldest pending connections are closed to make room, and the
// owner's authenticated posts are answered.
func TestGateUnknownPeersEvictOldestPending(t *testing.T) {
	s := gateServer(t, 256, 8, time.Minute, unknownPeer)
	var held []net.Conn
	for range 20 {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, halfHead); err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	// The 12 oldest were closed for newer ones (each close is seen by the neighbour).
	for _, c := range held[:12] {
		waitClosed(t, c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- ownerPost(s) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal("owner's post refused:", err)
		}
	}
	if st := s.Stats(); st.Evicted < 12 || st.Foreign != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// A pending connection's head deadline runs from its accept and is not extended by
// net/http's own (a minute here): it is closed after HeadTimeout.
func TestGatePendingHeadDeadline(t *testing.T) {
	s := gateServer(t, 256, 8, 200*time.Millisecond, unknownPeer)
	// The deadline runs from the server's accept, which can come before Dial returns:
	// the clock starts before the dial, so a slow machine cannot make the close look
	// early (it only makes it later).
	start := time.Now()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, halfHead); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c)
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("closed after %v, before its head deadline", d)
	}
}

// A request without the token is answered 401 and its connection closed: one try per
// unauthenticated connection. An authenticated connection is kept alive and trusted.
func TestGateUnauthenticatedConnectionGetsOneTry(t *testing.T) {
	s := gateServer(t, 256, 8, time.Minute, unknownPeer)
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, halfHead+"Content-Length: 2\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	got := waitClosed(t, c)
	if !strings.HasPrefix(string(got), "HTTP/1.1 401") || !strings.Contains(string(got), "Connection: close") {
		t.Fatalf("answer: %q", got)
	}
	// With the token, two requests on one connection.
	c2, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	r := bufio.NewReader(c2)
	for i := range 2 {
		if _, err := io.WriteString(c2, halfHead+"Authorization: Bearer "+testToken+"\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
			t.Fatal(i, err)
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("request %d on a kept-alive authenticated connection: %v %v", i, resp, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
	}
}

// Where the kernel names another uid, the connection is closed at accept: it never holds a
// slot, even one the owner has plenty of.
func TestGateForeignUIDClosedAtAccept(t *testing.T) {
	s := gateServer(t, 256, 8, time.Minute, func(net.Addr, net.Addr) (int, bool) { return 4242, true })
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, halfHead+"Authorization: Bearer "+testToken+"\r\nContent-Length: 2\r\n\r\n{}")
	if got := waitClosed(t, c); len(got) != 0 {
		t.Fatalf("another uid got an answer: %q", got)
	}
	if st := s.Stats(); st.Foreign != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// The owner's pool is the owner's: when it is full, one more owner connection is refused,
// and a slot freed is usable again.
func TestGateOwnerPoolLimit(t *testing.T) {
	s := gateServer(t, 2, 8, time.Minute, nil) // the real lookup: this process is the owner
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	if err := ownerPost(s); err == nil {
		t.Fatal("a third owner connection was served over a limit of 2")
	}
	held[0].Close()
	deadline := time.Now().Add(time.Minute)
	for ownerPost(s) != nil {
		if time.Now().After(deadline) {
			t.Fatal("a freed slot was never reused")
		}
		time.Sleep(10 * time.Millisecond)
	}
	held[1].Close()
}
