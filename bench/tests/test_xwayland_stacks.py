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
one-protocol: the render experiment's IPC per frame on both Xwayland
stacks with the app asking no frame timings (the round trip after its
swap, on both), and the frame timings' cost a row of its own: duet's X
window manager offers _NET_WM_FRAME_DRAWN and weston's does not, so the
timings run differs from the like-for-like run on duet's stack alone.
no-x11-unix: a machine where no X server has run yet (a private /tmp in a
mount namespace of its own, so no /tmp/.X11-unix): the weston-xwayland
stack starts (weston binds its X display's socket there, which it cannot
make itself: it died with SIGSEGV on a fresh machine), its readiness
probe's X launch is composited, the directory is left mode 1777 as X
servers make it, and the stack stops with nothing left.
Skipped, with one line, where Xwayland or weston's xwayland.so is missing,
and no-x11-unix where no mount namespace can be made (unshare).
Environment: DUET_BUILD_DIR (the build), DUET_TOOL (tools/duet).
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import check  # noqa: E402
from test_bench import check_nothing_left, run_killed, run_valid  # noqa: E402
from duet_launch import displays, stack as launch_stack  # noqa: E402
from duet_launch import reaper  # noqa: E402

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
                                ",".join(STACKS), "--reps", "2", "--seed", "3", "--no-trace"],
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


PRIVATE_TMP = "DUET_TEST_PRIVATE_TMP"


def in_private_tmp():
    """Runs this scenario again in a mount namespace of its own, with an
    empty tmpfs on /tmp: the paths the test runs from that lie under /tmp
    (a checkout or build there, as CI's may be) are bound back into it from
    the real /tmp, mounted aside first. Returns its exit status."""
    unshare = shutil.which("unshare")
    if not unshare:
        print("SKIP: no unshare (util-linux) to give the test a /tmp of its own")
        return 77
    keep = set()
    for path in (HERE, os.environ.get("DUET_BUILD_DIR"), os.environ.get("DUET_TOOL"),
                 os.path.dirname(launch_stack.__file__)):
        parts = os.path.realpath(path or "/").split(os.sep)
        if len(parts) > 2 and parts[1] == "tmp":
            keep.add(parts[2])
    aside = tempfile.mkdtemp(prefix="duet-real-tmp-", dir="/dev/shm" if os.access(
        "/dev/shm", os.W_OK) else None)
    # Not root: a user namespace of its own maps us to root in it.
    userns = [] if os.geteuid() == 0 else ["--map-root-user"]
    inner = ('set -e; aside="$1"; shift; mount --bind /tmp "$aside"; '
             'mount -t tmpfs duet-test-tmp /tmp; '
             'for top in %s; do mkdir -p "/tmp/$top"; mount --bind "$aside/$top" "/tmp/$top"; '
             'done; exec "$@"' % " ".join("'%s'" % k for k in sorted(keep)))
    try:
        r = subprocess.run([unshare, "--mount", "--propagation", "private"] + userns +
                           ["sh", "-c", inner, "sh", aside, sys.executable,
                            os.path.abspath(__file__), "no-x11-unix"],
                           env=dict(os.environ, **{PRIVATE_TMP: "1"}))
    finally:
        os.rmdir(aside)
    return r.returncode


def no_x11_unix():
    """weston --xwayland where no /tmp/.X11-unix exists (in_private_tmp)."""
    need(STACKS[1:])
    if os.environ.get(PRIVATE_TMP) != "1":
        sys.exit(in_private_tmp())
    from duet_bench import stacks  # noqa: E402 (PYTHONPATH: the bench)
    check(not os.path.exists(displays.X_SOCKET_DIR),
          "the private /tmp has no %s to begin with" % displays.X_SOCKET_DIR)
    work = tempfile.mkdtemp(prefix="duet-no-x11-unix-")
    env = dict(os.environ, TMPDIR=work)
    st = stacks.Stack("weston-xwayland", work, env)
    try:
        st.start()
        check(st.probe and st.probe.get("ms"), "the probe's X launch was composited on weston "
              "--xwayland: %r" % st.probe)
        mode = os.stat(displays.X_SOCKET_DIR).st_mode
        check(stat.S_ISDIR(mode) and stat.S_IMODE(mode) == 0o1777,
              "%s is a directory of mode 1777: %o" % (displays.X_SOCKET_DIR, mode))
        check(any(displays.X_SOCKET_DIR in n for n in st.notes),
              "the stack says it made the directory: %r" % st.notes)
    finally:
        st.stop()
    left = reaper.marked(launch_stack.MARK, st.mark)
    check(not left, "nothing of the stack is left: %r" % left)
    st.cleanup()
    print("PASS")


def one_protocol():
    need(STACKS)
    res, out, mark = run_valid(["--quick", "--experiments", "render", "--stacks",
                                ",".join(STACKS), "--render-engines", "sw", "--seed", "4",
                                "--no-trace"],
                               "duet bench --quick --experiments render on the Xwayland stacks",
                               timeout=500)
    for st in STACKS:
        ipc = res["ipc"][st]
        same, own = ipc.get("render") or {}, ipc.get("render_timings") or {}
        check(same.get("status", "ok") == "ok" and same.get("frame_timings") is False and
              same.get("presentation") == "roundtrip-fallback",
              "%s: the like-for-like count asks no frame timings: %r"
              % (st, {k: same.get(k) for k in ("status", "frame_timings", "presentation")}))
        check(own.get("frame_timings") is True and own.get("per_frame_study_style"),
              "%s: the frame timings' count is a row of its own: %r"
              % (st, {k: own.get(k) for k in ("status", "frame_timings", "presentation")}))
    check(res["ipc"]["xwayland"]["render_timings"]["presentation"] == "frame-drawn" and
          res["ipc"]["weston-xwayland"]["render_timings"]["presentation"] ==
          "roundtrip-fallback", "frame timings are duet's X WM's alone (weston 10's offers none)")
    check_nothing_left(mark, out)
    print("PASS")


if __name__ == "__main__":
    {"killed": killed, "no-x11-unix": no_x11_unix, "one-protocol": one_protocol}.get(sys.argv[1] if sys.argv[1:] else "",
                                                         quick)()
