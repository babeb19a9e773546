# hookd Python zygote (docs/zygote.md). Started by hookd as
#     PYTHON [options] -c <this file> ; fd 3 = an AF_UNIX SOCK_STREAM socket to hookd
# It never runs hook code itself: it imports modules, waits, and per event hands the event
# to a child that turns itself into `PYTHON [options] SCRIPT ARGS`. The child is forked
# ahead of the event (a "spare", replenished after use), so the fork and the child's
# after-fork work are off the event's path. Everything here is single-threaded.
# Messages are frames (Chan): an 8-byte header — the JSON body's length and how many
# descriptors travel with it, both little-endian uint32 — then the body; the descriptors
# go as SCM_RIGHTS with the frame's first bytes. A "run" request carries the event's
# stdin, stdout and stderr; the answer with the child's pid carries a pidfd for it.
_main_initial = dict(globals())  # __main__ as the interpreter created it, before our names


def _zygote():
    import sys

    # What a cold start of this interpreter has imported before a script's first line (the
    # interpreter's own start-up and site): the zygote's other modules are "ours" and may
    # be shadowed by a script's directory (shadowed()).
    baseline = set(sys.modules)
    # The zygote's own imports come from the interpreter's library alone, as its
    # pre-imports do (preload()): never the working directory (-c put '' first on
    # sys.path), PYTHONPATH or a site directory, and no import hook a .pth file installed
    # is asked. The library is where the interpreter itself put it, in the locations
    # CPython's getpath and sysconfig use: <prefix>/<platlibdir>/pythonX.Y, its
    # lib-dynload, pythonXY.zip.
    ver = sys.version_info
    own_dirs = {"%s/%s/python%d.%d" % (sys.base_prefix, sys.platlibdir, ver[0], ver[1]),
                "%s/%s/python%d.%d/lib-dynload" % (sys.base_exec_prefix, sys.platlibdir, ver[0], ver[1]),
                "%s/%s/python%d%d.zip" % (sys.base_prefix, sys.platlibdir, ver[0], ver[1])}
    if sys.path and sys.path[0] == "":
        # A cold `python SCRIPT` has the script's directory there instead, set per child.
        del sys.path[0]
    outer_path, outer_meta = list(sys.path), list(sys.meta_path)
    std_finders = [f for f in outer_meta if isinstance(f, type) and f.__module__ in ("_frozen_importlib", "_frozen_importlib_external")]
    sys.path[:] = [p for p in outer_path if p in own_dirs]
    sys.meta_path[:] = std_finders
    import os, json, socket, selectors, select, hashlib, io, array, gc, stat, random, signal, importlib
    from importlib.machinery import SourceFileLoader, FrozenImporter, PathFinder
    try:
        import ctypes
    except Exception:  # noqa: BLE001 - no ctypes: no pre-faulting
        ctypes = None
    sys.path[:], sys.meta_path[:] = outer_path, outer_meta

    class SpecialFile(OSError):
        """A script path that names a FIFO, a device or a socket: refused, never read."""

    if not hasattr(os, "pidfd_open"):
        # No way to wait for one child without a SIGCHLD handler: refuse; hookd runs cold.
        os.write(2, b"hookd zygote: os.pidfd_open unavailable\n")
        os._exit(3)
    inherited_fds = {int(n) for n in os.listdir("/proc/self/fd")} - {3}
    orig_argv0 = list(sys.orig_argv[:1])
    start_environ = [k + "=" + v for k, v in os.environ.items()]
    base_path = list(sys.path)
    stdio_model = []
    for s in (sys.stdin, sys.stdout, sys.stderr):
        stdio_model.append((s.encoding, s.errors, s.line_buffering, s.write_through, hasattr(s.buffer, "raw")))
    stdlib = set(getattr(sys, "stdlib_module_names", ()))
    # Modules whose import does something visible (opens a browser, prints, touches the
    # terminal) or that only tests and tools use: never pre-imported.
    never = {"antigravity", "this", "__hello__", "__phello__", "tkinter", "turtle", "turtledemo",
             "idlelib", "pydoc", "test", "lib2to3", "ensurepip", "venv", "webbrowser", "readline",
             "curses", "rlcompleter", "pdb", "code", "site", "sitecustomize", "usercustomize", "__main__"}

    fdsize = array.array("i").itemsize
    MAX_FDS = 4  # the most descriptors one frame carries

    class Chan:
        """Frames over a stream socket: header (body length, descriptor count), then the
        body; the descriptors arrive with the frame's first bytes (or earlier, with a
        previous read) and are queued until their frame is complete."""

        ANC = socket.CMSG_SPACE(MAX_FDS * fdsize)

        def __init__(self, s):
            self.s, self.buf, self.fds = s, bytearray(), []

        def fill(self):
            """One read; False at EOF. Raises on a truncated descriptor list."""
            data, anc, flags, _ = self.s.recvmsg(1 << 16, self.ANC)
            for level, typ, cdata in anc:
                if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    a = array.array("i")
                    a.frombytes(cdata[: len(cdata) - len(cdata) % fdsize])
                    self.fds += list(a)
            if flags & getattr(socket, "MSG_CTRUNC", 8):
                raise OSError("descriptors truncated")
            if not data:
                return False
            self.buf += data
            return True

        def take(self):
            """The next complete frame as (body bytes, descriptors), or None."""
            if len(self.buf) < 8:
                return None
            n, nfd = int.from_bytes(self.buf[0:4], "little"), int.from_bytes(self.buf[4:8], "little")
            if len(self.buf) < 8 + n:
                return None
            if nfd > len(self.fds):
                raise OSError("frame without its descriptors")
            body = bytes(self.buf[8: 8 + n])
            del self.buf[: 8 + n]
            fds, self.fds = self.fds[:nfd], self.fds[nfd:]
            return body, fds

        def recv(self):
            """Blocks for the next frame; None at EOF."""
            while True:
                f = self.take()
                if f is not None:
                    return f
                if not self.fill():
                    return None

        def send(self, body, fds=()):
            data = len(body).to_bytes(4, "little") + len(fds).to_bytes(4, "little") + body
            anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
            n = self.s.sendmsg([data], anc)
            if n < len(data):
                self.s.sendall(data[n:])

        def close_fds(self):
            for fd in self.fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.fds = []

    sock = socket.socket(fileno=3)
    hookd = Chan(sock)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ, None)
    children = {}  # pidfd -> Kid: children that have their event
    by_id = {}  # request id -> pidfd, for hookd's "kill"
    spares = []  # (pid, zygote's socket end, pidfd, clean): forked children waiting for an event
    global_peak = [1]  # most children seen running at once: how many spares to keep
    last_run = [None]  # (request bytes, request) of the last event, for rehearse()
    unrehearsed = [False]  # forked since the last rehearse()
    MAX_SPARES = 4
    SPARE_TIMEOUT = 5.0  # a spare that neither says it is ready nor takes its event in this long is killed

    class Kid:
        """A child with its event: hookd's request id, its pid, the zygote's end of its
        socket (its status comes there), whether its group is killed when it exits (before
        it is reaped), and why it never ran (the hand-off failed)."""

        __slots__ = ("rid", "pid", "zs", "kill_group", "setup_error")

        def __init__(self, rid, pid, zs, kill_group):
            self.rid, self.pid, self.zs, self.kill_group, self.setup_error = rid, pid, zs, kill_group, None
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

    def send(obj, fds=()):
        hookd.send(json.dumps(obj, separators=(",", ":")).encode(), fds)

    def open_regular(path):
        """A script file opened for reading — only if it is a regular file: a FIFO, a
        device or a socket is never read (opening a FIFO would wait for a writer; reading a
        device may never end). O_NONBLOCK so that the open itself cannot wait."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
        except OSError:
            st = os.stat(path)  # a socket cannot be opened at all (ENXIO): say what it is
            if not stat.S_ISREG(st.st_mode):
                raise SpecialFile("%s is %s, not a script file" % (path, kind_of(st.st_mode)))
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise SpecialFile("%s is %s, not a script file" % (path, kind_of(st.st_mode)))
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def kind_of(mode):
        for test, what in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                           (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                           (stat.S_ISDIR, "a directory")):
            if test(mode):
                return what
        return "not a regular file"

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

    # Pre-imports run no code but the interpreter's own standard library (docs/zygote.md,
    # "Pre-imports"): a module is imported before its event only if its top-level name is a
    # standard-library name that resolves — with the interpreter's own finders, on the
    # zygote's sys.path (the cwd removed; the script's directory is checked per event,
    # shadowed()) — to a builtin or frozen module or to a file in the interpreter's own
    # library directories, not in a site directory; never a module's __main__; and the
    # import itself runs with only those directories on sys.path and only the
    # interpreter's own finders on sys.meta_path, so nothing it imports in turn can come
    # from the project, PYTHONPATH or a site directory, and no finder a .pth file
    # installed is asked. Anything else is imported by the child, at its event.
    std_cache = []

    def std_dirs():
        """The interpreter's own library directories on sys.path, in order (the zip, the
        library, lib-dynload), and every other sys.path entry (site directories and
        PYTHONPATH; some of them inside a library directory, like site-packages). The
        zygote's sys.path does not change: computed once."""
        if std_cache:
            return std_cache[0]
        std, other = [], []
        for p in sys.path:
            (std if p in own_dirs else other).append(p)
        std_cache.append((std, other))
        return std, other

    def ahead_dirs():
        """sys.path entries searched before the interpreter's library (PYTHONPATH)."""
        std, _ = std_dirs()
        return sys.path[: sys.path.index(std[0])] if std else list(sys.path)

    def inside(path, dirs):
        rp = os.path.realpath(path)
        return any(d and (rp == os.path.realpath(d) or rp.startswith(os.path.realpath(d) + os.sep)) for d in dirs)

    def stdlib_shadowed():
        """Standard-library names that a module in a directory ahead of the library on
        sys.path (PYTHONPATH) would shadow in a cold run: if there are any, the zygote
        imports no standard-library module before an event at all (an import inside the
        library could reach the shadowing one)."""
        out = set()
        for d in ahead_dirs():
            try:
                out |= {e.partition(".")[0] for e in os.listdir(d or ".")} & stdlib
            except OSError:
                pass
        return out

    def is_std(top):
        """Whether a top-level module name resolves to the interpreter's own library."""
        if top in sys.builtin_module_names or FrozenImporter.find_spec(top) is not None:
            return True
        std, other = std_dirs()
        spec = PathFinder.find_spec(top, sys.path)
        origin = spec and spec.origin
        if not origin or origin in ("built-in", "frozen"):
            return False
        return inside(origin, std) and not inside(origin, [d for d in other if d])

    def import_std(name):
        """__import__(name) with the library directories alone on sys.path and the
        interpreter's own finders alone on sys.meta_path."""
        std, _ = std_dirs()
        saved_meta, saved_path = list(sys.meta_path), list(sys.path)
        try:
            sys.meta_path[:] = [f for f in saved_meta if f in std_finders]
            sys.path[:] = std
            __import__(name)
        finally:
            sys.meta_path[:] = saved_meta
            sys.path[:] = saved_path

    def preload(names, configured):
        done = []
        shadowed_std = None
        for name in names:
            parts = name.split(".")
            top = parts[0]
            if name in sys.modules or "__main__" in parts or top in never:
                continue
            try:
                if name in configured:
                    __import__(name)  # third-party, by the administrator's choice (hookd's config)
                elif top in stdlib:
                    if shadowed_std is None:
                        shadowed_std = stdlib_shadowed()
                    if shadowed_std or not is_std(top):
                        continue
                    import_std(name)
                else:
                    continue
                done.append(name)
            except BaseException:  # noqa: BLE001 - e.g. `from os import path` names no module
                pass
        return done

    def read_script(path):
        """(code, data, sha256) for path as it is now, compiled at most once per version.
        Raises SpecialFile for anything but a regular file."""
        with open_regular(path) as f:
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
        with open_regular(req["abs"]) as f:
            data = f.read()
        if hashlib.sha256(data).hexdigest() != req["digest"]:
            raise RuntimeError("script changed while the event started")
        return compile(data, req["abs"], "exec", dont_inherit=True)

    def shadowed(scriptdir):
        """Names we pre-imported that a module in the script's directory (sys.path[0] of a
        cold run), or in a directory ahead of the library on sys.path, would shadow in a
        cold run."""
        ours = {m.partition(".")[0] for m in sys.modules} - {m.partition(".")[0] for m in baseline}
        names = set()
        for d in [scriptdir] + (ahead_dirs() if ours else []):
            try:
                names |= {e.partition(".")[0] for e in os.listdir(d or ".")}
            except OSError:
                pass
        return sorted(names & ours)

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
            hookd.close_fds()
            sel.close()
            for pfd in list(children) + [sp[2] for sp in spares]:
                os.close(pfd)
            for kid in children.values():
                kid.zs.close()
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
            ch = Chan(cs)
            frame = ch.recv()
            if frame is None or len(frame[1]) != 3:
                os._exit(127)
            req = json.loads(frame[0])
        except BaseException:  # noqa: BLE001
            os._exit(127)
        child(req, frame[1], ch, populated, ready_minflt)
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
        random.seed()

    def child(req, fds, ch, populated, ready_minflt):
        # fds: the event's stdin, stdout, stderr. ch: the socket to the zygote, which passes
        # what is sent on it to hookd with the exit status: a setup error (nothing of the
        # hook ran), or the counters.
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
            random.seed()
            # For hookd's counters: the pages this child's spare pre-faulted, and its minor
            # faults when it was ready. The hook never sees this socket.
            ch.send(b'{"populated":%d,"ready_minflt":%d}' % (populated, ready_minflt))
            ch.s.close()
        except BaseException as e:  # noqa: BLE001
            try:
                ch.send(json.dumps({"setup_error": repr(e)}).encode())
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
        """The exit status CPython gives an uncaught SystemExit (_Py_HandleSystemExit): its
        code attribute (the exception itself if reading it fails); None is 0; an int is
        read as a C long — out of range is -1 — truncated to a C int and given to exit(),
        which keeps the low 8 bits; anything else is printed to sys.stderr and is 1."""
        try:
            c = e.code
        except BaseException:  # noqa: BLE001
            c = e
        if c is None:
            return 0
        if isinstance(c, int):
            v = int.__index__(c)  # the value itself, as PyLong_AsLong reads an int subclass
            return v & 0xFF if -(1 << 63) <= v < (1 << 63) else 255
        err = sys.stderr
        try:
            if err is None:
                os.write(2, str(c).encode(errors="backslashreplace"))
            else:
                err.write(str(c))
        except BaseException:  # noqa: BLE001
            pass
        try:
            if err is None:
                os.write(2, b"\n")
            else:
                err.write("\n")
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
        except SpecialFile as e:
            return send({"id": rid, "refuse": str(e)})
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
        zs.settimeout(SPARE_TIMEOUT)  # a spare stopped from outside cannot hold the zygote
        try:
            ok = zs.recv(1) == b"S"  # it leads its own session (new_spare); at once for a spare forked earlier
        except OSError:
            ok = False
        if not ok:  # it died (or hangs) before it got that far: nothing of the event has run
            end_spare(pid, zs, pfd)
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
        kid = Kid(rid, pid, zs, req.get("kill_group", True) is not False)
        children[pfd] = kid
        by_id[rid] = pfd
        sel.modify(pfd, selectors.EVENT_READ, pfd)
        global_peak[0] = max(global_peak[0], len(children))
        # hookd gets the pid with a pidfd for it: a handle to this very process that stays
        # valid, and never names another, whoever reaps it.
        send({"id": rid, "pid": pid}, [pfd])
        # Only now, with hookd knowing the pid, does the child get its event: a zygote that
        # dies before this leaves a spare that sees EOF and runs nothing.
        try:
            Chan(zs).send(msg, list(fds))
        except OSError:
            # It never got its event (or not all of it) and runs nothing: killed, and hookd is
            # told so with its exit status, to run the hook cold.
            kid.setup_error = "the event could not be handed to the forked child"
            os.kill(pid, 9)
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
        zs, cs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
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

    def end_spare(pid, zs, pfd):
        """Ends a spare that has no event: it has run nothing of any hook."""
        zs.close()
        sel.unregister(pfd)
        os.close(pfd)
        try:
            os.kill(pid, 9)  # our unreaped child: the pid is its own
        except OSError:
            pass
        os.waitpid(pid, 0)

    def retire_spares():
        """Spares forked before the latest pre-imports lack them: end them."""
        while spares:
            end_spare(*spares.pop()[:3])

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
            # The frames of an event — a request with descriptors in, the pid with a pidfd
            # out, a child's status — and a child's record, over a scratch socket pair.
            a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                Chan(a).send(b'{"id":0,"pid":0}', [learn_r])
                ch = Chan(b)
                f = ch.recv()
                for fd in f[1]:
                    os.close(fd)
                if not hookd.buf:  # never with part of a frame from hookd in it
                    hookd.buf += msg[:64]
                    del hookd.buf[:]
                k = Kid(0, 0, None, True)
                by_id[0] = k
                del by_id[0]
            finally:
                a.close()
                b.close()
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
        kid = children.pop(pfd)
        by_id.pop(kid.rid, None)
        sel.unregister(pfd)
        # The child has exited and is not reaped: its pid, and so the number of the group it
        # led, are still its own. Only now is the group killed (what the hook left
        # running), and only then is the child reaped — hookd never signals that number.
        if kid.kill_group:
            try:
                os.killpg(kid.pid, 9)
            except OSError:
                pass
        _, status, ru = os.wait4(kid.pid, 0)
        os.close(pfd)
        if learner[0] == kid.pid:
            learner[0] = None
            take_learned(kid.pid)
        # minflt and CPU of the child's whole life (spare time included): for hookd's counters.
        out = {"id": kid.rid, "code": os.waitstatus_to_exitcode(status), "minflt": ru.ru_minflt,
               "cpu_us": int((ru.ru_utime + ru.ru_stime) * 1e6)}
        # What the child said before its hook's first line (counters, or why it never ran).
        try:
            kid.zs.setblocking(False)
            ch = Chan(kid.zs)
            f = ch.take()
            while f is None and ch.fill():
                f = ch.take()
            ch.close_fds()
            if f is not None:
                said = json.loads(f[0])
                for k in ("populated", "ready_minflt", "setup_error"):
                    if k in said:
                        out[k] = said[k]
        except (OSError, ValueError):
            pass
        kid.zs.close()
        if kid.setup_error:
            out["setup_error"] = kid.setup_error
        send(out)
        # The event is answered; the next spare is forked, and the zygote rehearses, while
        # hookd records and answers it and the next event's client starts. (Forking at
        # hand-off instead, while the hook runs, measured slower back to back here: the fork
        # and the spare's warm-up then compete with the hook itself for the CPU.)
        replenish()

    def handle(msg, fds):
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
            elif op == "kill":
                # hookd's timeout or cancellation, when it cannot signal the group itself
                # (no pidfd group signals: Linux < 6.9, macOS). The child is ours and not
                # reaped: its group number is its own. Killed again at its exit.
                pfd = by_id.get(req.get("id"))
                if pfd is not None:
                    kid = children[pfd]
                    kid.kill_group = True
                    try:
                        os.killpg(kid.pid, 9)
                    except OSError:
                        pass
            elif op == "preload":
                configured = set(req.get("modules", ()))
                names = list(configured)
                for p in req.get("scripts", ()):
                    try:
                        with open_regular(p) as f:
                            names += imports_of(f.read(1 << 20), p)
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
                if not hookd.fill():
                    os._exit(0)  # hookd went away: so do we (its group reaper ends the children)
            except (InterruptedError, BlockingIOError):
                continue
            while True:
                frame = hookd.take()
                if frame is None:
                    break
                handle(*frame)


_zygote()
