package main

import (
	"runtime"
	"testing"
)

// hookd serve runs on daemonProcs Ps unless GOMAXPROCS is set, which wins.
func TestServeSetsGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(3)
	setDaemonProcs(func(string) string { return "3" })
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Fatalf("GOMAXPROCS set in the environment: %d, want it left at 3", got)
	}
	setDaemonProcs(func(string) string { return "" })
	if got := runtime.GOMAXPROCS(0); got != daemonProcs {
		t.Fatalf("GOMAXPROCS unset: %d, want %d", got, daemonProcs)
	}
}
