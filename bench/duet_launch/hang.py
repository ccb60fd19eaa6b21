"""What a hang guard says before it stops a run: which process of the run's
tree waits where, and, for a Python program that registered faulthandler
on SIGUSR1 (duet bench), every thread's Python stack. A timeout that only
says "did not finish" leaves a rare hang (one guest run in ten) unfound.
"""
import os
import signal
import subprocess
import tempfile
import time

from duet_launch import proc


class Hung(Exception):
    """A guarded run outlived its timeout; the message says where it waited."""


def describe_tree(root):
    """One line per live process of root's tree: pid, command line, where
    it waits and (where /proc lets us, as root) the top of its main
    thread's kernel stack."""
    lines = []
    for pid in [root] + proc.descendants(root):
        wait = proc.where_waiting(pid)
        if wait is None:
            continue
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                raw = f.read().replace(b"\0", b" ")
            argv = " ".join(raw.decode("utf-8", "replace").split())
        except OSError:
            argv = "?"
        try:
            with open("/proc/%d/stack" % pid) as f:
                frames = [ln.split()[-1].split("+")[0] for ln in f.read().splitlines()[:4]]
        except (OSError, IndexError):
            frames = []
        lines.append("pid %d (%s): %s%s" % (pid, argv[:160], wait,
                                            "; kernel: " + " < ".join(frames) if frames else ""))
    return lines


def describe_peers(named, sample=1.0):
    """One line per live (name, pid) of named: where it waits and the CPU
    it used over sample s. A client that waits on a reply cannot tell a
    server that computes (an X server filling a 4 GiB pixmap) from one
    that sleeps; the CPU can. A busy one's main thread is also shown as
    gdb sees it, where gdb is installed."""
    before = {pid: proc.cpu_seconds(pid) for _, pid in named}
    time.sleep(sample)
    lines = []
    for name, pid in named:
        wait = proc.where_waiting(pid)
        used = proc.cpu_seconds(pid)
        if wait is None or used is None or before[pid] is None:
            continue
        busy = used - before[pid]
        lines.append("%s (pid %d): %s; %.2f s of CPU in the last %.1f s (%.1f s in all)"
                     % (name, pid, wait, busy, sample, used))
        if busy >= 0.2 * sample:
            lines += ["    " + l[:240] for l in user_stack(pid)]
    return lines


def user_stack(pid, all_threads=False):
    """The main thread's user-space frames (every thread's, all_threads),
    from gdb, or one line saying why there are none."""
    bt = "thread apply all bt 12" if all_threads else "bt 16"
    try:
        r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex", bt],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           errors="replace", timeout=60)
    except FileNotFoundError:
        return ["(gdb is not installed: no user-space stack)"]
    except subprocess.TimeoutExpired:
        return ["(gdb did not attach within 60 s)"]
    frames = [l for l in r.stdout.splitlines() if l.startswith("#") or
              (all_threads and l.startswith("Thread "))]
    return frames or ["(gdb showed no frames: %s)" % r.stderr.strip()[-200:]]


def in_lock(wait):
    """Whether a where_waiting line has the main thread asleep in a futex:
    a server asleep in a lock, not in its event loop, through a whole
    timeout is deadlocked, and only its threads' frames name the lock."""
    return bool(wait) and "main thread in futex" in wait


def _wait_ready(p, out, ready, timeout):
    """Whether, within timeout s, the file out (p's stdout) holds the line
    ready or p ended. Read with pread: the program writes at the file
    offset it shares with out, which a read would move."""
    want = ready.encode()
    deadline = time.monotonic() + timeout
    data = b""
    while True:
        while True:
            chunk = os.pread(out.fileno(), 65536, len(data))
            if not chunk:
                break
            data += chunk
        if want in data.split(b"\n")[:-1] or p.poll() is not None:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)


def run_guarded(argv, timeout, env=None, stacks_signal=None, grace=60, ready=None,
                ready_timeout=60, peers=None):
    """subprocess.run(argv) with stdin from /dev/null and stdout and stderr
    captured (text), whose timeout says why: when it passes, the tree's
    waits are taken (and those of peers(), a list of (name, pid) of the
    servers it talks to, if given), stacks_signal (if given) asks the
    program for its stacks, SIGINT lets it settle for up to grace s, then
    SIGKILL, and whatever of its tree is still there is killed too; Hung
    is raised with the tree and the tails of both outputs. The outputs go
    to files, not pipes, so a grandchild that keeps them open cannot hold
    the guard.

    ready: a line the program prints on stdout when the part the timeout
    is for begins; the timeout then counts from it, not from the start,
    whose own guard is ready_timeout s (the line not printed by then is a
    hang too). For a timeout shorter than a start can take: an
    interpreter's start under qemu beside a busy core."""
    with tempfile.TemporaryFile("w+", errors="replace") as out, \
            tempfile.TemporaryFile("w+", errors="replace") as err:
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                             text=True)
        if ready is None:
            what = "finish in %d s" % timeout
        elif _wait_ready(p, out, ready, ready_timeout):
            what = "finish in %d s after printing %r" % (timeout, ready)
        else:
            what = "print %r in %d s" % (ready, ready_timeout)
            timeout = 0  # its guard has passed already
        try:
            p.wait(timeout)
            hung = None
        except subprocess.TimeoutExpired:
            hung = describe_tree(p.pid)
            others = describe_peers(peers()) if peers else []
            tree = [(pid, proc.start_time(pid)) for pid in proc.descendants(p.pid)]
            if stacks_signal is not None:
                p.send_signal(stacks_signal)
                time.sleep(2)
            p.send_signal(signal.SIGINT)
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            # What it started and left behind goes too (the same process:
            # its start time, so a reused pid is spared).
            for pid, started in tree:
                if started is not None and proc.start_time(pid) == started:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read())
    if hung is not None:
        peer_text = ("The servers it talks to:\n  %s\n" % "\n  ".join(others)) if others else ""
        raise Hung("%s did not %s. Its processes then:\n  %s\n%sstdout (tail):\n%s\n"
                   "stderr (tail, after the stacks it was asked for):\n%s"
                   % (" ".join(argv), what, "\n  ".join(hung) or "(none left)", peer_text,
                      texts[0][-3000:], texts[1][-8000:]))
    return subprocess.CompletedProcess(argv, p.returncode, texts[0], texts[1])
