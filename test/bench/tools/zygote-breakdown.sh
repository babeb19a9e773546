#!/bin/bash
# zygote-breakdown.sh — where the time of one forked Python hook event goes, from hookc's
# exec to hookc's exit (issue 14; docs/zygote.md "Where the time goes").
#
# Usage (root; needs tracefs at /sys/kernel/tracing; a running `hookd serve` whose settings
# have a Python hook forked from a zygote on the event in PAYLOAD):
#   HOOKD_PID=<pid of hookd serve> PAYLOAD=<event JSON file> N=24 \
#     test/bench/tools/zygote-breakdown.sh [env VAR=… …] /path/to/hookc
# The command after the variables runs N times back to back with PAYLOAD on stdin. Kernel
# tracepoints (sched exec/fork/exit, a few syscalls) of hookd, its zygotes and their
# children, and of the hookc processes, are recorded with ftrace and cut into stages; the
# script prints the median of each stage over the N events. Tracing costs little (no
# ptrace), but on a loaded machine every stage includes waiting for a CPU.
set -euo pipefail
: "${HOOKD_PID:?}" "${PAYLOAD:?}"
N=${N:-24}
T=/sys/kernel/tracing
OUT=$(mktemp)
trap 'echo 0 > $T/tracing_on; echo 0 > $T/events/enable; echo > $T/set_event_pid; echo 0 > $T/options/event-fork; echo > $T/trace; rm -f $OUT' EXIT
echo 0 > $T/tracing_on; echo > $T/trace; echo 4096 > $T/buffer_size_kb; echo 1 > $T/options/event-fork
echo "$HOOKD_PID $(pgrep -P "$HOOKD_PID" | tr '\n' ' ') $$ $(ls /proc/$HOOKD_PID/task | tr '\n' ' ')" > $T/set_event_pid
for e in sched/sched_process_fork sched/sched_process_exec sched/sched_process_exit \
  syscalls/sys_enter_connect syscalls/sys_enter_sendmsg syscalls/sys_exit_recvmsg syscalls/sys_enter_sendto \
  syscalls/sys_exit_fdatasync syscalls/sys_enter_exit_group syscalls/sys_enter_write syscalls/sys_exit_read \
  syscalls/sys_enter_clone; do echo 1 > $T/events/$e/enable; done
echo 1 > $T/tracing_on
for i in $(seq "$N"); do
  echo "MARK-$i" > $T/trace_marker
  "$@" < "$PAYLOAD" > /dev/null
  echo "END-$i" > $T/trace_marker
done
echo 0 > $T/tracing_on
cat $T/trace > "$OUT"
[ -n "${KEEP:-}" ] && cp "$OUT" "$KEEP"
python3 - "$OUT" <<'PY'
import re, sys, statistics
pat = re.compile(r'^\s*(\S+)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (.*)$')
ev, cur = [], None
for l in open(sys.argv[1]):
    m = pat.match(l)
    if not m: continue
    comm, pid, ts, rest = m.group(1), int(m.group(2)), float(m.group(3)) * 1000, m.group(4)
    if 'tracing_mark_write: MARK' in rest: cur = []; continue
    if 'tracing_mark_write: END' in rest: ev.append(cur); cur = None; continue
    if cur is not None: cur.append((ts, comm, pid, rest))
stages = ["hookc exec → connect (hookc start-up)",
 "connect → request sent to the zygote (hookd: read, decode, match, settings, pipes)",
 "zygote: request → pid sent (decode, script stat/read/sha256, shadow check, take a spare)",
 "pid sent → event handed to the child", "hand-off → child has it",
 "child: setup (dup2, env, argv, stdio, __main__, random) → reads stdin",
 "child: stdin read → exit (the guard itself, atexit, flush)",
 "child exit → zygote sends the exit code (reap)",
 "exit code → decision record durable (write, fsync log, fdatasync head)",
 "record → answer written", "answer → hookc exited"]
rows = {s: [] for s in stages}; tot = []; forks = 0
for e in ev:
    def first(pred, after=0):
        for t in e:
            if t[0] >= after and pred(t): return t[0]
        raise ValueError("missing")
    try:
        t0 = first(lambda t: 'sched_process_exec' in t[3] and 'hookc' in t[3])
        t1 = first(lambda t: t[1] == 'hookc' and 'sys_connect(' in t[3], t0)
        t2 = first(lambda t: t[1] == 'hookd' and 'sys_sendmsg(' in t[3], t1)
        zpid = [t for t in e if t[0] >= t2 and 'sys_recvmsg ->' in t[3] and t[1] != 'hookd'][0][2]
        t3 = first(lambda t: t[2] == zpid and 'sys_sendto(' in t[3], t2)
        t4 = first(lambda t: t[2] == zpid and 'sys_sendmsg(' in t[3], t3)
        c = [t for t in e if t[2] != zpid and t[1] != 'hookd' and 'sys_recvmsg ->' in t[3] and t[0] >= t4][0]
        t5, cpid = c[0], c[2]
        t6 = first(lambda t: t[2] == cpid and 'sys_read -> 0x' in t[3] and not t[3].endswith(('0x0', '0x1')), t5)
        t7 = first(lambda t: t[2] == cpid and 'sys_exit_group' in t[3], t6)
        t8 = first(lambda t: t[2] == zpid and 'sys_sendto(' in t[3], t7)
        try: t9 = first(lambda t: t[1] == 'hookd' and 'sys_fdatasync -> ' in t[3], t8)
        except ValueError: t9 = t8
        t10 = first(lambda t: t[1] == 'hookd' and 'sys_write(' in t[3] and 'count: 0x8)' not in t[3], t9)
        t11 = max(t[0] for t in e if 'sched_process_exit' in t[3] and t[1] == 'hookc')
        forks += any(t[2] == zpid and 'sys_clone(' in t[3] and t2 <= t[0] <= t3 for t in e)
    except (ValueError, IndexError):
        continue  # e.g. an event that was not forked
    for s, a, b in zip(stages, [t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10], [t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11]):
        rows[s].append(b - a)
    tot.append(t11 - t0)
print("%d forked events (%d forked a child on the event's path: no spare ready)" % (len(tot), forks))
print("| stage | median |\n|---|---:|")
for s in stages: print("| %s | %.1f ms |" % (s, statistics.median(rows[s])))
print("| **hookc exec → hookc exit** | **%.1f ms** |" % statistics.median(tot))
PY
