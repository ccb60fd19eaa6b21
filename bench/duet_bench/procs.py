"""The processes the bench started, and what /proc tells about them.

Every process is a duet_launch.proc.Child, in a session of its own, so
stopping it stops what it started. cleanup() stops every one still live
and runs from atexit and from the signal handlers, so no Xvfb, compositor
or strace outlives the bench. The bench also makes itself a child subreaper:
a grandchild whose parent died (an X server's xkbcomp, a WM's helper) comes
back to it and is found and killed too.
"""
import ctypes
import os
import signal
import threading
import time

from duet_launch import proc


# How long to wait for what should come, times DUET_BENCH_PATIENCE (one
# knob for the bench, `duet run` and the tests: duet_launch.proc).
patience = proc.patience

RUN_MARK = proc.RUN_MARK  # in every child's environment: find strays by it
_cleaning = False


def become_subreaper():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


# pids whose parent chain leads to a pid (from /proc).
descendants = proc.descendants


def cleanup():
    """Stops every registered child, then kills whatever else descends
    from us (orphans handed to us as subreaper), then reaps."""
    global _cleaning
    if _cleaning:
        return
    _cleaning = True
    try:
        for child in reversed(proc.live()):
            child.stop(grace=2.0)
        for pid in descendants(os.getpid()):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                time.sleep(0.02)
    finally:
        _cleaning = False


