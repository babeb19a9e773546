//go:build unix && !linux && !darwin

package lite

// peerUID: without SO_PEERCRED or LOCAL_PEERCRED the path checks of CheckSocket stand
// alone. (hookd builds for Linux and macOS; see docs/platforms.md.)
func peerUID(int) (int, bool, error) { return 0, false, nil }
