package osproc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// SessionNiceWorks reports whether setting a session's nice value moves its share of the
// CPU against the machine's other sessions: the kernel schedules sessions as groups
// (sched_autogroup: CONFIG_SCHED_AUTOGROUP, and kernel.sched_autogroup_enabled = 1, the
// default wherever the kernel has it) and this process may set the value
// (/proc/self/autogroup is writable: a kernel with the feature always lets a process raise
// its own sessions' nice value; only lowering it below 0 needs privilege).
//
// Only tasks in the cpu controller's root group are autogrouped
// (kernel/sched/autogroup.c, task_wants_autogroup): under a cgroup with the cpu controller
// (a systemd slice that enables it, a container with CPU limits) the write works and
// moves nothing, so that counts as not working (inRootCPUGroup).
func SessionNiceWorks() bool {
	b, err := os.ReadFile("/proc/sys/kernel/sched_autogroup_enabled")
	if err != nil || !bytes.Equal(bytes.TrimSpace(b), []byte("1")) {
		return false
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil || !inRootCPUGroup(cg, func(path string) ([]byte, error) {
		return os.ReadFile(filepath.Join("/sys/fs/cgroup", path, "cgroup.controllers"))
	}) {
		return false
	}
	f, err := os.OpenFile("/proc/self/autogroup", os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	_ = f.Close()
	return true
}

// setSessionNice writes nice to pid's autogroup: the scheduling group of pid's session,
// shared by every process in it. A new session's group starts at 0 whatever its
// creator's was (kernel/sched/autogroup.c, autogroup_create), which is what a hook
// started natively — in a session of its own — runs at.
func setSessionNice(pid, nice int) error {
	f, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/autogroup", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(strconv.Itoa(nice)))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SessionNice reads the nice value of pid's session group (for tests and diagnostics).
func SessionNice(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/autogroup")
	if err != nil {
		return 0, err
	}
	// "/autogroup-123 nice 19\n"
	f := bytes.Fields(b)
	if len(f) != 3 || string(f[1]) != "nice" {
		return 0, &os.PathError{Op: "parse", Path: "/proc/" + strconv.Itoa(pid) + "/autogroup", Err: os.ErrInvalid}
	}
	return strconv.Atoi(string(f[2]))
}

// SessionNiceRateLimited reports whether this process's session-nice changes are rate
// limited: without CAP_SYS_ADMIN, the kernel allows one change per 100 ms, and the
// deadline is shared by every unprivileged process on the machine
// (kernel/sched/autogroup.c, proc_sched_autogroup_set_nice: EAGAIN before it).
func SessionNiceRateLimited() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return true
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("CapEff:")); ok {
			caps, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
			const capSysAdmin = 21
			return err != nil || caps&(1<<capSysAdmin) == 0
		}
	}
	return true
}

// Idle reports whether pid and every process descending from it are asleep — each of
// their threads in state S — and the CPU time they have used so far, in clock ticks
// (utime + stime + cutime + cstime): a process tree asleep twice with the same CPU time
// has finished what it does before waiting. The whole tree counts because a hook's process is often not the
// one that starts up: /bin/sh -c runs the command as its child and waits for it (dash does
// not exec it), and a waiting thread may wait for a starved one. The tree is found through
// /proc/PID/task/TID/children; where the kernel lacks that file it returns ErrUnsupported,
// and where the tree is larger than maxIdleTree it reports not asleep (either way the
// caller restores the spare when an event takes it).
func Idle(pid int) (asleep bool, ticks uint64, err error) {
	if !childrenFiles() {
		return false, 0, ErrUnsupported
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		if i >= maxIdleTree {
			return false, 0, nil
		}
		p := strconv.Itoa(tree[i])
		_, f, err := readStat(tree[i], 18)
		if err != nil {
			if i == 0 {
				return false, 0, err
			}
			continue // a descendant that exited
		}
		if f[0] != "S" {
			return false, 0, nil
		}
		// utime, stime, and those of its children it has waited for (one that ran and
		// exited between two checks used CPU too).
		for _, v := range f[11:15] {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return false, 0, fmt.Errorf("malformed /proc/%s/stat", p)
			}
			ticks += n
		}
		tids := []string{p}
		if f[17] != "1" { // num_threads
			if tids, err = readDirNames("/proc/" + p + "/task"); err != nil {
				continue // exited
			}
		}
		for _, tid := range tids {
			if tid != p {
				_, tf, err := readStatFile("/proc/"+p+"/task/"+tid+"/stat", 1)
				var gone *fs.PathError
				if errors.As(err, &gone) {
					continue // the thread ended
				}
				if err != nil || tf[0] != "S" {
					return false, 0, nil
				}
			}
			c, err := os.ReadFile("/proc/" + p + "/task/" + tid + "/children")
			if err != nil {
				continue // exited
			}
			for _, w := range bytes.Fields(c) {
				if n, err := strconv.Atoi(string(w)); err == nil {
					tree = append(tree, n)
				}
			}
		}
	}
	return true, ticks, nil
}

// childrenFiles reports whether the kernel has /proc/PID/task/TID/children
// (CONFIG_PROC_CHILDREN).
var childrenFiles = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/children")
	return err == nil
})

// maxIdleTree bounds the processes Idle reads.
const maxIdleTree = 32

func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// inRootCPUGroup reports, from /proc/self/cgroup, whether this process is scheduled in
// the cpu controller's root task group. cgroup v1: its cpu hierarchy's path is "/".
// cgroup v2 (a "0::" line and no v1 cpu line): its path is "/", or its cgroup does not
// have the cpu controller (controllers reads that cgroup's cgroup.controllers). What
// cannot be read counts as not in the root: spares then start as they always did.
func inRootCPUGroup(cgroup []byte, controllers func(path string) ([]byte, error)) bool {
	v2 := ""
	for _, line := range strings.Split(string(cgroup), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2 = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "cpu" {
				return f[2] == "/"
			}
		}
	}
	switch {
	case v2 == "":
		return false
	case v2 == "/":
		return true
	}
	c, err := controllers(v2)
	if err != nil {
		return false
	}
	for _, name := range strings.Fields(string(c)) {
		if name == "cpu" {
			return false
		}
	}
	return true
}
