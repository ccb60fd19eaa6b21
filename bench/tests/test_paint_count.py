#!/usr/bin/env python3
"""duet-paint-count (bench/probes/paint-count.c, through duet_bench.paint_count)
counts the paints of the X compositing managers that tell nobody.

On the openbox stack (xcompmgr, which paints onto the root window) and the
i3 stack (picom, onto the Composite overlay window it holds): fewer than 5
paints in a quiet second with no client drawing, then more than 20 a second
while duet-render (sw engine, unthrottled) draws one 2 s scene. On openbox
the counter takes no overlay and every paint is the root's; on i3 (nearly)
all are the overlay's, each counted once though the root sees it too. A
counter watching the wrong window, or none, fails the rate; one that gave
xcompmgr an overlay (which it then composites without end) fails the quiet
second. On a bare Xvfb, with no compositing manager, it exits 2 saying
nobody owns _NET_WM_CM_S0.
Skipped, with one line, where a stack's programs or the counter are missing.
Environment: DUET_BUILD_DIR (the build).
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import check, wait_until  # noqa: E402
from duet_bench import paint_count, stacks  # noqa: E402
from duet_launch import displays, paths, proc, stack as launch_stack  # noqa: E402

# (stack, the window its CM paints onto)
STACKS = (("openbox", "root"), ("i3", "overlay"))
SCENE_MS = 2000


def rate(paints, t0, t1):
    return paint_count.paints_between(paints, t0, t1) / ((t1 - t0) / 1e9)


def on_stack(name, target, render):
    work = tempfile.mkdtemp(prefix="duet-paint-count-")
    st = stacks.Stack(name, work, dict(os.environ))
    try:
        st.start()
        pc = paint_count.PaintCounter(st.display, dict(os.environ)).start()
        time.sleep(0.5)  # past what the stack's readiness probe left to paint
        q0 = time.monotonic_ns()
        time.sleep(1.0)
        q1 = time.monotonic_ns()
        t0 = time.monotonic_ns()
        app = subprocess.run([render, "--backend", "x11", "--engine", "sw", "--duration-ms",
                              str(SCENE_MS), "--scenes", "rect_blend"], env=st.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             timeout=proc.patience(30))
        t1 = time.monotonic_ns()
        paints = pc.stop()
    finally:
        st.stop()
        st.cleanup()
    check(app.returncode == 0, "%s: duet-render drew its scene (%s)"
          % (name, app.stderr.decode("utf-8", "replace").strip()[-300:]))
    quiet = paint_count.paints_between(paints, q0, q1)
    hz = rate(paints, t0, t1)
    print("info: %s: %d paints in the quiet second, %.1f a second under duet-render "
          "(%d root's repeated on the overlay merged)" % (name, quiet, hz, pc.done["merged"]),
          flush=True)
    check(pc.done["paints"] == len(paints) and paints == sorted(paints),
          "%s: one paint line per paint counted, in time order" % name)
    check(quiet < 5, "%s: %d paints in a second with no client drawing (< 5)" % (name, quiet))
    check(hz > 20, "%s: %.1f paints a second while duet-render draws (> 20)" % (name, hz))
    targets = [ev["target"] for ev in pc.paint_lines]
    if target == "root":
        check(pc.ready["overlay"] == "0x0" and set(targets) == {"root"},
              "%s: no overlay taken, the paints are the root's (overlay %s, %d on it)"
              % (name, pc.ready["overlay"], targets.count("overlay")))
    else:
        # All of them, but for the rare one whose two subtracts the server
        # split with the CM's requests between (counted once, as the root's).
        check(pc.ready["overlay"] != "0x0" and targets.count("overlay") >= 0.9 * len(targets),
              "%s: the CM's overlay %s watched, the paints on it (%d of %d)"
              % (name, pc.ready["overlay"], targets.count("overlay"), len(targets)))


def without_cm():
    """A bare Xvfb: the counter has nothing to count and says why."""
    xvfb = None
    for n in displays.x_numbers():
        xvfb = proc.Child("Xvfb", ["Xvfb", ":%d" % n, "-screen", "0", "640x480x24",
                                   "-nolisten", "tcp"], dict(os.environ))
        wait_until(lambda: not xvfb.alive() or displays.accepting(displays.x_socket(n)),
                   "Xvfb :%d to listen" % n, proc.patience(20))
        if xvfb.alive():
            break
        xvfb.stop()  # lost the number to another server: the next
    else:
        check(False, "a bare Xvfb started on one of 5 free display numbers")
    try:
        res = subprocess.run([paint_count.find_paint_count(), "--display", ":%d" % n,
                              "--timeout-ms", "5000"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, timeout=proc.patience(20))
        err = res.stderr.decode("utf-8", "replace").strip()
        check(res.returncode == 2 and "_NET_WM_CM_S0" in err and "\n" not in err and
              b"paint_count_ready" not in res.stdout,
              "no compositing manager: exit 2, one line naming _NET_WM_CM_S0 (%d: %r)"
              % (res.returncode, err))
        try:
            paint_count.PaintCounter(":%d" % n, dict(os.environ)).start().stop()
            check(False, "PaintCounter.start() raises where no compositing manager runs")
        except paint_count.PaintCountError as e:
            check("_NET_WM_CM_S0" in str(e), "PaintCounter.start() raises with that reason: %s" % e)
    finally:
        xvfb.stop()


def main():
    if not paint_count.find_paint_count():
        print("SKIP: duet-paint-count is not built (it needs libxcb-damage, -composite, -res)")
        sys.exit(77)
    render = paths.find_own("duet-render", "clients")
    if not render:
        print("SKIP: duet-render is not built")
        sys.exit(77)
    for name, _ in STACKS:
        why = launch_stack.missing(launch_stack.Config(name))
        if why:
            print("SKIP: the %s stack cannot run here: %s" % (name, why))
            sys.exit(77)
    for name, target in STACKS:
        on_stack(name, target, render)
    without_cm()
    print("PASS")


if __name__ == "__main__":
    main()
