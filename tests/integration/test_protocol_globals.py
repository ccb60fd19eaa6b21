#!/usr/bin/env python3
"""Globals duet-compositor offers because real clients look for them
(docs/clients.md): each scenario has a client bind one and checks the
answer.

usage: test_protocol_globals.py xdg-output|single-pixel-buffer
"""

import re

import duet
from duet import check


def xdg_output(s):
    # wayland-info (a real client) prints each xdg_output it gets.
    r = s.run([duet.third_party("wayland-info")])
    check(r.returncode == 0, "wayland-info failed: %s" % r.stderr)
    check("zxdg_output_manager_v1" in r.stdout, "no zxdg_output_manager_v1 in the registry")
    w, h = s.size.split("x")
    m = re.search(r"xdg_output_v1.*?name: '([^']*)'.*?logical_x: (-?\d+), logical_y: (-?\d+)"
                  r".*?logical_width: (\d+), logical_height: (\d+)", r.stdout, re.S)
    check(m is not None, "wayland-info shows no xdg_output:\n%s" % r.stdout)
    check(m.group(1) == "HEADLESS-1", "xdg_output name %r" % m.group(1))
    check(m.group(2, 3) == ("0", "0"), "xdg_output at %s,%s" % m.group(2, 3))
    check(m.group(4, 5) == (w, h), "xdg_output logical size %sx%s, output %s"
          % (m.group(4), m.group(5), s.size))


def single_pixel_buffer(s):
    # One magenta pixel scaled to 200x150 by a viewport fills the window.
    bg = s.background()
    p = s.client([duet.program("DUET_SINGLE_PIXEL_CLIENT")])
    p.wait_line(r"^mapped 200 150$")
    win = s.wait_window(app_id="duet-single-pixel-client")
    check((win.w, win.h) == (200, 150), "window %r, want 200x150" % (win,))
    img = s.screenshot("single-pixel")
    x0, y0, x1, y1 = duet.clip_rect(img, win)
    area = (x1 - x0) * (y1 - y0)
    magenta = img.count_color((255, 0, 255), x0, y0, x1, y1)
    check(area == 200 * 150 and magenta == area,
          "%d of %d pixels of the window are magenta" % (magenta, area))
    duet.check_outside_is_background(img, win, bg)
    check(p.alive(), "the client exited (status %s)" % p.popen.poll())


SCENARIOS = {"xdg-output": xdg_output,
             "single-pixel-buffer": single_pixel_buffer}


if __name__ == "__main__":
    duet.main_session_scenario(SCENARIOS, "protocol-", size="800x600")
