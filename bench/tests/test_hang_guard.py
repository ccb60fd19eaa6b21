#!/usr/bin/env python3
"""A run that outlives its hang guard says where it waited
(duet_launch.hang.run_guarded): the reason names each process of its tree
with its wait, holds the Python stacks a faulthandler program writes when
asked (as duet bench does on SIGUSR1), and the output it gave so far; the
program is interrupted first (SIGINT), and nothing it started is left. A
run within its time is a plain completed process."""
import os
import re
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from checks import check  # noqa: E402
from duet_launch import hang, proc  # noqa: E402

# A program that starts a sleeper and then waits on it in a function whose
# name the stacks must show; SIGINT makes it print a line and exit 130.
# It prints "ready" once all that is in place (the sleeper asleep, itself
# in the function): the guard's 2 s count from there, so a slow start
# (qemu beside a busy core) is not taken for the hang.
HUNG = r"""
import faulthandler, signal, subprocess, sys, time
faulthandler.register(signal.SIGUSR1, all_threads=True)
child = subprocess.Popen(["sleep", "300"])
print("child", child.pid, flush=True)
deadline = time.monotonic() + 60
while open("/proc/%d/stat" % child.pid).read().rsplit(")", 1)[1].split()[0] != "S":
    if time.monotonic() > deadline:
        sys.exit("the sleeper did not sleep in 60 s")
    time.sleep(0.01)
def waits_for_the_frame():
    print("ready", flush=True)
    child.wait()
try:
    waits_for_the_frame()
except KeyboardInterrupt:
    print("interrupted, settling", flush=True)
    sys.exit(130)
"""


def main():
    r = hang.run_guarded([sys.executable, "-c", "import sys; print('out'); "
                          "print('err', file=sys.stderr); sys.exit(3)"], 60)
    check(r.returncode == 3 and r.stdout == "out\n" and r.stderr == "err\n",
          "within its time: status and both outputs kept (%r)" % (r,))

    try:
        r = hang.run_guarded([sys.executable, "-c", HUNG], 2, stacks_signal=signal.SIGUSR1,
                             grace=20, ready="ready")
        check(False, "a hung run raises Hung (it ended: %r)" % (r,))
    except hang.Hung as e:
        why = str(e)
    print(why)
    child = [int(m) for m in re.findall(r"^child (\d+)$", why, re.M)]
    check(child, "the output so far is in the reason")
    check("did not finish in 2 s after printing 'ready'" in why,
          "the reason names the timeout and where it began")
    check("(sleep 300): S, main thread in " in why,
          "the child is named with its wait: %r" % why)
    # Looked for as the stacks and the output give them, not as words: the
    # reason begins with the command line, the program's source, which
    # has both the function's name and the interrupted line's text.
    check(re.search(r"line \d+ in waits_for_the_frame$", why, re.M)
          and "most recent call first" in why,
          "the Python stacks it was asked for are in the reason")
    check(re.search(r"^interrupted, settling$", why, re.M),
          "it was interrupted first (SIGINT) and said so")
    # Killed (SIGKILL, by then sent): gone, or a zombie, once it has run
    # (a hang guard, not a time it is allowed).
    deadline = time.monotonic() + 60
    while True:
        st = proc.where_waiting(child[0])
        if st is None or st.startswith("Z") or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    check(st is None or st.startswith("Z"), "the sleeper it started is gone (%r)" % st)

    # A program that never prints its ready line is a hang too, found by
    # ready_timeout (it never does: no time here to outlast).
    try:
        r = hang.run_guarded([sys.executable, "-c", "import time; time.sleep(300)"], 60,
                             grace=20, ready="ready", ready_timeout=1)
        check(False, "a run that never gets ready raises Hung (it ended: %r)" % (r,))
    except hang.Hung as e:
        why = str(e)
    check("did not print 'ready' in 1 s" in why, "the reason names the missing line: %r"
          % why.splitlines()[0])
    print("ok")


if __name__ == "__main__":
    main()
