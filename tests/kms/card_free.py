#!/usr/bin/env python3
"""Runs one KMS test (meson's `--setup kms` wrapper) only when no process
holds a DRM card open, and names the holder otherwise.

A server left behind by an earlier test keeps the card and makes every
later test fail with "cannot become its DRM master"; this way the first
test after it fails once, naming the process that holds the card, and
the others are not blamed for it.

    card_free.py TEST [ARGS...]   (checks, then execs TEST)
    card_free.py --check          (prints the holders; status 1 if any)
"""
import glob
import os
import sys


def holders(cards=None):
    """(pid, card, cmdline) of every process with a DRM primary node open
    (render nodes do not hold a card: anyone may share them)."""
    cards = {os.path.realpath(c) for c in (cards or glob.glob("/dev/dri/card*"))}
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            fds = os.listdir("/proc/%s/fd" % entry)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink("/proc/%s/fd/%s" % (entry, fd))
            except OSError:
                continue
            if target in cards:
                try:
                    with open("/proc/%s/cmdline" % entry, "rb") as f:
                        cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
                except OSError:
                    cmd = "?"
                found.append((int(entry), target, cmd))
                break
    return found


def describe(found):
    return "; ".join("pid %d (%s) holds %s" % (pid, cmd[:120], card) for pid, card, cmd in found)


def main(argv):
    if argv[1:] == ["--check"]:
        found = holders()
        if found:
            print(describe(found))
        return 1 if found else 0
    if len(argv) < 2:
        print("usage: card_free.py TEST [ARGS...] | --check", file=sys.stderr)
        return 2
    found = holders()
    if found:
        print("FAIL: a DRM card is not free before the test starts: %s" % describe(found),
              flush=True)
        return 1
    os.execvp(argv[1], argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
