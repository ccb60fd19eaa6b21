#!/usr/bin/env python3
"""duet_launch.proc.Child.wait returns with every line the process printed
read: a process that prints 100000 lines and exits leaves up to a pipe's
worth of them unread when it exits, and a caller that looked at the lines
right after its exit (xwayland-glmark2, under load) missed the last ones.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from checks import check  # noqa: E402
from duet_launch import proc  # noqa: E402

LINES = 100000


def test():
    with tempfile.TemporaryDirectory(prefix="duet-lines-") as tmp:
        c = proc.Child("seq", ["seq", str(LINES)], dict(os.environ),
                       log_path=os.path.join(tmp, "seq.log"), lines=True,
                       stdout_path=os.path.join(tmp, "seq.stdout"))
        try:
            status = c.wait(60)
            got = list(c.lines)
        finally:
            c.stop()
    check(status == 0, "seq exited %r" % status)
    check(len(got) == LINES and got[-1] == str(LINES),
          "%d lines read when wait returned, the last %r; want %d"
          % (len(got), got[-1] if got else None, LINES))
    print("all %d lines read when wait returned" % LINES)


if __name__ == "__main__":
    try:
        test()
    except subprocess.TimeoutExpired as e:
        sys.exit("FAIL: %s" % e)
    print("PASS")
