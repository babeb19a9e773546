package runner

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Process hygiene (issue 13, defect 8).
//
// When a hook exits, its process group is killed (unless ProcSpec.KeepGroup): a hook that
// left `sleep 300 &` behind used to leave it running for ever (55 of 55 survived). The
// kill happens while the hook's own process is still an unreaped zombie (waitid with
// WNOWAIT, then the group kill, then the reap), so the group id cannot have been reused
// by an unrelated process: a pid is not reused while it is a zombie.
//
// When the daemon dies — even by SIGKILL, which runs no code of ours — its hooks' groups
// are killed by the group reaper: one small helper process started once with the daemon
// (`hookd` itself, re-executed; nothing is exec'ed per hook). The daemon tells it each
// hook's group as the hook starts and ends, one short line on a pipe each (a non-blocking
// write of a few bytes; a full pipe drops the line and counts it). When its end of the
// pipe reports EOF — the kernel closes the daemon's end when the daemon dies, however it
// dies — the reaper kills every group it still tracks and exits. It identifies a group by
// its id and the start time of its leader (/proc/PID/stat, read by the reaper, off the
// hot path): only processes of that group that started no earlier than the leader are
// killed, so a recycled pid is never killed. Each hook's direct child also gets
// PR_SET_PDEATHSIG (SIGKILL) while a reaper runs, a second line of defence that needs
// no helper but reaches only that one process.
//
// Should the reaper die with the daemon (both SIGKILLed, the OOM killer), its record
// remains: the reaper appends every line it receives, with the leader's start time, to
// <state>/hook-groups.<its pid> (not synced: a crash of the machine ends the hooks as
// well). The next `hookd serve` replays every record whose reaper is gone, kills the
// groups it still finds (verified the same way) and removes the record.

// ReaperArg is the argument that makes hookd run as the group reaper (cmd/hookd).
const ReaperArg = "__hookd-group-reaper"

// GroupReaper is the daemon's end of the reaper: a pipe to the helper process.
type GroupReaper struct {
	fd      int
	w       *os.File
	cmd     *exec.Cmd
	dropped atomic.Uint64
}

var reaper atomic.Pointer[GroupReaper]

// StartGroupReaper starts exe (hookd) as the group reaper and makes every hook process
// started afterwards known to it; with stateDir set, the reaper keeps its record there
// (ReapRecorded). Close stops it (killing any group still tracked).
func StartGroupReaper(exe, stateDir string) (*GroupReaper, error) {
	r, w, err := os.Pipe() // O_CLOEXEC: no hook inherits the daemon's end
	if err != nil {
		return nil, err
	}
	args := []string{ReaperArg}
	if stateDir != "" {
		args = append(args, filepath.Join(stateDir, recordPrefix))
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin = r
	cmd.Stderr = os.Stderr // its few lines join the daemon's
	// Its own group, so a signal to the daemon's group does not take it along.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	r.Close()
	go func() { _ = cmd.Wait() }()
	g := &GroupReaper{w: w, cmd: cmd, fd: int(w.Fd())}
	// Fd() made the file blocking; the hot path must never wait for the reaper.
	if err := syscall.SetNonblock(g.fd, true); err != nil {
		w.Close()
		return nil, err
	}
	reaper.Store(g)
	return g, nil
}

// Pid is the reaper process's pid.
func (g *GroupReaper) Pid() int { return g.cmd.Process.Pid }

// Dropped counts track/untrack lines lost to a full pipe.
func (g *GroupReaper) Dropped() uint64 { return g.dropped.Load() }

// Close closes the pipe: the reaper kills the groups still tracked (none after a clean
// shutdown, which has stopped every hook) and exits.
func (g *GroupReaper) Close() error {
	reaper.CompareAndSwap(g, nil)
	return g.w.Close()
}

func (g *GroupReaper) send(op byte, pid int) {
	var b [24]byte
	line := strconv.AppendInt(append(b[:0], op), int64(pid), 10)
	line = append(line, '\n')
	// Below PIPE_BUF: atomic, so concurrent writers need no lock.
	if _, err := syscall.Write(g.fd, line); err != nil {
		g.dropped.Add(1)
	}
}

// trackGroup tells the reaper a hook process (its own group leader) started.
func trackGroup(pid int) {
	if g := reaper.Load(); g != nil {
		g.send('+', pid)
	}
}

// untrackGroup tells the reaper the hook's group is gone.
func untrackGroup(pid int) {
	if g := reaper.Load(); g != nil {
		g.send('-', pid)
	}
}

// reaperActive reports whether hooks started now are covered by a reaper (then they
// also get a parent-death signal).
func reaperActive() bool { return reaper.Load() != nil }

// waitExited blocks until the process pid has exited, without reaping it (WNOWAIT): its
// pid, and so its process group id, stay reserved until cmd.Wait reaps it.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// recordPrefix names a reaper's record in the state directory; its pid follows.
const recordPrefix = "hook-groups."

// RunReaper is the group reaper's main loop: it reads "+PID" / "-PID" lines until EOF,
// then kills the groups still tracked. With record set (a path prefix), it keeps its
// record at record+<its pid> (see ReapRecorded) and removes it at the end. It returns how
// many groups it killed.
func RunReaper(in io.Reader, record string, logf func(string, ...any)) int {
	groups := map[int]uint64{} // pgid → its leader's start time (clock ticks since boot)
	rec := openRecord(record, logf)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		pid, err := strconv.Atoi(line[1:])
		if err != nil || pid <= 1 {
			continue
		}
		switch line[0] {
		case '+':
			if st, _, err := procStat(pid); err == nil {
				groups[pid] = st
				rec.add(pid, st, groups)
			} // gone already: its "-" follows
		case '-':
			if _, ok := groups[pid]; ok {
				delete(groups, pid)
				rec.remove(pid, groups)
			}
		}
	}
	n := 0
	if len(groups) > 0 {
		n = killGroups(groups, logf)
	}
	rec.close()
	return n
}

