#!/usr/bin/env python3
"""Texture budgets: windows whose texture would pass duet-xwm's per-window
or total texture budget are not composited, each with one log line, and a
window drawing beside them keeps being composited.

usage: test_xwm_budget.py per-window|total
  per-window  three 4096x4096 windows (64 MiB each) against a 24 MiB
              per-window budget: none composited, three log lines
  total       five 2000x2000 windows (15 MiB each) against a 48 MiB total:
              three composited, two refused, two log lines
"""

import sys

import duet
import test_xwm_robustness as rb
from duet import check

CASES = {
    # case: (windows, size, refused, budget word in the log)
    "per-window": (3, "4096x4096", 3, "per-window"),
    "total": (5, "2000x2000", 2, "total"),
}


def over_budget_lines(s):
    return [line for line in s.wm.stderr_tail(1 << 20).splitlines()
            if "over the" in line and "texture budget" in line]


def test():
    case = sys.argv[1]
    n, size, refused, word = CASES[case]
    with duet.XSession("xwm-budget-" + case, wm_args=["--texture-budget", "48",
                                                      "--window-texture-budget", "24"]) as s:
        good, _ = rb.start_good(s)
        rb.check_composited(s, good, "start")
        huge = s.client([duet.program("DUET_X11_WM_CHECK"), "windows", str(n), size],
                        name="huge")
        huge.wait_line(r"^mapped %d$" % n, timeout=60)
        rb.check_composited(s, good, "%d windows of %s" % (n, size))
        lines = over_budget_lines(s)
        duet.log("over-budget lines: %r" % lines)
        check(len(lines) == refused, "want %d over-budget log lines, got %d: %r"
              % (refused, len(lines), lines))
        check(all(word in line for line in lines), "lines do not name the %s budget: %r"
              % (word, lines))
        check(len([w for w in s.windows() if w.app_id == "duet-wm-check"]) == n,
              "the windows over budget are not managed: %r" % s.windows())
        huge.stop()
        rb.wait_only_good(s)
        rb.check_composited(s, good, "the windows closed")
        s.check_alive()


if __name__ == "__main__":
    duet.main(test)
