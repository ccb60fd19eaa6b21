#!/usr/bin/env python3
"""A guarded run that outlives its timeout also says what the servers it
talks to were doing (duet_launch.hang, peers=): a client blocked on a
reply looks the same whether its server computes or sleeps, so the
reason names each peer's wait and the CPU it used meanwhile. Found
needed when `duet-xctl resize` waited 30 s on an Xvfb nobody looked at."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from checks import check  # noqa: E402
from duet_launch import hang  # noqa: E402


def main():
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    idle = subprocess.Popen(["sleep", "300"])
    try:
        try:
            hang.run_guarded(["sleep", "300"], 1, grace=5,
                             peers=lambda: [("busy-server", busy.pid), ("idle-server", idle.pid)])
            check(False, "a run past its timeout returned")
        except hang.Hung as e:
            why = str(e)
    finally:
        busy.kill()
        idle.kill()
        busy.wait()
        idle.wait()
    print(why)
    check("The servers it talks to:" in why, "the reason has no peers' part")
    used = {}
    for name in ("busy-server", "idle-server"):
        m = re.search(r"%s \(pid \d+\): (\S+), .*?; ([0-9.]+) s of CPU in the last" % name, why)
        check(m is not None, "the reason does not name %s with its wait and CPU" % name)
        used[name] = float(m.group(2))
    check(used["idle-server"] == 0.0, "a sleeping peer used %.2f s of CPU" % used["idle-server"])
    # More, not a rate: a loaded machine may give the loop little of a core.
    check(used["busy-server"] > used["idle-server"],
          "the spinning peer used no more CPU than the sleeping one: %r" % used)
    print("ok: the reason names each peer's wait and the CPU it used")


if __name__ == "__main__":
    main()
