#!/usr/bin/env python3
"""efl.reap_strays: after an EFL client, the daemons it left behind
(efreetd, orphaned to the bench, a child subreaper) are killed, but an
Enlightenment stack's own daemons, which fork away from the bench too (its
session bus), are left alone: killing E's bus made E shut itself down in
the middle of the next experiment.

Real processes: two daemons double-fork away from this test (a subreaper,
as the bench is), both with the stack's XDG_RUNTIME_DIR, one with the E
session's HOME and one with the EFL client's.
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from checks import check  # noqa: E402
from duet_bench import efl, procs  # noqa: E402


def daemon(env):
    """A sleep that forks away from its parent (like dbus-daemon --fork):
    its pid, orphaned to this process."""
    r = subprocess.run(["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], env=env,
                       capture_output=True, text=True, timeout=10)
    return int(r.stdout.strip())


def main():
    procs.become_subreaper()
    d = tempfile.mkdtemp(prefix="duet-reap-test-")
    runtime, e_home, efl_home = (os.path.join(d, n) for n in ("runtime", "e-home", "efl-home"))

    class Session:
        home = e_home

    class Stack:
        e_session = Session()
    Stack.runtime = runtime
    base = dict(os.environ, XDG_RUNTIME_DIR=runtime)
    bus = daemon(dict(base, HOME=e_home))
    efreetd = daemon(dict(base, HOME=efl_home))
    other = daemon(dict(os.environ, XDG_RUNTIME_DIR=os.path.join(d, "elsewhere"),
                        HOME=efl_home))
    time.sleep(0.2)
    check(all(procs.read_stat(p) and procs.read_stat(p)[1] == os.getpid()
              for p in (bus, efreetd, other)), "the three daemons were orphaned to the test")
    efl.reap_strays(Stack)
    check(procs.read_stat(efreetd) is None, "the EFL client's stray (pid %d) was killed"
          % efreetd)
    check(procs.read_stat(bus) is not None, "the E session's daemon (pid %d) was left alone"
          % bus)
    check(procs.read_stat(other) is not None, "another stack's daemon (pid %d) was left alone"
          % other)
    Stack.e_session = None
    efl.reap_strays(Stack)
    check(procs.read_stat(bus) is None, "without an E session the same daemon is a stray")
    os.kill(other, 9)
    os.waitpid(other, 0)
    print("PASS")


if __name__ == "__main__":
    main()
