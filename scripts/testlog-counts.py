#!/usr/bin/env python3
"""Prints "PASSED FAILED SKIPPED" for one `meson test` run, from its
testlog JSON (one object per test, with a "result"); "0 0 0" when the log
is missing or empty, so the caller decides what no log means.
scripts/test, scripts/test-aarch64 and scripts/test-kms count with it.

usage: testlog-counts.py TESTLOG.json"""
import json
import sys


def counts(path):
    passed = failed = skipped = 0
    try:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                result = json.loads(line).get("result")
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:  # FAIL, TIMEOUT, ERROR, UNEXPECTEDPASS
                    failed += 1
    except OSError:
        pass
    return passed, failed, skipped


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[-1])
    print(*counts(sys.argv[1]))
