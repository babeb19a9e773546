//go:build unix && !linux

package lite

// peerUID: without SO_PEERCRED the path checks of CheckSocket stand alone.
func peerUID(int) (int, bool, error) { return 0, false, nil }