// record is a reaper's file of live groups: "+PGID START" and "-PGID" lines, compacted
// to the live set now and then. A nil record does nothing.
type record struct {
	path  string
	f     *os.File
	lines int
}

func openRecord(prefix string, logf func(string, ...any)) *record {
	if prefix == "" {
		return nil
	}
	path := prefix + strconv.Itoa(os.Getpid())
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		if logf != nil {
			logf("cannot keep a record of hook groups (%v): they die with the daemon only while this reaper lives", err)
		}
		return nil
	}
	return &record{path: path, f: f}
}

func (r *record) add(pid int, start uint64, live map[int]uint64) {
	if r != nil {
		r.write(fmt.Sprintf("+%d %d\n", pid, start), live)
	}
}

func (r *record) remove(pid int, live map[int]uint64) {
	if r != nil {
		r.write(fmt.Sprintf("-%d\n", pid), live)
	}
}

func (r *record) write(line string, live map[int]uint64) {
	_, _ = r.f.WriteString(line)
	r.lines++
	if r.lines < 4096 || r.lines < 4*len(live) {
		return
	}
	// Compact: the live set alone, replacing the file atomically.
	var b strings.Builder
	for pid, st := range live {
		fmt.Fprintf(&b, "+%d %d\n", pid, st)
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return
	}
	if err := os.Rename(tmp, r.path); err != nil {
		return
	}
	if f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND, 0); err == nil {
		r.f.Close()
		r.f, r.lines = f, len(live)
	}
}

func (r *record) close() {
	if r != nil {
		r.f.Close()
		os.Remove(r.path)
	}
}

// ReapRecorded kills the hook groups recorded in stateDir by reapers that are gone
// (killed together with their daemon) and removes their records. `hookd serve` calls it
// once it owns its socket. It returns how many groups it killed.
func ReapRecorded(stateDir string, logf func(string, ...any)) int {
	paths, _ := filepath.Glob(filepath.Join(stateDir, recordPrefix+"*"))
	n := 0
	for _, path := range paths {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(path), recordPrefix))
		if err != nil {
			continue // a compaction's .tmp, or not ours
		}
		if cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); err == nil && strings.Contains(string(cmdline), ReaperArg) {
			continue // its reaper lives (another daemon's, or one still doing its work)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		groups := map[int]uint64{}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(strings.TrimLeft(line, "+-"))
			if len(line) < 2 || len(f) == 0 {
				continue
			}
			pg, err := strconv.Atoi(f[0])
			if err != nil || pg <= 1 {
				continue
			}
			switch {
			case line[0] == '+' && len(f) == 2:
				if st, err := strconv.ParseUint(f[1], 10, 64); err == nil {
					groups[pg] = st
				}
			case line[0] == '-':
				delete(groups, pg)
			}
		}
		if len(groups) > 0 {
			n += killGroups(groups, logf)
		}
		os.Remove(path)
	}
	return n
}

// killGroups kills each tracked group that still has a member started no earlier than
// its leader (the leader itself may be gone: a parent-death signal killed it).
func killGroups(groups map[int]uint64, logf func(string, ...any)) int {
	ents, _ := os.ReadDir("/proc")
	hit := map[int]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		start, pgrp, err := procStat(pid)
		if err != nil {
			continue
		}
		if leader, ok := groups[pgrp]; ok && start >= leader {
			hit[pgrp] = true
		}
	}
	for pgid := range hit {
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err == nil && logf != nil {
			logf("killed hook process group %d: its daemon is gone", pgid)
		}
	}
	return len(hit)
}

// procStat returns a process's start time (field 22 of /proc/PID/stat, clock ticks
// since boot) and its process group (field 5).
func procStat(pid int) (start uint64, pgrp int, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // comm may contain spaces and parentheses
	if i < 0 {
		return 0, 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return 0, 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	if pgrp, err = strconv.Atoi(f[2]); err != nil {
		return 0, 0, err
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	return start, pgrp, err
}
