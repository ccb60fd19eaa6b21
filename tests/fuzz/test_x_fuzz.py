#!/usr/bin/env python3
"""An X window manager under the X fuzzer (x_fuzz.py): REQUESTS requests
from SEED, in episodes of one X connection each.

  xwm              duet-xwm on Xvfb
  xwayland         duet-compositor's window manager of Xwayland's X clients
  openbox          openbox + xcompmgr -c on Xvfb (the X11 peer)
  i3               i3 + picom on Xvfb
  mutter-x11       mutter --x11 on Xvfb (window and compositing manager)
  e-x11            Enlightenment on Xvfb
  weston-xwayland  weston's own X window manager of its Xwayland
  mutter-xwayland  mutter's X window manager of its Xwayland
  sway-xwayland    sway's (wlroots') X window manager of its Xwayland

Each stack is started by duet's stack launcher as the bench starts it; a
peer that is not installed is skipped with one line.

After every episode the stack must be whole (every process of it alive:
X server, window manager, compositing manager or Wayland server; Xwayland
the same process) and the window manager must still manage a new window
(it maps it within 20 s, with nothing else happening on the display: a
manager asleep on a request it never handled would never map it; over 5 s
is logged as slow); at the end its processes must exit without a
sanitizer report (duet's ASan build: leaks too). An episode whose X
server stops answering for 120 s is a hang too. A failure prints the
seed, the episode, and its shortest failing prefix (found by replaying the
episode cut shorter on fresh stacks), request by request.

usage: test_x_fuzz.py TARGET [--seed N] [--requests N] [--episode-requests N]
                      [--first-episode N] [--without NAME]...
"""
import argparse
import os
import random
import signal
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


# The stacks it can fuzz: target -> duet_launch's stack kind (duet's two
# are started by the test sessions duet's other tests use).
PEERS = {"openbox": "openbox", "i3": "i3", "mutter-x11": "mutter-x11", "e-x11": "e-x11",
         "weston-xwayland": "weston-xwayland", "mutter-xwayland": "mutter-xwayland",
         "sway-xwayland": "sway-xwayland"}
TARGETS = ["xwm", "xwayland"] + list(PEERS)
EPISODE_STALL = 120  # s an episode may wait on its X server before it is a hang


class Stalled(Exception):
    """The X server did not answer an episode's request in time."""


# A stack that went away: a connection refused or cut where a request or
# the next episode's connection wanted it.
GONE = (Stalled,) if x_fuzz is None else (Stalled, x_fuzz.error.DisplayError,
                                          x_fuzz.error.ConnectionClosedError)


def xwayland_pid(s, wait=False):
    import test_xwayland  # noqa: E402  (its helpers: the Xwayland of a session)
    if wait:
        return test_xwayland.one_xwayland(s)
    pids = test_xwayland.xwayland_pids(s)
    return pids[0] if len(pids) == 1 else None


