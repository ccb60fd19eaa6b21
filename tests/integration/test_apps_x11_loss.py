#!/usr/bin/env python3
"""The toolkit's X11 backend reports a lost X server or window manager with
the apps' documented exit status 1 (clients/README.md), promptly.

usage: test_apps_x11_loss.py server-dies|wm-dies|swap-after-loss ENGINE
  server-dies  Xvfb is SIGKILLed under duet-render drawing as fast as it
               can: the app exits 1 with a reason, not by SIGPIPE
  wm-dies      duet-launch waits for duet-xwm (stopped) to map its window,
               then duet-xwm is SIGKILLed: the app says the window manager
               went away and exits 1, not its 60 s --timeout-ms's "not
               mapped within"
  swap-after-loss  an app that draws on after its X server died (it
               ignored the loss; tests/clients/x11-swap-after-loss.c):
               the frame is refused within seconds. With the GL engine the
               swap on the broken connection used to never return
               (clients/toolkit/tk-engine-gl.c), which under qemu-user hung
               duet-render when Xvfb died between its dispatch and its swap
"""

import os
import signal
import subprocess
import sys
import time

import apps
import duet
from duet import check

APP_TIMEOUT_MS = 60000
PROMPT_S = 15  # a hang guard: a swap on a broken connection never returns


def wait_exit(p, timeout):
    try:
        return p.popen.wait(timeout)
    except subprocess.TimeoutExpired:
        raise duet.Failure("%s still runs %d s after the loss; stderr:\n%s"
                           % (p.name, timeout, p.stderr_tail()))


def server_dies(s, engine):
    # Every writev of the app starts 20 ms late (tests/clients/late-poll.c),
    # so the server dies while the app is about to write, not while xcb
    # polls (which sees the hang-up and never writes).
    env = apps.app_env(engine=engine)
    env.update({"LD_PRELOAD": duet.program("DUET_LATE_POLL"), "DUET_LATE_WRITEV_US": "20000",
                "ASAN_OPTIONS": env.get("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", ""))
                + ":verify_asan_link_order=0"})
    p = s.client([duet.program("DUET_RENDER"), "--engine", engine, "--duration-ms", "120000",
                  "--scenes", "rect_blend"], name="render", env=env)
    s.wait_window(app_id="duet-render", timeout=60)
    time.sleep(0.5)  # well into drawing
    s.xserver.kill(signal.SIGKILL)
    status = wait_exit(p, 30)
    check(status != -signal.SIGPIPE, "duet-render was killed by SIGPIPE when the X server died")
    check(status == 1, "duet-render exited %d when the X server died, want 1; stderr:\n%s"
          % (status, p.stderr_tail()))
    check(p.stderr_tail().strip(), "duet-render exited 1 without saying why")
    duet.log("X server killed under duet-render (%s): exit status 1" % engine)


def wm_dies(s, engine):
    s.wm.kill(signal.SIGSTOP)
    p = s.client([duet.program("DUET_LAUNCH"), "--engine", engine, "--timeout-ms",
                  str(APP_TIMEOUT_MS)], name="launch", env=apps.app_env(engine=engine))
    # Its MapRequest now waits in the stopped WM's queue.
    deadline = time.monotonic() + 30
    while "duet-launch" not in s.run(["xwininfo", "-root", "-children"]).stdout:
        check(p.alive(), "duet-launch exited early: %s" % p.stderr_tail())
        check(time.monotonic() < deadline, "duet-launch created no window in 30 s")
        time.sleep(0.1)
    time.sleep(1.0)
    check(p.alive(), "duet-launch exited before the WM died: %s" % p.stderr_tail())
    t0 = time.monotonic()
    s.wm.kill(signal.SIGKILL)
    status = wait_exit(p, APP_TIMEOUT_MS / 1000 + 30)
    took = time.monotonic() - t0
    check(status == 1, "duet-launch exited %d after the WM died, want 1; stderr:\n%s"
          % (status, p.stderr_tail()))
    # Noticed, not timed out: what it says tells which (how long it took
    # is the machine's, printed below).
    check("window manager went away" in p.stderr_tail()
          and "was not mapped within" not in p.stderr_tail(),
          "duet-launch did not say the window manager went away (or timed out): %s"
          % p.stderr_tail())
    duet.log("duet-xwm killed while duet-launch (%s) waited: exit 1 after %.2f s"
             % (engine, took))


def swap_after_loss(s, engine):
    p = s.spawn("swap-after-loss", [duet.program("DUET_X11_SWAP_AFTER_LOSS"), "--engine", engine],
                dict(s.env, **apps.app_env(engine=engine)), stdin=subprocess.PIPE)
    p.wait_line(r"^drawn$", timeout=60)
    s.xserver.kill(signal.SIGKILL)
    s.xserver.popen.wait(10)
    p.popen.stdin.write(b"go\n")
    p.popen.stdin.flush()
    p.wait_line(r"^lost$", timeout=30)
    status = wait_exit(p, PROMPT_S)
    check(status == 0, "the app exited %d: its frame after the loss was not refused; "
          "stderr:\n%s" % (status, p.stderr_tail()))
    p.wait_line(r"^refused$", timeout=1)
    duet.log("a frame drawn after the X server died (%s) was refused: %s"
             % (engine, p.stderr_tail().strip().splitlines()[-1:]))


def test():
    case, engine = sys.argv[1], sys.argv[2]
    duet.third_party("xwininfo")
    with apps.session("x11", "apps-x11-%s-%s" % (case, engine)) as s:
        {"server-dies": server_dies, "wm-dies": wm_dies,
         "swap-after-loss": swap_after_loss}[case](s, engine)


if __name__ == "__main__":
    duet.main(test)
