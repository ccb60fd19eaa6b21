#!/usr/bin/env python3
"""An ICCCM/EWMH conformance check of X window managers, as a client sees
them (checks.py), run on duet's two X window managers and three peers
(wms.py), with the table in docs/x11-conformance.md.

  conformance.py run WM --out JSON [--peers]
      Starts WM's stack (x11, xwayland, weston-xwayland, openbox or i3),
      runs every check, writes the results to JSON. With --peers (duet's
      two WMs) it first runs openbox and i3 the same way, and fails when a
      check both of them pass fails on WM: duet's WMs pass wherever openbox
      and i3 pass. Without it (a peer) it only records.
  conformance.py doc JSON... > docs/x11-conformance.md
      The table: a row per check, a column per WM, fails footnoted.

Needs python3-xlib (Debian); a missing one, or a missing WM, is a skip
(a failure under CI).
"""

import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "bench"), os.path.join(ROOT, "tests", "integration")]

import duet  # noqa: E402
from duet import log  # noqa: E402
from duet_launch import stack as launch_stack  # noqa: E402

import wms  # noqa: E402

# Our own programs the stacks run, from the build (tests/x11-conformance/meson.build).
PROGRAMS = {"duet-compositor": os.environ.get("DUET_COMPOSITOR"),
            "duet-xwm": os.environ.get("DUET_XWM"),
            "duet-xctl": os.environ.get("DUET_XCTL")}


def need_xlib():
    try:
        import Xlib  # noqa: F401
    except ImportError:
        msg = "python3-xlib is not installed (Debian package python3-xlib; scripts/packages.sh)"
        if os.environ.get("CI") == "true":
            raise duet.Failure(msg)
        raise duet.Skip(msg)


def need_wm(wm):
    why = wms.missing(wm, PROGRAMS)
    if why:
        if os.environ.get("CI") == "true":
            raise duet.Failure("%s: %s" % (wm, why))
        raise duet.Skip("%s cannot run here: %s" % (wm, why))


def run_wm(wm):
    """{"wm", "title", "wm_name", "results"} of one WM, on a stack of its own."""
    import checks
    import xclient
    runtime = tempfile.mkdtemp(prefix="duet-xconf-xdg-")
    os.chmod(runtime, 0o700)
    workdir = tempfile.mkdtemp(prefix="duet-xconf-%s-" % wm)
    env = duet.base_env(runtime)
    try:
        st = wms.start(wm, PROGRAMS, workdir, env)
    except launch_stack.StackError as e:
        for role, text in e.logs.items():
            log("%s log (tail):\n%s" % (role, text[-3000:]))
        raise duet.Failure("the %s stack did not start: %s" % (wm, e))
    try:
        display = st.env["DISPLAY"]
        log("%s: %s on %s" % (wm, wms.WMS[wm][1], display))
        c = xclient.Conn(display, patience=duet.GRACE / 2.0)
        try:
            check = c.root_windows("_NET_SUPPORTING_WM_CHECK")
            name = c.prop(c.d.create_resource_object("window", check[0]), "_NET_WM_NAME") \
                if check else None
            results = checks.run_all(c, log=lambda m: log("%s: %s" % (wm, m)))
        finally:
            c.close()
        dead = st.dead()
        if dead:
            raise duet.Failure("%s: the stack's %s died during the checks; log:\n%s"
                               % (wm, dead.role, st.logs().get(dead.role, "")[-3000:]))
    finally:
        st.stop()
        st.cleanup()
    return {"wm": wm, "title": wms.WMS[wm][1],
            "wm_name": name.decode(errors="replace") if isinstance(name, bytes) else name,
            "results": results}


def rule_breaks(own, peers):
    """Checks every peer passes that own does not: [(check, own's result)]."""
    import checks
    out = []
    for name in checks.NAMES:
        if all(p["results"].get(name, {}).get("status") == "pass" for p in peers) and \
                own["results"].get(name, {}).get("status") != "pass":
            out.append((name, own["results"].get(name, {"status": "missing", "why": ""})))
    return out


