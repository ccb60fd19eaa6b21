"""The one kind of child process the launcher (and everything that uses it)
starts: a process in a session, so a process group, of its own, so that
stopping it stops what it started.

Its output goes where the caller says: a log file (stdout and stderr, or
stderr only), or stdout read line by line by a thread (`lines=True`: kept
in `lines`, copied to a file and handed to `echo`), so a caller can wait
for a line the process prints (duet-compositor's WAYLAND_DISPLAY=NAME).

Every child is listed in live() until it is stopped: the bench's cleanup
stops whatever is still there.
"""
import os
import re
import signal
import subprocess
import threading
import time

from duet_launch import reaper

RUN_MARK = "DUET_BENCH_RUN"  # in every child's environment: find strays by it
_live = []
_own_mark = None


def marked_env(env):
    """env with RUN_MARK: the caller's (whoever set it watches it: the
    bench's cli, or a test around it), or else this process's own, watched
    by reaper.py from its first use, so that a test or tool using Child
    directly, killed, leaves nothing behind either."""
    global _own_mark
    env = dict(os.environ if env is None else env)
    if RUN_MARK not in env:
        if _own_mark is None:
            _own_mark = "%d-%s" % (os.getpid(), os.urandom(4).hex())
            reaper.watch(RUN_MARK, _own_mark)
        env[RUN_MARK] = _own_mark
    return env


def live():
    """The children started and not yet stopped, in start order."""
    return list(_live)


def read_tail(path, n=4000):
    if not path:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def patience(seconds):
    """How long to wait for something that should come (a stack's start,
    an app's frame, a dump), times DUET_BENCH_PATIENCE: an emulated machine
    (scripts/board-vm's guest, 12-24x slower; the KMS guest) sets it. Only
    upper bounds scale; nothing measured does."""
    try:
        factor = float(os.environ.get("DUET_BENCH_PATIENCE", "1"))
    except ValueError:
        factor = 1.0
    return seconds * max(factor, 1.0)


class LineTimeout(Exception):
    """wait_line: the line did not come in time, or the process ended first."""


