#!/usr/bin/env python3
"""duet bench's phases and stall report (duet_bench/stall.py): a part of
the run that goes quiet for longer than --stall-report gets stalls.txt
naming the parts it is in, the Python line the bench waits on, where each
process it started waits and which one spends the CPU, and the tails of
the stacks' logs; again after a further stall; and each part's duration
is in results' phases, inner parts inside outer ones. The KMS guest's
bench once spent 34 minutes inside one experiment and said nothing of
where (2026-12-06). Real processes, no stack."""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from checks import check  # noqa: E402
from duet_bench import stall  # noqa: E402

GUARD_S = 60  # a hang guard, not a criterion


def wait_for_second_stall(path, said):
    """Where the main thread waits in the report: this function's name."""
    deadline = time.monotonic() + GUARD_S
    while time.monotonic() < deadline:
        if len(said) >= 2:
            return
        time.sleep(0.05)
    check(False, "no second stall report within %d s (said: %r)" % (GUARD_S, said))


def test():
    with tempfile.TemporaryDirectory(prefix="duet-stall-") as tmp:
        logs = os.path.join(tmp, "work", "openbox-x1")
        os.makedirs(logs)
        with open(os.path.join(logs, "server.log"), "w") as f:
            f.write("".join("line %d\n" % i for i in range(100)) + "the server's last words\n")
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        idle = subprocess.Popen(["sleep", "300"])
        results, said = {}, []
        ph = stall.Phases(results, tmp, said.append, 1.0, logs=os.path.join(tmp, "work"))
        try:
            with ph("concurrent on openbox"):
                with ph("8 apps"):
                    wait_for_second_stall(ph.path, said)
        finally:
            ph.close()
            busy.kill()
            idle.kill()
        with open(ph.path) as f:
            text = f.read()
        print(text[-4000:])
        check(text.count("=== stall ") == 2 and "=== stall 2:" in text,
              "a report, and another after a further quiet second")
        check(all("stall: nothing new for" in s and ph.path in s for s in said),
              "each report said on one line with its file: %r" % said)
        check("in: concurrent on openbox > 8 apps" in text, "the parts the stall is in, outer first")
        check("wait_for_second_stall" in text, "the main thread's Python stack, where it waits")
        cpu = {}
        for line in text.splitlines():
            for name, p in (("busy", busy), ("idle", idle)):
                if "(pid %d)" % p.pid in line and "s of CPU in the last" in line:
                    cpu[name] = float(line.split("; ")[-1].split(" s of CPU")[0])
        check(set(cpu) == {"busy", "idle"} and cpu["busy"] > cpu["idle"],
              "the CPU of each process the bench started over a second: the spinning one "
              "more than the sleeping one: %r" % cpu)
        check("pid %d (sleep 300)" % idle.pid in text, "where each process waits, with its argv")
        check("the server's last words" in text and "line 80\n" not in text and
              "server.log (last 15 lines)" in text, "the tail of each stack log")
        # Each part's duration as it ended, the inner one first and inside.
        p = results.get("phases", [])
        check([x["what"] for x in p] == ["8 apps", "concurrent on openbox"],
              "both parts recorded as they ended: %r" % p)
        inner, outer = p
        check(outer["at_s"] <= inner["at_s"] and
              inner["at_s"] + inner["s"] <= outer["at_s"] + outer["s"] + 0.001 and
              inner["s"] >= 1.0, "the inner part within the outer, as long as it was: %r" % p)
    print("PASS")


if __name__ == "__main__":
    test()
