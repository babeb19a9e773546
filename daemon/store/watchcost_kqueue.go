//go:build !linux

package store

import "os"

// DefaultMaxWatchDescriptors bounds the descriptors the settings watcher holds under
// kqueue (macOS). A few settings directories need tens; 1024 leaves the daemon's
// sockets, hook pipes and logs ample room below RLIMIT_NOFILE, which Go raises at start
// from launchd's default soft limit (256) to kern.maxfilesperproc.
const DefaultMaxWatchDescriptors = 1024

// watchCost is what fsnotify's kqueue backend opens to watch dir: the directory itself,
// and each entry in it (O_EVTONLY descriptors, to see writes to the files inside, as
// inotify reports them; subdirectories are not descended into).
func watchCost(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 1
	}
	return 1 + len(ents)
}
