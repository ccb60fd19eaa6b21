#!/usr/bin/env python3
"""wayland-info, a third-party client, sees every global duet promises; and
duet_test only where docs/security.md says.

usage: test_globals.py [default | no-test-protocol]

  default           --test-protocol: duet_test is listed to a client of the
                    test socket (NAME-test) and hidden from a client of the
                    ordinary socket (and duet-testctl works there only)
  no-test-protocol  without the flag there is no duet_test and no test socket
"""

import os
import re
import sys

import duet
from duet import check

GLOBALS = ["wl_compositor", "wl_subcompositor", "wl_shm", "wl_output", "xdg_wm_base",
           "wl_seat", "wl_data_device_manager", "wp_presentation", "wp_viewporter"]


def listed_interfaces(text):
    return set(re.findall(r"interface: '([A-Za-z0-9_]+)'", text))


def wayland_info(s, info, display):
    r = s.run([info], timeout=30, env={"WAYLAND_DISPLAY": display})
    check(r.returncode == 0, "wayland-info on %s failed (%d): %s" % (display, r.returncode,
                                                                     r.stderr))
    return r.stdout, listed_interfaces(r.stdout)


def check_ordinary(s, info):
    text, listed = wayland_info(s, info, s.display)
    missing = [g for g in GLOBALS if g not in listed]
    check(not missing, "globals missing from wayland-info: %s\n%s" % (missing, text))
    # Versions the spec of issue 2 asks for.
    m = re.search(r"interface: 'wl_compositor',\s+version:\s+(\d+)", text)
    check(m and int(m.group(1)) >= 4, "wl_compositor below v4: %s" % (m and m.group(0)))
    check("duet_test" not in listed, "duet_test offered on the clients' socket %s:\n%s"
          % (s.display, text))
    duet.log("all %d globals listed on %s, duet_test not" % (len(GLOBALS), s.display))


def test_default(info):
    with duet.Session("globals") as s:
        check_ordinary(s, info)
        text, listed = wayland_info(s, info, s.test_display)
        check("duet_test" in listed and set(GLOBALS) <= listed,
              "the test socket %s does not list duet_test and the rest:\n%s"
              % (s.test_display, text))
        mode = os.stat(os.path.join(s.runtime_dir, s.test_display)).st_mode & 0o777
        check(mode & 0o077 == 0, "test socket is mode %o: others may connect" % mode)
        # duet-testctl pointed at the clients' socket finds no duet_test.
        r = s.run([duet.program("DUET_TESTCTL"), "--socket", s.display, "sync"])
        check(r.returncode == 1 and "does not advertise duet_test" in r.stderr,
              "duet-testctl on the clients' socket: %d %s" % (r.returncode, r.stderr))
        s.sync()  # and on its own (WAYLAND_DISPLAY-test) it works
        s.check_alive()
        duet.log("duet_test on %s only, mode %o" % (s.test_display, mode))


def test_no_test_protocol(info):
    with duet.Session("globals-no-test", test_protocol=False) as s:
        check_ordinary(s, info)
        left = sorted(os.listdir(s.runtime_dir))
        check(not [n for n in left if n.endswith("-test")],
              "a test socket exists without --test-protocol: %r" % left)
        r = s.run([duet.program("DUET_TESTCTL"), "sync"])
        check(r.returncode == 1 and "--test-protocol" in r.stderr,
              "duet-testctl without --test-protocol: %d %s" % (r.returncode, r.stderr))
        s.check_alive()


def test():
    info = duet.third_party("wayland-info")
    scenario = sys.argv[1] if len(sys.argv) > 1 else "default"
    if scenario == "default":
        test_default(info)
    elif scenario == "no-test-protocol":
        test_no_test_protocol(info)
    else:
        raise duet.Failure("unknown scenario %r" % scenario)


if __name__ == "__main__":
    duet.main(test)