def run(args):
    need_xlib()
    duet.third_party("xprop")
    for wm in ([args.wm] + (wms.PEERS if args.peers else [])):
        need_wm(wm)
    peers = [run_wm(p) for p in wms.PEERS] if args.peers else []
    own = run_wm(args.wm)
    if peers:
        own["peers"] = {p["wm"]: p["results"] for p in peers}
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(own, f, indent=1, sort_keys=True)
    os.replace(tmp, args.out)
    log("results in %s" % args.out)
    counts = {s: sum(r["status"] == s for r in own["results"].values())
              for s in ("pass", "fail", "skip")}
    log("%s: %d pass, %d fail, %d skip" % (args.wm, counts["pass"], counts["fail"],
                                           counts["skip"]))
    if peers:
        breaks = rule_breaks(own, peers)
        for name, r in breaks:
            log("RULE: %s passes on %s, %s on %s: %s"
                % (name, " and ".join(wms.PEERS), r["status"], args.wm, r["why"]))
        duet.check(not breaks, "%s fails %d check(s) that openbox and i3 pass: %s"
                   % (args.wm, len(breaks), ", ".join(n for n, _ in breaks)))


# ---------------------------------------------------------------- the table
def doc(paths):
    import checks
    runs = {}
    for p in paths:
        with open(p) as f:
            r = json.load(f)
        runs[r["wm"]] = r
    order = [w for w in wms.ORDER if w in runs]
    out = ["# Conformance: ICCCM and EWMH on five X window managers", "",
           "Generated by `tests/x11-conformance/conformance.py doc` from one run of each "
           "window manager (the `x11-conformance-*` tests leave them in "
           "`build/meson-logs/x11-conformance-*.json`). Do not edit by hand.", "",
           "Each check is a client of the display (python-xlib) that makes its own windows and "
           "waits for what ICCCM or EWMH says the window manager does; a wait's timeout only "
           "guards against a hang. An EWMH check whose atoms the window manager leaves out of "
           "`_NET_SUPPORTED` and that fails is a skip. The rule the tests keep: duet's window "
           "managers pass every check that openbox and i3 both pass "
           "(`x11-conformance-x11`, `x11-conformance-xwayland`).", "",
           "| check | " + " | ".join(runs[w]["title"] for w in order) + " |",
           "|---" * (len(order) + 1) + "|"]
    notes = []
    for name in checks.NAMES:
        row = []
        for w in order:
            r = runs[w]["results"].get(name)
            if r is None:
                row.append("-")
                continue
            cell = r["status"]
            if r["status"] != "pass":
                notes.append("%s, %s: %s" % (name, runs[w]["title"], one_line(r["why"])))
                cell += " [%d]" % len(notes)
            row.append(cell)
        out.append("| %s | %s |" % (name, " | ".join(row)))
    totals = []
    for w in order:
        rs = runs[w]["results"].values()
        totals.append("%d / %d / %d" % tuple(sum(r["status"] == s for r in rs)
                                           for s in ("pass", "fail", "skip")))
    out.append("| **pass / fail / skip** | %s |" % " | ".join(totals))
    out += ["", "## What each check does", ""]
    out += ["- %s: %s." % (name, what) for name, _, _, what in checks.CHECKS]
    out += ["", "## Why a cell is not a pass", ""]
    out += ["%d. %s" % (i, n) for i, n in enumerate(notes, 1)]
    out += ["", "## Window managers", ""]
    for w in order:
        out.append("- %s: %s; `_NET_WM_NAME` %s." % (runs[w]["title"], wms.WMS[w][2],
                                                     runs[w].get("wm_name")))
    return "\n".join(out) + "\n"


def one_line(text):
    return " ".join(str(text).split()).replace("|", "/")


def main(argv):
    p = argparse.ArgumentParser(prog="conformance.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("wm", choices=wms.ORDER)
    r.add_argument("--out", required=True)
    r.add_argument("--peers", action="store_true")
    d = sub.add_parser("doc")
    d.add_argument("json", nargs="+")
    args = p.parse_args(argv)
    if args.cmd == "doc":
        sys.stdout.write(doc(args.json))
        return
    duet.main(lambda: run(args))


if __name__ == "__main__":
    main(sys.argv[1:])
