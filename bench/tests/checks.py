"""The bench tests' way of saying what they checked: every check prints
"ok: ..." and the first failure prints "FAIL: ..." and exits 1; the
processes a run left behind, found by its environment mark; and whether a
results.json keeps to bench/results.schema.json."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from duet_launch import reaper  # noqa: E402

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


def cmdlines(pids):
    """"PID COMMAND LINE" of each pid still there."""
    out = []
    for pid in pids:
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                out.append("%d %s" % (pid, f.read().replace(b"\0", b" ").decode(errors="replace")))
        except OSError:
            pass
    return out


def marked_processes(mark, name="DUET_BENCH_RUN"):
    """The processes (but this one) that carry the run's mark, as
    "PID COMMAND LINE"; the bench marks every child (duet_launch.reaper)."""
    return cmdlines(reaper.marked(name, mark, exclude={os.getpid()}))


def check_schema(res):
    import jsonschema  # Debian's python3-jsonschema; the bench itself stays stdlib-only
    schema_path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                               "results.schema.json")
    with open(schema_path) as f:
        schema = json.load(f)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(res))
    check(not errors, "results.json validates against the schema%s" % "".join(
        "\n  %s: %s" % (list(e.path), e.message[:200]) for e in errors[:10]))
