#!/usr/bin/env python3
"""Context switches per operation (issue 14, item 2).

usage: test_switches.py cost|interval|fields|threads
  cost:     switches.cost() with the built duet-roundtrip: ok, finite and
            positive, less than the pinned trip, about 2 switches per trip;
            pipe-self makes no switch per trip.
  interval: switches.Marks on a real child that blocks on a pipe once per
            byte it is sent: the switches between two marks are the ones of
            the operations between them (not those before the first mark),
            per operation.
  fields:   `duet bench --quick` with launch, render, cpu, resize and
            roundtrip on duet-compositor: every sample's `switches` record
            is there, for the stack's server and the app, over the
            experiment's own interval (launch: the sample's raw counts / 1;
            render: the CPU-per-frame interval and its frames; roundtrip:
            1000 trips; resize: one per mode), the machine's switch cost,
            the report's table, and the schema.
  threads:  procs.ctx_switches on a real child whose thread sleeps 200
            times and ends: the count taken after the thread ended keeps its
            switches (mutter's threads come and go, and the sum over the
            live threads went backwards: a negative per-frame count).
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import fcntl
import json
import math
import os
import struct
import subprocess
import sys
import termios
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from checks import blocked_in_read, check  # noqa: E402
from duet_bench import switches  # noqa: E402
from test_bench import run_valid  # noqa: E402



def roundtrip_exe():
    return os.path.join(os.environ["DUET_BUILD_DIR"], "clients", "duet-roundtrip")


def test_cost():
    c = switches.cost(roundtrip_exe())
    print(c)
    check(c["status"] == "ok", "the switch cost was measured: %s" % c.get("reason"))
    check(math.isfinite(c["us"]) and 0 < c["us"] < c["trip_us"],
          "0 < one switch (%s us) < the pinned trip (%s us)" % (c["us"], c["trip_us"]))
    check(0 < c["self_us"] < c["trip_us"], "the one-process loop (%s us) is cheaper than the "
          "trip (%s us)" % (c["self_us"], c["trip_us"]))
    check(1.5 <= c["switches_per_trip"] <= 3, "the pinned trip makes ~2 switches (%s)"
          % c["switches_per_trip"])
    r = subprocess.run([roundtrip_exe(), "pipe-self", "--groups", "3", "--trips", "1000"],
                       capture_output=True, text=True, timeout=60)
    done = [json.loads(l) for l in r.stdout.splitlines() if '"roundtrip_done"' in l]
    check(r.returncode == 0 and done and done[0]["switches"] < 30,
          "pipe-self: 3000 trips, almost no switch (%s)" % (done and done[0]["switches"]))
    check(subprocess.run([roundtrip_exe(), "pipe-selfish"], capture_output=True).returncode == 2,
          "an unknown kind is a usage error")


def unread(fd):
    """Bytes waiting in the pipe fd is an end of (FIONREAD)."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]


def test_interval():
    # The child blocks in read() until each byte comes: one voluntary
    # switch (at least) per byte, each byte sent once the child is seen
    # asleep in its read (not after a pause, which a loaded machine can
    # outlast: two bytes would then come to one wakeup).
    child = subprocess.Popen([sys.executable, "-c",
                              "import os,sys\nwhile os.read(0, 1): pass"],
                             stdin=subprocess.PIPE)
    try:
        def settle():
            # The last byte taken, then the child asleep in its next read
            # (a hang guard, no time limit).
            deadline = time.monotonic() + 10
            while unread(child.stdin.fileno()) or not blocked_in_read(child.pid):
                check(time.monotonic() < deadline and child.poll() is None,
                      "the child never blocked in its read")
                time.sleep(0.001)

        def poke(k):
            for _ in range(k):
                child.stdin.write(b"x")
                child.stdin.flush()
                settle()
        settle()
        marks = switches.Marks({"app": child.pid})
        poke(40)             # before the interval: must not count
        marks.mark("a")
        poke(10)
        marks.mark("b")
        per = marks.between("a", "b", 10, "op", "a -> b")
        print(per)
        v = per["per_op"]["app"]["voluntary"]
        check(0.9 <= v <= 2.5, "10 blocking reads between the marks: %s voluntary switches "
              "per read, not the 40 before" % v)
        check(per["all"] == per["per_op"]["app"]["total"] and per["window_system"] == 0,
              "the app is not window system: %r" % per)
        check(per["n"] == 10 and per["op"] == "op", "n and op recorded")
        check(switches.per_op({"app": {"voluntary": 3, "involuntary": 1}}, 0, "x", "") is None,
              "no operation, no per-operation figure")
        # The report's frequency line from per-sample records as a board
        # with cpufreq writes them (this machine has none to read).
        from duet_bench import report
        res = {"experiments": {"launch": {"wayland": {"samples": [
            {"cpufreq": {"governor": ["ondemand", "ondemand"], "min_khz": [200000, 200000],
                         "cur_khz": [1704000, 600000], "max_khz": [1704000, 1704000]}},
            {"cpufreq": {"governor": ["performance", "ondemand"], "min_khz": [200000] * 2,
                         "cur_khz": [1704000, 1400000], "max_khz": [1704000] * 2}}]}}}}
        check(report.freq_text(res) == "governors ondemand, performance; current "
              "600000..1704000 kHz over the jobs' CPUs", "report: %s" % report.freq_text(res))
    finally:
        child.stdin.close()
        child.wait(5)


