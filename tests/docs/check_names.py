#!/usr/bin/env python3
"""docs-names: every code-like name the docs give in backticks exists in the tree.

Usage: check_names.py [SOURCE_ROOT] [--build BUILD_DIR] [--docs FILE...]

Reads docs/*.md, docs/results/*.md and README.md (or the files after --docs)
and takes from each inline code span (`...`; fenced and indented blocks are
pictures and examples, not checked) the tokens that name something of duet's:
  - a path: a token with a "/" or a known file extension. It exists in the
    tree (from the root; or, for a bare or partial path, as the end of some
    tracked path: architecture.md names render/'s files in its render/
    section), or its text occurs in a source (a file a program writes, such
    as report.html). "*" is a glob. Absolute paths (/proc/..., /dev/shm) and
    paths under an upper-case placeholder (DIR/..., HOME/...) are not the
    tree's; under build*/ or bench-results/ only the directory's name is
    checked (a script of duet's must make it);
  - an identifier with an underscore, or called with "()": a function,
    struct, macro, environment variable, atom, JSON key. Each part of a dotted
    name that has an underscore is checked (`wl_display.sync`: wl_display).
    It is found as a whole word of a source, or as the end of one (protocol
    names: axis_discrete is wl_pointer_send_axis_discrete, invalid_stride is
    WL_SHM_ERROR_INVALID_STRIDE), or, with upper-case placeholder parts
    (concurrent_N_ms, render_fps_rHZ), by the fixed part before them;
  - a command-line option "--foo" (without its "=value"), as a source spells it;
  - a hyphenated name that is duet's: duet-* (programs, libraries), or one
    whose first word starts a meson test's name (bench-, xwm-, robust-, ...):
    a test of the build (meson-info/intro-tests.json of --build, default
    SOURCE_ROOT/build) or a token of a source ("*" as a glob: `xwm-perf-*`).
Sources are the tracked and untracked, not ignored files of the tree, except
documentation (*.md), this checker and its allow list. Names of third-party
things that duet's sources never spell go in names-allowlist.txt beside this
file, one a line, each under a comment saying why; never duet's own. Exit 0
when every name is found, 1 with the missing ones listed by file and line."""
import fnmatch
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXTS = ("c", "h", "py", "xml", "json", "build", "md", "ini", "sh", "txt", "supp",
        "cfg", "yaml", "yml", "in", "txt", "options", "jsonl", "csv", "html", "svg")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
PLACEHOLDER = re.compile(r"^\$?[A-Z][A-Z0-9_]*$")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
OPTION = re.compile(r"(?<![A-Za-z0-9-])--[A-Za-z0-9][A-Za-z0-9-]*")
HYPHEN = re.compile(r"[A-Za-z0-9_*]+(?:-[A-Za-z0-9_*]+)+")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], check=True,
                             capture_output=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(".") and not x.startswith("build")]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return [f for f in files if os.path.exists(os.path.join(root, f))]


def load_allowlist(path):
    names = set()
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                name = line.split("#", 1)[0].strip()
                if name:
                    names.add(name)
    return names


class Tree:
    def __init__(self, root, files):
        self.root = root
        self.files = set(files)
        self.dirs = set()
        self.basenames = set()
        for f in files:
            self.basenames.add(os.path.basename(f))
            parts = f.split("/")
            for i in range(1, len(parts)):
                self.dirs.add("/".join(parts[:i]))
        self.words, self.options, self.hyphens = set(), set(), set()
        texts = []
        me = {os.path.relpath(os.path.abspath(__file__), root),
              os.path.relpath(os.path.join(HERE, "names-allowlist.txt"), root)}
        for f in files:
            if f.endswith(".md") or f in me:
                continue
            try:
                with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            texts.append(text)
            self.words.update(IDENT.findall(text))
            self.options.update(OPTION.findall(text))
            self.hyphens.update(HYPHEN.findall(text))
        self.text = "\n".join(texts)
        self.tests = set()

    def occurs(self, s):
        return s in self.text

    def pattern_occurs(self, name):
        """A name with upper-case placeholder parts (concurrent_N_ms,
        resize_ms_MODE_WxH, render_fps_rHZ): the fixed part before the first
        placeholder is a name in the sources (the rest is made at run time)."""
        segs = name.split("_")
        fixed = []
        for seg in segs:
            m = re.fullmatch(r"([a-z0-9]*)([A-Z][A-Za-z0-9]*)", seg)
            if m and (not m.group(1) or m.group(2).isupper()):
                break
            fixed.append(seg)
        else:
            return False
        prefix = "_".join(fixed).strip("_")
        return bool(prefix) and re.search("[a-z]", prefix) is not None and (
            prefix in self.words or ("_" + prefix + "_") in self.text
            or self.occurs('"' + prefix + "_"))

    def suffix_occurs(self, name):
        """A protocol request, event or enum named as its protocol names it
        (wl_pointer's axis_discrete, wl_shm's invalid_stride, libinput's
        TOUCH_FRAME): C spells it as the end of a generated name
        (wl_pointer_send_axis_discrete, WL_SHM_ERROR_INVALID_STRIDE)."""
        low, up = "_" + name, "_" + name.upper()
        return any(w.endswith(low) or w.endswith(up) for w in self.words)

    def path_exists(self, p):
        p = p.rstrip("/").lstrip("./") if p.startswith("./") else p.rstrip("/")
        if any(ch in p for ch in "*?["):
            return any(fnmatch.fnmatch(f, p) or fnmatch.fnmatch(f, p + "/*")
                       for f in self.files)
        if p in self.files or p in self.dirs:
            return True
        if "/" not in p and p in self.basenames:
            return True
        # a path relative to a directory the doc is about (`tests/sanitizer-env.sh`
        # is rooted, `toolkit/tk.h` is not): some tracked path ends with it
        if any(f.endswith("/" + p) for f in self.files) or \
                any(d.endswith("/" + p) for d in self.dirs):
            return True
        # a file a program writes or reads (report.html, e.cfg): its name is
        # spelled in the sources
        return self.occurs(p)

    def hyphen_exists(self, h):
        if "*" in h:
            return any(fnmatch.fnmatchcase(x, h) for x in self.hyphens | self.tests)
        return h in self.hyphens or h in self.tests