class Target:
    """A stack to fuzz, started afresh (for each shortening trial too)."""

    def __init__(self, kind, without=()):
        self.kind = kind
        self.without = tuple(without)  # what its episodes never send (--without)

    def session(self):
        if self.kind == "xwm":
            return duet.XSession("x-fuzz-xwm", screenshots=False)
        if self.kind == "xwayland":
            import test_xwayland  # noqa: E402
            return duet.Session("x-fuzz-xwayland", test_protocol=False,
                                args=test_xwayland.xwayland_args("--xwayland-now"))
        if self.kind == "openbox":
            return duet.XSession("x-fuzz-openbox", wm="openbox", screenshots=False)
        return duet.PeerSession("x-fuzz-" + self.kind, PEERS[self.kind])

    def display(self, s):
        if self.kind == "xwayland":
            import test_xwayland  # noqa: E402
            return test_xwayland.announced(s)[0]
        if s.env.get("XAUTHORITY"):
            # mutter's Xwayland admits the clients given its Xauthority
            # file (the launcher's env), which python3-xlib reads from ours.
            os.environ["XAUTHORITY"] = s.env["XAUTHORITY"]
        return s.display

    def xwayland(self, s):
        """The pid of the stack's Xwayland, or None (an X server of its own)."""
        if self.kind == "xwayland":
            return xwayland_pid(s, wait=True)
        return s.stack.role_pids.get("xwayland")

    def procs(self, s):
        """(name, process) of every process of the stack: those it started,
        then those another started (Xwayland)."""
        return [(p.name, p) for p in s.procs] + [
            ("Xwayland", c) for c in s.stack.watched.values()]

    def whole(self, s, name, xwl):
        """Why the stack is not whole, or None."""
        dead = [(n, p) for n, p in self.procs(s) if not p.alive()]
        if dead:
            reports = [r for r in (getattr(p, "sanitizer_report", lambda: None)()
                                   for _, p in dead) if r]
            return "%s%s" % (", ".join("%s (pid %d) %s" % (n, p.pid, p.status())
                                        for n, p in dead),
                             ": " + reports[0] if reports else "")
        if self.kind == "xwayland" and xwayland_pid(s) != xwl:
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
        if took is not None and any(not p.alive() for _, p in self.procs(s)):
            # It died on the probe's window (or its destruction).
            return self.whole(s, name, xwl)
        if took is None:
            time.sleep(0.5)
            if any(not p.alive() for _, p in self.procs(s)):
                return self.whole(s, name, xwl)
            # Where each process waits: nothing else happened on the
            # display for 20 s, so a manager that sleeps on a request it
            # never handled stays asleep.
            procs = [(n, p.pid) for n, p in self.procs(s)]
            if self.kind == "xwayland":
                procs.append(("Xwayland", xwl))
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

    def logs(self, s):
        """The end of each process's output (and of weston's log file)."""
        if isinstance(s, duet.PeerSession):
            return s.log_tails(6000)
        return [("%s stderr" % p.name, p.stderr_tail(6000)) for p in s.procs]


def run_episode(episode):
    """episode.run(), a Stalled exception if its X server does not answer
    for EPISODE_STALL s (python3-xlib waits on a reply for ever)."""
    def stalled(signum, frame):
        signal.alarm(10)  # its connection's close may wait on the server too
        raise Stalled()
    old = signal.signal(signal.SIGALRM, stalled)
    signal.alarm(EPISODE_STALL)
    try:
        episode.run()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def episode_rng(seed, number):
    return random.Random("%d:%d" % (seed, number))


def fails_alone(target, seed, number, limit):
    try:
        with target.session() as s:
            name = target.display(s)
            xwl = target.xwayland(s)
            run_episode(x_fuzz.Episode(name, episode_rng(seed, number), limit, hold=0.5,
                                       without=target.without))
            return target.whole(s, name, xwl) is not None
    except (duet.Failure,) + GONE:
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


def fail_together(target, seed, first, number, per, last):
    """Whether episodes first..number (per requests each, last for the
    last), run one after another on a fresh stack with the probe after
    each as in the run, break it."""
    try:
        with target.session() as s:
            name = target.display(s)
            xwl = target.xwayland(s)
            for i in range(first, number + 1):
                run_episode(x_fuzz.Episode(name, episode_rng(seed, i),
                                           last if i == number else per,
                                           without=target.without))
                if target.whole(s, name, xwl) is not None:
                    return True
            return False
    except (duet.Failure,) + GONE:
        return True


def fewest_episodes(target, args, number, last, tries=6):
    """The latest first episode found from which the run's episodes up to
    number fail together on a fresh stack (number-1, -2, -4, ...: what a
    window manager keeps from earlier clients), or None within tries."""
    back = 1
    for _ in range(tries):
        first = max(args.first_episode, number - back)
        if fail_together(target, args.seed, first, number, args.episode_requests, last):
            return first
        if first == args.first_episode:
            return None
        back *= 2
    return None


