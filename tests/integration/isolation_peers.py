"""The isolation tests' faults against the peers (issue 45, "the peers
under the same probes"): test_isolation.py PEER:FAULT.

Each peer's stack is started by duet's stack launcher as the bench starts
it (duet.PeerSession), nothing of it changed to fit the test; a peer not
installed here is a skip of one line. The offenders are duet's own
(duet-bad-client on a Wayland peer, duet-x11-bad-client on an X one), the
same modes and sizes as on duet's paths. The peers have no test-only
control protocol, so the checks are the ones that need none:

  alive    every process of the stack (PeerSession.alive(): the X server,
           the window manager, its compositing manager, the Wayland server
           and the Xwayland it started; on the E stacks enlightenment_start
           and E, its child), the same process all along
  frames   the good client's own count: a Wayland client's frames
           presented (frame callbacks on sway, whose headless output
           presents nothing), an X client's frames drawn; ten more after
           each check point, and while an offender floods or fills its
           socket at least MIN_RATE_SHARE of its rate before
  window   X: the good window still viewable where it was, as large, asked
           of the X server (weston's X window manager keeps no
           _NET_CLIENT_LIST); Wayland: not checked (no window list a
           client may read)
  input    X on Xvfb: the good window raised as a pager does
           (_NET_ACTIVE_WINDOW, source 2, a server timestamp), a key sent
           with XTEST once the window manager gave it the X focus, then a
           click where it is on top (and a key); through Xwayland and on
           Wayland: not checked (the
           headless peers have no input device, and Wayland has no
           standard way to inject one: XTEST into Xwayland would bypass
           the compositor's seat, the path a user's input takes)

What a peer does with the offender (cuts it off, kills it, lets it be) is
recorded, not judged: the log's "peer:" lines say it, and the end of what
each process of the stack wrote meanwhile. A budget is a peer's own or
none; there the fault is the offender's allocation (eight 4096x4096
surfaces, 512 MiB of textures if the peer uploads them all; one 2048x2048
X window), run only with memory to spare and stopped if the machine runs
short.

Here the peers, their stacks and run_case; the good clients' checks are
isolation_peers_good.py, the faults isolation_peers_faults.py, the record
isolation_peers_record.py, and what the X server is asked (windows, focus,
input) isolation_peers_x.py.
"""

import time

import duet
from duet import check, log
from duet_launch import enlightenment

import test_isolation as iso
from isolation_peers_faults import FAULT_RUNS
from isolation_peers_good import PeerGood


# Peer -> (duet_launch's stack kind, the offender's protocol, its X server).
PEERS = {
    "weston": ("weston", "wayland", None),
    "sway": ("sway", "wayland", None),
    "mutter": ("mutter", "wayland", None),
    "e-wayland": ("e-wayland", "wayland", None),
    "openbox": ("openbox", "x", "xvfb"),
    "i3": ("i3", "x", "xvfb"),
    "mutter-x11": ("mutter-x11", "x", "xvfb"),
    "e-x11": ("e-x11", "x", "xvfb"),
    "weston-xwayland": ("weston-xwayland", "x", "xwayland"),
    "sway-xwayland": ("sway-xwayland", "x", "xwayland"),
    "mutter-xwayland": ("mutter-xwayland", "x", "xwayland"),
}


class PeerPath(iso.Path):
    """A peer's stack, its good clients beside the offender: an X client on
    the X peers; on the Xwayland peers a Wayland client too (the X
    offender must not cost the compositor's own clients either)."""

    def __init__(self, name):
        self.name = name
        self.stack_kind, self.offender_kind, self.x_server = PEERS[name]
        self.xwayland = None

    def session(self, name):
        return duet.PeerSession(name, self.stack_kind)

    def goods(self, s):
        if self.offender_kind == "wayland":
            return [PeerGood(s, self, "wayland", iso.WL_APP, (200, 150))]
        goods = [PeerGood(s, self, "x", iso.X_APP, (320, 240))]
        if self.x_server == "xwayland":
            goods.append(PeerGood(s, self, "wayland", iso.WL_APP, (200, 150)))
            self.xwayland = s.stack.role_pids.get("xwayland")
        return goods

    def after(self, s):
        if self.x_server == "xwayland":
            now = s.stack.role_pids.get("xwayland")
            check(now == self.xwayland and s.alive(),
                  "Xwayland is not the same process (was %s, now %s)" % (self.xwayland, now))
            log("Xwayland pid %d all along" % self.xwayland)
        if getattr(s.stack, "e_session", None):
            # The stack watches enlightenment_start, which forks E again in
            # its restart loop: E itself must be the process it was.
            role = s.spec.compositor_role
            was = s.stack.role_pids[role]
            now = enlightenment.e_pid(s.stack.procs[role].pid)
            check(now == was, "Enlightenment is not the same process (was %s, now %s)"
                  % (was, now))
            log("Enlightenment pid %d all along" % was)


def run_case(peer, fault):
    path = PeerPath(peer)
    with path.session("isolation-%s-%s" % (peer, fault)) as s:
        versions(s)
        goods = path.goods(s)
        iso.check_goods(goods, "start")
        iso.measure_baselines(goods)
        t0 = time.monotonic()
        FAULT_RUNS[fault](s, path, goods)
        s.check_alive()
        path.after(s)
        log("%s:%s done in %.1f s: the stack whole, the good clients kept going"
            % (peer, fault, time.monotonic() - t0))


def versions(s):
    """The stack's commands, as the launcher ran them."""
    for role, argv in s.stack.commands.items():
        log("%s: %s" % (role, " ".join(argv)))
