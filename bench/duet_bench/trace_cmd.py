"""`duet trace RESULTS_DIR [STACK...]`: the trace files of a bench run
written again from its raw records (RESULTS_DIR/trace-raw/STACK-OP/),
nothing rerun; `duet bench` writes them with the same functions.

Per stack and operation, trace-STACK-OP.json (OP: launch, resize, frame);
per pair of the same software on X11 and Wayland (stats.SAME_SOFTWARE,
x11/wayland first), trace-X+W-OP.json with the X11 stack's operation
above the Wayland stack's, both from 0; STACK... limits both to those
stacks, and two stacks named, one of each window system, are combined
whatever they are. Open them in ui.perfetto.dev ("Open trace file") or
chrome://tracing (docs/bench-output.md, "Traces")."""
import argparse
import os
import sys

from duet_bench import stats, trace_events
from duet_bench.trace_raw import OPS, Record, load_meta, raw_dirs

EXIT_USAGE = 2


def file_name(stacks, op):
    return "trace-%s-%s.json" % ("+".join(stacks), op)


def write_op(out, raw):
    """trace-STACK-OP.json of one raw record; returns what results.json
    keeps of it (trace_events.about, the raw directory, the file)."""
    rec = Record(raw)
    name = file_name([rec.meta["stack"]], rec.meta["op"])
    trace_events.write(os.path.join(out, name), [(None, rec)])
    return dict(trace_events.about(rec), raw=os.path.relpath(raw, out), file=name)


def pairs(found, named=None):
    """(x11 stack, wayland stack) pairs to combine: the same software's
    where both were traced, or the two stacks named."""
    have = {st for st, _ in found}
    if named and len(named) == 2:
        kinds = {st: _kind(found, st) for st in named}
        x = [st for st in named if kinds[st] == "x11"]
        w = [st for st in named if kinds[st] == "wayland"]
        if x and w:
            return [(x[0], w[0])]
    return [(x, w) for x, w in stats.SAME_SOFTWARE if x in have and w in have]


def _kind(found, stack):
    for (st, op), raw in found.items():
        if st == stack:
            return load_meta(raw).get("kind")
    return None


def write_combined(out, found, named=None):
    """trace-X+W-OP.json of every pair (pairs()) with op traced on both."""
    written = []
    for x, w in pairs(found, named):
        for op in OPS:
            if (x, op) in found and (w, op) in found:
                name = file_name([x, w], op)
                trace_events.write(os.path.join(out, name),
                                   [(x, Record(found[(x, op)])), (w, Record(found[(w, op)]))])
                written.append(name)
    return written


def write_all(out, stacks=None):
    """Every trace file of out's raw records (of stacks, if given):
    ({(stack, op): write_op's record}, [combined file names])."""
    found = {k: v for k, v in raw_dirs(out).items() if not stacks or k[0] in stacks}
    per = {k: write_op(out, raw) for k, raw in sorted(found.items())}
    return per, write_combined(out, found, stacks)


def run(args):
    if not os.path.isdir(args.dir):
        print("duet trace: %s is not a directory" % args.dir, file=sys.stderr)
        return EXIT_USAGE
    per, combined = write_all(args.dir, args.stacks or None)
    if not per:
        print("duet trace: no traced operation in %s (trace-raw/STACK-OP/ with meta.json; "
              "`duet bench` records them unless --no-trace)%s" % (
                  args.dir, " for %s" % ", ".join(args.stacks) if args.stacks else ""),
              file=sys.stderr)
        return 1
    for (stack, op), rec in per.items():
        print("%s: %d IPC calls, %d messages in %.1f ms (from %s); switches %s"
              % (os.path.join(args.dir, rec["file"]), rec["ipc_calls"], rec["messages"],
                 rec["window_ms"], rec["start"], rec["sched"]))
    for name in combined:
        print(os.path.join(args.dir, name))
    return 0


def add_arguments(p):
    p.add_argument("dir", metavar="RESULTS_DIR", help="a `duet bench` output directory")
    p.add_argument("stacks", nargs="*", metavar="STACK",
                   help="only these stacks (default: every stack traced)")


def add_parser(sub):
    p = sub.add_parser("trace", help="write the trace files of a bench run from its raw records",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run, takes_cmd=False)
    return p


def main(argv):
    p = argparse.ArgumentParser(prog="duet trace", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return run(p.parse_args(argv))