def run(args):
    if x_fuzz is None:
        raise duet.Skip("python3-xlib is missing (%s): scripts/packages.sh installs it"
                        % XLIB_MISSING)
    if args.target == "xwayland":
        import test_xwayland  # noqa: E402
        test_xwayland.need_xwayland()
    target = Target(args.target, args.without)
    if args.target in PEERS:
        # A peer that is not installed: a Skip of one line.
        from duet_launch import stack as launch_stack  # noqa: E402
        duet.need_stack(launch_stack.Config(PEERS[args.target]))
    episodes, requests = args.first_episode, 0
    failure = None
    t0 = time.monotonic()
    with target.session() as s:
        name = target.display(s)
        xwl = target.xwayland(s)
        last = None
        while requests < args.requests:
            try:
                e = x_fuzz.Episode(name, episode_rng(args.seed, episodes),
                                   min(args.episode_requests, args.requests - requests),
                                   without=target.without)
            except x_fuzz.error.DisplayError as ex:
                # The stack broke after the last episode's probe: that
                # episode (the probe's window) is the one to shorten.
                why = target.whole(s, name, xwl) or "a new X connection failed: %s" % ex
                failure = (why, episodes - 1, last)
                break
            last = e
            try:
                run_episode(e)
                why = None
            except Stalled:
                procs = [(n, p.pid) for n, p in target.procs(s)]
                why = ("the X server did not answer the episode for %d s (its request %d); "
                       "where they waited:\n%s" % (EPISODE_STALL, e.requests, "\n".join(
                           hang.describe_peers(procs))))
            episodes += 1
            requests += e.requests
            why = why or target.whole(s, name, xwl)
            if why:
                failure = (why, episodes - 1, e)
                break
        if failure is not None:
            for what, text in target.logs(s):
                duet.log("%s, the end:\n%s" % (what, text))
        duet.log("%d requests in %d episodes in %.1f s from seed %d on %s%s"
                 % (requests, episodes - args.first_episode, time.monotonic() - t0, args.seed,
                    args.target,
                    ", never sending %s" % ", ".join(args.without) if args.without else ""))
    if failure is None:
        return
    why, number, e = failure
    if e is None:
        raise duet.Failure("%s\nbefore the first episode of seed %d" % (why, args.seed))

    def command(first, count):
        return "tests/fuzz/test_x_fuzz.py %s --seed %d%s --requests %d%s" % (
            args.target, args.seed, " --first-episode %d" % first if first else "", count,
            "".join(" --without " + w for w in args.without))
    replay = command(args.first_episode, requests)
    n = shortest_prefix(target, args.seed, number, e.requests)
    if n is None:
        first = fewest_episodes(target, args, number, e.requests)
        if first is None:
            raise duet.Failure("%s\nseed %d, episode %d (%d requests); the episode alone does "
                               "not fail, nor with the few before it: replay the run with `%s`"
                               % (why, args.seed, number, e.requests, replay))
        count = (number - first) * args.episode_requests + e.requests
        raise duet.Failure("%s\nseed %d, episode %d (%d requests); the episode alone does not "
                           "fail, episodes %d to %d do on a fresh stack (%d requests at most): "
                           "`%s` (the run: `%s`)" % (why, args.seed, number, e.requests, first,
                                                     number, count, command(first, count),
                                                     replay))
    lines = "\n".join("  %d. %s" % (i + 1, t) for i, t in enumerate(e.log[:n]))
    raise duet.Failure("%s\nseed %d, episode %d: its first %d requests fail alone:\n%s\n"
                       "(the run: `%s`)" % (why, args.seed, number, n, lines, replay))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("target", choices=TARGETS)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--requests", type=int, default=5000)
    p.add_argument("--episode-requests", type=int, default=100)
    p.add_argument("--first-episode", type=int, default=0, metavar="N",
                   help="start at episode N of the seed (a failure that needs the episodes "
                        "before its own is replayed from there)")
    p.add_argument("--without", action="append", default=[], metavar="NAME",
                   help="never send this client message type or property (a peer's known "
                        "crash left out, to see what else it does); repeatable")
    args = p.parse_args()
    duet.main(lambda: run(args))


if __name__ == "__main__":
    main()
