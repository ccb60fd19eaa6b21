#!/usr/bin/env python3
"""compositor/'s layering as docs/architecture.md states it, held: no C file
calls a function another file of a higher layer defines, and no files call
each other in a circle (also in xwm/ and xwm-model/). A call is a file
naming a function followed by "(" that another file of the folder defines
without `static`; a function pointer in a table is not a call, which is how
a lower layer tells a higher one what happened.

usage: check_layers.py SOURCE_ROOT"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                                "tests"))
from checks import cycles  # noqa: E402

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
# A definition at the start of a line: a return type, a name, its
# parameters, then the body's brace (not a prototype's semicolon).
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\([^;{)]*\)\s*\{",
                        re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def c_files(top):
    for root, dirs, files in os.walk(top):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".c"):
                yield os.path.relpath(os.path.join(root, f), top)


def calls(top):
    """{file: {file it calls: {function names}}} among top's C files."""
    text, defined = {}, {}
    for f in c_files(top):
        with open(os.path.join(top, f), errors="replace") as fh:
            src = STRING.sub('""', COMMENT.sub(" ", fh.read()))
        text[f] = src
        for m in DEFINITION.finditer(src):
            defined.setdefault(m.group(1), f)
    out = {f: {} for f in text}
    for f, src in text.items():
        for name in set(CALL.findall(src)):
            g = defined.get(name)
            if g and g != f and name != "main":
                out[f].setdefault(g, set()).add(name)
    return out


def layers(root):
    """{compositor/'s folder: its layer, 0 the bottom}, as docs/architecture.md
    lists them after "From the bottom up:", one bullet a layer (a bullet may
    name several folders); the top files (main.c, server.c) above them all."""
    with open(os.path.join(root, "docs", "architecture.md")) as f:
        doc = f.read()
    start = doc.index("From the bottom up:")
    block = doc[start:doc.index("**The rule:**", start)]
    layer = {}
    for line in block.splitlines():
        if line.startswith("- `"):
            head = line.split(":")[0]
            n = len(set(layer.values()))
            for name in re.findall(r"`([\w/]+)/`", head):
                layer[name] = n
    layer["."] = len(set(layer.values()))
    return layer


def main():
    root = sys.argv[1]
    failures = []
    comp = os.path.join(root, "compositor")
    graph = calls(comp)
    layer = layers(root)
    folder = {f: os.path.dirname(f) or "." for f in graph}
    unknown = sorted({d for d in folder.values() if d not in layer})
    if unknown:
        failures.append("compositor/ folders docs/architecture.md does not list: %s"
                        % ", ".join(unknown))
    for f, targets in sorted(graph.items()):
        for g, names in sorted(targets.items()):
            a, b = folder[f], folder[g]
            if a in layer and b in layer and layer[b] > layer[a]:
                failures.append("compositor/%s (%s) calls up into compositor/%s (%s): %s"
                                % (f, a, g, b, ", ".join(sorted(names))))
    for top in ("compositor", "xwm", "xwm-model"):
        g = graph if top == "compositor" else calls(os.path.join(root, top))
        for comp_files in cycles({f: set(t) for f, t in g.items()}):
            failures.append("%s/: files call each other in a circle: %s"
                            % (top, " ".join(comp_files)))
    for line in failures:
        print("FAIL: " + line)
    names = [", ".join(sorted(d for d, n in layer.items() if n == i))
             for i in range(max(layer.values()) + 1)]
    print("%d C files of compositor/ in %d layers (%s)%s"
          % (len(graph), len(names), " < ".join(names), "" if failures else ": no call goes "
             "up a layer, and no circle in compositor/, xwm/ or xwm-model/"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
