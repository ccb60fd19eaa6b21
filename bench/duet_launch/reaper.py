"""A watchdog that stops what a harness started once the harness is gone,
however it went: SIGKILL, a meson timeout's group kill, an exception.

The harnesses start their servers in sessions of their own (so that one
stop reaches everything a server started), which also means a SIGKILL to
the harness, or to its process group, leaves every X server, compositor
and window manager running: on a KMS guest one such X server keeps the
DRM card, and every later test fails on it. A parent-death signal would
reach only the direct child (not what strace or a wrapper runs).

So each harness marks its children's environment with NAME=VALUE and
starts this watchdog in a session of its own, holding the write end of
its stdin. The kernel closes that pipe when the harness dies; the
watchdog then finds every process whose environment carries the mark
(children, grandchildren, orphans: the environment is inherited), sends
SIGTERM, and SIGKILL to what is left a moment later.

    watch("DUET_BENCH_RUN", run_id)   # in the harness, once
    python3 reaper.py NAME VALUE       # what that starts
"""
import atexit
import os
import signal
import subprocess
import sys
import time


def marked(name, value, exclude=()):
    """pids whose environment holds NAME=VALUE (from /proc/PID/environ,
    the environment the process started with)."""
    needle = ("%s=%s" % (name, value)).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in exclude:
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def stop_marked(name, value, grace=2.0, exclude=()):
    """SIGTERM to every marked process, SIGKILL to any still there after
    grace seconds; returns the pids it signalled."""
    exclude = set(exclude) | {os.getpid()}
    hit = set()
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        pids = marked(name, value, exclude)
        for pid in pids:
            try:
                os.kill(pid, sig)
                hit.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + wait
        while pids and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = marked(name, value, exclude)
        if not pids:
            break
    return sorted(hit)


_watchers = {}


def _finish():
    """At a clean exit: each watchdog stops what is left of its mark and
    exits before we do, so a harness that returns has nothing running
    after it (`duet run` returns once every process it started is gone,
    the watchdog included, which carries the caller's own marks)."""
    for proc in _watchers.values():
        try:
            proc.stdin.close()
            proc.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            pass


def watch(name, value):
    """Starts the watchdog for this process's children marked NAME=VALUE
    (once per mark); it outlives us only when we die, by as long as it
    takes to stop them."""
    key = (name, value)
    if key in _watchers:
        return _watchers[key]
    if not _watchers:
        atexit.register(_finish)
    env = dict(os.environ)
    env.pop(name, None)  # the watchdog must not find itself by the mark
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), name, value],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    _watchers[key] = proc
    return proc


def main(argv):
    if len(argv) != 3:
        print("usage: reaper.py NAME VALUE  (stops NAME=VALUE processes at stdin's EOF)",
              file=sys.stderr)
        return 2
    # Our own session already: a signal to the harness's group is not ours.
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    while sys.stdin.buffer.read(4096):
        pass
    stop_marked(argv[1], argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
