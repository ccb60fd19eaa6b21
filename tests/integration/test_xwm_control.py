#!/usr/bin/env python3
"""duet-xwm's test controls give X clients no power over the machine
(docs/xwm-control.md, "Who may use them").

usage: test_xwm_control.py screenshot-off|screenshot-confined
  screenshot-off       duet-xwm started without --screenshot-dir refuses
                       every _DUET_SCREENSHOT, whatever path a client names,
                       writes nothing and says so in its log; duet-xctl
                       screenshot fails with the reason
  screenshot-confined  with --screenshot-dir DIR, a client's absolute path,
                       "..", a subdirectory, a dot file, a symlink planted in
                       DIR and an existing file are refused (logged, nothing
                       written outside DIR or over the existing file); a
                       plain new name in DIR gets the frame as a PNG
"""

import os
import sys
import tempfile

import duet
import pngread
from duet import check


def ask(s, path):
    """Sends _DUET_SCREENSHOT naming path, as any X client could."""
    r = s.run([duet.program("DUET_X11_WM_CHECK"), "screenshot", path], timeout=30)
    check(r.returncode == 0, "duet-x11-wm-check screenshot failed (%d): %s"
          % (r.returncode, r.stderr))
    return r.stdout.strip()


def refused_lines(s):
    return [line for line in s.wm.stderr_tail(1 << 20).splitlines()
            if "_DUET_SCREENSHOT refused" in line]


def case_off(s, outside):
    target = os.path.join(outside, "evil.png")
    before = set(os.listdir(os.getcwd()))
    for path in (target, "evil-relative.png"):
        answer = ask(s, path)
        check(answer == "answer 0", "duet-xwm without --screenshot-dir answered %r to a "
              "screenshot into %r" % (answer, path))
    check(not os.path.exists(target), "duet-xwm without --screenshot-dir wrote %s, a path an "
          "X client named" % target)
    new = set(os.listdir(os.getcwd())) - before
    check(not new, "duet-xwm without --screenshot-dir wrote %s in its working directory"
          % sorted(new))
    lines = refused_lines(s)
    check(len(lines) >= 2 and all("without --screenshot-dir" in line for line in lines),
          "duet-xwm did not log the refusals: %r" % lines)
    r = s.xctl("screenshot", os.path.join(outside, "xctl.png"), check_status=False)
    check(r.returncode == 1 and "screenshots are off" in r.stderr,
          "duet-xctl screenshot without --screenshot-dir: %d %r" % (r.returncode, r.stderr))
    duet.log("no --screenshot-dir: 2 requests refused and logged, nothing written")


def case_confined(s, outside):
    d = s.shot_dir
    os.mkdir(os.path.join(d, "sub"))
    target = os.path.join(outside, "planted-target.png")
    os.symlink(target, os.path.join(d, "link.png"))
    with open(os.path.join(d, "exists.png"), "w") as f:
        f.write("keep")
    escape = os.path.join(os.path.dirname(d), "escape.png")
    bad = [os.path.join(outside, "abs.png"), "../escape.png", "sub/x.png", ".hidden.png",
           "link.png", "exists.png", d + "/abs-inside.png", ""]
    for i, path in enumerate(bad):
        answer = ask(s, path)
        check(answer == "answer 0", "duet-xwm answered %r to a screenshot into %r" % (answer, path))
        check(len(refused_lines(s)) >= i + 1, "refusing %r was not logged: %r"
              % (path, refused_lines(s)))
    check(not os.listdir(outside), "files appeared outside the screenshot dir: %s"
          % os.listdir(outside))
    check(not os.path.exists(escape), "\"..\" escaped the screenshot dir: %s" % escape)
    check(not os.path.lexists(os.path.join(d, "abs-inside.png")),
          "an absolute path was followed into the dir")
    check(os.listdir(os.path.join(d, "sub")) == [], "a name with '/' wrote into sub/")
    check(open(os.path.join(d, "exists.png")).read() == "keep", "an existing file was "
          "overwritten")
    check(os.path.islink(os.path.join(d, "link.png")) and not os.path.exists(target),
          "the planted symlink was followed")
    answer = ask(s, "ok.png")
    check(answer == "answer 1", "a plain new name in the dir was answered %r" % answer)
    img = pngread.read(os.path.join(d, "ok.png"))
    check((img.width, img.height) == (320, 240), "ok.png is %dx%d" % (img.width, img.height))
    s.screenshot("xctl")  # duet-xctl's move out of the dir
    duet.log("--screenshot-dir: %d bad paths refused and logged, ok.png written"
             % len(bad))


def test():
    case = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="duet-outside-") as outside:
        with duet.XSession("xwm-control-" + case, size="320x240",
                           screenshots=case != "screenshot-off") as s:
            {"screenshot-off": case_off, "screenshot-confined": case_confined}[case](s, outside)
            s.check_alive()


if __name__ == "__main__":
    duet.main(test)
