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
HUNG = r"""
import faulthandler, signal, subprocess, sys
faulthandler.register(signal.SIGUSR1, all_threads=True)
child = subprocess.Popen(["sleep", "300"])
print("child", child.pid, flush=True)
def waits_for_the_frame():
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
        hang.run_guarded([sys.executable, "-c", HUNG], 2, stacks_signal=signal.SIGUSR1,
                         grace=20)
        check(False, "a hung run raises Hung")
    except hang.Hung as e:
        why = str(e)
    print(why)
    child = [int(m) for m in re.findall(r"^child (\d+)$", why, re.M)]
    check(child, "the output so far is in the reason")
    check("did not finish in 2 s" in why, "the reason names the timeout")
    check("(sleep 300): S, main thread in " in why,
          "the child is named with its wait: %r" % why)
    check("waits_for_the_frame" in why and "most recent call first" in why,
          "the Python stacks it was asked for are in the reason")
    check("interrupted, settling" in why, "it was interrupted first (SIGINT) and said so")
    for _ in range(200):
        if proc.start_time(child[0]) is None:
            break
        time.sleep(0.01)
    st = proc.where_waiting(child[0])
    check(st is None or st.startswith("Z"), "the sleeper it started is gone (%r)" % st)
    print("ok")


if __name__ == "__main__":
    main()
