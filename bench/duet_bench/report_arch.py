"""The report's three-architecture section (issue 32, item 4): X11 (an X
server with a separate window manager: x11, openbox, mutter-x11, i3), Xwayland
(a Wayland compositor hosting Xwayland, its X window manager inside:
xwayland, weston-xwayland, mutter-xwayland, sway-xwayland) and native
Wayland (wayland, weston, mutter, sway), on the headline
metrics the bench already has, with the ratios between the architectures
and their intervals (metrics.ratios over ARCH_PAIRS), and per architecture
which process made how many IPC calls per launch and per frame
(results.json's ipc.STACK.launch.processes, ipc.STACK.render)."""
from duet_bench import metrics
from duet_bench.report_figures import fmt, metric_ratio_cell

ARCHITECTURES = [
    ("X11", ["x11", "openbox", "mutter-x11", "i3"],
     "the app talks to the X server only; the server passes its map and configure requests "
     "and events on to the separate window manager (and on openbox its damage to xcompmgr), "
     "whose answers come back through the server"),
    ("Xwayland", ["xwayland", "weston-xwayland", "mutter-xwayland", "sway-xwayland"],
     "the app talks to Xwayland, an X server that is itself a Wayland client; the X window "
     "manager inside the compositor is one more X client of Xwayland, and Xwayland passes the "
     "window's contents to the compositor as a Wayland surface: two servers on the path"),
    ("native Wayland", ["wayland", "weston", "mutter", "sway"],
     "the app talks to the compositor only, which is server, window manager and compositor "
     "in one process: one hop per request"),
]
XWAYLAND_STACKS = ["xwayland", "weston-xwayland", "mutter-xwayland", "sway-xwayland"]
# The ratios shown, as (numerator, denominator).
ARCH_PAIRS = [("xwayland", "wayland"), ("xwayland", "x11"), ("weston-xwayland", "weston"),
              ("xwayland", "weston-xwayland"), ("mutter-xwayland", "mutter"),
              ("mutter-xwayland", "mutter-x11"), ("sway-xwayland", "sway"),
              ("sway-xwayland", "i3")]
# The headline metrics compared, in metrics.py's keys; a metric no present
# stack has is left out.
HEADLINE = ["launch_ms", "render_fps", "thirdparty_glmark2_score", "resize_ms",
            "roundtrip_server_us", "roundtrip_wm_us", "launch_ipc", "render_ipc_per_frame",
            "render_ipc_per_frame_gl", "thirdparty_glmark2_ipc_per_frame", "resize_ipc",
            "launch_switches",
            "render_switches_per_frame", "resize_switches", "roundtrip_server_switches"]
# The program behind each role, per stack (docs/methodology.md's stacks table).
PROGRAMS = {
    "x11": {"server": "Xvfb", "wm": "duet-xwm"},
    "openbox": {"server": "Xvfb", "wm": "openbox", "compositor": "xcompmgr"},
    "xwayland": {"server": "duet-compositor", "xwayland": "Xwayland"},
    "weston-xwayland": {"server": "weston", "xwayland": "Xwayland"},
    "wayland": {"server": "duet-compositor"},
    "weston": {"server": "weston"},
    "mutter": {"server": "mutter"},
    "mutter-x11": {"server": "Xvfb", "wm": "mutter"},
    "mutter-xwayland": {"server": "mutter", "xwayland": "Xwayland"},
    "sway": {"server": "sway"},
    "i3": {"server": "Xvfb", "wm": "i3", "compositor": "picom"},
    "sway-xwayland": {"server": "sway", "xwayland": "Xwayland"},
}
ROLES = ["server", "xwayland", "wm", "compositor", "app"]


def present(results):
    """The architecture stacks with results ([stack]), and a line per
    absent one: not in the run, or skipped, with why."""
    recs = results.get("stacks") or {}
    have, absent = [], []
    for _, stacks, _ in ARCHITECTURES:
        for st in stacks:
            rec = recs.get(st)
            if rec is None:
                absent.append("%s: not in this run" % st)
            elif isinstance(rec, dict) and rec.get("status") == "skipped":
                absent.append("%s: skipped (%s)" % (
                    st, ((rec.get("reason") or "").splitlines() or ["no reason"])[0][:160]))
            else:
                have.append(st)
    return have, absent


