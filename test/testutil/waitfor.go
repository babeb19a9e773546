package testutil

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing the test (naming what it waited for) once
// timeout has passed. Tests wait for conditions with it rather than sleeping for a
// guessed time, so they pass on a machine of any speed; timeout only bounds a failure.
// The pause between checks grows from 1 ms to 10 ms: quick conditions are seen at once,
// and a slow one (a status request over the socket) is not asked hundreds of times a
// second on a loaded machine.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
}
