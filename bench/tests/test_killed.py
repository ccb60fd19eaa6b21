#!/usr/bin/env python3
"""A harness killed with SIGKILL leaves none of its servers behind
(bench/duet_launch/reaper.py).

bench: `duet bench` runs launches on duet-compositor and Xvfb + duet-xwm;
once a server of the run is up, the bench alone gets SIGKILL (no handler,
no atexit: the servers sit in sessions of their own and would live on).
Every process carrying the run's mark must be gone soon after.

harness: the integration tests' duet.py starts an X session (Xvfb +
duet-xwm) in a child Python process, which then gets SIGKILL in the same
way; nothing marked with that process's test mark may be left.

exit: a program that starts a process with duet_launch.proc.Child (one
that ignores SIGTERM) and exits normally without stopping it: when the
program has exited, that process and the watchdog are gone already (a
harness that returns leaves nothing running: `duet run`'s promise).

child: a program that starts a process with duet_launch.proc.Child itself,
with no mark of its own (as bench/tests/test_observer.py does), gets
SIGKILL: that process must go too (the observer test's duet-compositor and
duet-launch outlived a stopped meson test under qemu-user).
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from checks import check, cmdlines, on_fail  # noqa: E402
from duet_launch import reaper  # noqa: E402

INTEGRATION = os.path.join(HERE, "..", "..", "tests", "integration")


def wait_for(pred, timeout, what):
    """Polls pred() until it is true; a hang guard, not a measure."""
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        if got:
            return got
        check(time.monotonic() < deadline, "%s: not within %d s" % (what, timeout))
        time.sleep(0.1)


def named(pids, names):
    return [c for c in cmdlines(pids) if any(n in c for n in names)]


def gone_after_kill(proc, name, value, servers):
    """SIGKILLs proc once a server of its mark runs; checks all of them go."""
    up = wait_for(lambda: named(reaper.marked(name, value), servers), 120,
                  "a server (%s) started" % ", ".join(servers))
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    left = []

    def none_left():
        left[:] = cmdlines(reaper.marked(name, value))
        return not left
    try:
        wait_for(none_left, 30, "the killed harness's processes gone")
    finally:
        reaper.stop_marked(name, value)  # never leave them to the next test
    check(not left, "left behind: %s" % left)
    print("killed with %s up; nothing of it left" % up)


def test_bench():
    mark = "killed-%d-%s" % (os.getpid(), os.urandom(4).hex())
    out = tempfile.mkdtemp(prefix="duet-bench-killed-")
    env = dict(os.environ, DUET_BENCH_RUN=mark)
    argv = [sys.executable, os.environ["DUET_TOOL"], "bench", "--quick", "--stacks",
            "wayland,x11", "--experiments", "launch", "--reps", "20", "--no-ipc",
            "--out", out]
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    gone_after_kill(proc, "DUET_BENCH_RUN", mark, ("duet-compositor", "Xvfb", "duet-xwm"))


HARNESS = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import duet
s = duet.XSession("killed")
s.start()
print("mark", duet.TEST_MARK[1], flush=True)
time.sleep(600)
"""


def test_harness():
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))  # duet.py imports duet_launch
    proc = subprocess.Popen([sys.executable, "-c", HARNESS, INTEGRATION], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    value = None
    for line in proc.stdout:  # duet.py logs to stdout too
        if line.startswith("mark "):
            value = line.split()[1]
            break
    check(value, "the harness started an X session (exit %s)" % proc.poll())
    gone_after_kill(proc, "DUET_TEST_RUN", value, ("Xvfb", "duet-xwm"))


CHILD = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
from duet_launch import proc
c = proc.Child("sleeper", ["sleep", "600"], dict(os.environ))
print("pid", c.pid, flush=True)
time.sleep(600)
"""


def start_program(source):
    """Runs python source (which starts a Child and prints its pid) with no
    run mark of its own: (the program, the child's pid, the child's mark)."""
    env = dict(os.environ)
    env.pop("DUET_BENCH_RUN", None)
    proc = subprocess.Popen([sys.executable, "-c", source, os.path.dirname(HERE)], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    on_fail(proc.kill)
    line = proc.stdout.readline()
    check(line.startswith("pid "), "the program started its child (%r)" % line)
    pid = int(line.split()[1])
    on_fail(lambda: os.kill(pid, signal.SIGKILL))
    # A process in the middle of an exec shows an empty environment: Popen
    # (and so the pid line) returns once exec closed the child's
    # close-on-exec fds, a moment before its new environment is in place.
    deadline = time.monotonic() + 10
    while True:
        with open("/proc/%d/environ" % pid, "rb") as f:
            env = f.read()
        if env or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    mark = [v for v in env.split(b"\0") if v.startswith(b"DUET_BENCH_RUN=")]
    check(mark, "the child carries a run mark")
    return proc, pid, mark


def test_child():
    proc, pid, mark = start_program(CHILD)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    try:
        wait_for(lambda: not os.path.exists("/proc/%d" % pid) or
                 open("/proc/%d/stat" % pid).read().split(") ")[1].startswith("Z"),
                 30, "the killed program's child gone")
    finally:
        try:
            os.kill(pid, signal.SIGKILL)  # never leave it to the next test
        except ProcessLookupError:
            pass
    print("killed the program; its child %d went with it" % pid)


EXITS = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
from duet_launch import proc
c = proc.Child("stubborn", ["sh", "-c", "trap '' TERM; echo up; exec sleep 600"],
               dict(os.environ), lines=True)
c.wait_line("up", 30)
print("pid", c.pid, flush=True)
"""


def test_exit():
    proc, pid, mark = start_program(EXITS)
    name, value = mark[0].decode().split("=", 1)
    check(proc.wait(60) == 0, "the program exited 0")
    left = cmdlines(reaper.marked(name, value))
    watchdogs = [c for c in cmdlines([int(p) for p in os.listdir("/proc") if p.isdigit()])
                 if "reaper.py" in c and value in c]
    reaper.stop_marked(name, value)  # never leave them to the next test
    check(not left and not watchdogs, "the program exited with %s still running"
          % (left + watchdogs))
    print("the program exited; its child and its watchdog had gone before it")


if __name__ == "__main__":
    {"bench": test_bench, "harness": test_harness, "child": test_child,
     "exit": test_exit}[sys.argv[1]]()
    print("PASS")
