package sessionenv

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestSessionEnvWait: an http event that arrives before its session's (async)
// SessionStart forwarder gets the environment as soon as it is stored; a session that is
// never announced waits once, up to the bound, and its later events do not wait again
// until an environment is stored for it; a cancelled request stops waiting.
func TestSessionEnvWait(t *testing.T) {
	s := New(t.TempDir(), zap.NewNop())
	env := []string{"CLAUDECODE=1", "PATH=/usr/bin"}

	got := make(chan bool, 1)
	go func() {
		e, ok := s.Wait(context.Background(), "s1", time.Hour)
		got <- ok && len(e.Env) == 2
	}()
	// The waiter must be waiting before the put for this to test the wake-up; if it is
	// not yet, get finds the environment at once — the result is the same either way.
	s.Put("s1", "/p", env)
	if !<-got {
		t.Fatal("the waiting event did not get the stored environment")
	}

	start := time.Now()
	if _, ok := s.Wait(context.Background(), "never", 50*time.Millisecond); ok {
		t.Fatal("an environment for a session nobody announced")
	}
	if time.Since(start) < 50*time.Millisecond {
		t.Fatal("the first event of an unannounced session did not wait")
	}
	done := make(chan struct{})
	go func() {
		s.Wait(context.Background(), "never", time.Hour) // must return at once: it gave up before
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a session that ran out of its wait waited again")
	}
	s.Put("never", "/p", env)
	if _, ok := s.Wait(context.Background(), "never", time.Hour); !ok {
		t.Fatal("stored after giving up: not found")
	}

	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan bool, 1)
	go func() { _, ok := s.Wait(ctx, "s3", time.Hour); res <- ok }()
	cancel()
	select {
	case ok := <-res:
		if ok {
			t.Fatal("a cancelled wait found an environment")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled wait did not return")
	}
}