# ------------------------------------------------------------------ /proc
def read_stat(pid):
    """(state, ppid, utime+stime ticks, starttime) or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            data = f.read()
    except OSError:
        return None
    # comm may contain spaces and parentheses: split after the last ')'.
    rest = data[data.rfind(")") + 2:].split()
    try:
        return rest[0], int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[19])
    except (IndexError, ValueError):
        return None


def thread_files(pid, name):
    """{tid: text of /proc/PID/task/TID/NAME} of every thread of pid (one
    that ended between the listing and the read is left out), or None when
    pid is gone."""
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return None
    out = {}
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/%s" % (pid, tid, name)) as f:
                out[int(tid)] = f.read()
        except OSError:
            continue
    return out


# {pid: {tid: [voluntary, involuntary]}}: every thread's last counts seen,
# kept after it ends (a process whose threads come and go, as mutter's do,
# would otherwise lose their switches and count backwards).
_thread_switches = {}


def ctx_switches(pid):
    """Voluntary and involuntary context switches summed over all threads
    (/proc/PID/status alone covers only the main thread), a thread that
    ended since an earlier call counted as it was last seen: never less
    than before."""
    status = thread_files(pid, "status")
    if status is None:
        return None
    seen = _thread_switches.setdefault(pid, {})
    for tid, text in status.items():
        counts = [0, 0]
        for line in text.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                counts[0] = int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches:"):
                counts[1] = int(line.split()[1])
        seen[tid] = counts
    return {"voluntary": sum(c[0] for c in seen.values()),
            "involuntary": sum(c[1] for c in seen.values())}


def ctx_diff(before, after):
    if not before or not after:
        return None
    return {k: after[k] - before[k] for k in before}


def thread_ids(pid):
    try:
        return [int(t) for t in os.listdir("/proc/%d/task" % pid)]
    except OSError:
        return []


def traced(pid):
    """Whether every thread of pid has a tracer (an attached strace)."""
    tids = thread_ids(pid)
    if not tids:
        return False
    for tid in tids:
        try:
            with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith("TracerPid:") and line.split()[1] == "0":
                        return False
        except OSError:
            pass
    return True


def where(pid):
    """One line per thread of pid: tid, name, state, the kernel function it
    sleeps in (wchan) and its current system call (/proc's syscall: number
    and arguments, "running" or -1): what a process that stopped making
    progress is waiting for."""
    lines = []
    for tid in thread_ids(pid):
        fields = []
        for name in ("comm", "wchan", "syscall"):
            try:
                with open("/proc/%d/task/%d/%s" % (pid, tid, name)) as f:
                    fields.append(f.read().strip() or "-")
            except OSError:
                fields.append("?")
        st = read_stat(tid)
        lines.append("%d %s state %s wchan %s syscall %s"
                     % (tid, fields[0], st[0] if st else "?", fields[1], fields[2]))
    return lines


def socket_inodes(pid):
    """inode -> fd of the Unix/any sockets pid holds."""
    out = {}
    d = "/proc/%d/fd" % pid
    try:
        fds = os.listdir(d)
    except OSError:
        return out
    for fd in fds:
        try:
            target = os.readlink(os.path.join(d, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            out[int(target[8:-1])] = int(fd)
    return out


def thread_cpu_ns(pid):
    """{tid: ns on CPU} of every live thread of pid, from
    /proc/PID/task/TID/schedstat (first field: nanoseconds run, the
    scheduler's own accounting, not 10 ms ticks). None when pid is gone."""
    schedstat = thread_files(pid, "schedstat")
    if schedstat is None:
        return None
    out = {}
    for tid, text in schedstat.items():
        try:
            out[tid] = int(text.split()[0])
        except (ValueError, IndexError):
            continue
    return out


def cpu_ns(pid):
    """ns on CPU summed over the live threads of pid, or None."""
    t = thread_cpu_ns(pid)
    return sum(t.values()) if t is not None else None


def cores():
    """CPUs this machine has and CPUs the bench (and what it starts) may run on."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = None
    return {"online": os.cpu_count(), "usable": usable}


class CpuMeter:
    """CPU time of one process since the meter started, in ns, robust to
    threads coming and going: every thread's growth since it was last seen
    is added (a new thread counts from zero, since it began after the
    previous reading or is the first reading's baseline). The time a
    thread ran between its last reading and its exit is lost; the bench's
    processes keep their threads for their whole life."""

    def __init__(self, pid, from_zero=False, reader=None):
        """from_zero: the process began at the interval's start (an app
        just forked), so everything it ran counts: no baseline. reader:
        what reads {tid: ns} (default thread_cpu_ns(pid))."""
        self.pid = pid
        self.reader = reader or (lambda: thread_cpu_ns(pid))
        self.last = {} if from_zero else (self.reader() or {})
        self.total = 0
        self.alive = from_zero or bool(self.last)

    def read(self):
        """Total ns since the start, or None once the process is gone."""
        cur = self.reader()
        if not cur:
            self.alive = False
            return None
        for tid, ns in cur.items():
            prev = self.last.get(tid, 0)
            if ns > prev:
                self.total += ns - prev
        self.last = cur
        return self.total


class CpuSampler:
    """Samples the CPU time of named processes every interval seconds (per
    thread, in ns, see CpuMeter); CPU use is the share of one core in each
    interval, as top shows it (200% = two cores busy)."""

    def __init__(self, procs, interval=0.05):
        self.interval = interval
        self.t0 = time.monotonic_ns()
        self.meters = {}
        self.last = {}  # role -> (t_ns, cpu_ns)
        self.timeline = []  # (t_ms, {role: percent})
        self.next_t = time.monotonic() + interval
        for role, pid in dict(procs).items():
            self.add(role, pid)

    def add(self, role, pid):
        self.meters[role] = CpuMeter(pid)
        self.last[role] = (time.monotonic_ns(), 0)

    def totals(self):
        """{role: ns on CPU from its start to its last reading}."""
        return {r: m.total for r, m in self.meters.items()}

    def poll(self):
        if time.monotonic() < self.next_t:
            return
        self.next_t = time.monotonic() + self.interval
        point = {}
        for role, meter in self.meters.items():
            c = meter.read()
            now = time.monotonic_ns()
            t_prev, c_prev = self.last[role]
            if c is not None and now > t_prev:
                point[role] = round(100.0 * (c - c_prev) / (now - t_prev), 2)
                self.last[role] = (now, c)
        if point:
            self.timeline.append((round((time.monotonic_ns() - self.t0) / 1e6, 1), point))


def process_cpu_ns(pid):
    """ns on CPU of every thread pid ever had, ended ones included: the
    process's CPU-time clock (what clock_getcpuclockid(pid) names:
    MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)), the same scheduler sum
    that schedstat shows per live thread. None where it cannot be read."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | 2)
    except (OSError, OverflowError, ValueError):
        return None


