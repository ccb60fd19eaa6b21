"""The report's context switches per operation (issue 14, item 2): per
operation, stack and process the median switches per launch, frame,
resize, round trip and concurrent app (switches.py's "switches" records),
and what the difference between two stacks costs at this machine's price
of one switch (results.machine.switch_cost)."""
from duet_bench import metrics, stats

ROLES = ["server", "wm", "compositor", "xwayland", "app"]


def _samples(results, e, st, want=None):
    r = metrics.exp(results, e, st) or {}
    return [s for s in r.get("samples", []) if want is None or want(s)]


def operations(results, st):
    """[(operation label, [switches records])] of one stack."""
    head, _ = metrics.render_engines(results, st)
    kind = metrics.launch_kind(results, st)
    ops = [("launch", [s.get("switches") for s in _samples(
               results, "launch", st, lambda s: kind is None or s.get("kind") == kind)]),
           ("frame (render%s)" % (", " + head if head else ""),
            [s.get("switches") for s in _samples(
                results, "render", st, metrics.render_sample_of(results, st))]),
           ("frame (cpu, start-up included)",
            [s.get("switches") for s in _samples(results, "cpu", st)]),
           ("resize", list((metrics.exp(results, "resize", st) or {}).get("switches") or []))]
    for k in ("server", "wm"):
        ops.append(("round trip (%s)" % k, [s.get("switches") for s in _samples(
            results, "roundtrip", st, lambda s, k=k: s.get("kind") == k)]))
    for n in sorted({s.get("apps") for s in _samples(results, "concurrent", st)
                     if isinstance(s.get("apps"), int)}):
        ops.append(("app of %d launched at once" % n, [s.get("switches") for s in _samples(
            results, "concurrent", st, lambda s, n=n: s.get("apps") == n)]))
    return [(label, [x for x in recs if isinstance(x, dict)]) for label, recs in ops]


def _med(vals):
    vals = [v for v in vals if isinstance(v, (int, float))]
    return stats.median(vals) if vals else None


def summary(recs):
    """{role: (total, voluntary, involuntary) medians, "window_system",
    "all"} over switches records."""
    out = {}
    for role in ROLES:
        per = [r["per_op"][role] for r in recs if role in (r.get("per_op") or {})]
        if per:
            out[role] = (_med([p.get("total") for p in per]),
                         _med([p.get("voluntary") for p in per]),
                         _med([p.get("involuntary") for p in per]))
    out["window_system"] = _med([r.get("window_system") for r in recs])
    out["all"] = _med([r.get("all") for r in recs])
    return out


def cost_us(results):
    c = (results.get("machine") or {}).get("switch_cost") or {}
    return c.get("us") if c.get("status") == "ok" else None


def cost_text(results):
    """The machine section's line on the cost of one switch."""
    c = (results.get("machine") or {}).get("switch_cost")
    if not isinstance(c, dict):
        return "not measured (a run from before issue 14)"
    if c.get("status") != "ok":
        return "not measured: %s" % c.get("reason")
    return ("%.3g us (pinned pipe round trip %.3g us with %.3g switches, the same loop in one "
            "process %.3g us: (trip - loop) / 2)" % (c["us"], c["trip_us"],
                                                     c.get("switches_per_trip", 2),
                                                     c["self_us"]))


def _cell(v):
    if not v or v[0] is None:
        return "-"
    total, vol, inv = v
    if vol is None:
        return "%.3g" % total
    return "%.3g (%.3g / %.3g)" % (total, vol, inv)


def _num(v):
    return "-" if v is None else "%.3g" % v


def rows(results):
    us = cost_us(results)
    out, by, labels = [], {}, []
    for st in metrics.stacks_of(results):
        for label, recs in operations(results, st):
            if label not in labels:
                labels.append(label)
            if not recs:
                continue
            s = summary(recs)
            by[(label, st)] = s
            out.append([label, st, str(len(recs))] + [_cell(s.get(r)) for r in ROLES] +
                       [_num(s["window_system"]), _num(s["all"]),
                        _num(s["all"] * us) if us and s["all"] is not None else "-"])
    out.sort(key=lambda r: labels.index(r[0]))  # stable: the stacks keep their order
    return out, by, labels


def differences(results, by, labels):
    """Rows "per OPERATION, A spends N more switches than B (window
    system + app) = M us" for every pair and operation both stacks have."""
    us = cost_us(results)
    rows = []
    for label in labels:
        for a, b in stats.PAIRS:
            sa, sb = by.get((label, a)), by.get((label, b))
            if not sa or not sb or sa["all"] is None or sb["all"] is None:
                continue
            d = sa["all"] - sb["all"]
            rows.append([label, "%s - %s" % (a, b), "%+.3g" % d,
                         "%+.3g" % (d * us) if us else "-",
                         "%+.3g" % ((sa["window_system"] or 0) - (sb["window_system"] or 0))])
    return rows


def blocks(results):
    out = [("h2", "Context switches per operation")]
    table, by, labels = rows(results)
    if not table:
        return out + [("p", "No sample of this run carries context switches per operation "
                       "(they came with issue 14).")]
    out.append(("p", "Median over the samples of voluntary + involuntary context switches "
                "per operation, summed over each process's threads (/proc/PID/task/*/status, "
                "read at the two ends of the interval docs/methodology.md names for each "
                "operation); in brackets voluntary / involuntary. 'window system' is the "
                "stack's processes, 'all' adds the app. One switch costs %s here." %
                cost_text(results)))
    out.append(("table", ["operation", "stack", "n"] + ROLES +
                ["window system", "all", "all x switch cost (us)"], table))
    diff = differences(results, by, labels)
    if diff:
        out.append(("p", "What one stack spends more than another per operation, and what "
                    "those switches alone cost at this machine's price of one switch (the "
                    "work done between switches, and cache effects, are not in it):"))
        out.append(("table", ["operation", "stacks", "more switches (all)",
                              "= us at the switch cost", "more switches (window system)"],
                    diff))
    return out
