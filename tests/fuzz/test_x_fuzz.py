#!/usr/bin/env python3
"""An X window manager under the X fuzzer (x_fuzz.py): REQUESTS requests
from SEED, in episodes of one X connection each.

  xwm       duet-xwm on Xvfb
  xwayland  duet-compositor's window manager of Xwayland's X clients

After every episode the stack must be whole (X server, window manager,
compositor alive; Xwayland the same process) and the window manager must
still manage a new window (it maps it within 20 s, with nothing else
happening on the display: a manager asleep on a request it never handled
would never map it; over 5 s is logged as slow); at the end its
processes must exit without a sanitizer report (ASan build: leaks too).
A failure prints the seed, the episode, and its shortest failing prefix
(found by replaying the episode cut shorter on fresh stacks), request by
request.

usage: test_x_fuzz.py xwm|xwayland [--seed N] [--requests N] [--episode-requests N]
"""
import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)

import duet  # noqa: E402
from duet_launch import hang  # noqa: E402

try:
    import x_fuzz  # noqa: E402
except ImportError as e:  # python3-xlib (scripts/packages.sh)
    x_fuzz = None
    XLIB_MISSING = str(e)


def xwayland_pid(s, wait=False):
    import test_xwayland  # noqa: E402  (its helpers: the Xwayland of a session)
    if wait:
        return test_xwayland.one_xwayland(s)
    pids = test_xwayland.xwayland_pids(s)
    return pids[0] if len(pids) == 1 else None


class Target:
    """A stack to fuzz, started afresh (for each shortening trial too)."""

    def __init__(self, kind):
        self.kind = kind

    def session(self):
        if self.kind == "xwm":
            return duet.XSession("x-fuzz-xwm", screenshots=False)
        import test_xwayland  # noqa: E402
        return duet.Session("x-fuzz-xwayland", test_protocol=False,
                            args=test_xwayland.xwayland_args("--xwayland-now"))

    def display(self, s):
        if self.kind == "xwm":
            return s.display
        import test_xwayland  # noqa: E402
        return test_xwayland.announced(s)[0]

    def whole(self, s, name, xwl):
        """Why the stack is not whole, or None."""
        if not s.alive():
            dead = [p for p in s.procs if not p.alive()]
            reports = [r for r in (p.sanitizer_report() for p in dead) if r]
            return "%s died%s" % (", ".join(p.name for p in dead) or "the stack",
                                  ": " + reports[0] if reports else "")
        if xwl is not None and xwayland_pid(s) != xwl:
            # How it went: the compositor logs its exit status once it
            # reaps it, and Xwayland's own last words go to the same log.
            time.sleep(1.0)
            said = [line for line in s.compositor.stderr_tail(200000).splitlines()
                    if "Xwayland (pid %d)" % xwl in line or "(EE)" in line
                    or "wl_display" in line]
            return "Xwayland (pid %d) is gone (now %s)%s" % (
                xwl, xwayland_pid(s), "".join("\n  " + line for line in said[-12:]))
        probe = x_fuzz.Probe(name)
        took = probe.took
        if took is not None and took > 5:
            # Slow (a loaded machine, a sanitizer build), not stuck.
            duet.log("the window manager mapped a new window after %.1f s" % took)
        if took is None:
            time.sleep(0.5)
            if not s.alive():
                return self.whole(s, name, xwl)
            # Where each process waits: nothing else happened on the
            # display for 20 s, so a manager that sleeps on a request it
            # never handled stays asleep.
            procs = [(p.name, p.pid) for p in s.procs] + ([("Xwayland", xwl)] if xwl else [])
            where = hang.describe_peers(procs) + [
                "%s (pid %d) main thread:\n    %s" % (n, pid, "\n    ".join(hang.user_stack(pid)))
                for n, pid in procs]
            nudged = ("it did not map it even after an event woke it: it read the request "
                      "and dropped it" if probe.nudged is None else
                      "an event woke it and it mapped the window %.1f s later: the request "
                      "was left unread in its queue" % probe.nudged)
            return ("the window manager did not map a new window within 20 s; %s; where "
                    "they waited:\n%s" % (nudged, "\n".join(where)))
        return None


def episode_rng(seed, number):
    return random.Random("%d:%d" % (seed, number))


def fails_alone(target, seed, number, limit):
    try:
        with target.session() as s:
            name = target.display(s)
            xwl = xwayland_pid(s, wait=True) if target.kind == "xwayland" else None
            x_fuzz.Episode(name, episode_rng(seed, number), limit, hold=0.5).run()
            return target.whole(s, name, xwl) is not None
    except duet.Failure:
        return True


def shortest_prefix(target, seed, number, length):
    """The fewest requests of the episode that still fail on a fresh
    stack (binary search; None if the episode alone does not fail)."""
    if not fails_alone(target, seed, number, length):
        return None
    lo, hi = 1, length
    while lo < hi:
        mid = (lo + hi) // 2
        if fails_alone(target, seed, number, mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def run(args):
    if x_fuzz is None:
        raise duet.Skip("python3-xlib is missing (%s): scripts/packages.sh installs it"
                        % XLIB_MISSING)
    if args.target == "xwayland":
        import test_xwayland  # noqa: E402
        test_xwayland.need_xwayland()
    target = Target(args.target)
    episodes = requests = 0
    failure = None
    t0 = time.monotonic()
    with target.session() as s:
        name = target.display(s)
        xwl = xwayland_pid(s, wait=True) if args.target == "xwayland" else None
        while requests < args.requests:
            e = x_fuzz.Episode(name, episode_rng(args.seed, episodes),
                               min(args.episode_requests, args.requests - requests))
            e.run()
            episodes += 1
            requests += e.requests
            why = target.whole(s, name, xwl)
            if why:
                failure = (why, episodes - 1, e)
                for p in s.procs:
                    duet.log("%s (pid %d) stderr, the end:\n%s"
                             % (p.name, p.pid, p.stderr_tail(6000)))
                break
        duet.log("%d requests in %d episodes in %.1f s from seed %d on %s"
                 % (requests, episodes, time.monotonic() - t0, args.seed, args.target))
    if failure is None:
        return
    why, number, e = failure
    replay = "tests/fuzz/test_x_fuzz.py %s --seed %d --requests %d" % (
        args.target, args.seed, requests)
    n = shortest_prefix(target, args.seed, number, e.requests)
    if n is None:
        raise duet.Failure("%s\nseed %d, episode %d (%d requests); the episode alone does not "
                           "fail: replay the run with `%s`" % (why, args.seed, number,
                                                              e.requests, replay))
    lines = "\n".join("  %d. %s" % (i + 1, t) for i, t in enumerate(e.log[:n]))
    raise duet.Failure("%s\nseed %d, episode %d: its first %d requests fail alone:\n%s\n"
                       "(the run: `%s`)" % (why, args.seed, number, n, lines, replay))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("target", choices=["xwm", "xwayland"])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--requests", type=int, default=5000)
    p.add_argument("--episode-requests", type=int, default=100)
    args = p.parse_args()
    duet.main(lambda: run(args))


if __name__ == "__main__":
    main()