class SchedstatFiles:
    """thread_cpu_ns(pid) for frequent polling: each thread's schedstat
    file stays open and is re-read with pread (a listdir per poll finds
    the threads that came and went)."""

    def __init__(self, pid):
        self.pid = pid
        self.task = "/proc/%d/task" % pid
        self.fds = {}

    def __call__(self):
        try:
            tids = os.listdir(self.task)
        except OSError:
            self.close()
            return None
        out = {}
        for tid in tids:
            fd = self.fds.get(tid)
            try:
                if fd is None:
                    fd = self.fds[tid] = os.open("%s/%s/schedstat" % (self.task, tid),
                                                 os.O_RDONLY)
                out[int(tid)] = int(os.pread(fd, 128, 0).split()[0])
            except (OSError, ValueError, IndexError):
                continue  # the thread ended
        for tid in [t for t in self.fds if t not in tids]:
            os.close(self.fds.pop(tid))
        return out

    def close(self):
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


class SliceSampler:
    """Polls the CPU time of named processes (per thread, from schedstat,
    see CpuMeter) every interval seconds from a thread of its own, for a
    bootchart: which process ran when. Every reading closes a slice; a
    process's slices are [(t_ns, cpu ns since its previous reading)], the
    first since its baseline (its meter's start, or 0 for a process added
    from_zero). The polling costs CPU (its own thread's is recorded): a
    sampled interval is not a timing."""

    def __init__(self, procs, interval=0.002):
        self.interval = interval
        self.meters = {}
        self.slices = {}
        self.base = {}  # role -> t_ns its slices start at
        self.polls = 0
        self.cpu_ns = 0  # the sampling thread's own CPU
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        for role, pid in dict(procs).items():
            self.add(role, pid)

    def add(self, role, pid, t_ns=None, from_zero=False):
        """Samples pid as role from now (or from t_ns with from_zero: a
        process forked at t_ns has run nothing before it)."""
        meter = CpuMeter(pid, from_zero=from_zero, reader=SchedstatFiles(pid))
        with self._lock:
            self.meters[role] = meter
            self.slices[role] = []
            self.base[role] = t_ns if t_ns is not None else time.monotonic_ns()

    def start(self):
        self._thread = threading.Thread(target=self._run, name="slice-sampler", daemon=True)
        self._thread.start()
        return self

    def _run(self):
        c0 = time.thread_time_ns()
        next_t = time.monotonic() + self.interval
        while not self._stop.is_set():
            self.poll()
            now = time.monotonic()
            next_t = max(next_t + self.interval, now + self.interval / 4)
            self._stop.wait(next_t - now)
        self.poll()  # the slice up to the stop
        self.cpu_ns = time.thread_time_ns() - c0

    def poll(self):
        with self._lock:
            self.polls += 1
            for role, meter in self.meters.items():
                if not meter.alive:
                    continue
                before = meter.total
                c = meter.read()
                if c is not None:
                    self.slices[role].append((time.monotonic_ns(), c - before))

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(5)
        with self._lock:
            for meter in self.meters.values():
                meter.reader.close()
                meter.alive = False

    def since(self, t0_ns, end_ns=None):
        """{role: [[ms since t0_ns at the slice's end, ms on CPU in it]]}
        up to the first slice ending at or after end_ns; slices that ended
        before t0_ns (the baseline's) are merged into the first after it."""
        out = {}
        with self._lock:
            for role, sl in self.slices.items():
                pts, carry = [], 0
                for t, ns in sl:
                    if t < t0_ns:
                        carry += ns
                        continue
                    pts.append([round((t - t0_ns) / 1e6, 3), round((ns + carry) / 1e6, 4)])
                    carry = 0
                    if end_ns is not None and t >= end_ns:
                        break
                out[role] = pts
        return out
