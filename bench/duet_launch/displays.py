"""Display numbers and Wayland socket names: the one place that picks them.

X displays are drawn at random from a range (200-899 for X servers,
900-999 for the bench's xtrace proxies) among the numbers with no lock
file and no live socket: the low numbers that -displayfd alone would pick
are what every other user of the machine (tests running in parallel)
takes first, and two servers racing for one number lose both. The server
still reports on -displayfd when it is ready, and a start that loses a
race is tried again on another number (x_numbers' callers).

Wayland sockets are named after the program, this process and a random
tag, in the stack's own XDG_RUNTIME_DIR.
"""
import os
import random
import secrets
import socket

X_SERVERS = (200, 899)
X_PROXIES = (900, 999)
X_SOCKET_DIR = "/tmp/.X11-unix"


def free_socket(path):
    """True when a display socket path can be taken: absent, or left
    behind by a process that is gone (nobody accepts on it; xtrace never
    removes its own), in which case it is removed."""
    if not os.path.exists(path):
        return True
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return False  # somebody listens there
    except ConnectionRefusedError:
        try:
            os.unlink(path)
            return True
        except OSError:
            return False
    except OSError:
        return False
    finally:
        s.close()


def accepting(path):
    """True once a server listens on the Unix socket path. Its file
    appears at bind(), before listen(): a client that connects in between
    is refused (weston under load, 2026-11-28), so the file alone is not
    readiness."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def ensure_x_socket_dir():
    """Creates /tmp/.X11-unix (mode 1777, sticky, as X servers make it)
    where it is missing: on a machine where no X server has run yet there
    is none, and weston 10's Xwayland module does not make it: it fails to
    bind its display's socket there and dies (SIGSEGV). Returns whether it
    had to be made."""
    try:
        os.mkdir(X_SOCKET_DIR, 0o1777)
    except FileExistsError:
        return False
    # mkdir's mode passes through the umask, which clears the bits others need.
    os.chmod(X_SOCKET_DIR, 0o1777)
    return True


def x_socket(n):
    return os.path.join(X_SOCKET_DIR, "X%d" % n)


def x_free(n):
    return not os.path.exists("/tmp/.X%d-lock" % n) and free_socket(x_socket(n))


def x_numbers(span=X_SERVERS, tries=5):
    """Up to tries free X display numbers from span, in random order."""
    numbers = list(range(span[0], span[1] + 1))
    random.shuffle(numbers)
    found = 0
    for n in numbers:
        if found >= tries:
            return
        if x_free(n):
            found += 1
            yield n


def wayland_socket(prefix):
    """A fresh Wayland socket name: PREFIX-PID-TAG."""
    return "%s-%d-%s" % (prefix, os.getpid(), secrets.token_hex(3))
