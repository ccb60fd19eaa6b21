#!/usr/bin/env python3
"""Checks libduet-ipc-count.so against a probe making known numbers of calls.

usage: test_ipc_count.py LIB PROBE
"""
import json
import os
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import blocked_in_poll, blocked_in_read, check, fail, wait_until  # noqa: E402

N = 7


def main():
    lib, probe = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="duet-ipc-test-") as d:
        env = dict(os.environ, LD_PRELOAD=lib, DUET_IPC_COUNT_DIR=d)
        # An ASan-built probe would insist on coming first; it is built
        # without sanitizers, but be safe under a sanitized environment.
        env["ASAN_OPTIONS"] = "verify_asan_link_order=0:" + env.get("ASAN_OPTIONS", "")
        r = subprocess.run([probe, str(N)], env=env, capture_output=True, text=True, timeout=30)
        check(r.returncode == 0, "probe exits 0 (stderr: %s)" % r.stderr.strip())
        words = r.stdout.split()
        parent, child = int(words[1]), int(words[3])
        files = sorted(os.listdir(d))
        check(files == sorted(["%d.json" % parent, "%d.json" % child]),
              "one dump per process, no temporary left: %s" % files)
        with open(os.path.join(d, "%d.json" % parent)) as f:
            p = json.load(f)
        with open(os.path.join(d, "%d.json" % child)) as f:
            c = json.load(f)

    check(p["pid"] == parent and p["reason"] == "exit" and p["seq"] == 2,
          "parent: signal dump then exit dump (seq %s, reason %s)" % (p["seq"], p["reason"]))
    check(p["comm"] == os.path.basename(probe)[:15], "comm is the program name: %r" % p["comm"])
    pc = p["counts"]
    check(pc["recvmsg"]["unix"] == [N, 10 * N], "parent recvmsg unix = %s" % pc["recvmsg"])
    check(pc["readv"]["unix"] == [N, 20 * N], "parent readv unix = %s" % pc["readv"])
    check(pc["sendmsg"]["unix"] == [1, 5], "parent sendmsg unix = %s" % pc["sendmsg"])
    check(pc["write"].get("pipe") == [2, 6], "parent write pipe = %s" % pc["write"])
    check(pc["read"].get("pipe") == [2, 6], "parent read pipe = %s" % pc["read"])
    check(pc["poll"]["wait"][0] == 3, "parent poll = %s" % pc["poll"])
    check("writev" not in pc, "parent made no writev")
    peer = p["peers"].get(str(child))
    check(peer is not None, "the child is a peer of the parent: %s" % p["peers"])
    check(peer["recvmsg"] == [N, 10 * N] and peer["readv"] == [N, 20 * N]
          and peer["sendmsg"] == [1, 5], "per-peer counts of the parent: %s" % peer)

    cc = c["counts"]
    check(c["reason"] == "exit" and c["seq"] == 1, "child dumped once, at exit")
    check(cc["sendmsg"]["unix"] == [N, 10 * N], "child sendmsg unix = %s" % cc["sendmsg"])
    check(cc["writev"]["unix"] == [N, 20 * N], "child writev unix = %s" % cc["writev"])
    check(cc["recvmsg"]["unix"] == [1, 5], "child recvmsg unix = %s" % cc["recvmsg"])
    check("readv" not in cc and "poll" not in cc,
          "the child's counts do not include the parent's (reset at fork)")
    check(c["peers"].get(str(parent), {}).get("writev") == [N, 20 * N],
          "the parent is the child's peer: %s" % c["peers"])
    check_idle(lib, probe)
    check_in_call(lib, probe)
    print("PASS")


def wait_dump(path, seq, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                d = json.load(f)
            if d["seq"] == seq:
                return d
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    fail("no dump %d in %s" % (seq, path))


def signal_pending(pid, signo):
    """signo is pending for pid's main thread (sent, not yet taken)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if (line.startswith(("SigPnd:", "ShdPnd:"))
                    and int(line.split()[1], 16) >> (signo - 1) & 1):
                return True
    return False


def waits(dump):
    return dump["counts"].get("poll", {}).get("wait", [0])[0]


def check_idle(lib, probe):
    """A process idle in one poll across two dumps made no wait between
    them: the dump's own signal interrupting the poll is not a wait."""
    with tempfile.TemporaryDirectory(prefix="duet-ipc-test-") as d:
        env = dict(os.environ, LD_PRELOAD=lib, DUET_IPC_COUNT_DIR=d)
        env["ASAN_OPTIONS"] = "verify_asan_link_order=0:" + env.get("ASAN_OPTIONS", "")
        p = subprocess.Popen([probe, "idle"], env=env, stdout=subprocess.PIPE, text=True)
        try:
            pid = int(p.stdout.readline().split()[1])
            path = os.path.join(d, "%d.json" % pid)
            first = []
            for seq in (1, 2, 3):
                # Each dump's signal interrupts the poll: sent once the
                # probe is seen asleep in it (again, after the last dump's
                # EINTR), not after a pause a loaded machine can outlast.
                wait_until(lambda: blocked_in_poll(pid),
                           "the idle probe asleep in its poll before dump %d" % seq)
                os.kill(pid, 12)  # SIGUSR2
                first.append(waits(wait_dump(path, seq)))
        finally:
            p.kill()
            p.wait()
    check(first[1] == first[0] and first[2] == first[0],
          "an idle process shows no waits between dumps: %s" % first)


def check_in_call(lib, probe):
    """A dump signalled while a counted call is under way is made once the
    call has been added: a process blocked in read() makes no dump until
    the read returns, and that dump counts it. (Made at once, a dump could
    come between a call's syscall and its count, and leave out a call
    strace times before it.)"""
    import ctypes
    libc = ctypes.CDLL(None)
    with tempfile.TemporaryDirectory(prefix="duet-ipc-test-") as d:
        env = dict(os.environ, LD_PRELOAD=lib, DUET_IPC_COUNT_DIR=d)
        env["ASAN_OPTIONS"] = "verify_asan_link_order=0:" + env.get("ASAN_OPTIONS", "")
        p = subprocess.Popen([probe, "read"], env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
        try:
            line = p.stdout.readline().split()
            check(line[:1] == [b"read"], "the reader started: %r" % line)
            pid = int(line[1])  # under qemu-user too, the probe's own pid
            path = os.path.join(d, "%d.json" % pid)
            # Signalled before its read, the probe dumps at once, rightly:
            # so the signal goes once it is seen asleep in the read, not
            # after a pause a loaded machine can outlast.
            wait_until(lambda: blocked_in_read(pid), "the reader asleep in its read")
            libc.tgkill(pid, pid, 12)  # SIGUSR2, to the thread in read()
            # Taken, and the read resumed (SA_RESTART): a dump made at once
            # would be there by now (the handler writes it before it
            # returns), whatever the machine's speed.
            wait_until(lambda: not signal_pending(pid, 12) and blocked_in_read(pid),
                       "the reader taking SIGUSR2 and going back to its read")
            check(not os.path.exists(path), "no dump while the read is under way")
            p.stdin.write(b"x")
            p.stdin.flush()
            dump = wait_dump(path, 1)
        finally:
            try:
                p.stdin.close()
            except OSError:
                pass
            p.wait(60)
    check(dump["reason"] == "signal" and dump["counts"].get("read", {}).get("pipe", [0])[0] >= 1,
          "the dump came after the read and counts it: %s" % dump["counts"].get("read"))


if __name__ == "__main__":
    main()
