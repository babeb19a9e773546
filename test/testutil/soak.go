package testutil

import (
	"os"
	"testing"
)

// SoakEnv turns on the long soak tests (10,000 events and the like, minutes each). `make
// soak` sets it; CI runs `make soak` once, after `make test`. Soak tests are named
// Test...Soak so that `go test -run 'Soak$'` selects them.
const SoakEnv = "HOOKD_SOAK"

// Soak reports whether this run is a soak run (make soak).
func Soak() bool { return os.Getenv(SoakEnv) != "" }

// RequireSoak skips t, loudly and with the reason, unless this is a soak run. make test
// runs a short variant of every soak test, so nothing is left unchecked there.
func RequireSoak(t testing.TB) {
	t.Helper()
	if !Soak() {
		t.Skipf("soak test: runs only under `make soak` (%s=1), which CI runs once after make test; make test runs its short variant", SoakEnv)
	}
}
