"""What an EFL client leaves behind: efreetd, the daemon Elementary starts,
which outlives the app (the thirdparty experiment's elementary_test, the
launch experiment's duet-launch-efl)."""
import os
import signal

from duet_bench import procs
from duet_launch import proc


def reap_strays(stack):
    """EFL starts efreetd, a daemon that outlives the app and, orphaned,
    comes back to the bench (a child subreaper). Kills such orphans of
    this stack instance (its XDG_RUNTIME_DIR), so none piles up between
    stacks; a stack process's own helpers (weston's shell client) have
    their parent still and are left alone. So are the E session's own
    daemons (its session bus forks away from the bench too): killing E's
    bus made E start its shutdown a few seconds later, in the middle of
    the next experiment."""
    mine = {c.pid for c in proc.live()}
    needle = ("XDG_RUNTIME_DIR=" + stack.runtime).encode()
    session = getattr(stack, "e_session", None)
    keep = ("HOME=" + session.home).encode() if session else None
    for pid in procs.descendants(os.getpid()):
        st = procs.read_stat(pid)
        if pid in mine or not st or st[1] != os.getpid():
            continue
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
            if needle not in env or (keep and keep in env):
                continue
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)  # ours since it was orphaned: reap it
        except OSError:
            pass
