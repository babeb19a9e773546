#!/usr/bin/env python3
"""CPU seconds per process, per session root, of everything a command ran (issue 26).

Runs COMMAND with the kernel's BSD process accounting on (acct(2), v3 records: needs root
and CONFIG_BSD_PROCESS_ACCT), then sums the user + system time of every process that exited
meanwhile by its nearest `claude` or `hookd` ancestor (a Claude Code session, or a hookd
daemon and the hooks it ran) and by command name:

    sudo test/bench/tools/acct-cpu.py -- env HOOKD_CORPUS_MODES=native,exec \\
        HOOKD_CORPUS_SETUPS=sensitive-canary HOOKD_CORPUS_PAIRS=3 HOOKD_CORPUS_DELAYS=0 \\
        go test -run '^$' -bench '^BenchmarkCorpus$' -benchtime 1x -v ./test/bench/

It answers what a session's rusage cannot: natively a hook's CPU is folded into Claude
Code's, through hookd into the daemon's tree. Accounting is system-wide (other users'
processes are recorded too and left out by the ancestry) and each record is truncated to
the kernel's 10 ms accounting tick, so a sum over many short processes (hookc, sh) reads
low by up to 10 ms per process. Accounting is switched off again on exit.
"""
import collections
import ctypes
import os
import struct
import subprocess
import sys
import tempfile

ROOTS = ("claude", "hookd")


def comp_t(c):
    # 13-bit mantissa, 3-bit base-8 exponent, in AHZ (100 Hz) ticks.
    return (c & 0x1FFF) << (3 * ((c >> 13) & 7))


def records(path):
    data = open(path, "rb").read()
    for i in range(0, len(data) - 63, 64):
        r = data[i : i + 64]
        if r[1] & 0x0F != 3:  # ac_version: only v3 records have pid and ppid
            continue
        (pid, ppid, btime) = struct.unpack_from("<III", r, 16)
        (utime, stime) = struct.unpack_from("<HH", r, 32)
        comm = r[48:64].split(b"\0")[0].decode(errors="replace")
        yield dict(pid=pid, ppid=ppid, btime=btime, cpu=(comp_t(utime) + comp_t(stime)) / 100.0, comm=comm)


def report(recs):
    bypid = {r["pid"]: r for r in recs}

    def root(r):
        for _ in range(32):
            if r["comm"] in ROOTS:
                return r
            r = bypid.get(r["ppid"])
            if r is None:
                return None
        return None

    agg = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0.0]))
    for r in recs:
        ro = root(r)
        if ro is not None:
            cell = agg[ro["pid"]][r["comm"]]
            cell[0] += 1
            cell[1] += r["cpu"]
    for pid in sorted(agg, key=lambda p: bypid[p]["btime"]):
        per = agg[pid]
        total = sum(c[1] for c in per.values())
        if total < 0.05:
            continue
        parts = ", ".join(f"{comm} {n}× {s:.2f}" for comm, (n, s) in sorted(per.items(), key=lambda kv: -kv[1][1]))
        print(f"{bypid[pid]['comm']} {pid}: {total:.2f} CPU-s ({parts})")


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        sys.exit(__doc__)
    libc = ctypes.CDLL(None, use_errno=True)
    fd, path = tempfile.mkstemp(prefix="acct-cpu-")
    os.close(fd)
    if libc.acct(path.encode()) != 0:
        sys.exit(f"acct({path}): {os.strerror(ctypes.get_errno())} (needs root and CONFIG_BSD_PROCESS_ACCT)")
    try:
        rc = subprocess.call(argv)
    finally:
        libc.acct(None)
    report(list(records(path)))
    os.unlink(path)
    sys.exit(rc)


if __name__ == "__main__":
    main()
