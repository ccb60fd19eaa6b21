#!/usr/bin/env python3
"""The import graphs of the bench package and of the stack launcher (issue
29): every module of duet_bench and of duet_launch imports alone, in a
fresh interpreter, and each package's modules import each other without a
cycle and only at module level; duet_launch imports nothing of duet_bench
(the bench uses the launcher, never the reverse); and `duet bench` shows a
bench module that does not import with its error, not as an unknown command.

A cycle works only as long as the right module happens to be imported
first, and a sibling imported inside a function hides one: both make a
module that cannot be read, moved or tested alone. The graph is read with
ast: module A -> module B when A imports B anywhere (as
../shared/tools/cycles.py reads it), and every sibling import inside a
function or class is named with its line.
"""
import ast
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
PACKAGES = ("duet_bench", "duet_launch")
sys.path.insert(0, HERE)
from checks import check, cycles, fail  # noqa: E402

# Scripts, not modules: importing __main__ would run the bench.
SCRIPTS = {"__main__"}
NESTING = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def modules(package):
    return sorted(f[:-3] for f in os.listdir(os.path.join(BENCH, package)) if f.endswith(".py"))


def siblings_of(node, mods, package):
    """The package's modules an import statement names."""
    names = []
    if isinstance(node, ast.ImportFrom):
        if node.level >= 1:
            names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
        elif node.module == package:
            names = [a.name for a in node.names]
        elif node.module and node.module.startswith(package + "."):
            names = [node.module.split(".")[1]]
    elif isinstance(node, ast.Import):
        names = [a.name.split(".")[1] for a in node.names if a.name.startswith(package + ".")]
    return [n for n in names if n in mods]


def read_graph(mods, package):
    """{module: {sibling it imports}} and [(module, line, sibling, where)]
    of the imports nested in a function or class."""
    edges, nested = {m: set() for m in mods}, []
    for m in mods:
        with open(os.path.join(BENCH, package, m + ".py")) as f:
            tree = ast.parse(f.read(), m + ".py")

        def visit(node, scope):
            for child in ast.iter_child_nodes(node):
                inner = scope
                if isinstance(child, NESTING):
                    inner = scope + [getattr(child, "name", "lambda")]
                for s in siblings_of(child, mods, package):
                    if s != m:
                        edges[m].add(s)
                        if scope:
                            nested.append((m, child.lineno, s, ".".join(scope)))
                visit(child, inner)
        visit(tree, [])
    return edges, nested


def import_alone(package, mod):
    """None, or why `import PACKAGE.MOD` fails in a fresh interpreter."""
    env = dict(os.environ, PYTHONPATH=BENCH, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", "import %s.%s" % (package, mod)], env=env,
                       cwd=BENCH, capture_output=True, text=True, timeout=60)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1]


def front_command_says_why():
    """tools/duet, beside a bench whose cli.py imports a name that is not
    there, prints that ImportError when asked for `duet bench`."""
    tool = os.path.join(os.path.dirname(BENCH), "tools", "duet")
    d = tempfile.mkdtemp(prefix="duet-broken-bench-")
    try:
        os.makedirs(os.path.join(d, "tools"))
        shutil.copy(tool, os.path.join(d, "tools", "duet"))
        shutil.copytree(os.path.join(BENCH, "duet_launch"), os.path.join(d, "bench", "duet_launch"))
        pkg = os.path.join(d, "bench", "duet_bench")
        os.makedirs(pkg)
        for name, text in (("__init__.py", ""),
                           ("cli.py", "from duet_bench import no_such_module\n"),
                           ("report_cmd.py", "from duet_bench import cli\n")):
            with open(os.path.join(pkg, name), "w") as f:
                f.write(text)
        r = subprocess.run([sys.executable, os.path.join(d, "tools", "duet"), "bench", "--quick"],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    check(r.returncode != 0 and "cannot import name 'no_such_module'" in r.stderr
          and "invalid choice" not in r.stderr,
          "duet bench with a broken bench import exits %d and shows the ImportError: %s"
          % (r.returncode, r.stderr.strip().splitlines()[-1:] or r.stderr))


def check_package(package):
    """The problems of one package's imports; and how many modules it has."""
    mods = modules(package)
    check(len(mods) > 5, "%d modules in %s" % (len(mods), package))
    problems = []
    for m in mods:
        if m in SCRIPTS:
            continue
        why = import_alone(package, m)
        if why:
            problems.append("%s.%s does not import alone: %s" % (package, m, why))
    edges, nested = read_graph(mods, package)
    for comp in cycles(edges):
        problems.append("import cycle among %s" % ", ".join(
            "%s/%s.py" % (package, c) for c in comp))
    for m, line, s, where in nested:
        problems.append("%s/%s.py:%d imports %s inside %s()" % (package, m, line, s, where))
    return problems, len(mods) - len(SCRIPTS & set(mods))


def launcher_stands_alone():
    """duet_launch's modules name no duet_bench module."""
    out = []
    for m in modules("duet_launch"):
        with open(os.path.join(BENCH, "duet_launch", m + ".py")) as f:
            tree = ast.parse(f.read(), m + ".py")
        for node in ast.walk(tree):
            if siblings_of(node, modules("duet_bench"), "duet_bench"):
                out.append("duet_launch/%s.py:%d imports duet_bench" % (m, node.lineno))
    return out


def main():
    problems, counts = [], []
    for package in PACKAGES:
        found, n = check_package(package)
        problems += found
        counts.append("%s %d" % (package, n))
    problems += launcher_stands_alone()
    for p in problems:
        print("problem: " + p)
    if problems:
        fail("%d problems in the packages' imports (above)" % len(problems))
    check(True, "every module imports alone (%s; not %s); no cycle among them; no sibling "
          "imported inside a function; duet_launch imports nothing of duet_bench"
          % (", ".join(counts), ", ".join(sorted(SCRIPTS))))
    front_command_says_why()
    print("PASS")


if __name__ == "__main__":
    main()
