package testutil

import (
	"os"
	"testing"
)

// RequireRoot is for tests that act as another uid (chown, setuid, a listener of
// another user): CI runs as root; elsewhere they skip loudly, and under CI=true without
// root they fail rather than skip.
func RequireRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			tb.Fatal("this test acts as another uid and needs root (CI runs as root)")
		}
		tb.Skip("LOUD SKIP: needs root to act as another uid; CI runs this as root")
	}
}
