#!/usr/bin/env python3
"""duet-compositor's command line, as users and the bench rely on it.

usage: test_cli.py help|exit-status|screenshot|bad-args
"""

import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile

import duet
import pngread
from duet import check

OPTIONS = ["--backend", "--size", "--refresh", "--socket", "--screenshot", "--mode",
           "--output", "--drm-device", "--renderer", "--xwayland", "--xwayland-now",
           "--xwayland-path", "--xwayland-display", "--help"]


def run(args, runtime_dir, timeout=30):
    argv = [duet.program("DUET_COMPOSITOR")] + args
    # Own process group: whatever `-- CMD` left behind is killed with it.
    proc = subprocess.Popen(argv, env=duet.base_env(runtime_dir), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise duet.Failure("%s did not exit within %d s" % (" ".join(argv), timeout))
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def socket_name():
    return "duet-test-" + secrets.token_hex(4)


def case_help(tmp):
    r = run(["--help"], tmp)
    check(r.returncode == 0, "--help exited %d" % r.returncode)
    text = r.stdout
    missing = [o for o in OPTIONS if o not in text]
    check(not missing, "--help does not document %s:\n%s" % (missing, text))
    check(re.search(r"(^|[\s\[])--\s+\S*(CMD|COMMAND)", text, re.M | re.I),
          "--help does not document '-- CMD':\n" + text)


def case_exit_status(tmp):
    sock = socket_name()
    # The command also proves it ran under our compositor's display.
    script = '[ "$WAYLAND_DISPLAY" = "%s" ] || exit 3; exit 7' % sock
    r = run(["--socket", sock, "--", "sh", "-c", script], tmp)
    check(r.returncode == 7, "`-- sh -c 'exit 7'` gave status %d (3: WAYLAND_DISPLAY not set); "
          "stderr:\n%s" % (r.returncode, r.stderr[-2000:]))
    r = run(["--socket", socket_name(), "--", "true"], tmp)
    check(r.returncode == 0, "`-- true` gave status %d" % r.returncode)


def find_pattern(img, w, h):
    """Where duet-test-pattern's w x h window is in img, or None."""
    row0 = b"".join(bytes(duet.pattern_pixel(x, 0)) for x in range(w))
    for y in range(img.height - h + 1):
        i = img.rows[y].find(row0)
        while i >= 0:
            if i % 3 == 0:
                win = duet.Window(0, 0, i // 3, y, w, h, 0, "", "")
                if duet.pattern_mismatches(img, win)[0] == 0:
                    return win
            i = img.rows[y].find(row0, i + 1)
    return None


def case_screenshot(tmp):
    path = os.path.join(tmp, "exit.png")
    out = os.path.join(tmp, "pattern.out")
    # CMD shows a window, waits until it was presented, then ends; the
    # compositor exits with it and must write the frame that showed it.
    script = ('"$0" --size 100x80 > "$1" & '
              'while ! grep -q mapped "$1"; do sleep 0.05; done; sleep 0.2')
    r = run(["--socket", socket_name(), "--size", "320x200", "--screenshot", path,
             "--", "sh", "-c", script, duet.program("DUET_TEST_PATTERN"), out], tmp)
    check(r.returncode == 0, "compositor with --screenshot exited %d; stderr:\n%s"
          % (r.returncode, r.stderr[-2000:]))
    check(os.path.exists(path), "--screenshot wrote no file")
    try:
        img = pngread.read(path)
    except ValueError as e:
        raise duet.Failure("--screenshot file is not a valid PNG: %s" % e)
    check((img.width, img.height) == (320, 200), "screenshot is %dx%d, output 320x200"
          % (img.width, img.height))
    win = find_pattern(img, 100, 80)
    if win is None:
        keep = os.path.join(os.environ.get("DUET_TEST_OUTDIR") or tempfile.gettempdir(),
                            "duet-integration", "cli-screenshot.png")
        os.makedirs(os.path.dirname(keep), exist_ok=True)
        shutil.copy(path, keep)
        raise duet.Failure("the exit screenshot (kept as %s) does not show the 100x80 "
                           "test pattern window" % keep)
    duet.log("exit screenshot shows the pattern window at %d,%d" % (win.x, win.y))


def case_bad_args(tmp):
    for args in (["--size", "0x0"], ["--size", "12"], ["--refresh", "-5"],
                 ["--mode", "800"], ["--mode", "800x600@0"], ["--mode", "800x600@x"],
                 ["--backend", "nope"], ["--drm-device", ""], ["--no-such-option"],
                 ["--output", "0x0"], ["--output", "640x480@x"],
                 ["--output", "640x480", "--backend", "drm"],
                 ["--output", "64x48"] * 9,
                 ["--renderer", "vulkan"], ["--backend", "drm", "--renderer", "pixman"]):
        r = run(["--socket", socket_name()] + args, tmp, timeout=15)
        check(r.returncode == 2, "%s exited %d, want 2 (usage error)" % (" ".join(args), r.returncode))
        check(r.stderr.strip(), "%s gave no message on stderr" % " ".join(args))
        if "pixman" in args and "not built in" not in r.stderr:
            # Whether drm is built or not, the message says what to do.
            check("gl" in r.stderr, "drm + pixman does not point at gl: %r" % r.stderr)


CASES = {"help": case_help, "exit-status": case_exit_status, "screenshot": case_screenshot,
         "bad-args": case_bad_args}


def test():
    duet.run_case_in_tmpdir(CASES, "duet-cli-")


if __name__ == "__main__":
    duet.main(test)