def is_path(tok):
    if "/" in tok:
        return True
    m = re.search(r"\.([A-Za-z]+)$", tok)
    return bool(m) and m.group(1) in EXTS and not tok.startswith(".")


def names_in_span(span):
    """(kind, name) for each checkable name in one code span."""
    out = []
    for tok in re.split(r"[\s,;:=|()\[\]{}<>'\"]+|\\\|", span):
        tok = tok.strip(".")
        if not tok or tok.startswith("$"):
            continue
        if tok.startswith("--"):
            m = OPTION.match(tok)
            if m:
                out.append(("option", m.group(0)))
            continue
        if tok.startswith("-"):
            continue
        if "/" in tok or is_path(tok):
            if tok.startswith("/") or tok.startswith("~") or "://" in tok:
                continue
            first = tok.split("/", 1)[0]
            if PLACEHOLDER.match(first) or first in ("..",):
                continue
            if re.fullmatch(r"build(-[a-z0-9-]+)?|bench-results", first):
                # a directory a command of duet's makes (a build, a run's
                # results): the command must name it, the rest is its output
                out.append(("outdir", first))
                continue
            if "@" in tok or "%" in tok:
                continue
            out.append(("path", tok))
            continue
        if re.search(r"(^|-)[A-Z][A-Z0-9]*(-|$)", tok):
            continue  # a pattern (duet-PID-TAG): its parts are placeholders
        if tok.startswith("duet-") or re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9*]+)+", tok):
            if re.fullmatch(HYPHEN.pattern, tok):
                out.append(("hyphen", tok))
            continue
        for part in tok.split("."):
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part) and "_" in part.strip("_"):
                out.append(("ident", part))
    # called functions: foo() or foo(args)
    for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\(", span):
        out.append(("ident", m.group(1)))
    return out


def doc_names(path):
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence or line.startswith("    "):
                continue
            seen = set()
            for m in CODE_SPAN.finditer(line):
                for kind, name in names_in_span(m.group(2)):
                    if (kind, name) not in seen:
                        seen.add((kind, name))
                        yield lineno, kind, name


def first_is_made(name, tree):
    """build/ is meson's usual directory; build-*/ and bench-results/ are
    made by duet's scripts, which spell their names."""
    return name == "build" or tree.occurs(name)


def hyphen_is_test_like(name, tree):
    """A hyphenated lower-case word is checked only when it looks like one of
    duet's names: duet-*, or a name whose first part names a meson test family
    (bench-, xwm-, compositor-, ...) seen in the tree's hyphenated tokens."""
    if name.startswith("duet-"):
        return True
    return name.split("-", 1)[0] in tree.families


def meson_tests(build):
    """The names of every test the build defines (meson's introspection)."""
    path = os.path.join(build, "meson-info", "intro-tests.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return {t["name"] for t in json.load(f)}


def main(argv):
    args = argv[1:]
    docs = None
    build = None
    if "--docs" in args:
        i = args.index("--docs")
        docs, args = args[i + 1:], args[:i]
    if "--build" in args:
        i = args.index("--build")
        build = args[i + 1]
        args = args[:i] + args[i + 2:]
    root = os.path.abspath(args[0] if args else os.path.join(HERE, "..", ".."))
    tree = Tree(root, tracked_files(root))
    if build is None and os.path.isdir(os.path.join(root, "build")):
        build = os.path.join(root, "build")
    tests = meson_tests(build) if build else None
    if tests is None:
        print("docs-names: no meson test list (--build DIR of a configured build): "
              "test names are checked against the sources only")
        tests = set()
    tree.tests = tests
    # families of test names: the first word of every test's name (bench-,
    # xwm-, robust-, ...); a hyphenated name of one of them is checked
    tree.families = {t.split("-", 1)[0] for t in tests if "-" in t}
    allow = load_allowlist(os.path.join(HERE, "names-allowlist.txt"))
    if docs is None:
        docs = sorted(os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs"))
                      if f.endswith(".md"))
        if os.path.isdir(os.path.join(root, "docs", "results")):
            docs += sorted(os.path.join(root, "docs", "results", f)
                           for f in os.listdir(os.path.join(root, "docs", "results"))
                           if f.endswith(".md"))
        docs.append(os.path.join(root, "README.md"))
    missing, checked = [], 0
    for doc in docs:
        for lineno, kind, name in doc_names(doc):
            if name in allow:
                continue
            if kind == "path":
                ok = tree.path_exists(name)
            elif kind == "outdir":
                ok = first_is_made(name, tree)
            elif kind == "option":
                ok = name in tree.options
            elif kind == "hyphen":
                if not hyphen_is_test_like(name, tree):
                    continue
                ok = tree.hyphen_exists(name)
            else:
                ok = name in tree.words or tree.pattern_occurs(name) or tree.suffix_occurs(name)
            checked += 1
            if not ok:
                missing.append("%s:%d: %s `%s` is not in the tree"
                               % (os.path.relpath(doc, root), lineno, kind, name))
    for line in missing:
        print(line)
    print("docs-names: %d names checked in %d files, %d missing"
          % (checked, len(docs), len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
