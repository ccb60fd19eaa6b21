#!/usr/bin/env python3
"""A misbehaving or killed client is disconnected while a well-behaved one
keeps getting frames presented, and the compositor stays up.

usage: test_robustness.py bad:MODE | kill-pattern | kill-simple-shm | late-screenshot
                          | texture-budget-total

late-screenshot: a duet_test client asks for a screenshot into a one-page
pipe and reads it only 2 s later; meanwhile the good client's frames must
keep coming (the compositor writes without blocking), and the PNG read in
the end must be whole.

texture-budget-total: duet-bad-client texture-budget under a compositor
whose total texture budget (64 MiB) is below the per-client one: the total
is what it runs into.
"""

import os
import random
import subprocess
import signal
import sys
import time

import duet
from duet import GOOD_APP_ID, check, check_good_keeps_going, last_frame, start_good

def check_only_good_left(s):
    # The bad client's window (if it had one) must go with its connection.
    deadline = time.monotonic() + 10
    while True:
        wins = s.windows()
        if [w.app_id for w in wins] == [GOOD_APP_ID]:
            return
        if time.monotonic() > deadline:
            raise duet.Failure("expected only %s, windows are %r" % (GOOD_APP_ID, wins))
        time.sleep(0.1)


def bad_client(s, mode):
    good = start_good(s)
    r = s.run([duet.program("DUET_BAD_CLIENT"), mode], timeout=30)
    duet.log("duet-bad-client %s: status %d\n%s%s" % (mode, r.returncode, r.stdout, r.stderr))
    check(r.returncode == 0, "duet-bad-client %s did not get its protocol error (status %d): %s"
          % (mode, r.returncode, r.stdout))
    check_good_keeps_going(s, good, "bad client " + mode)
    check_only_good_left(s)


def kill_mid_frame(s, argv, rounds):
    good = start_good(s)
    rng = random.Random(2)
    for i in range(rounds):
        victim = s.client(argv, name="victim")
        s.wait_window(pred=lambda w: w.app_id != GOOD_APP_ID and w.pid in (0, victim.pid))
        # Let it draw for a while, then kill it wherever it happens to be.
        time.sleep(rng.uniform(0.05, 0.5))
        victim.kill(signal.SIGKILL)
        victim.wait(10)
        duet.log("round %d: SIGKILLed %s" % (i + 1, argv[0]))
        check_good_keeps_going(s, good, "SIGKILL of %s" % argv[0])
        check_only_good_left(s)


def late_screenshot(s):
    good = start_good(s)
    out = os.path.join(s.workdir, "late.png")
    # The screenshot's pipe stays unread until the good client has drawn 20
    # more frames (each one a frame callback the compositor answered), so
    # they came while the PNG could not be written: a compositor blocked
    # on the pipe never answers them, and the wait below runs into its hang
    # guard. (How soon they come is the machine's: no time is checked.)
    shot = s.spawn("late-shot", [duet.program("DUET_LATE_SCREENSHOT"), out, "stdin"],
                   dict(s.env, **s.trusted_env()), stdin=subprocess.PIPE)
    shot.wait_line(r"^requested$", timeout=15)
    before = last_frame(good)
    t0 = time.monotonic()
    good.wait_line(r"^frame (\d+)$", start=0,
                   pred=lambda m: int(m.group(1)) >= before + 20, timeout=60)
    after = last_frame(good)
    check(shot.alive() and not any(l.startswith("done") for l in shot.lines),
          "the screenshot was still unread while the good client drew")
    duet.log("good client: frame %d when the screenshot was asked, %d while it stayed unread "
             "(%.2f s)" % (before, after, time.monotonic() - t0))
    shot.popen.stdin.write(b"go\n")
    shot.popen.stdin.flush()
    _, m = shot.wait_line(r"^done (\d+) (\d+) (\d+)$", timeout=20)
    width, height, size = (int(v) for v in m.groups())
    check(size > 4096, "a %d-byte PNG fits the pipe: the test shows nothing" % size)
    img = duet.pngread.read(out)
    check((img.width, img.height) == (width, height) and "%dx%d" % (width, height) == s.size,
          "screenshot %dx%d, screenshot_done %dx%d, output %s"
          % (img.width, img.height, width, height, s.size))
    check(shot.wait(10) == 0, "duet-late-screenshot failed: %s" % shot.stderr_tail())
    check_good_keeps_going(s, good, "the late screenshot")


def test():
    scenario = sys.argv[1]
    args = []
    if scenario == "texture-budget-total":
        args = ["--texture-budget", "64", "--client-texture-budget", "1024"]
    with duet.Session("robust-" + scenario.replace(":", "-"), args=args) as s:
        if scenario == "texture-budget-total":
            bad_client(s, "texture-budget")
            check("in all would exceed the budget of 64 MiB" in s.compositor.stderr_tail(),
                  "no log line for the total budget:\n" + s.compositor.stderr_tail())
        elif scenario.startswith("bad:"):
            bad_client(s, scenario[4:])
        elif scenario == "kill-pattern":
            kill_mid_frame(s, [duet.program("DUET_TEST_PATTERN"), "--frames", "100000000",
                               "--app-id", "duet-victim"], 3)
        elif scenario == "late-screenshot":
            late_screenshot(s)
        elif scenario == "kill-simple-shm":
            kill_mid_frame(s, [duet.third_party("weston-simple-shm")], 3)
        else:
            raise duet.Failure("unknown scenario %r" % scenario)
        s.check_alive()


if __name__ == "__main__":
    duet.main(test)
