package test

import "golang.org/x/sys/unix"

// setChildSubreaper makes this test process the reaper of its orphaned
// descendants (PR_SET_CHILD_SUBREAPER), standing in for init or a service manager.
func setChildSubreaper(on bool) error {
	v := uintptr(0)
	if on {
		v = 1
	}
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, v, 0, 0, 0)
}
