// Package reaper makes sure hooks' process groups end with the daemon, however it dies:
// the group reaper, a helper process the daemon starts once (Start, Run), which it tells
// of every hook group as it starts and ends (Track, Untrack), and the records a dead
// reaper leaves for the next daemon (ReapRecorded). Split out of package runner, which
// starts the hooks; the design follows.
package reaper

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

	"github.com/hookd/hookd/daemon/runner/osproc"
)

// Process hygiene (issue 13, defect 8; issue 28, item 1).
//
// What hookd kills is always named by something a recycled pid cannot forge (package
// proc, docs/reliability.md "What hookd kills, reaps and trusts"):
//
//   - When a hook it started exits, its process group is killed (unless
//     ProcSpec.KeepGroup) after the exit and before the reap (osproc.Child): while the
//     hook's own process is an unreaped zombie, its pid — and so its group's number — is
//     nobody else's. A timeout or a cancellation kills the group while the process is
//     alive; nothing is signalled after the reap. A hook left `sleep 300 &` behind used to
//     leave it running for ever (55 of 55 survived).
//   - A hook forked from a zygote is the zygote's child, not ours: the zygote kills its
//     group before it reaps it, and hookd holds a pidfd for it (package zygote).
//
// When the daemon dies — even by SIGKILL, which runs no code of ours — its hooks' groups
// are killed by the group reaper: one small helper process started once with the daemon
// (`hookd` itself, re-executed; nothing is exec'ed per hook). The daemon tells it each
// hook's group as the hook starts and ends, one short line on a pipe each ("+PID START",
// "-PID": a non-blocking write of a few bytes; a full pipe drops the line and counts it).
// START is the leader's start time, read by the daemon while it can prove the pid is the
// hook's (its unreaped child, or a live pidfd). When its end of the pipe reports EOF — the
// kernel closes the daemon's end when the daemon dies, however it dies; no parent-death
// signal is involved, so the same code serves macOS — the reaper kills every group it
// still tracks and exits. The reaper opens a pidfd for each leader when it learns of it
// (and checks the start time through it): on Linux ≥ 6.9 the kill goes through that pidfd
// to the group as the kernel's object, so a group whose leader already died is still
// found and a recycled number never is; elsewhere the group is killed only while its
// leader is provably alive (pidfd, or the start time on macOS).
//
// Should the reaper die with the daemon (both SIGKILLed, the OOM killer), its record
// remains: the reaper writes every line it receives, with the leader's start time and
// the boot's identity (osproc.BootID), to <state>/hook-groups.<its pid>.<its start time>
// (not synced: a crash of the machine ends the hooks as well). The next `hookd serve`
// replays every record whose reaper is gone: a group is killed only if its leader still
// runs with the recorded start time in the same boot — the hook's own process; otherwise
// nothing is done (a recycled pid never matches). Hook processes get no parent-death
// signal for that reason: it would kill the one process that proves whose group it is.

// Arg is the argument that makes hookd run as the group reaper (cmd/hookd).
const Arg = "__hookd-group-reaper"

// Reaper is the daemon's end of the reaper: a pipe to the helper process.
type Reaper struct {
	fd      int
	w       *os.File
	cmd     *exec.Cmd
	dropped atomic.Uint64
}

var reaper atomic.Pointer[Reaper]

// Start starts exe (hookd) as the group reaper and makes every hook process
// started afterwards known to it; with stateDir set, the reaper keeps its record there
// (ReapRecorded). Close stops it (killing any group still tracked).
func Start(exe, stateDir string) (*Reaper, error) {
	r, w, err := os.Pipe() // O_CLOEXEC: no hook inherits the daemon's end
	if err != nil {
		return nil, err
	}
	args := []string{Arg}
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
	g := &Reaper{w: w, cmd: cmd, fd: int(w.Fd())}
	// Fd() made the file blocking; the hot path must never wait for the reaper.
	if err := syscall.SetNonblock(g.fd, true); err != nil {
		w.Close()
		return nil, err
	}
	reaper.Store(g)
	return g, nil
}

// Pid is the reaper process's pid.
func (g *Reaper) Pid() int { return g.cmd.Process.Pid }

