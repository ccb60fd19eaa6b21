#!/usr/bin/env python3
"""The apps reject bad input with a clear message and a non-zero status:
unknown options, impossible sizes, bad values, a missing or unreachable
display, a bad DUET_T0_NS. No server is needed.

usage: test_apps_cli.py
"""

import os
import subprocess
import tempfile

import duet
from duet import check

APPS = ("DUET_LAUNCH", "DUET_RESIZE", "DUET_RENDER")


def run(argv, env_extra=None, drop=("WAYLAND_DISPLAY", "DISPLAY", "WAYLAND_SOCKET")):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["DUET_TRACE"] = ""
    env.update(env_extra or {})
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)


def expect(argv, status, words, env_extra=None):
    r = run(argv, env_extra)
    check(r.returncode == status, "%s exited %d, want %d; stderr: %s"
          % (" ".join(argv), r.returncode, status, r.stderr))
    for w in words:
        check(w in r.stderr, "%s: %r not in stderr %r" % (" ".join(argv), w, r.stderr))
    check(r.stdout == "", "%s printed results on bad input: %r" % (" ".join(argv), r.stdout))


def test():
    for var in APPS:
        exe = duet.program(var)
        name = os.path.basename(exe)
        r = run([exe, "--help"])
        check(r.returncode == 0 and "--backend" in r.stdout and "--engine" in r.stdout,
              "%s --help: %d %r" % (name, r.returncode, r.stdout))
        expect([exe, "--bogus"], 2, ["unknown option", "--bogus"])
        expect([exe, "--size", "0x100"], 2, ["impossible size", "0x100"])
        expect([exe, "--size", "20000x100"], 2, ["impossible size"])
        expect([exe, "--size", "wide"], 2, ["impossible size"])
        expect([exe, "--engine", "vulkan"], 2, ["unknown engine", "vulkan"])
        expect([exe, "--backend", "fbdev"], 2, ["unknown backend", "fbdev"])
        expect([exe, "--backend"], 2, ["needs a value"])
        # No display at all, and displays that are not there.
        expect([exe], 1, ["no display"])
        with tempfile.TemporaryDirectory() as rt:
            expect([exe, "--backend", "wayland"], 1, ["cannot connect to Wayland display"],
                   {"WAYLAND_DISPLAY": "duet-nonexistent", "XDG_RUNTIME_DIR": rt})
        expect([exe, "--backend", "x11"], 1, ["cannot connect to X display", ":4321"],
               {"DISPLAY": ":4321"})
        duet.log("%s rejects bad input" % name)
    exe = duet.program("DUET_LAUNCH")
    expect([exe, "--load-images", "-1"], 2, ["--load-images"])
    expect([exe, "--load-fonts", "many"], 2, ["--load-fonts"])
    expect([exe], 2, ["DUET_T0_NS"], {"DUET_T0_NS": "soon"})
    expect([exe], 2, ["DUET_T0_NS"], {"DUET_T0_NS": str(2**63)})  # after our own start
    exe = duet.program("DUET_RESIZE")
    expect([exe, "--runs", "0"], 2, ["--runs"])
    expect([exe, "--mode", "sideways"], 2, ["--mode", "sideways"])
    exe = duet.program("DUET_RENDER")
    expect([exe, "--duration-ms", "0"], 2, ["--duration-ms"])
    expect([exe, "--scenes", "rect_blend,nope"], 2, ["unknown scene", "nope"])


if __name__ == "__main__":
    duet.main(test)
