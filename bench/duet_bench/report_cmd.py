"""`duet report DIR [DIR...] [--out DIR]`: the report rebuilt from
results.json alone, offline, no stack started.

One DIR: report.html, report.md and summary.csv are written again (into
DIR, or --out). Several: compare.html, compare.md and compare.csv put the
runs side by side (machine, governor, versions, the verdicts and the
headline figures of each), which is how results from many machines come
together; written into the first DIR, or --out."""
import argparse
import csv
import json
import os
import sys

from duet_bench import metrics, report
from duet_bench.blocks import to_html, to_md

EXIT_USAGE = 2


def load(d):
    path = os.path.join(d, "results.json") if os.path.isdir(d) else d
    with open(path) as f:
        res = json.load(f)
    if not isinstance(res, dict) or "experiments" not in res:
        raise ValueError("%s is not a duet bench results.json" % path)
    return res


def label_of(d):
    return os.path.basename(os.path.normpath(d)) or d


def compare_blocks(dirs, runs):
    """runs: [(label, results)] of dirs -> blocks with one column per run."""
    names = [label for label, _ in runs]
    analysed = []
    for _, res in runs:
        table, order = metrics.cells(res)
        analysed.append((table, order, metrics.ratios(res, table, order)))
    blocks = [("h1", "duet bench: %d runs side by side" % len(runs))]
    emulated = [label for label, res in runs if (res.get("machine") or {}).get("emulation")]
    if emulated:
        blocks.append(("p", "**WARNING: %s ran under emulation: %s.**" % (
            ", ".join(emulated), report.EMULATION_WARNING)))
    rows = [["results", *["`%s`" % os.path.abspath(d) for d in dirs]],
            ["command", *["`%s`" % res.get("command") for _, res in runs]],
            ["started", *[str(res.get("started")) for _, res in runs]]]
    for i, (what, _, _) in enumerate(report.machine_rows(runs[0][1])):
        rows.append([what] + [report.machine_rows(res)[i][1] for _, res in runs])
    rows.append(["schema", *[str(res.get("schema")) for _, res in runs]])
    rows.append(["interrupted", *[str(res.get("interrupted")) for _, res in runs]])
    blocks.append(("h2", "Machines and runs"))
    blocks.append(("table", [""] + names, rows))

    blocks.append(("h2", "Verdicts on the study's claims"))
    claims = []
    for _, order, _ in analysed:
        for m in order:
            if m.claim and m.key not in [c.key for c in claims]:
                claims.append(m)
    vrows = []
    for m in claims:
        for pair in (("x11", "wayland"), ("openbox", "weston")):
            row = ["%s, %s" % (m.claim, report.PAIR_LABEL[pair]), report.study_text(m)]
            for _, _, pairs in analysed:
                res = next((r for pm, p, r in pairs if pm.key == m.key and p == pair), None)
                row.append("%s: %s" % (report.ratio_text(res), res["verdict"]) if res else "-")
            vrows.append(row)
    blocks.append(("table", ["claim", "study X/W"] + names, vrows))

    blocks.append(("h2", "Headline figures (median, n)"))
    hrows = []
    for m in claims:
        stacks = []
        for _, res in runs:
            for st in metrics.stacks_of(res):
                if st not in stacks:
                    stacks.append(st)
        for st in stacks:
            row = [m.key, st]
            for table, _, _ in analysed:
                c = (table.get(m.key) or {}).get(st)
                row.append("%s (n %d)" % (report.fmt(c.median), c.n) if c and c.n else "-")
            hrows.append(row)
    blocks.append(("table", ["metric", "stack"] + names, hrows))
    blocks.append(("p", "Each run's own report (report.html in its directory) has the "
                   "intervals, the launch timeline and every figure; `duet report DIR` "
                   "rebuilds it."))
    return blocks


def write_compare(dirs, runs, out):
    os.makedirs(out, exist_ok=True)
    blocks = compare_blocks(dirs, runs)
    with open(os.path.join(out, "compare.md"), "w") as f:
        f.write(to_md(blocks))
    with open(os.path.join(out, "compare.html"), "w") as f:
        f.write(to_html(blocks, "duet bench: runs side by side"))
    # Every run's summary rows, with the run's directory in front.
    with open(os.path.join(out, "compare.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run"] + report.CSV_COLUMNS)
        for d, (_, res) in zip(dirs, runs):
            w.writerows([d] + row for row in report.csv_rows(res))
    return [os.path.join(out, n) for n in ("compare.html", "compare.md", "compare.csv")]


def run(args):
    runs = []
    for d in args.dirs:
        try:
            runs.append((label_of(d), load(d)))
        except (OSError, ValueError) as e:
            print("duet report: %s: %s" % (d, e), file=sys.stderr)
            return 1
    if len(runs) == 1:
        src = args.dirs[0] if os.path.isdir(args.dirs[0]) else \
            os.path.dirname(os.path.abspath(args.dirs[0]))
        out = args.out or src
        os.makedirs(out, exist_ok=True)
        report.write_all(runs[0][1], out, src)
        print(report.summary_table(runs[0][1]))
        print("report:  %s" % os.path.join(out, "report.html"))
        return 0
    if len({label for label, _ in runs}) < len(runs):
        runs = [(d, res) for d, (_, res) in zip(args.dirs, runs)]
    out = args.out or args.dirs[0]
    if not args.out and not os.path.isdir(out):
        out = os.path.dirname(os.path.abspath(out))  # a results.json named itself
    written = write_compare(args.dirs, runs, out)
    print("side by side: %s" % written[0])
    return 0


def add_arguments(p):
    p.add_argument("dirs", nargs="+", metavar="DIR",
                   help="result directories of `duet bench` (each holding results.json)")
    p.add_argument("--out", metavar="DIR", help="where to write (default: the first DIR)")


def add_parser(sub):
    p = sub.add_parser("report", help="rebuild the report from results.json (offline)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run, takes_cmd=False)
    return p


def main(argv):
    p = argparse.ArgumentParser(prog="duet report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return run(p.parse_args(argv))
