"""The record of what a peer did with the offender (isolation_peers.py):
"peer:" lines, and what each process of the stack wrote meanwhile. Not
judged: a peer's logs need not name the offender."""

import os

from duet import log


def peer_note(what):
    log("peer: %s" % what)


def log_files(s):
    """The stack's log files beside its processes' output, by name:
    weston's, and E's (enlightenment_start sends E's output to
    HOME/.e-log.log, not to its own)."""
    files = {}
    path = getattr(s.stack, "weston_log", None)
    if path:
        files["weston.log"] = path
    e = getattr(s.stack, "e_session", None)
    if e:
        files[".e-log.log"] = os.path.join(e.home, ".e-log.log")
    return files


def log_marks(s):
    """Where each stack process's output (and its log files) ends now."""
    marks = {p.name: len(p.stderr_tail(1 << 24)) for p in s.stack_procs()
             if hasattr(p, "stderr_tail")}
    for name, path in log_files(s).items():
        if os.path.exists(path):
            marks[name] = os.path.getsize(path)
    return marks


def said_since(s, marks, limit=1200):
    """What each process of the stack wrote since marks (the end of it)."""
    out = []
    for p in s.stack_procs():
        if p.name in marks:
            text = p.stderr_tail(1 << 24)[marks[p.name]:]
            if text.strip():
                out.append((p.name, text))
    for name, path in log_files(s).items():
        if name in marks and os.path.exists(path):
            with open(path, errors="replace") as f:
                f.seek(marks[name])
                # weston's timeline scope writes JSON lines: noise here.
                text = "\n".join(l for l in f.read().splitlines() if not l.startswith("{"))
            if text.strip():
                out.append((name, text))
    for name, text in out:
        text = text.strip()
        log("peer: %s wrote meanwhile%s:\n%s" % (name, " (the end)" if len(text) > limit else "",
                                                 text[-limit:]))
    if not out:
        peer_note("the stack's processes wrote nothing meanwhile")
