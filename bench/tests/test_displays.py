#!/usr/bin/env python3
"""duet_launch.displays: a Unix socket counts as a server's only once the
server listens on it. Its file appears at bind(), before listen(); the
launcher once took weston as ready in between, and wayland-info was
refused (ASan suite beside a CPU hog, 2026-11-28)."""
import os
import socket
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from checks import check  # noqa: E402
from duet_launch import displays  # noqa: E402


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "wayland-test")
        check(not displays.accepting(path), "no file: not accepting")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            srv.bind(path)
            check(os.path.exists(path), "bound: the file is there")
            check(not displays.accepting(path), "bound, not listening: not accepting")
            srv.listen(1)
            check(displays.accepting(path), "listening: accepting")
        finally:
            srv.close()
        check(not displays.accepting(path), "closed: not accepting")
    print("PASS")


if __name__ == "__main__":
    main()
