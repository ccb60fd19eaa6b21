#!/usr/bin/env python3
"""Globals duet-compositor offers because real clients look for them
(docs/clients.md): each scenario has a client bind one and checks the
answer.

usage: test_protocol_globals.py xdg-decoration|xdg-output
"""

import re
import sys

import duet
from duet import check


def xdg_decoration(s):
    # Asks for server_side; duet draws no decorations, so it must answer client_side.
    r = s.run([duet.program("DUET_DECORATION_CLIENT")])
    check(r.returncode == 0, "duet-decoration-client exited %d: %s%s"
          % (r.returncode, r.stdout, r.stderr))
    check(r.stdout.strip() == "decoration-mode client_side",
          "wanted client_side, got %r" % r.stdout.strip())


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


SCENARIOS = {"xdg-decoration": xdg_decoration, "xdg-output": xdg_output}


def test():
    name = sys.argv[1]
    with duet.Session("protocol-" + name, size="800x600") as s:
        SCENARIOS[name](s)
        s.check_alive()


if __name__ == "__main__":
    duet.main(test)
