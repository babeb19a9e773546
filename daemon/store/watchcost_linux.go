package store

// DefaultMaxWatchDescriptors: see WatchOptions.MaxDescriptors. On Linux a watch is an
// inotify watch, which holds no descriptor (the kernel's own limit,
// fs.inotify.max_user_watches, is met by polling: describeWatchErr).
const DefaultMaxWatchDescriptors = 1024

// watchCost: inotify watches cost no descriptors.
func watchCost(string) int { return 0 }