def _value(cell):
    if cell is None:
        return "-"
    if cell.n:
        return fmt(cell.median)
    return "-" if cell.status.startswith("ok") or cell.status == "not run" else \
        "- (%s)" % cell.status[:80]


def metric_rows(results, table, order, have):
    """Per headline metric: the median on every present stack and the
    ARCH_PAIRS ratios of the present stacks."""
    pairs = [p for p in ARCH_PAIRS if p[0] in have and p[1] in have]
    got = {(pm.key, p): res for pm, p, res in metrics.ratios(results, table, order, pairs)}
    by_key = {m.key: m for m in order}
    rows = []
    for key in HEADLINE:
        m = by_key.get(key)
        per = table.get(key) or {}
        if m is None or not any(per.get(st) and per[st].n for st in have):
            continue
        rows.append(["%s (%s)" % (key, m.unit)] + [_value(per.get(st)) for st in have] +
                    [metric_ratio_cell(m, got.get((key, p)), all(
                        per.get(st) and per[st].n and per[st].median == 0 for st in p))
                     for p in pairs])
    return ["metric"] + have + ["%s/%s" % p for p in pairs], rows


def _calls(rec):
    return rec.get("study_style") if isinstance(rec, dict) else rec


def process_counts(results, st, procs):
    """"server (Xvfb) 120, wm (duet-xwm) 80, app 60; window system 200"
    from a {role: count record or number}, or None without counts."""
    parts, ws = [], 0
    for role in ROLES + sorted(set(procs) - set(ROLES)):
        v = _calls(procs.get(role))
        if not isinstance(v, (int, float)):
            continue
        prog = PROGRAMS.get(st, {}).get(role)
        parts.append("%s%s %s" % (role, " (%s)" % prog if prog else "", fmt(v)))
        if role != "app":
            ws += v
    if not parts:
        return None
    return "%s; window system %s" % (", ".join(parts), fmt(ws))


def ipc_lines(results, have):
    """One line per architecture: its IPC path and, per present stack, the
    calls each process made per launch (and per rendered frame)."""
    ipc = results.get("ipc") or {}
    lines = []
    for arch, stacks, path in ARCHITECTURES:
        per = []
        for st in stacks:
            if st not in have:
                continue
            rec = ipc.get(st) or {}
            launch = process_counts(results, st,
                                    (rec.get("launch") or {}).get("processes") or {})
            frame = process_counts(results, st,
                                   (rec.get("render") or {}).get("per_frame_study_style") or {})
            per.append("%s: per launch %s%s" % (
                st, launch or "no counts (%s)" % metrics.status_of(rec.get("launch")),
                "; per frame %s" % frame if frame else ""))
        if per:
            lines.append("**%s**: %s. %s." % (arch, path, " | ".join(per)))
        else:
            lines.append("**%s**: no stack of this architecture in this run." % arch)
    return lines


def blocks(results, table, order):
    """The section, or nothing for a run without an Xwayland stack."""
    have, absent = present(results)
    if not any(st in have for st in XWAYLAND_STACKS):
        return []
    header, rows = metric_rows(results, table, order, have)
    out = [("h2", "Three architectures: X11, Xwayland, native Wayland"),
           ("p", "The same X11 app binaries on an X server with a separate window manager "
            "(X11: x11 = Xvfb + duet-xwm, openbox = Xvfb + openbox + xcompmgr), on Xwayland "
            "hosted by a Wayland compositor whose X window manager is inside it (Xwayland: "
            "xwayland = duet-compositor, weston-xwayland = weston), and their Wayland builds "
            "on the compositors alone (native Wayland: wayland, weston). Medians over the "
            "runs; ratios of medians with their 95% paired bootstrap interval where the "
            "rounds allow one, IPC counts from one counting run each (no interval; within "
            "1.1x of 1 is no difference). IPC = sendmsg + writev + recvmsg on Unix sockets; "
            "the IPC rows count the server alone (duet-compositor or weston on the Xwayland "
            "stacks: Xwayland is in the lines below).")]
    if absent:
        out.append(("p", "Absent (no column, no ratio): %s." % "; ".join(absent)))
    out.append(("table", header, rows or [["-"] * len(header)]))
    out.append(("p", "IPC calls per process (sendmsg + writev + recvmsg on Unix sockets, "
                "the counting run):"))
    out.extend(("p", line) for line in ipc_lines(results, have))
    return out