// Dropped counts track/untrack lines lost to a full pipe.
func (g *Reaper) Dropped() uint64 { return g.dropped.Load() }

// Close closes the pipe: the reaper kills the groups still tracked (none after a clean
// shutdown, which has stopped every hook) and exits.
func (g *Reaper) Close() error {
	reaper.CompareAndSwap(g, nil)
	return g.w.Close()
}

func (g *Reaper) send(line []byte) {
	// Below PIPE_BUF: atomic, so concurrent writers need no lock.
	if _, err := syscall.Write(g.fd, line); err != nil {
		g.dropped.Add(1)
	}
}

// Track tells the reaper that a hook's process group started, led by pid. The
// caller must know pid is the hook's at this moment: its own unreaped child (alive nil),
// or a process it holds a handle to, whose alive reports whether it is still there —
// checked after the start time was read, so the start time is the hook's.
func Track(pid int, alive func() bool) {
	g := reaper.Load()
	if g == nil {
		return
	}
	start, err := osproc.StartTime(pid)
	if err != nil || alive != nil && !alive() {
		return // gone already: nothing to track
	}
	var b [48]byte
	line := strconv.AppendInt(append(b[:0], '+'), int64(pid), 10)
	line = strconv.AppendUint(append(line, ' '), start, 10)
	g.send(append(line, '\n'))
}

// Untrack tells the reaper the hook's group is gone.
func Untrack(pid int) {
	if g := reaper.Load(); g != nil {
		var b [24]byte
		g.send(append(strconv.AppendInt(append(b[:0], '-'), int64(pid), 10), '\n'))
	}
}

// recordPrefix names a reaper's record in the state directory; its pid and start time
// follow.
const recordPrefix = "hook-groups."

// leader is a tracked group: its leader's start time and, where the system has them, a
// pidfd for it.
type leader struct {
	start uint64
	h     osproc.Handle
}

// Run is the group reaper's main loop: it reads "+PID START" / "-PID" lines until
// EOF, then kills the groups still tracked. With record set (a path prefix), it keeps its
// record at record+<its pid>.<its start time> (see ReapRecorded) and removes it at the
// end. It returns how many groups it killed.
func Run(in io.Reader, record string, logf func(string, ...any)) int {
	groups := map[int]leader{}
	rec := openRecord(record, logf)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(line) < 2 || len(f) == 0 {
			continue
		}
		pid, err := strconv.Atoi(f[0][1:])
		if err != nil || pid <= 1 {
			continue
		}
		switch line[0] {
		case '+':
			if len(f) != 2 {
				continue
			}
			start, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				continue
			}
			if old, ok := groups[pid]; ok {
				old.h.Close()
			}
			if h, ok := prove(pid, start); ok {
				groups[pid] = leader{start: start, h: h}
				rec.add(pid, start, groups)
			} // gone already (its group was killed at its exit): its "-" follows
		case '-':
			if l, ok := groups[pid]; ok {
				l.h.Close()
				delete(groups, pid)
				rec.remove(pid, groups)
			}
		}
	}
	n := 0
	for pid, l := range groups {
		if killLeaderGroup(pid, l) {
			n++
			if logf != nil {
				logf("killed hook process group %d: its daemon is gone", pid)
			}
		}
		l.h.Close()
	}
	rec.close()
	return n
}

// prove opens a handle to pid (where the system has pidfds) and checks that the process
// it names started at start: then it is the hook's leader, and stays identified by the
// handle. Without pidfds the handle is empty and the start time is checked again before
// any kill.
func prove(pid int, start uint64) (osproc.Handle, bool) {
	h, _ := osproc.OpenHandle(pid)
	st, err := osproc.StartTime(pid)
	if err != nil || st != start || h.Valid() && !h.Alive() {
		h.Close()
		return osproc.NoHandle, false
	}
	return h, true
}

