# hookd Python zygote (docs/zygote.md). Started by hookd as
#     PYTHON [options] -c <this file> ; fd 3 = a SOCK_SEQPACKET socket to hookd
# It never runs hook code itself: it imports modules, waits, and per event hands the event
# to a child that turns itself into `PYTHON [options] SCRIPT ARGS`. The child is forked
# ahead of the event (a "spare", replenished after use), so the fork and the child's
# after-fork work are off the event's path. Everything here is single-threaded.
# Messages are one JSON object per packet; a "run" request carries the event's stdin,
# stdout and stderr as SCM_RIGHTS file descriptors.
_main_initial = dict(globals())  # __main__ as the interpreter created it, before our names


def _zygote():
    import os, sys, json, socket, selectors, select, hashlib, io, array, gc

    if not hasattr(os, "pidfd_open"):
        # No way to wait for one child without a SIGCHLD handler: refuse; hookd runs cold.
        os.write(2, b"hookd zygote: os.pidfd_open unavailable\n")
        os._exit(3)
    # -c put '' (the cwd) first on sys.path; a cold `python SCRIPT` has the script's
    # directory there instead, set per child below. Pre-imports must not see the cwd.
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    baseline = set(sys.modules)
    inherited_fds = {int(n) for n in os.listdir("/proc/self/fd")} - {3}
    orig_argv0 = list(sys.orig_argv[:1])
    start_environ = [k + "=" + v for k, v in os.environ.items()]
    base_path = list(sys.path)
    stdio_model = []
    for s in (sys.stdin, sys.stdout, sys.stderr):
        stdio_model.append((s.encoding, s.errors, s.line_buffering, s.write_through, hasattr(s.buffer, "raw")))
    try:
        from importlib.machinery import SourceFileLoader
    except Exception:
        SourceFileLoader = None
    stdlib = set(getattr(sys, "stdlib_module_names", ()))
    # Modules whose import does something visible (opens a browser, prints, touches the
    # terminal) or that only tests and tools use: never pre-imported.
    never = {"antigravity", "this", "__hello__", "__phello__", "tkinter", "turtle", "turtledemo",
             "idlelib", "pydoc", "test", "lib2to3", "ensurepip", "venv", "webbrowser", "readline",
             "curses", "rlcompleter", "pdb", "code", "site", "sitecustomize", "usercustomize", "__main__"}

    sock = socket.socket(fileno=3)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ, None)
    children = {}  # pidfd -> (request id, pid)
    spares = []  # (pid, zygote's socket end, pidfd, clean): forked children waiting for an event
    global_peak = [1]  # most children seen running at once: how many spares to keep
    last_run = [None]  # (request bytes, request) of the last event, for rehearse()
    unrehearsed = [False]  # forked since the last rehearse()
    MAX_SPARES = 4
    # A SOCK_SEQPACKET message must fit the socket's send buffer (net.core.wmem_default,
    # 208 KiB on Linux); hookd's own request to us is bounded the same way.
    MAX_HANDOFF = 160 << 10
    fdsize = array.array("i").itemsize
    code_cache = {}  # path -> (ino, mtime_ns, size, sha256, code object)

    # Pre-faulting (docs/zygote.md, "Pre-faulting"). A child's writes after the fork each
    # take a copy-on-write fault, tens of microseconds apiece on this kind of VM; a spare
    # that asks the kernel to populate those pages writable in one madvise(2) per range
    # (MADV_POPULATE_WRITE, Linux 5.14) pays several times less per page, before its
    # event. Which pages: what a recent child had made its own by the time it finished
    # (learned below). Without ctypes or on an older kernel nothing is populated: it only
    # costs speed.
    madvise = None
    try:
        import ctypes
        madvise = ctypes.CDLL(None, use_errno=True).madvise
        madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        madvise.restype = ctypes.c_int
    except Exception:  # noqa: BLE001 - no ctypes, no libc symbol: no pre-faulting
        madvise = None
    MADV_POPULATE_WRITE = 23
    MAX_HOT_PAGES = 4096  # 16 MiB of private copies per spare at most, whatever a child reports
    MAX_HOT_RANGES = 2000  # a learner's message stays under 32 KiB: a pipe write never blocks
    LEARN_EVERY = 32  # besides after a new script version, every Nth event re-learns
    hot = []  # [(address, pages)] a spare populates
    learn_r, learn_w = os.pipe()  # a learner child reopens learn_w through /proc; not inherited
    os.set_blocking(learn_r, False)
    learner = [None]  # pid of the child asked to report its pages, until it is reaped
    # Only a "clean" spare (one that populated nothing) learns: a populated spare owns the
    # pages it populated whether its hook wrote them or not, and the list would only grow.
    want_learn = [False]  # the next spare forked is clean, to learn from
    since_learn = [0]  # events since the last learner
    seen_versions = set()  # (path, sha256) of scripts served: a new one is learned
    prefault_on = [True]  # hookd's "prefault" field of the latest run request

    def send(obj):
        sock.send(json.dumps(obj, separators=(",", ":")).encode())

    def imports_of(source, path):
        """Top-level absolute imports of a module (module body, if/try/with blocks)."""
        tree = compile(source, path, "exec", 0x400, dont_inherit=True)  # PyCF_ONLY_AST
        out = []
        stack = list(tree.body)
        while stack:
            n = stack.pop()
            t = type(n).__name__
            if t == "Import":
                out += [a.name for a in n.names]
            elif t == "ImportFrom" and not n.level and n.module:
                out.append(n.module)
                out += [n.module + "." + a.name for a in n.names if a.name != "*"]
            elif t in ("If", "Try", "TryStar", "With"):
                for f in ("body", "orelse", "finalbody", "handlers"):
                    for c in getattr(n, f, ()) or ():
                        stack.extend(c.body if type(c).__name__ == "ExceptHandler" else [c])
        return out

    def preload(names, configured):
        done = []
        for name in names:
            top = name.partition(".")[0]
            if top in never or not (top in stdlib or name in configured):
                continue
            if name in sys.modules:
                continue
            try:
                __import__(name)
                done.append(name)
            except BaseException:  # noqa: BLE001 - e.g. `from os import path` names no module
                pass
        return done

    def read_script(path):
        """(code, None) for path as it is now, compiled at most once per version."""
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            data = f.read()
        digest = hashlib.sha256(data).digest()
        c = code_cache.get(path)
        if c and c[:4] == (st.st_ino, st.st_mtime_ns, st.st_size, digest):
            return c[4], data, digest
        code = compile(data, path, "exec", dont_inherit=True)
        code_cache[path] = (st.st_ino, st.st_mtime_ns, st.st_size, digest, code)
        return code, data, digest

    def code_for(req):
        """In a child: the code object of the script version the zygote checked. A spare
        forked before the zygote compiled it (first event, or an edit) compiles it itself,
        from the file, if the file still has the checked bytes."""
        c = code_cache.get(req["abs"])
        if c and c[3].hex() == req["digest"]:
            return c[4]
        with open(req["abs"], "rb") as f:
            data = f.read()
        if hashlib.sha256(data).hexdigest() != req["digest"]:
            raise RuntimeError("script changed while the event started")
        return compile(data, req["abs"], "exec", dont_inherit=True)

    def shadowed(scriptdir):
        """Names we pre-imported that a module in the script's directory would shadow in a
        cold run (where that directory is sys.path[0])."""
        try:
            entries = os.listdir(scriptdir)
        except OSError:
            return []
        ours = {m.partition(".")[0] for m in sys.modules} - {m.partition(".")[0] for m in baseline}
        return sorted({e.partition(".")[0] for e in entries} & ours)

    def threads_running():
        th = sys.modules.get("threading")
        return th is not None and th.active_count() > 1

    def make_stream(fd, write, model, name):
        enc, errors, line_buffering, write_through, buffered = model
        if write:
            buf = io.open(fd, "wb", -1 if buffered else 0, closefd=False)
        else:
            buf = io.open(fd, "rb", -1, closefd=False)
        raw = buf.raw if hasattr(buf, "raw") else buf
        raw.name = name
        s = io.TextIOWrapper(buf, encoding=enc, errors=errors, newline="\n",
                             line_buffering=line_buffering or raw.isatty(), write_through=write_through)
        s.mode = "w" if write else "r"
        return s

    def spare_main(cs, clean):
        # A spare: forked before its event. Drop every descriptor of the zygote's, warm the
        # pages the per-event setup touches (their copy-on-write faults happen now, not
        # while an event waits), then wait for the event. EOF (the zygote ended, or retired
        # this spare) means no event: exit without running anything.
        try:
            sock.close()
            sel.close()
            for pfd in list(children) + [sp[2] for sp in spares]:
                os.close(pfd)
            for sp in spares:
                sp[1].close()
            # Anything else the zygote had open at the fork (an event's descriptors while it
            # was being handed over) is not ours either; what the zygote inherited at start
            # is, as a cold process would inherit it.
            for name in os.listdir("/proc/self/fd"):
                fd = int(name)
                if fd not in inherited_fds and fd != cs.fileno():
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            populated = populate(hot) if prefault_on[0] and not clean else 0
            warm_setup()
            with open("/proc/self/stat", "rb") as f:  # minor faults so far: hookd's counters
                ready_minflt = int(f.read().rpartition(b")")[2].split()[7])
        except BaseException:  # noqa: BLE001
            os._exit(127)
        try:
            msg, anc, _, _ = cs.recvmsg(1 << 20, socket.CMSG_SPACE(8 * fdsize))
        except BaseException:  # noqa: BLE001
            os._exit(127)
        fds = []
        for level, typ, data in anc:
            if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(data[: len(data) - len(data) % fdsize])
                fds += list(a)
        if not msg or len(fds) != 4:
            os._exit(127)
        cs.close()
        child(json.loads(msg), fds, populated, ready_minflt)
        os._exit(127)  # not reached

    def writable_maps():
        """(start, end) of this process's private writable mappings, the stack excepted."""
        out = []
        with open("/proc/self/maps", "rb") as f:
            for line in f.read().splitlines():
                p = line.split()
                if len(p) < 5 or p[1][1:2] != b"w" or p[1][3:4] != b"p":
                    continue
                if len(p) > 5 and p[5] == b"[stack]":
                    continue  # grows and shrinks; a few pages, already the child's own
                lo, _, hi = p[0].partition(b"-")
                out.append((int(lo, 16), int(hi, 16)))
        return out

    def populate(ranges):
        """In a spare: MADV_POPULATE_WRITE each learned range, clipped to the private
        writable mappings it has now, at most MAX_HOT_PAGES pages. Returns the pages
        populated. Contents do not change; a range that is gone, read-only or shared is
        skipped; any failure just stops (an old kernel says EINVAL)."""
        if madvise is None or not ranges:
            return 0
        maps = writable_maps()
        done = budget = 0
        for addr, pages in ranges:
            end = addr + (pages << 12)
            for lo, hi in maps:
                a, b = max(lo, addr), min(hi, end)
                if a >= b:
                    continue
                b = min(b, a + ((MAX_HOT_PAGES - budget) << 12))
                budget += (b - a) >> 12
                if madvise(a, b - a, MADV_POPULATE_WRITE) != 0:
                    return done
                done += (b - a) >> 12
                if budget >= MAX_HOT_PAGES:
                    return done
        return done

    OWN = bytes(1 if b & 0x81 == 0x81 else 0 for b in range(256))  # pagemap entry's top byte -> owned
    TOP = 7 if sys.byteorder == "little" else 0  # where an entry's top byte is
    MAX_SCAN = 1 << 16  # pagemap entries a learner reads at most (256 MiB of mappings)

    def learn_pages(path):
        """In a finished child: the pages it owns alone (present and mapped once — pagemap
        bits 63 and 56): the ones it copied or allocated since the fork. Written, coalesced
        into ranges, to the zygote's learning pipe, reopened through /proc (the hook never
        had a descriptor of ours). Failures are ignored: it only costs speed."""
        try:
            ranges = []
            budget = MAX_SCAN
            fd = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
            try:
                for lo, hi in writable_maps():
                    # Each entry's top byte, mapped to 1 when bits 63 and 56 are set; runs
                    # of 1 found with bytes.find: the scan runs in C, bounded.
                    n = min((hi - lo) >> 12, budget)
                    budget -= n
                    flags = os.pread(fd, n * 8, (lo >> 12) * 8)[TOP::8].translate(OWN)
                    i = flags.find(1)
                    while i >= 0:
                        j = flags.find(0, i)
                        if j < 0:
                            j = len(flags)
                        ranges += (lo + (i << 12), j - i)
                        i = flags.find(1, j)
                    if budget <= 0:
                        break
            finally:
                os.close(fd)
            out = array.array("Q", [0x504b48, os.getpid(), len(ranges) // 2] + ranges[: 2 * MAX_HOT_RANGES])
            out[2] = (len(out) - 3) // 2
            w = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                os.write(w, out.tobytes())
            finally:
                os.close(w)
        except BaseException:  # noqa: BLE001
            pass

    def take_learned(pid):
        """In the zygote, once the learner pid has exited: its ranges become the hot list."""
        data = b""
        while True:
            try:
                b = os.read(learn_r, 1 << 16)
            except (BlockingIOError, InterruptedError):
                break
            if not b:
                break
            data += b
        set_hot(data, pid)

    def set_hot(data, pid):
        """A learner's message becomes the hot list. It is untrusted (the hook could have
        written anything to the pipe it can reopen, so can any process of the user): it
        is bounded and checked here, and populate() only ever clips it to mappings."""
        hot[:] = []  # a bad message leaves nothing to populate
        if len(data) < 24 or len(data) % 8 or len(data) > 24 + 16 * MAX_HOT_RANGES:
            return
        a = array.array("Q")
        a.frombytes(data)
        if a[0] != 0x504b48 or (pid is not None and a[1] != pid) or len(a) != 3 + 2 * a[2]:
            return
        ranges, pages = [], 0
        for i in range(3, len(a), 2):
            addr, n = a[i], a[i + 1]
            if addr & 0xFFF or not 0 < n <= MAX_HOT_PAGES or pages >= MAX_HOT_PAGES:
                continue
            n = min(n, MAX_HOT_PAGES - pages)
            ranges.append((addr, n))
            pages += n
        hot[:] = ranges

    def warm_setup():
        r, w = os.pipe()
        try:
            for fd, write, model in ((r, False, stdio_model[0]), (w, True, stdio_model[1]), (w, True, stdio_model[2])):
                make_stream(fd, write, model, "<warm>").detach()
        finally:
            os.close(r)
            os.close(w)
        m = type(sys)("__main__")
        m.__dict__.update(_main_initial)
        if SourceFileLoader is not None:
            SourceFileLoader("__main__", "/")
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(saved)
        json.loads(json.dumps({"warm": [1, 2.5, None, True, "x"]}))
        import random
        random.seed()

    def child(req, fds, populated, ready_minflt):
        # fds: the event's stdin, stdout, stderr, and hookd's socket (for a setup error).
        hsock = socket.socket(fileno=fds[3])
        fds = fds[:3]
        try:
            for i, fd in enumerate(fds):
                os.dup2(fd, i, inheritable=True)
            for fd in fds:
                if fd > 2:
                    os.close(fd)
            code = code_for(req)
            os.chdir(req["cwd"])
            env = req["env"]
            os.environ.clear()
            for kv in env:
                k, _, v = kv.partition("=")
                os.environ[k] = v
            sys.argv = [req["script"]] + req["args"]
            sys.orig_argv = orig_argv0 + req["options"] + sys.argv
            sys.path[:] = [req["path0"]] + base_path
            import importlib
            importlib.invalidate_caches()
            sys.stdin = sys.__stdin__ = make_stream(0, False, stdio_model[0], "<stdin>")
            sys.stdout = sys.__stdout__ = make_stream(1, True, stdio_model[1], "<stdout>")
            sys.stderr = sys.__stderr__ = make_stream(2, True, stdio_model[2], "<stderr>")
            main = type(sys)("__main__")
            d = main.__dict__
            d.clear()
            for k, v in _main_initial.items():
                if k == "__annotations__":
                    v = {}
                d[k] = v
            path = req["abs"]
            d["__file__"] = path
            d["__cached__"] = None
            if SourceFileLoader is not None:
                d["__loader__"] = SourceFileLoader("__main__", path)
            sys.modules["__main__"] = main
            import random
            random.seed()
            # For hookd's counters (it has had the pid, so this comes after it): the pages
            # this child's spare pre-faulted, and its minor faults when it was ready.
            hsock.send(b'{"id":%d,"populated":%d,"ready_minflt":%d}' % (req["id"], populated, ready_minflt))
            hsock.close()
        except BaseException as e:  # noqa: BLE001
            try:
                hsock.send(json.dumps({"id": req["id"], "setup_error": repr(e)}).encode())
            finally:
                os._exit(127)
        exit_code = 0
        try:
            exec(code, d)
        except SystemExit as e:
            exit_code = _system_exit_code(e)
        except BaseException as e:  # noqa: BLE001 - mirrors the interpreter's own handler
            exit_code = 1
            tb = e.__traceback__
            tb = tb.tb_next if tb is not None else None  # drop this frame: the hook's own start
            try:
                sys.excepthook(type(e), e.with_traceback(tb), tb)
            except BaseException:  # noqa: BLE001
                pass
            if isinstance(e, KeyboardInterrupt):
                exit_code = -2
        exit_code = _finalize(exit_code)
        if req.get("learn"):
            learn_pages(req["learn"])
        os._exit(exit_code)

    def _system_exit_code(e):
        c = e.code
        if c is None:
            return 0
        if isinstance(c, int):
            return c & 0xFF if -(2**31) <= c < 2**31 else 255
        try:
            sys.stderr.write(str(c) + "\n")
        except BaseException:  # noqa: BLE001
            pass
        return 1

    def _finalize(exit_code):
        # What Py_FinalizeEx does that a hook can see: wait for non-daemon threads, run
        # atexit callbacks, flush stdout and stderr (a failed stdout flush exits 120).
        th = sys.modules.get("threading")
        if th is not None:
            try:
                th._shutdown()
            except BaseException:  # noqa: BLE001
                pass
        try:
            import atexit
            atexit._run_exitfuncs()
        except SystemExit as e:
            exit_code = _system_exit_code(e)
        except BaseException:  # noqa: BLE001
            pass
        for s in (sys.stdout, sys.stderr):
            try:
                s.flush()
            except BaseException as e:  # noqa: BLE001
                if s is sys.stdout:
                    try:
                        sys.stderr.write("Exception ignored on flushing sys.stdout:\n%s: %s\n" % (type(e).__name__, e))
                        sys.stderr.flush()
                    except BaseException:  # noqa: BLE001
                        pass
                    if exit_code == 0:
                        exit_code = 120
        if exit_code == -2:
            import signal
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
            exit_code = 130
        return exit_code

    def run(req, fds):
        rid = req["id"]
        if len(fds) != 3:
            return send({"id": rid, "fallback": "expected 3 file descriptors, got %d" % len(fds)})
        if threads_running():
            return send({"id": rid, "fallback": "threads running in the zygote"})
        script = req["script"]
        req["abs"] = script if os.path.isabs(script) else os.path.join(os.path.realpath(req["cwd"]), script)
        req["path0"] = os.path.dirname(os.path.realpath(req["abs"]))
        try:
            _, _, digest = read_script(req["abs"])
        except SyntaxError as e:
            return send({"id": rid, "fallback": "does not compile: %s" % e})
        except (OSError, ValueError) as e:
            return send({"id": rid, "fallback": "cannot read script: %s" % e})
        if not os.path.isdir(req["cwd"]):
            return send({"id": rid, "fallback": "cwd is not a directory"})
        sh = shadowed(req["path0"])
        if sh:
            return send({"id": rid, "fallback": "script directory shadows pre-imported modules: %s" % ",".join(sh[:5])})
        prefault_on[0] = req.get("prefault", True) is not False and madvise is not None
        since_learn[0] += 1
        if (req["abs"], digest) not in seen_versions or since_learn[0] >= LEARN_EVERY:
            if len(seen_versions) > 256:
                seen_versions.clear()
            seen_versions.add((req["abs"], digest))
            want_learn[0] = True
        while spares and select.select([spares[0][2]], [], [], 0)[0]:
            reap(spares[0][2])  # a spare that died (killed from outside) cannot take the event
        sp = spares.pop(0) if spares else fork_spare()
        if sp is None:
            return send({"id": rid, "fallback": "fork failed"})
        pid, zs, pfd, clean = sp
        try:
            ok = zs.recv(1) == b"S"  # it leads its own session (new_spare); at once for a spare forked earlier
        except OSError:
            ok = False
        if not ok:  # it died before it got that far: nothing of the event has run
            zs.close()
            sel.unregister(pfd)
            os.close(pfd)
            try:
                os.kill(pid, 9)
            except OSError:
                pass
            os.waitpid(pid, 0)
            return send({"id": rid, "fallback": "forked child ended before it was ready"})
        learn = ""
        if prefault_on[0] and clean:
            if learner[0] is None:
                learn = "/proc/%d/fd/%d" % (os.getpid(), learn_w)
                learner[0] = pid
                since_learn[0] = 0
                want_learn[0] = False
            else:
                want_learn[0] = True  # another learner is still running: the next clean spare
        msg = json.dumps({"id": rid, "script": req["script"], "args": req["args"], "options": req["options"],
                          "cwd": req["cwd"], "env": req["env"], "abs": req["abs"], "path0": req["path0"],
                          "digest": digest.hex(), "learn": learn}).encode()
        if len(msg) > MAX_HANDOFF:  # rare: the spare (its byte read) is ended, as if it had died
            if learner[0] == pid:
                learner[0] = None
            zs.close()
            sel.unregister(pfd)
            os.close(pfd)
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return send({"id": rid, "fallback": "event too large to hand to a forked child (%d bytes)" % len(msg)})
        children[pfd] = (rid, pid)
        sel.modify(pfd, selectors.EVENT_READ, pfd)
        global_peak[0] = max(global_peak[0], len(children))
        send({"id": rid, "pid": pid})
        # Only now, with hookd knowing the pid, does the child get its event: a zygote that
        # dies before this leaves a spare that sees EOF and runs nothing.
        try:
            zs.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", list(fds) + [sock.fileno()]))])
        except OSError:
            os.kill(pid, 9)  # it never got its event and runs nothing; hookd sees a hook killed
        zs.close()
        # Our copies of the event's descriptors go before the next fork: a spare holding the
        # event's stdout would keep hookd from ever seeing it end.
        for fd in fds:
            os.close(fd)
        fds[:] = []

    def fork_spare():
        """A new spare: clean (it populates nothing and may learn) when a learner is wanted
        or there is nothing to populate."""
        clean = want_learn[0] or not hot
        sp = new_spare(clean)
        if sp is not None and clean:
            want_learn[0] = False
        return sp

    def new_spare(clean):
        """Forks a spare child; returns (pid, zygote's socket end, pidfd, clean) or None."""
        for s in (sys.stdout, sys.stderr):
            s.flush()
        zs, cs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            pid = os.fork()
        except OSError:
            zs.close()
            cs.close()
            return None
        if pid == 0:
            try:
                # Its own session (and so its own process group), as Claude Code starts a
                # hook: no controlling terminal, and its own share of the CPU under the
                # kernel's autogroup scheduling. Only the child can do it; it says so with
                # one byte, which the zygote reads before it gives hookd the pid (hookd kills
                # -pid on a timeout, so the group must exist by then).
                os.setsid()
                zs.close()
                cs.send(b"S")
                spare_main(cs, clean)
            except BaseException:  # noqa: BLE001 - never fall back into the zygote's loop
                pass
            os._exit(127)
        cs.close()
        try:
            pfd = os.pidfd_open(pid)
        except OSError:
            zs.close()
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return None
        sel.register(pfd, selectors.EVENT_READ, ("spare", pfd))
        return (pid, zs, pfd, clean)

    def retire_spares():
        """Spares forked before the latest pre-imports lack them: end them (EOF)."""
        while spares:
            pid, zs, pfd, _ = spares.pop()
            zs.close()
            sel.unregister(pfd)
            os.close(pfd)
            os.waitpid(pid, 0)

    def replenish(rehearsal=True):
        while len(spares) < min(MAX_SPARES, global_peak[0]):
            sp = fork_spare()
            if sp is None:
                break
            spares.append(sp)
            unrehearsed[0] = True
        if rehearsal and unrehearsed[0] and last_run[0] is not None and not children:
            unrehearsed[0] = False
            rehearse(*last_run[0])

    def rehearse(msg, req):
        # After a fork every page this process writes is copied first (copy-on-write), and
        # on this kind of machine each such fault costs tens of microseconds. Handling the
        # previous request again, minus the fork and the hand-off, takes those faults now,
        # between events, instead of on the next event's path. Side-effect free: it decodes,
        # stats and reads the script (refreshing the code cache) and lists its directory.
        try:
            json.loads(msg)
            read_script(req["abs"])
            os.path.realpath(req["abs"])
            os.path.isdir(req["cwd"])
            shadowed(req["path0"])
            json.dumps({"id": 0, "pid": 0}, separators=(",", ":")).encode()
            sel.select(0)
        except Exception:  # noqa: BLE001 - the script may be gone; the next event finds out
            pass

    def reap(pfd):
        if pfd not in children:  # a spare died without an event (killed from outside)
            for i, sp in enumerate(spares):
                if sp[2] == pfd:
                    del spares[i]
                    sp[1].close()
                    sel.unregister(pfd)
                    os.close(pfd)
                    os.waitpid(sp[0], 0)
                    break
            return
        rid, pid = children.pop(pfd)
        sel.unregister(pfd)
        os.close(pfd)
        _, status, ru = os.wait4(pid, 0)
        if learner[0] == pid:
            learner[0] = None
            take_learned(pid)
        # minflt and CPU of the child's whole life (spare time included): for hookd's counters.
        send({"id": rid, "code": os.waitstatus_to_exitcode(status), "minflt": ru.ru_minflt,
              "cpu_us": int((ru.ru_utime + ru.ru_stime) * 1e6)})
        # The event is answered; the next spare is forked, and the zygote rehearses, while
        # hookd records and answers it and the next event's client starts. (Forking at
        # hand-off instead, while the hook runs, measured slower back to back here: the fork
        # and the spare's warm-up then compete with the hook itself for the CPU.)
        replenish()

    gc.freeze()
    send({"op": "ready", "pid": os.getpid(), "version": list(sys.version_info[:3]),
          "modules": len(sys.modules), "environ": start_environ})
    replenish()
    while True:
        for key, _ in sel.select():
            if key.data is not None:
                reap(key.data[1] if isinstance(key.data, tuple) else key.data)
                continue
            try:
                msg, anc, _, _ = sock.recvmsg(1 << 20, socket.CMSG_SPACE(8 * fdsize))
            except InterruptedError:
                continue
            if not msg:
                os._exit(0)  # hookd went away: so do we (children keep running, as cold ones would)
            fds = []
            for level, typ, data in anc:
                if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    a = array.array("i")
                    a.frombytes(data[: len(data) - len(data) % fdsize])
                    fds += list(a)
            req = None
            try:
                req = json.loads(msg)
                op = req.get("op")
                if op == "run":
                    run(req, fds)
                    if "abs" in req:
                        last_run[0] = (msg, req)
                elif op == "hot":
                    # Tests only: a learner's message as raw bytes, checked as one would be;
                    # without one, the list as it is.
                    if "data" in req:
                        set_hot(bytes.fromhex(req["data"]), None)
                    send({"id": req.get("id"), "hot": [list(r) for r in hot]})
                elif op == "preload":
                    configured = set(req.get("modules", ()))
                    names = list(configured)
                    for p in req.get("scripts", ()):
                        try:
                            with open(p, "rb") as f:
                                names += imports_of(f.read(), p)
                        except (OSError, SyntaxError, ValueError):
                            pass
                    done = preload(names, configured)
                    gc.freeze()  # children's collections then skip (and do not copy) the zygote's objects
                    if done:
                        retire_spares()
                        replenish()
                    send({"id": req.get("id"), "preloaded": done})
                else:
                    send({"id": req.get("id"), "error": "unknown op %r" % op})
            except Exception as e:  # noqa: BLE001 - one bad request must not end the zygote
                send({"id": req.get("id") if isinstance(req, dict) else None, "error": repr(e)})
            finally:
                for fd in fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass


_zygote()
