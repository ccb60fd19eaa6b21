#!/usr/bin/env python3
"""A Wayland server under the protocol fuzzer (wl_fuzz.py): REQUESTS
requests from SEED, in episodes of one connection each, on every
interface the server offers (read from the protocol XML). After every
episode the server must be alive and answer a new client's round trip;
at the end it must exit without a sanitizer report (a leak included, in
the ASan build). A failure prints the seed, the episode, and the shortest
sequence of that episode's messages that still fails on a fresh server
(or, when the episode alone does not fail, the command that replays the
whole run).

  --stack duet     duet-compositor (the default; what meson's wl-fuzz runs)
  --stack weston   weston's headless backend
  --stack sway     sway, headless (as an unprivileged user where we are root)
  --stack mutter   mutter --wayland --headless --no-x11
  --stack e-wayland  Enlightenment's Wayland compositor
Each is started by duet's stack launcher as the bench starts it; a peer
that is not installed is skipped with one line. A peer's globals that no
XML here describes (its private protocols) are listed and not fuzzed.

usage: test_wl_fuzz.py [--stack NAME] [--seed N] [--requests N] [--episode-requests N]
                       [--no-shrink] [--shrink-trials N] [--without IFACE.REQUEST]...
       (by hand: any number of requests; meson runs a fixed seed and count)
"""
import argparse
import collections
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)

import duet  # noqa: E402
from duet_launch import hang  # noqa: E402
import wl_fuzz  # noqa: E402
import wlproto  # noqa: E402

# duet's own protocol (its test powers are on another socket: the fuzzer
# binds nothing of it, but knows it if a global ever leaks).
EXTRA_XML = [os.path.join(HERE, "..", "..", "protocol", "duet-test.xml")]
SHRINK_TRIALS = 80


# The servers it can fuzz: --stack NAME -> duet_launch's stack kind.
STACKS = {"duet": "wayland", "weston": "weston", "sway": "sway", "mutter": "mutter",
          "e-wayland": "e-wayland"}


def session(stack, name):
    """A fresh server of the stack (for each shortening trial too)."""
    if stack == "duet":
        return duet.Session(name, test_protocol=False)
    return duet.PeerSession("%s-%s" % (name, stack), STACKS[stack])


def socket_path(s):
    return os.path.join(s.env["XDG_RUNTIME_DIR"], s.display)


def broken(s, path, where=False):
    """Why the server is not well, or None; where: with where a server
    that does not answer waits (its stack, from gdb)."""
    # ASan and UBSan (halt_on_error) end the process on what they find;
    # its log is read only then (it grows with every protocol error).
    server = s.compositor
    name = {"compositor": "duet-compositor"}.get(server.name, server.name)
    answered = server.alive() and wl_fuzz.probe(path)
    if answered:
        return None
    deadline = time.monotonic() + 2
    while server.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not server.alive():
        report = server.sanitizer_report()
        return "%s died (%s)%s" % (
            name, server.status(), ", a sanitizer report:\n" + report if report else "")
    why = "%s did not answer a new client's wl_display.sync within 5 s" % name
    if where:
        why += "; where it waits:\n" + "\n".join(hang.describe_peers([(name, server.pid)]) +
                                                  hang.user_stack(server.pid))
    return why


def fails_alone(stack, sent):
    """Whether sent, replayed on a fresh server, breaks it."""
    try:
        with session(stack, "wl-fuzz-replay") as s:
            path = socket_path(s)
            wl_fuzz.replay(path, sent)
            return broken(s, path) is not None
    except duet.Failure:
        return True   # a sanitizer report at exit (a leak)


def shrink(stack, sent, most=SHRINK_TRIALS):
    """The shortest sub-sequence of sent found that still fails alone
    (delta debugging on chunks, then single messages), within most
    replays (SHRINK_TRIALS unless --shrink-trials)."""
    trials = 0
    n = 2
    while len(sent) >= 2 and trials < most:
        chunk = max(1, len(sent) // n)
        reduced = False
        for start in range(0, len(sent), chunk):
            candidate = sent[:start] + sent[start + chunk:]
            trials += 1
            if candidate and fails_alone(stack, candidate):
                sent, n, reduced = candidate, max(n - 1, 2), True
                break
            if trials >= most:
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(sent), n * 2)
    return sent


