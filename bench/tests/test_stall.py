#!/usr/bin/env python3
"""duet bench's phases and stall report (duet_bench/stall.py): a part of
the run that goes quiet for longer than --stall-report gets stalls.txt
naming the parts it is in, the Python line the bench waits on, where each
process it started waits and which one spends the CPU, and the tails of
the stacks' logs; again after a further stall; and each part's duration
is in results' phases, inner parts inside outer ones. The KMS guest's
bench once spent 34 minutes inside one experiment and said nothing of
where (2026-12-06). Real processes, no stack.

usage: test_stall.py [probe]
  probe: a stack whose readiness probe fails once (its duet-launch exits 3
         the first time) starts on the second attempt, and results.json's
         stacks.NAME.probe_failures and a progress line say why and how
         long the failed one took (each waits its full bound, silently
         before). Real duet bench on duet-compositor.
Environment (probe): DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet)."""
import json
import os
import re
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
        check("sleep (pid %d): S" % idle.pid in text and
              re.search(r"^loadavg: \d", text, re.M),
              "each process named by its command, and the machine's load average")
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


def build_with_failing_launch(tmp):
    """A build directory like DUET_BUILD_DIR (symlinks) whose duet-launch
    exits 3 on its first start and is the real one after that."""
    real = os.environ["DUET_BUILD_DIR"]
    fake = os.path.join(tmp, "build")
    os.makedirs(os.path.join(fake, "clients"))
    for e in os.listdir(real):
        if e != "clients":
            os.symlink(os.path.join(real, e), os.path.join(fake, e))
    for e in os.listdir(os.path.join(real, "clients")):
        if e != "duet-launch":
            os.symlink(os.path.join(real, "clients", e), os.path.join(fake, "clients", e))
    wrapper = os.path.join(fake, "clients", "duet-launch")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nif mkdir %s 2>/dev/null; then echo 'failing once' >&2; exit 3; fi\n"
                "exec %s \"$@\"\n" % (os.path.join(tmp, "failed-once"),
                                      os.path.join(real, "clients", "duet-launch")))
    os.chmod(wrapper, 0o755)
    return fake


def test_probe():
    with tempfile.TemporaryDirectory(prefix="duet-probe-") as tmp:
        out = os.path.join(tmp, "out")
        env = dict(os.environ, DUET_BUILD_DIR=build_with_failing_launch(tmp))
        r = subprocess.run([sys.executable, os.environ["DUET_TOOL"], "bench", "--quick",
                            "--experiments", "launch", "--stacks", "wayland", "--reps", "1",
                            "--no-ipc", "--out", out], env=env, capture_output=True, text=True,
                           timeout=GUARD_S * 5)
        print(r.stderr[-3000:])
        check(r.returncode == 0, "duet bench exits 0 after a probe failed once (%d)"
              % r.returncode)
        with open(os.path.join(out, "results.json")) as f:
            res = json.load(f)
        pf = res["stacks"]["wayland"].get("probe_failures")
        check(pf and len(pf) == 1 and pf[0]["step"] == "launch" and len(pf[0]["failed"]) == 1
              and "status 3" in pf[0]["failed"][0]["why"] and
              "failing once" in pf[0]["failed"][0]["why"] and pf[0]["failed"][0]["s"] >= 0,
              "results say the probe failed once in the launch job's start, why and how long: "
              "%r" % pf)
        check("wayland stack's readiness probe failed 1 time(s) before it worked: duet-launch "
              "exited with status 3" in r.stderr, "a progress line says so")
        check(res["experiments"]["launch"]["wayland"]["status"] == "ok" and
              res["experiments"]["launch"]["wayland"]["samples"],
              "and the launch was measured")
    print("PASS")


if __name__ == "__main__":
    test_probe() if sys.argv[1:] == ["probe"] else test()
