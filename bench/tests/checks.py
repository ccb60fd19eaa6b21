"""The bench tests' way of saying what they checked: every check prints
"ok: ..." and the first failure prints "FAIL: ..." and exits 1; the
processes a run left behind, found by its environment mark; and whether a
results.json keeps to bench/results.schema.json; and where a process
sleeps (in a read, in a poll), for a test that must act only once it does;
and the circles of a graph (the import and call graphs the structure tests
read).
"""
import json
import os
import sys
import time

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


def wait_until(pred, what, timeout=60):
    """Until pred() is true; fails saying what did not happen if timeout s
    pass first (a hang guard, not a time the thing is allowed)."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            fail("%s did not happen in %d s" % (what, timeout))
        time.sleep(0.005)


# System call numbers as /proc/PID/syscall gives them, of x86_64, aarch64
# and riscv64, arm, i386 (any of them: under qemu-user they are the host's).
READ_CALLS = ("0", "63", "3")
POLL_CALLS = ("7", "271", "73", "168", "336", "309")  # poll, ppoll


def blocked_in(pid, wchan_part, calls, fd=None):
    """pid sleeps in a system call: its wchan names wchan_part, or (where
    the kernel hides wchan) its current system call is one of calls, on
    fd if given."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] != "S":
                return False
        with open("/proc/%d/wchan" % pid) as f:
            wchan = f.read()
        if wchan not in ("", "0"):
            return wchan_part in wchan
        with open("/proc/%d/syscall" % pid) as f:
            call = f.read().split()
        return len(call) > 1 and call[0] in calls and (fd is None or int(call[1], 16) == fd)
    except (OSError, IndexError, ValueError):
        return False


def blocked_in_read(pid):
    """pid sleeps in a read of a pipe: its wchan says so, or (where the
    kernel hides wchan) its current system call is read of fd 0."""
    return blocked_in(pid, "pipe_read", READ_CALLS, fd=0)


def blocked_in_poll(pid):
    """pid sleeps in poll or ppoll (wchan poll_schedule_timeout,
    do_sys_poll, as kernels name it)."""
    return blocked_in(pid, "poll", POLL_CALLS)


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


def cycles(edges):
    """The strongly connected sets of two or more nodes (modules, files), each
    sorted: the circles of a graph {node: nodes it uses} (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out
