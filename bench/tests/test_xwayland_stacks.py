#!/usr/bin/env python3
"""`duet bench --quick --experiments launch` on the Xwayland stacks (issue
32): xwayland (duet-compositor --xwayland) and weston-xwayland (weston
--xwayland), duet-launch's X11 build on both.

quick: each stack has launch samples whose headline is fork -> composited
(from duet-compositor's trace and weston's timeline, not the fallback to
presented), its results name the apps' window system x11 and the server's
wayland, and the counted processes (the in-process counter's, strace's,
the context switches') are the server and Xwayland, each with calls of its
own, Xwayland's Wayland messages beside the app's X counts.
killed: Xwayland SIGKILLed in the middle of xwayland's launches: the
experiment fails for that stack, saying the stack's xwayland died, with
the server's log; the run returns and nothing of it is left.
Skipped, with one line, where Xwayland or weston's xwayland.so is missing.
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import check  # noqa: E402
from test_bench import check_nothing_left, run_killed, run_valid  # noqa: E402
from duet_launch import stack as launch_stack  # noqa: E402

STACKS = ("xwayland", "weston-xwayland")


def need(stacks):
    for st in stacks:
        why = launch_stack.missing(launch_stack.Config(st))
        if why:
            print("SKIP: the %s stack cannot run here: %s" % (st, why))
            sys.exit(77)


def quick():
    need(STACKS)
    res, out, mark = run_valid(["--quick", "--experiments", "launch", "--stacks",
                                ",".join(STACKS), "--reps", "2", "--seed", "3"],
                               "duet bench --quick on the Xwayland stacks", timeout=400)
    for st in STACKS:
        srec = res["stacks"][st]
        check(srec["status"] == "ok" and srec["kind"] == "x11" and srec["server"] == "wayland",
              "%s: ran, X11 apps on a Wayland server: %r" % (st, srec))
        rec = res["experiments"]["launch"][st]
        check(rec["status"] == "ok", "%s: launch ran (%s)" % (st, rec.get("reason")))
        samples = [s for s in rec["samples"] if s.get("run", 0) > 0]
        check(samples, "%s: launch samples" % st)
        for s in samples:
            check("composited" in s["timeline"] and not s.get("note") and s["ms"] > 0 and
                  abs(s["ms"] * 1e6 - s["timeline"]["composited"]) < 1,
                  "%s: a launch figure fork -> composited: %r" % (st, s))
            check("Xwayland" in s["timeline_source"]["composited"],
                  "%s: composited told by the server of Xwayland's surface: %r"
                  % (st, s["timeline_source"]))
            per = s["switches"]["per_op"]
            check({"server", "xwayland", "app"} <= set(per),
                  "%s: context switches of the server, Xwayland and the app: %r" % (st, per))
        ipc = res["ipc"][st]
        procs = ipc["launch"]["processes"]
        check({"server", "xwayland", "app"} <= set(procs),
              "%s: the counter counted the server, Xwayland and the app: %s" % (st, sorted(procs)))
        check(procs["xwayland"]["comm"] == "Xwayland" and procs["xwayland"]["ipc_unix"] > 0 and
              procs["server"]["ipc_unix"] > 0,
              "%s: Xwayland and the server each made IPC calls: %r"
              % (st, {r: (p["comm"], p["ipc_unix"]) for r, p in procs.items()}))
        check(procs["app"]["peers"].get("xwayland", 0) > 0 and "server" not in procs["app"]["peers"],
              "%s: the app's peer is Xwayland, not the server: %r" % (st, procs["app"]["peers"]))
        strace = ipc["strace_launch"]["processes"]
        check(strace.get("xwayland", {}).get("ipc_unix", 0) > 0 and
              strace["xwayland"]["peers"].get("app", 0) > 0 and
              strace["xwayland"]["peers"].get("server", 0) > 0,
              "%s: strace saw Xwayland talk to the app and the server: %r"
              % (st, strace.get("xwayland")))
        xw = ipc["launch"].get("protocol_xwayland") or {}
        check(xw.get("requests", 0) > 0 and "requests" in ipc["launch"]["protocol"],
              "%s: Xwayland's Wayland requests and the app's X counts: %r, %r"
              % (st, xw, ipc["launch"]["protocol"]))
    check_nothing_left(mark, out)
    print("PASS")


def killed():
    need(STACKS[:1])
    out, mark, res, rec = run_killed(["--quick", "--experiments", "launch", "--stacks",
                                      "xwayland", "--reps", "3", "--no-ipc"],
                                     "xwayland:launch:0:xwayland", timeout=300)
    check("xwayland" in rec["reason"], "the failure names Xwayland: %s" % rec["reason"])
    check_nothing_left(mark, out)
    print("PASS")


if __name__ == "__main__":
    killed() if sys.argv[1:] == ["killed"] else quick()