def test_fields():
    res, out, _ = run_valid(["--quick", "--experiments", "launch,render,cpu,resize,roundtrip",
                             "--stacks", "wayland", "--render-engines", "sw", "--no-ipc",
                             "--seed", "3"], "duet bench", timeout=500)
    cost = res["machine"]["switch_cost"]
    check(cost["status"] == "ok" and cost["us"] > 0, "machine.switch_cost: %s" % cost)
    ex = res["experiments"]

    def has_roles(sw, what):
        check(sw and {"server", "app"} <= set(sw["per_op"]) and sw["all"] > 0 and
              all(p["total"] >= 0 for p in sw["per_op"].values()),
              "%s: switches of the server and the app: %r" % (what, sw))
    for s in ex["launch"]["wayland"]["samples"]:
        sw = s["switches"]
        has_roles(sw, "launch")
        raw = s["ctx_switches"]
        check(sw["op"] == "launch" and sw["n"] == 1 and all(
            sw["per_op"][r]["voluntary"] == raw[r]["voluntary"] and
            sw["per_op"][r]["involuntary"] == raw[r]["involuntary"] for r in raw),
            "launch: per launch = the sample's own fork -> composited counts")
    for s in ex["render"]["wayland"]["samples"]:
        sw, cpf = s["switches"], s["cpu_per_frame"]
        has_roles(sw, "render")
        check(sw["op"] == "frame" and sw["n"] == cpf["frames"] and
              sw["interval"] == cpf["interval"],
              "render: per frame over the CPU-per-frame interval (%s, %s frames)"
              % (sw["interval"], sw["n"]))
    for s in ex["cpu"]["wayland"]["samples"]:
        has_roles(s["switches"], "cpu")
        check(s["switches"]["op"] == "frame", "cpu: per frame")
    rz = ex["resize"]["wayland"]["switches"]
    check(sorted(x["mode"] for x in rz) == ["client", "server"] and all(
        x["op"] == "resize" and 1 <= x["n"] < 8 * 2 for x in rz),
        "resize: one record per mode, per step between the first and last step: %r"
        % [(x["mode"], x["n"]) for x in rz])
    for x in rz:
        has_roles(x, "resize " + x["mode"])
    for s in ex["roundtrip"]["wayland"]["samples"]:
        sw = s["switches"]
        check(sw["op"] == "trip" and sw["n"] == 1000 and "app" in sw["per_op"],
              "roundtrip %s: per trip over 1000 trips" % s["kind"])
        if s["kind"] == "server":
            check(abs(sw["all"] - s["switches_per_trip_all"]) < 0.01,
                  "roundtrip server: the same figure as switches_per_trip_all")
    # Issue 14 item 5: every sample says the CPUs' governor and frequencies
    # at its job's end, or that there is no cpufreq, as the run's record.
    have = res["machine"]["cpufreq"]["status"] == "ok"
    for e, per in ex.items():
        for smp in per["wayland"]["samples"]:
            f = smp.get("cpufreq") or {}
            check((len(f.get("cur_khz") or []) == len(res["machine"]["cpufreq"]["cpus"]) and
                   len(f["governor"]) == len(f["min_khz"]) == len(f["max_khz"])) if have
                  else f.get("status") == "unavailable",
                  "%s sample: cpufreq per CPU, or unavailable as the machine's: %r" % (e, f))
    with open(os.path.join(out, "report.md")) as f:
        md = f.read()
    check(("| CPU frequency per job | governors " if have else
           "| CPU frequency per job | no cpufreq on this machine") in md,
          "the report's machine table says the frequencies per job, or that there are none")
    check("## Context switches per operation" in md and "| launch | wayland |" in md,
          "the report's table of switches per operation")
    check("cost of one context switch | %.3g us" % cost["us"] in md,
          "the report's machine table gives the switch cost")
    print("PASS")


THREAD_CHILD = """
import sys, threading, time
def work():
    for _ in range(200):
        time.sleep(0.0005)
t = threading.Thread(target=work)
t.start()
print("started", flush=True)
sys.stdin.readline()          # the parent read the counts with the thread alive
t.join()
print("ended", flush=True)
sys.stdin.readline()
"""


def test_threads():
    from duet_bench import procs
    child = subprocess.Popen([sys.executable, "-c", THREAD_CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        check(child.stdout.readline().strip() == "started", "the child's thread runs")
        time.sleep(0.05)
        during = procs.ctx_switches(child.pid)
        child.stdin.write("\n")
        child.stdin.flush()
        check(child.stdout.readline().strip() == "ended", "its thread ended")
        after = procs.ctx_switches(child.pid)
    finally:
        child.stdin.close()
        child.wait(10)
    check(during and after and after["voluntary"] >= during["voluntary"],
          "the count after the thread ended keeps its switches: %r then %r" % (during, after))
    check(during["voluntary"] > 5,
          "the thread's sleeps were counted while it ran: %r" % during)


if __name__ == "__main__":
    {"cost": test_cost, "interval": test_interval, "fields": test_fields,
     "threads": test_threads}[sys.argv[1]]()
