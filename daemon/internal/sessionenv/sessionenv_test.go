package sessionenv

import (
	"context"
	"os"
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

// TestSessionEnvAfterRestart: a daemon restarted mid-session (a new Store on the same state
// directory, as under the socket-activated service) finds the session's environment in its
// file on the first http event, without waiting for a SessionStart that will not come
// again; a file someone else could have written is not used.
func TestSessionEnvAfterRestart(t *testing.T) {
	dir := t.TempDir()
	New(dir, zap.NewNop()).Put("s1", "/p", []string{"CLAUDECODE=1", "PATH=/usr/bin"})

	restarted := New(dir, zap.NewNop())
	got := make(chan *Env, 1)
	go func() {
		e, _ := restarted.Wait(context.Background(), "s1", time.Hour) // the bound never runs out here
		got <- e
	}()
	select {
	case e := <-got:
		if e == nil || e.ProjectDir != "/p" || len(e.Env) != 2 {
			t.Fatalf("the restarted daemon's environment for the session: %+v", e)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the restarted daemon waited for the environment instead of reading its file")
	}

	if err := os.Chmod(restarted.file("s1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := New(dir, zap.NewNop()).Get("s1"); ok {
		t.Fatal("a stored environment others could write was used")
	}
}
