#!/usr/bin/env python3
"""Every third-party program the tests call by name (each literal name
given to duet.third_party under tests/, or to bench/tests/browser.py's
third_party under bench/tests/) comes from a Debian package that
scripts/packages.sh installs for scripts/test. A program installed here by
hand but not listed passes on the machine that has it and fails on a fresh
one (xeyes, of x11-apps, on a fresh machine, 2026-12-05); this test names
the program and its package.

Under CI a program that is not installed is a failure (scripts/test has just
installed the lists); elsewhere it is reported and the rest is checked.
Without dpkg (not Debian) the test is skipped.

usage: test_third_party_packages.py SOURCE_ROOT
"""
import os
import re
import shutil
import subprocess
import sys

root = sys.argv[1]
if not shutil.which("dpkg"):
    print("SKIP: no dpkg (not Debian): the package lists cannot be checked")
    sys.exit(77)

# The lists scripts/test installs, read the way scripts/test reads them.
lists = subprocess.run(
    ["sh", "-c", '. "$1"; echo $DUET_BUILD_PACKAGES $DUET_BENCH_PACKAGES '
     '$DUET_TEST_PACKAGES $DUET_KMS_PACKAGES', "sh",
     os.path.join(root, "scripts", "packages.sh")],
    capture_output=True, text=True, check=True).stdout.split()
if len(lists) < 20:
    print("FAIL: scripts/packages.sh gave %d packages: %r" % (len(lists), lists))
    sys.exit(1)

names = set()
call = re.compile(r'third_party\(\s*"([^"]+)"')
for tree in ("tests", os.path.join("bench", "tests")):
    for top, _dirs, files in os.walk(os.path.join(root, tree)):
        for f in files:
            if f.endswith(".py"):
                with open(os.path.join(top, f), encoding="utf-8") as src:
                    names.update(call.findall(src.read()))
if len(names) < 10:
    print("FAIL: found only %d third_party() names under tests/ and bench/tests/: %r"
          % (len(names), names))
    sys.exit(1)


def owner(path):
    """The Debian package that ships PATH, trying its /usr-merged twins."""
    tries = [path, os.path.realpath(path)]
    for p in list(tries):
        if p.startswith("/usr/"):
            tries.append(p[len("/usr"):])
        else:
            tries.append("/usr" + p)
    for p in tries:
        r = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
        if r.returncode == 0:
            # "pkg[:arch][, pkg2]: /path"
            return [w.split(":")[0] for w in r.stdout.split(": ")[0].split(", ")]
    return None


fails, missing = [], []
for name in sorted(names):
    path = shutil.which(name)
    if not path:
        missing.append(name)
        continue
    pkgs = owner(path)
    if not pkgs:
        fails.append("%s (%s) belongs to no Debian package" % (name, path))
    elif not set(pkgs) & set(lists):
        fails.append("%s comes from %s, which scripts/packages.sh does not install"
                     % (name, " or ".join(pkgs)))
    else:
        print("%s: %s" % (name, ", ".join(p for p in pkgs if p in lists)))
if missing:
    msg = "not installed: %s" % ", ".join(missing)
    if os.environ.get("CI") == "true":
        fails.append(msg + " (scripts/test installed the lists just before)")
    else:
        print("note: " + msg)
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else 0)
