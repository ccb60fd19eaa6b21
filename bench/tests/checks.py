"""The bench tests' way of saying what they checked: every check prints
"ok: ..." and the first failure prints "FAIL: ..." and exits 1."""
import sys

_on_fail = []


def on_fail(fn):
    """Run fn() before exiting on a failure (e.g. remove temporary files)."""
    _on_fail.append(fn)


def fail(msg):
    print("FAIL: " + msg, flush=True)
    for fn in _on_fail:
        fn()
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg, flush=True)
