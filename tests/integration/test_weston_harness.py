#!/usr/bin/env python3
"""Checks duet's own test clients against a reference compositor, weston's
headless backend, so a bug in a test client is not mistaken for (or does not
hide) a bug in duet-compositor.

usage: test_weston_harness.py pattern|bad-clients|wayland-info
"""

import time

import duet
from duet import check
from test_globals import listed_interfaces

# weston 10 (Debian bookworm) accepts xdg_surface.get_toplevel twice without
# an error; that mode is run as a negative control instead: duet-bad-client
# must notice that no error came and exit 1.
# Modes where weston 10 does not answer what duet-compositor does: silent
# (double-role, short-stride, min-over-max, negative-min-size), or the role error posted on the
# xdg_surface instead of xdg_wm_base (toplevel-to-popup, popup-to-toplevel),
# or checked for grabbing popups only (popup-destroy-order: weston posts
# not_the_topmost_popup only when a grabbing popup is destroyed out of order).
WESTON_SILENT_MODES = {"double-role", "toplevel-to-popup", "popup-to-toplevel", "short-stride",
                       "min-over-max", "negative-min-size", "popup-destroy-order"}
BAD_MODES = ["buffer-too-big", "negative-size", "huge-stride", "truncated-pool", "bad-ack",
             "unconfigured-buffer", "double-role", "double-role-subsurface", "bad-viewport",
             "invalid-object", "toplevel-to-popup", "popup-to-toplevel", "short-stride",
             "offset-past-pool", "min-over-max", "negative-min-size", "scale-viewport",
             "popup-destroy-order"]


def pattern(s):
    exe = duet.program("DUET_TEST_PATTERN")
    p = s.client([exe, "--exit-after-first-frame"])
    p.wait_line(r"^mapped 320 240$")
    check(p.wait(10) == 0, "--exit-after-first-frame did not exit 0")
    p = s.client([exe, "--size", "100x50", "--frames", "20"])
    p.wait_line(r"^mapped 100 50$")
    p.wait_line(r"^frame 20$")
    time.sleep(0.3)
    check(p.count_lines(r"^frame ") == 20, "--frames 20 drew %d frames" % p.count_lines(r"^frame "))
    check(p.alive(), "duet-test-pattern exited after its frames instead of idling")
    r = s.run([exe, "--size", "0x5"])
    check(r.returncode == 2, "--size 0x5 accepted (status %d)" % r.returncode)


def bad_clients(s):
    exe = duet.program("DUET_BAD_CLIENT")
    for mode in BAD_MODES:
        r = s.run([exe, mode], timeout=30)
        want = 1 if mode in WESTON_SILENT_MODES else 0
        duet.log("%s -> %d: %s" % (mode, r.returncode, r.stdout.strip()))
        check(r.returncode == want, "duet-bad-client %s exited %d under weston, want %d:\n%s%s"
              % (mode, r.returncode, want, r.stdout, r.stderr))
    r = s.run([exe, "no-such-mode"])
    check(r.returncode == 2, "unknown mode exited %d, want 2" % r.returncode)


def wayland_info(s):
    r = s.run([duet.third_party("wayland-info")])
    check(r.returncode == 0, "wayland-info failed under weston: %s" % r.stderr)
    listed = listed_interfaces(r.stdout)
    for g in ("wl_compositor", "wl_shm", "xdg_wm_base", "wp_viewporter", "wp_presentation"):
        check(g in listed, "%s not parsed from wayland-info's output: %r" % (g, sorted(listed)))
    check("duet_test" not in listed, "duet_test listed under weston?")


SCENARIOS = {"pattern": pattern, "bad-clients": bad_clients, "wayland-info": wayland_info}


if __name__ == "__main__":
    duet.main_session_scenario(SCENARIOS, "weston-", duet.WestonSession, size="640x480",
                               renderer="pixman")
