#!/usr/bin/env python3
"""scripts/compare-protocol on two synthetic results.json: the same
messages by name say so and exit 0; a launch message counted once more, a
per-frame count moved past the tolerance, or a source only one run has
exit 1 and name what differs; a per-frame move within the tolerance is the
same.

usage: test_compare_protocol.py SOURCE_ROOT"""
import copy
import json
import os
import subprocess
import sys
import tempfile

BASE = {"ipc": {
    "wayland": {
        "launch": {"protocol": {"messages": {"wl_surface.commit": 2, "wl_callback->done": 2}}},
        "render": {"protocol_per_frame": {"by_name": {"wl_surface.commit": 1.0,
                                                      "wl_buffer->release": 1.0}}}},
    "x11": {
        "launch": {"protocol": {"wm": {"messages": {"X.MapWindow": 1, "X->MapRequest": 1}}}},
        "render": {"protocol_per_frame_wm": {"by_name": {"DAMAGE->Notify": 0.241}}}}}}


def run(root, tmp, a, b, *extra):
    paths = []
    for name, res in (("a", a), ("b", b)):
        p = os.path.join(tmp, name + ".json")
        with open(p, "w") as f:
            json.dump(res, f)
        paths.append(p)
    r = subprocess.run([sys.executable, os.path.join(root, "scripts", "compare-protocol")]
                       + paths + list(extra), capture_output=True, text=True, timeout=30)
    print(r.stdout + r.stderr)
    return r


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        sys.exit(1)


def main():
    root = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="duet-compare-protocol-")
    r = run(root, tmp, BASE, copy.deepcopy(BASE))
    check(r.returncode == 0 and r.stdout.count("the same") == 4,
          "the same messages by name on both stacks: exit 0, four sources the same")

    more = copy.deepcopy(BASE)
    more["ipc"]["x11"]["launch"]["protocol"]["wm"]["messages"]["X.MapWindow"] = 2
    r = run(root, tmp, BASE, more)
    check(r.returncode == 1 and "X.MapWindow" in r.stdout and "different" in r.stdout,
          "a launch message counted once more: exit 1, the message named")

    near = copy.deepcopy(BASE)
    near["ipc"]["x11"]["render"]["protocol_per_frame_wm"]["by_name"]["DAMAGE->Notify"] = 0.265
    check(run(root, tmp, BASE, near).returncode == 0,
          "a per-frame count 0.024 apart is within the default tolerance (0.05)")
    r = run(root, tmp, BASE, near, "--tolerance", "0.01")
    check(r.returncode == 1 and "DAMAGE->Notify" in r.stdout,
          "... and past a tolerance of 0.01: exit 1, the message named")

    gone = copy.deepcopy(BASE)
    del gone["ipc"]["wayland"]["render"]["protocol_per_frame"]
    r = run(root, tmp, BASE, gone)
    check(r.returncode == 1 and "only in before" in r.stdout,
          "a source only the first run has: exit 1, said")

    r = run(root, tmp, {"ipc": {}}, {"ipc": {}})
    check(r.returncode == 1 and "nothing to compare" in r.stdout,
          "two runs without messages by name: exit 1, nothing compared")
    print("PASS")


if __name__ == "__main__":
    main()
