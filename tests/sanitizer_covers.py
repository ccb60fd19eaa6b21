#!/usr/bin/env python3
"""Runs a test of duet's C programs in the plain build, unless the same
run of the suite also runs it in a sanitizer build: then the test is
counted here as skipped, with where it runs.

A test listed this way (the root meson.build's `sanitizer_covers`) checks
nothing but what its C programs do, and checks it the same way in both
builds; under ASan and UBSan it checks that and memory errors as well. So
the plain run adds no information and only costs the minutes. The suite's
driver says a sanitizer run follows by setting DUET_SANITIZER_RUNS to that
build's directory (scripts/test for the host, scripts/test-kms in the
guest); without it, e.g. `meson test -C build` by hand or
`DUET_NO_ASAN=1 ./scripts/test`, every test runs here.

    sanitizer_covers.py SCRIPT [ARGS...]   (a Python test script)
"""
import os
import sys

if len(sys.argv) < 2:
    sys.exit("usage: sanitizer_covers.py SCRIPT [ARGS...]")
covered_by = os.environ.get("DUET_SANITIZER_RUNS", "")
if covered_by:
    print("SKIP: %s runs in the sanitizer build (%s) of this run, which checks the same "
          "C programs the same way under ASan and UBSan"
          % (" ".join([os.path.basename(sys.argv[1])] + sys.argv[2:]), covered_by))
    sys.exit(77)
os.execv(sys.executable, [sys.executable] + sys.argv[1:])