// killLeaderGroup kills the group l's leader led, if that can be proven to be the hook's:
// through the pidfd on Linux ≥ 6.9 (whether or not the leader is still alive); else only
// while the leader is alive — its pidfd still live, or (macOS) its start time unchanged,
// checked right before the kill.
func killLeaderGroup(pid int, l leader) bool {
	if l.h.Valid() {
		err := l.h.KillGroup()
		if err == nil {
			return true
		}
		if !errors.Is(err, osproc.ErrUnsupported) || !l.h.Alive() {
			return false // ESRCH: no member left
		}
	} else if st, err := osproc.StartTime(pid); err != nil || st != l.start {
		return false
	}
	return syscall.Kill(-pid, syscall.SIGKILL) == nil
}

// record is a reaper's file of live groups: a "boot ID" line, then "+PGID START" and
// "-PGID" lines, compacted to the live set now and then. A nil record does nothing.
type record struct {
	path  string
	f     *os.File
	lines int
}

func openRecord(prefix string, logf func(string, ...any)) *record {
	if prefix == "" {
		return nil
	}
	self, _ := osproc.StartTime(os.Getpid())
	path := prefix + strconv.Itoa(os.Getpid()) + "." + strconv.FormatUint(self, 10)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o600)
	if err == nil {
		_, err = f.WriteString("boot " + osproc.BootID() + "\n")
	}
	if err != nil {
		if logf != nil {
			logf("cannot keep a record of hook groups (%v): they die with the daemon only while this reaper lives", err)
		}
		if f != nil {
			f.Close()
			os.Remove(path)
		}
		return nil
	}
	return &record{path: path, f: f}
}

func (r *record) add(pid int, start uint64, live map[int]leader) {
	if r != nil {
		r.write(fmt.Sprintf("+%d %d\n", pid, start), live)
	}
}

func (r *record) remove(pid int, live map[int]leader) {
	if r != nil {
		r.write(fmt.Sprintf("-%d\n", pid), live)
	}
}

func (r *record) write(line string, live map[int]leader) {
	_, _ = r.f.WriteString(line)
	r.lines++
	if r.lines < 4096 || r.lines < 4*len(live) {
		return
	}
	// Compact: the live set alone, replacing the file atomically.
	var b strings.Builder
	b.WriteString("boot " + osproc.BootID() + "\n")
	for pid, l := range live {
		fmt.Fprintf(&b, "+%d %d\n", pid, l.start)
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
// (killed together with their daemon) and removes their records. A group is killed only
// when its leader still runs, in the boot the record was written in, with the recorded
// start time; otherwise nothing is done. `hookd serve` calls it once it owns its socket.
// It returns how many groups it killed.
func ReapRecorded(stateDir string, logf func(string, ...any)) int {
	paths, _ := filepath.Glob(filepath.Join(stateDir, recordPrefix+"*"))
	n := 0
	for _, path := range paths {
		pidS, startS, hasStart := strings.Cut(strings.TrimPrefix(filepath.Base(path), recordPrefix), ".")
		pid, err := strconv.Atoi(pidS)
		if err != nil {
			continue // not ours
		}
		if !hasStart {
			// A record of an older hookd (no start time, no boot): it cannot prove
			// anything. Removed once its reaper's pid is free.
			if st, err := osproc.StartTime(pid); err != nil || !osproc.Running(pid, st) {
				os.Remove(path)
			}
			continue
		}
		start, err := strconv.ParseUint(startS, 10, 64)
		if err != nil {
			continue // a compaction's .tmp
		}
		if osproc.Running(pid, start) {
			continue // its reaper lives (another daemon's, or one still doing its work)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		if boot, ok := strings.CutPrefix(lines[0], "boot "); !ok || boot == "" || boot != osproc.BootID() {
			os.Remove(path) // another boot's processes are all gone
			continue
		}
		groups := map[int]uint64{}
		for _, line := range lines[1:] {
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
		for pg, st := range groups {
			h, ok := prove(pg, st)
			if !ok {
				continue // the leader is gone: whatever has its pid now is not the hook
			}
			if killLeaderGroup(pg, leader{start: st, h: h}) {
				n++
				if logf != nil {
					logf("killed hook process group %d: its daemon and reaper are gone", pg)
				}
			}
			h.Close()
		}
		os.Remove(path)
	}
	return n
}