class Child:
    """One process in its own session, its environment marked
    (marked_env).

    log_path: stderr goes there, and stdout too unless stdout= or lines=
    say otherwise (None: both to /dev/null unless given). lines=True:
    stdout is read line by line (self.lines), copied to stdout_path and,
    each line, passed to echo(line)."""

    def __init__(self, role, argv, env, log_path=None, stdout=None, stderr=None,
                 stdin=subprocess.DEVNULL, lines=False, stdout_path=None, echo=None, **kw):
        self.role = role
        self.argv = list(argv)
        self.log_path = log_path
        self.stdout_path = stdout_path
        self.lines = []
        self._cond = threading.Condition()
        self._eof = False
        self._reader = None
        out = open(log_path, "ab") if log_path else subprocess.DEVNULL
        if lines:
            stdout = subprocess.PIPE
        try:
            self.popen = subprocess.Popen(argv, env=marked_env(env), stdin=stdin,
                                          stdout=out if stdout is None else stdout,
                                          stderr=out if stderr is None else stderr,
                                          start_new_session=True, **kw)
        finally:
            if log_path:
                out.close()
        _live.append(self)
        if lines:
            self._reader = threading.Thread(target=self._read, args=(echo,), daemon=True)
            self._reader.start()

    @property
    def name(self):
        return self.role

    @property
    def pid(self):
        return self.popen.pid

    def alive(self):
        return self.popen.poll() is None

    def dying(self):
        """Alive, but killed: SIGKILL pending or already exiting (a large
        process under load, or one emulated by qemu-user, takes a while to
        tear down its memory before its parent can see it gone)."""
        if not self.alive():
            return False
        try:
            with open("/proc/%d/stat" % self.pid) as f:
                flags = int(f.read().rsplit(")", 1)[1].split()[6])
            with open("/proc/%d/status" % self.pid) as f:
                pending = [int(l.split()[1], 16) for l in f
                           if l.startswith(("ShdPnd:", "SigPnd:"))]
        except (OSError, ValueError, IndexError):
            return False
        PF_EXITING, SIGKILL_BIT = 0x4, 1 << (signal.SIGKILL - 1)
        return bool(flags & PF_EXITING) or any(p & SIGKILL_BIT for p in pending)

    def status(self):
        rc = self.popen.poll()
        if rc is None:
            return "running"
        return "killed by signal %d" % -rc if rc < 0 else "exited with status %d" % rc

    def signal_group(self, sig):
        try:
            os.killpg(self.popen.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def signal(self, sig):
        if self.alive():
            try:
                os.kill(self.popen.pid, sig)
            except ProcessLookupError:
                pass

    def stop(self, grace=3.0):
        """SIGTERM to the whole group, SIGKILL to what is left after grace
        seconds; reaps the process."""
        if self.alive():
            self.signal_group(signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        # Whatever the leader left behind in its group goes too.
        self.signal_group(signal.SIGKILL)
        try:
            self.popen.wait(5)
        except subprocess.TimeoutExpired:
            pass
        if self._reader:
            self._reader.join(2)
        if self in _live:
            _live.remove(self)

    def wait(self, timeout):
        """The exit status once the process has exited and, with lines=True,
        its stdout has been read to the end, within timeout seconds in all:
        the reader can lag the exit, and the lines printed just before it
        were missing under load (glmark2's score). A stdout still open in a
        process it left behind is waited for until the timeout, no more.
        subprocess.TimeoutExpired when the process outlives the timeout."""
        deadline = time.monotonic() + timeout
        status = self.popen.wait(timeout)
        if self._reader:
            self._reader.join(max(0.0, deadline - time.monotonic()))
        return status

    def log_tail(self, n=4000):
        return read_tail(self.log_path, n)

    # ------------------------------------------------------------ lines
    def _read(self, echo):
        log = open(self.stdout_path, "a") if self.stdout_path else None
        try:
            for raw in self.popen.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if log:
                    log.write(line + "\n")
                    log.flush()
                if echo:
                    echo(line)
                with self._cond:
                    self.lines.append(line)
                    self._cond.notify_all()
        finally:
            if log:
                log.close()
            with self._cond:
                self._eof = True
                self._cond.notify_all()

    def wait_line(self, pattern, timeout=20.0, start=0, pred=None):
        """The first stdout line (from index start on) matching the regex
        (and pred(match), if given): (index, match). LineTimeout when the
        time is up or the process ended first."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._cond:
            i = start
            while True:
                while i < len(self.lines):
                    m = rx.search(self.lines[i])
                    if m and (pred is None or pred(m)):
                        return i, m
                    i += 1
                if self._eof:
                    raise LineTimeout("%s exited (status %s) before printing /%s/"
                                      % (self.role, self.popen.wait(), pattern))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise LineTimeout("%s did not print /%s/ within %.0f s"
                                      % (self.role, pattern, timeout))
                self._cond.wait(left)

    def count_lines(self, pattern):
        rx = re.compile(pattern)
        with self._cond:
            return sum(1 for line in self.lines if rx.search(line))


def _stat(pid):
    """(state, ppid, starttime, flags) of /proc/PID/stat, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[1]), int(fields[19]), int(fields[6])
    except (OSError, ValueError, IndexError):
        return None


def cpu_seconds(pid):
    """User + system CPU seconds a process has used, or None if gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def start_time(pid):
    """A live process's start time (clock ticks after boot; with the pid,
    what tells it from a later process given the same pid), or None."""
    st = _stat(pid)
    return st[2] if st else None


def where_waiting(pid):
    """'STATE, N threads: WCHAN xK, ...' of a live process, from /proc
    (the main thread's wait first): where a process that stopped answering
    sits, for a failure's reason. None when it is gone."""
    st = _stat(pid)
    if not st:
        return None
    waits = {}
    main = None
    try:
        tids = sorted(os.listdir("/proc/%d/task" % pid), key=int)
    except OSError:
        tids = []
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/wchan" % (pid, tid)) as f:
                w = f.read().strip() or "-"
        except OSError:
            continue
        w = "running" if w == "0" else w
        if tid == str(pid):
            main = w
        waits[w] = waits.get(w, 0) + 1
    rest = ", ".join("%s x%d" % kv for kv in sorted(waits.items()))
    return "%s, main thread in %s, %d threads: %s" % (st[0], main, len(tids), rest)


def descendants(root):
    """pids whose parent chain leads to root (from /proc)."""
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st:
                parent[int(name)] = st[1]
    out, frontier = [], [root]
    while frontier:
        p = frontier.pop()
        for pid, pp in parent.items():
            if pp == p:
                out.append(pid)
                frontier.append(pid)
    return out


def comm(pid):
    """pid's command name (/proc/PID/comm), or None once it is gone."""
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return None


def children_named(parent, comm):
    """pids of parent's live children whose comm is comm (from /proc)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        st = _stat(int(name))
        if not st or st[1] != parent or st[0] == "Z":
            continue
        if globals()["comm"](int(name)) == comm:
            out.append(int(name))
    return sorted(out)


class Foreign:
    """A process of a stack that another of its processes started (the
    Xwayland a Wayland server starts and reaps), watched like a Child:
    alive() until it exits (a zombie its parent has not reaped yet is
    gone; its start time tells a reused pid apart). Its output goes where
    its parent's goes; stopping it is its parent's business."""

    def __init__(self, role, pid):
        self.role = role
        self.pid = pid
        st = _stat(pid)
        self._start = st[2] if st else None
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                self.argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
        except OSError:
            self.argv = []
        self.argv = self.argv or [role]
        self.log_path = None

    @property
    def name(self):
        return self.role

    def alive(self):
        st = _stat(self.pid)
        return bool(st) and st[0] not in ("Z", "X") and st[2] == self._start

    def dying(self):
        st = _stat(self.pid)
        return bool(st) and self.alive() and bool(st[3] & 0x4)  # PF_EXITING

    def status(self):
        return "running" if self.alive() else "exited (pid %d is gone)" % self.pid

    def log_tail(self, n=4000):
        return ""
