#!/usr/bin/env python3
"""duet-roundtrip (issue 14): every kind of round trip completes on the
stacks it applies to and reports its groups.

  floor           pipe and Unix-socket ping-pong, pinned to one CPU and to
                  two: every group reported, times above zero
  wayland-server  wl_display.sync on duet-compositor
  x11-server      GetInputFocus on Xvfb + duet-xwm
  x11-wm          the WM hop on duet-xwm: _NET_REQUEST_FRAME_EXTENTS
                  answered with _NET_FRAME_EXTENTS (a duet-xwm that ignores
                  the request fails here: the trip times out)
  openbox-wm      the same hop on openbox, the reference
"""

import json

import duet
from duet import check, log

GROUPS, TRIPS = 3, 20


def parse(out, kind):
    lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    groups = [l for l in lines if l["name"] == "roundtrip_group"]
    done = [l for l in lines if l["name"] == "roundtrip_done"]
    check(len(groups) == GROUPS and all(g["kind"] == kind and g["trips"] == TRIPS and g["ns"] > 0
                                        for g in groups), "%s groups: %r" % (kind, groups))
    check(len(done) == 1 and done[0]["median_trip_ns"] > 0, "%s summary: %r" % (kind, done))
    return done[0]["median_trip_ns"]


def roundtrip(s, kind, *extra):
    argv = [duet.program("DUET_ROUNDTRIP"), kind, "--groups", str(GROUPS), "--trips",
            str(TRIPS)] + list(extra)
    r = s.run(argv, timeout=60) if s else duet_run_plain(argv)
    check(r.returncode == 0, "duet-roundtrip %s exited %d: %s" % (kind, r.returncode, r.stderr))
    ns = parse(r.stdout, kind)
    log("%s %s: %d ns per trip" % (kind, " ".join(extra), ns))
    return ns


def duet_run_plain(argv):
    import subprocess
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def scenario_floor():
    for kind in ("pipe", "unix"):
        for cpus in ("1", "2"):
            roundtrip(None, kind, "--cpus", cpus)


def scenario_wayland_server():
    with duet.Session("roundtrip-wayland") as s:
        roundtrip(s, "server")


def scenario_x11(kind, wm="duet"):
    with duet.XSession("roundtrip-x11-" + kind, wm=wm) as s:
        roundtrip(s, kind)


SCENARIOS = {
    "floor": scenario_floor,
    "wayland-server": scenario_wayland_server,
    "x11-server": lambda: scenario_x11("server"),
    "x11-wm": lambda: scenario_x11("wm"),
    "openbox-wm": lambda: scenario_x11("wm", wm="openbox"),
}

if __name__ == "__main__":
    duet.main_scenario(SCENARIOS)
