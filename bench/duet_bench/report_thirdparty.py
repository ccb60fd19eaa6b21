"""The report's section on the thirdparty experiment (thirdparty.py):
glmark2 and elementary_test on every stack, their figures per stack and
the study-style ratios with their intervals."""
from duet_bench import metrics, report_painted, stats
from duet_bench.glmark2 import NOTE_ROUNDTRIP
from duet_bench.report_figures import fmt, metric_ratio_cell

PAIR_LABEL = stats.PAIR_LABEL


def _median_of(table, key, st):
    c = table.get(key, {}).get(st)
    return c.median if c and c.n else None


def _first(rec, client, field):
    for s in (rec or {}).get("samples", []):
        if s.get("client") == client and s.get(field):
            return s[field]
    return None


def painted(rec, med):
    """The painted rate, or why the stack cannot tell it."""
    hz = med("thirdparty_glmark2_painted_hz")
    if hz == "-":
        why = _first(rec, "glmark2", "painted_missing")
        return "- (%s)" % why if why else hz
    return hz


def stack_rows(results, table):
    rows = []
    for st in metrics.stacks_of(results):
        rec = metrics.exp(results, "thirdparty", st)
        if not rec:
            continue
        if rec.get("status") == "skipped":
            rows.append([st, "skipped: " + (rec.get("reason") or "")] + ["-"] * 13)
            continue
        med = lambda k: fmt(_median_of(table, k, st))  # noqa: E731
        first = med("thirdparty_efl_first_frame_ms")
        if first == "-":
            first = "- (%s)" % (_first(rec, "efl", "first_frame_missing") or "not run")
        rows.append([st, med("thirdparty_glmark2_score"),
                     med("thirdparty_glmark2_ws_cpu_ms_per_frame"),
                     painted(rec, med),
                     med("thirdparty_glmark2_ws_cpu_ms_per_painted_frame"),
                     med("thirdparty_glmark2_ipc_per_frame"), first,
                     med("thirdparty_efl_launch_ipc"), med("thirdparty_efl_launch_callbacks"),
                     med("thirdparty_efl_launch_ipc_per_callback"), med("thirdparty_efl_idle_ipc"),
                     med("thirdparty_efl_idle_ws_calls"), med("thirdparty_efl_idle_ws_cpu_ms"),
                     ", ".join(_first(rec, "efl", "engines") or []) or "-"])
    return rows


def ratio_rows(order, pairs, keep, table=None):
    """Per metric of order whose key keep() takes, and pair of stacks: the
    ratio of medians with its interval and verdict (metrics.ratios), as the
    other sections show it. Given table, two zero medians read "both 0"."""
    rows = []
    for m in order:
        if not keep(m.key):
            continue
        got = {p: res for pm, p, res in pairs if pm is m}
        if not got:
            continue
        cells = [metric_ratio_cell(m, got.get(p), table is not None and all(
            _median_of(table, m.key, st) == 0 for st in p)) for p in stats.PAIRS]
        rows.append([m.key] + cells)
    return rows


def blocks(results, out, table, order, pairs):
    """The section, or nothing for a run without the experiment."""
    if not any(metrics.exp(results, "thirdparty", st)
               for st in metrics.stacks_of(results)):
        return []
    opts = results.get("options") or {}
    out = [("h2", "Third-party clients (thirdparty)"),
           ("p", "Every stack at 60 Hz. glmark2: `glmark2-es2-wayland` on wayland and weston, "
            "`glmark2-es2` on x11 and openbox, `-s 800x600 -b build:duration=%s -b "
            "texture:duration=%s`, unthrottled; window-system CPU per client frame from "
            "schedstat between each scene's first and last frame; painted Hz: the output "
            "frames the stack's compositor painted in the same time, from its own log "
            "(duet's traces, weston's timeline; xcompmgr tells no one), and the same CPU per "
            "painted frame; server IPC per frame from a separate counting run. elementary_test `-to Button` (EFL, software engines, "
            "a private home, one untimed warm-up launch per stack instance): fork -> "
            "composited where the stack can tell it, then %s s idle; server IPC during the "
            "launch (fork -> composited + 1 s) and during the idle time, from the counting "
            "run. The idle calls include the one wake-up each process gets from the "
            "counter's dump signal. On Wayland the counting run also logs the app's protocol "
            "(WAYLAND_DEBUG=client): the frame callbacks the server answered during the "
            "launch, and the server IPC per callback, which does not depend on how often a "
            "server answers them (weston's headless output: about 40 Hz; duet-compositor: "
            "its refresh)." % (fmt(opts.get("glmark2_duration_s")),
                                         fmt(opts.get("glmark2_duration_s")),
                                         fmt(opts.get("efl_idle_s")))),
           ("p", "**" + NOTE_ROUNDTRIP + "**"),
           ("table", ["stack", "glmark2 score", "WS CPU ms/frame", "painted Hz",
                      "WS CPU ms/painted frame", "server IPC/frame",
                      "EFL first frame ms", "EFL launch IPC", "EFL frame callbacks",
                      "EFL IPC/callback", "EFL idle IPC",
                      "EFL idle WS calls", "EFL idle WS CPU ms", "Evas engine"],
            stack_rows(results, table)),
           ("p", "Medians over the runs; IPC = the server's sendmsg + writev + recvmsg on "
            "Unix sockets (Xvfb, duet-compositor, weston), one counting run per stack. "
            "Ratios: timings with their 95% paired bootstrap interval (3 rounds or more), "
            "counts from one run each (no interval; within 1.1x of 1 is no difference).")]
    rows = ratio_rows(order, pairs, lambda key: key.startswith("thirdparty_"), table)
    if rows:
        out.append(("table", ["metric"] + [PAIR_LABEL[p] for p in stats.PAIRS], rows))
    out.extend(report_painted.blocks(results, "thirdparty"))
    return out
