#!/usr/bin/env python3
"""duet-input, the input experiment's app: a key press reaches it through
the real server (duet_test.key on duet-compositor, XTest on Xvfb) and the
patch on screen changes colour, as the server's screenshot shows; each
press is reported once, with its colour and a timeline in order.

usage: test_apps_input.py STACK ENGINE
  STACK: wayland | x11 | openbox; ENGINE: gl | sw
"""

import json
import subprocess
import sys
import time

import apps
import duet
from duet import check

KEY_A = 30  # evdev; X keycode 38
# clients/input.c's patch colours.
COLOUR = {"a": (32, 96, 224), "b": (240, 128, 16)}


def press(s, stack):
    if stack == "wayland":
        s.testctl("key", KEY_A, 1)
        s.testctl("key", KEY_A, 0)
    else:
        s.xctl("key", KEY_A + 8)


def centre(s, win, want, label):
    """Screenshots until the window's centre (the patch) shows colour want."""
    x, y = win.x + win.w // 2, win.y + win.h // 2
    deadline = time.monotonic() + 10
    while True:
        img = s.screenshot(label)
        got = img.pixel(x, y)[:3]
        if apps.near(got, COLOUR[want], tol=1):
            return
        if time.monotonic() > deadline:
            raise duet.Failure("the patch at %d,%d is %r, want colour %s %r"
                               % (x, y, got, want, COLOUR[want]))
        time.sleep(0.1)




def held_press(s, c, start, n):
    """Press n through duet-inject, held 1.5 s (the X server repeats a key
    held 660 ms, at 25 Hz) before its release, then one more press: the
    app's press n + 1 is that press, received after the release, not a
    repeat received during the hold."""
    inj = subprocess.Popen([duet.program("DUET_INJECT"), "--backend", "x11"], env=s.env,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        ready = json.loads(inj.stdout.readline() or "{}")
        check(ready.get("name") == "inject_ready", "duet-inject started: %r" % ready)
        stamps = {}
        for what in ("press", "release"):
            inj.stdin.write(what + "\n")
            inj.stdin.flush()
            line = json.loads(inj.stdout.readline() or "{}")
            check(line.get("name") == "injected", "duet-inject %s: %r" % (what, line))
            stamps[what] = line["ns"]
            if what == "press":
                time.sleep(1.5)
        inj.stdin.close()
        check(inj.wait(30) == 0, "duet-inject exits 0")
    finally:
        if inj.poll() is None:
            inj.kill()
    held = key_line(c, n, start)
    check(stamps["press"] < held["timeline"]["received"],
          "press %d arrived after its injection: %r" % (n, held["timeline"]))
    press(s, "x11")
    after = key_line(c, n + 1, start)
    check(after["timeline"]["received"] > stamps["release"],
          "press %d is the press after the release, not a repeat of the held key: "
          "received %d, released %d" % (n + 1, after["timeline"]["received"],
                                         stamps["release"]))


def key_line(c, n, start):
    _, m = c.wait_line(r'^\{"name":"input_key".*"press":%d,' % n, timeout=10, start=start)
    return json.loads(m.string)


def main(stack, engine):
    with apps.session(stack, "apps-input-%s-%s" % (stack, engine)) as s:
        c = s.client([duet.program("DUET_INPUT"), "--engine", engine],
                     env=apps.app_env(None, engine))
        i, m = c.wait_line(r'^\{"name":"input_ready"', timeout=30)
        ready = json.loads(m.string)
        apps.check_labels(ready, stack, engine)
        win = s.wait_window(app_id="duet-input")
        s.sync()
        centre(s, win, "a", "before")
        for n, colour in ((1, "b"), (2, "a")):
            press(s, stack)
            k = key_line(c, n, i)
            check(k["key"] == KEY_A and k["colour"] == colour,
                  "press %d: key %r colour %r, want %d %s" % (n, k["key"], k["colour"],
                                                            KEY_A, colour))
            tl = k["timeline"]
            # sw stamps "submitted" as the frame leaves, so it comes before
            # presented; with gl the frame leaves inside the swap, whose
            # return is stamped, and a compositor that composites at once
            # (duet-xwm's presented is its composite) can beat that stamp by
            # as long as the app is off the CPU (docs/methodology.md, "Order
            # of the points"): there only the key's arrival comes first.
            last = "submitted" if engine == "sw" else "received"
            check(0 < tl["received"] <= tl["submitted"] and tl[last] <= tl["presented"],
                  "press %d: received <= submitted, %s <= presented: %r" % (n, last, tl))
            centre(s, win, colour, "press-%d" % n)
        duet.log("%s/%s: two presses flipped the patch b, a" % (stack, engine))
        if stack != "wayland":
            held_press(s, c, i, 3)
            duet.log("%s/%s: a press held 1.5 s was one press" % (stack, engine))


if __name__ == "__main__":
    duet.main(lambda: main(sys.argv[1], sys.argv[2]))
