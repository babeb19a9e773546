//go:build !darwin

package activation

import "os"

// launchdFiles: launchd exists on macOS only.
func launchdFiles() ([]*os.File, error) { return nil, nil }
