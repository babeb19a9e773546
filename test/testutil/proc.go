package testutil

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Proc is one process as /proc/<pid>/stat shows it.
type Proc struct {
	PID   int
	State string // R, S, Z, …
}

// stat returns a process's state and parent pid from /proc/<pid>/stat.
func stat(pid string) (state string, ppid string, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return "", "", false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may contain spaces and ')'
	if i < 0 {
		return "", "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return "", "", false
	}
	return f[0], f[1], true
}

// ProcessGone reports whether pid no longer runs: absent, or a zombie waiting for a
// reaper (this sandbox's PID 1 does not reap orphans, which is not hookd's to fix).
func ProcessGone(pid int) bool {
	state, _, ok := stat(strconv.Itoa(pid))
	if !ok {
		return syscall.Kill(pid, 0) != nil
	}
	return state == "Z"
}

// Children lists the processes whose parent is ppid, zombies included, by pid.
func Children(ppid int) ([]Proc, error) {
	es, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	want := strconv.Itoa(ppid)
	var out []Proc
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, parent, ok := stat(e.Name()); ok && parent == want {
			out = append(out, Proc{PID: pid, State: state})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}