def episode_seed(seed, number):
    return "%d:%d" % (seed, number)


def run(args):
    ifaces = wlproto.load(EXTRA_XML)
    errors = collections.Counter()
    episodes = requests = 0
    t0 = time.monotonic()
    failure = None
    with session(args.stack, "wl-fuzz") as s:
        path = socket_path(s)
        while requests < args.requests:
            rng = random.Random(episode_seed(args.seed, episodes))
            e = wl_fuzz.Episode(ifaces, path, rng, min(args.episode_requests,
                                                      args.requests - requests),
                                without=args.without)
            e.run()
            episodes += 1
            requests += e.requests
            if e.error:
                obj = e.error[0] if e.error else None
                errors[(e.objects.get(obj, (None,))[0].name if obj in e.objects else "?",
                        e.error[1] if len(e.error) > 1 else "?")] += 1
            why = broken(s, path, where=True)
            if why:
                failure = (why, episodes - 1, e.sent)
                break
        offered = sorted(set(g[1] for g in e.globals))
        unknown = [g for g in offered if g not in ifaces]
        duet.log("%d requests in %d episodes in %.1f s from seed %d on %s%s; globals "
                 "offered: %s" % (requests, episodes, time.monotonic() - t0, args.seed,
                                  args.stack, ", never sending %s" % ", ".join(args.without)
                                  if args.without else "", ", ".join(offered)))
        if args.stack == "duet":
            duet.check(not unknown, "globals the fuzzer has no XML for: %s" % unknown)
        elif unknown:
            # A peer's private protocols, whose XML it does not install.
            duet.log("not fuzzed (no XML for them here): %s" % ", ".join(unknown))
        duet.log("protocol errors by interface and code: %s"
                 % ", ".join("%s %s: %d" % (k[0], k[1], v) for k, v in errors.most_common()))
        if failure is None:
            duet.check(s.compositor.alive(), "%s died at the end" % s.compositor.name)
    if failure is None:
        return
    why, number, sent = failure
    duet.log("FOUND after %d requests: %s" % (requests, why))
    replay = "tests/fuzz/test_wl_fuzz.py%s --seed %d --requests %d%s" % (
        "" if args.stack == "duet" else " --stack " + args.stack, args.seed, requests,
        "".join(" --without " + w for w in args.without))
    if args.no_shrink or not fails_alone(args.stack, sent):
        raise duet.Failure("%s\nseed %d, episode %d (%d messages); the episode alone does not "
                           "fail: replay the run with `%s`" % (why, args.seed, number, len(sent),
                                                              replay))
    short = shrink(args.stack, sent, args.shrink_trials)
    lines = "\n".join("  %d. %s" % (i + 1, text) for i, (_, _, text) in enumerate(short))
    raise duet.Failure("%s\nseed %d, episode %d: %d of its %d messages still fail alone:\n%s\n"
                       "(the run: `%s`)" % (why, args.seed, number, len(short), len(sent), lines,
                                            replay))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stack", choices=sorted(STACKS), default="duet",
                   help="the server: duet-compositor (the default) or a peer")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--requests", type=int, default=20000)
    p.add_argument("--episode-requests", type=int, default=200,
                   help="most requests on one connection (default 200)")
    p.add_argument("--no-shrink", action="store_true")
    p.add_argument("--shrink-trials", type=int, default=SHRINK_TRIALS,
                   help="most replays on fresh servers to shorten a failure (default %d; "
                        "a peer starts in a second, so more are cheap there)" % SHRINK_TRIALS)
    p.add_argument("--without", action="append", default=[], metavar="IFACE.REQUEST",
                   help="never send this request (a peer's known crash left out, to see "
                        "what else it does); repeatable")
    args = p.parse_args()
    duet.main(lambda: run(args))


if __name__ == "__main__":
    main()
