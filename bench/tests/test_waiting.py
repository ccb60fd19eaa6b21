#!/usr/bin/env python3
"""Where a process waits, for a timeout's reason (proc.where_waiting): a
sleeping process is named with its state and its main thread's kernel wait,
a stopped one as stopped, a gone one as gone. A bench run that times out on
an app names this for the app and every stack process, so a hung server
and a hung app read differently in a CI log."""
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from checks import check  # noqa: E402
from duet_launch import hang, proc  # noqa: E402


def settled(pid, state):
    """where_waiting once pid is in state with its main thread in a named
    wait: the state and the waits are read one after the other, and a
    process starting up can sleep a moment and run again in between ('S,
    main thread in running' beside a CPU hog in the aarch64 phase)."""
    for _ in range(500):
        w = proc.where_waiting(pid)
        if w and w.startswith(state + ",") and not w.startswith(state + ", main thread in running"):
            return w
        time.sleep(0.01)
    return proc.where_waiting(pid)


def main():
    p = subprocess.Popen(["sleep", "60"])
    try:
        w = settled(p.pid, "S")
        check(w and w.startswith("S, main thread in ") and "running" not in w.split(",")[1],
              "a sleeping process: asleep, its main thread in a kernel wait: %r" % w)
        check(w and "threads:" in w, "the threads' waits are counted: %r" % w)
        os.kill(p.pid, signal.SIGSTOP)
        w = settled(p.pid, "T")
        check(w and w.startswith("T,"), "a stopped process reads as stopped (T): %r" % w)
    finally:
        p.kill()
        p.wait()
    check(proc.where_waiting(p.pid) is None, "a reaped process has no wait")

    # A process asleep in a lock (its second acquire of a lock it holds):
    # read as in a lock, and gdb names the frames that took it (one CI run,
    # 2026-12-05, had a compositor asleep in a futex for 61 s, and its
    # reason had no frame to name the lock).
    p = subprocess.Popen(["python3", "-c", "import threading\nl = threading.Lock()\n"
                          "l.acquire()\nprint('locked', flush=True)\nl.acquire()"],
                         stdout=subprocess.PIPE, text=True)
    try:
        check(p.stdout.readline().strip() == "locked", "the locker took its lock")
        w = settled(p.pid, "S")
        check(hang.in_lock(w), "a process asleep in a lock reads so: %r" % w)
        frames = hang.user_stack(p.pid, all_threads=True)
        check(any(f.startswith("Thread ") for f in frames) and
              any("acquire" in f for f in frames if f.startswith("#")),
              "gdb names its threads and the frame that waits for the lock:\n%s"
              % "\n".join(frames))
    finally:
        p.kill()
        p.wait()
    check(not hang.in_lock(proc.where_waiting(os.getpid())),
          "a process that runs is not in a lock")
    print("ok")


if __name__ == "__main__":
    main()
