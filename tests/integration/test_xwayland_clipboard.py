#!/usr/bin/env python3
"""duet-compositor --xwayland: the CLIPBOARD selection between X clients
(through Xwayland) and Wayland clients, both ways, which the compositor's X
window manager bridges (compositor/xwayland/xwayland-selection.c; Xwayland 22.1
does not). X side: xclip; Wayland side: wl-copy and wl-paste (wl-clipboard
2.1 maps a small surface to get the keyboard focus, which the policy gives
a newly mapped window).

usage: test_xwayland_clipboard.py copy-x-to-wayland | copy-wayland-to-x |
           incr-x-to-wayland | incr-wayland-to-x | x-owner-killed |
           x-owner-stopped | wayland-source-stopped | requestor-gone |
           stuck-reader | concurrent | restart

copy-x-to-wayland: text copied in X (xclip) is pasted in Wayland
(wl-paste) byte for byte, non-ASCII UTF-8 (accents, CJK, emoji, a
combining mark) included.
copy-wayland-to-x: the same text copied in Wayland (wl-copy) is pasted in
X (xclip -o); X sees the text targets (UTF8_STRING, text/plain;charset=utf-8
among them) in TARGETS.
incr-x-to-wayland: 3 MB, more than xclip puts in one property (it sends
INCR above about 1 MiB): pasted whole in Wayland; the window manager's
debug log says it read INCR.
incr-wayland-to-x: 3 MB copied in Wayland reaches X whole, sent with INCR
(64 KiB chunks).
x-owner-killed: the X owner killed (SIGKILL) after a paste: the Wayland
selection is cleared (wl-paste fails), the compositor lives, and a new
copy in X pastes again.
x-owner-stopped: the X owner stopped (SIGSTOP) while a Wayland client
pastes, then killed: the paste ends empty at once, the compositor lives
and holds no more fds than before.
wayland-source-stopped: the Wayland source stopped (SIGSTOP) while an X
client pastes: after the 5 s timeout the X client is refused; the source
killed, the window manager lets CLIPBOARD go (X sees no owner); no fd
left behind.
requestor-gone: an X client asks for 3 MB from a Wayland source that is
stopped, and is killed before the source writes: the answer (INCR) goes
to a window that no longer exists (BadWindow, ignored), the transfer is
dropped after the 5 s timeout, no fd left behind, and the next X paste
works.
stuck-reader: a Wayland client that never reads its fd (wl-paste writing
into a pipe nobody reads) is dropped after 5 s without progress, and
another client's paste meanwhile works; no fd left behind.
concurrent: four Wayland clients paste 3 MB from X at once: all get it.
restart: Xwayland killed while it holds the selection: the Wayland
selection is cleared; a Wayland copy made while no Xwayland runs is pasted
by an X client of the next Xwayland.
"""

import os
import signal
import time

import duet
from duet import check
from test_xwayland import (announced, compositor_log, need_xwayland, one_xwayland,
                           wait_for, xwayland_args, xwayland_pids)

TEXT = "héllo wörld — ✓ 日本語 🎉 e\u0301 «duet»\n\tend"
BIG = 3 * 1000 * 1000
TIMEOUT_S = 5  # xwayland-selection.c's TIMEOUT_MS


def need_clipboard_tools():
    need_xwayland()
    duet.third_party("xclip")
    duet.third_party("wl-copy")
    duet.third_party("wl-paste")


def big_text():
    line = "duet clipboard line, ünïcödé ✓ %07d\n"
    out, n = [], 0
    while n < BIG:
        s = line % len(out)
        out.append(s)
        n += len(s.encode())
    return "".join(out)


def write_file(s, name, text):
    path = os.path.join(s.workdir, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def read_file(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", errors="replace")


def x_copy(s, text, name="xclip-in"):
    """An X client owning CLIPBOARD with text (xclip in the foreground,
    until it loses the selection or is stopped)."""
    path = write_file(s, name + ".txt", text)
    return s.client(["xclip", "-quiet", "-selection", "clipboard", "-i", path], name=name)


def wl_copy(s, text, name="wl-copy"):
    path = write_file(s, name + ".txt", text)
    return s.client(["sh", "-c", 'exec wl-copy --foreground < "$0"', path], name=name)


_pastes = [0]


def paste(s, argv, timeout=30):
    """(status, stdout as text, stderr) of a paste written to a file."""
    _pastes[0] += 1
    out = os.path.join(s.workdir, "paste-%d.out" % _pastes[0])
    r = s.run(["sh", "-c", 'exec "$@" > "$0"', out] + argv, timeout=timeout)
    return r.returncode, read_file(out), r.stderr


def wl_paste(s, timeout=30):
    return paste(s, ["wl-paste", "-n"], timeout)


def x_paste(s, target=None, timeout=30):
    argv = ["xclip", "-selection", "clipboard", "-o"]
    if target:
        argv += ["-t", target]
    return paste(s, argv, timeout)


def until_pasted(s, fn, text, what, timeout=15):
    """Pastes until text comes (the bridge follows a copy on the event
    loop, a moment later)."""
    last = []

    def done():
        last[:] = fn(s)
        return last[1] == text
    try:
        wait_for(what, done, timeout)
    except duet.Failure:
        got = last[1] if last else ""
        raise duet.Failure("%s: after %d s the paste gives %d chars (status %s, stderr %r), "
                           "want %d; first differing at %s"
                           % (what, timeout, len(got), last[0] if last else None,
                              last[2][-300:] if last else "", len(text),
                              next((i for i, (a, b) in enumerate(zip(got, text)) if a != b),
                                   min(len(got), len(text)))))
    duet.log("%s: %d chars intact" % (what, len(text)))


def compositor_fds(s):
    return len(os.listdir("/proc/%d/fd" % s.compositor.pid))


def settled_fds(s, baseline, what, timeout=10):
    """The compositor's fd count back to baseline (transfers closed)."""
    try:
        wait_for("the compositor's fds back to %d" % baseline,
                 lambda: compositor_fds(s) <= baseline, timeout)
    except duet.Failure:
        raise duet.Failure("%s: the compositor holds %d fds, %d before:\n%s"
                           % (what, compositor_fds(s), baseline,
                              "\n".join(sorted(os.readlink("/proc/%d/fd/%s" % (s.compositor.pid, f))
                                               for f in os.listdir("/proc/%d/fd" % s.compositor.pid)))))


def wl_paste_fails(s):
    status, out, err = wl_paste(s)
    return status != 0 and out == ""


# ------------------------------------------------------------- scenarios
def copy_x_to_wayland(s):
    x_copy(s, TEXT)
    until_pasted(s, wl_paste, TEXT, "X copy, Wayland paste")


def copy_wayland_to_x(s):
    wl_copy(s, TEXT)
    until_pasted(s, x_paste, TEXT, "Wayland copy, X paste")
    status, out, err = x_paste(s, "TARGETS")
    targets = out.split()
    duet.log("X sees TARGETS %s" % targets)
    for t in ("TARGETS", "UTF8_STRING", "STRING", "TEXT", "text/plain;charset=utf-8"):
        check(t in targets, "%s missing from TARGETS %r" % (t, targets))
    until_pasted(s, lambda s: x_paste(s, "text/plain;charset=utf-8"), TEXT,
                 "Wayland copy, X paste of text/plain;charset=utf-8")


def incr_x_to_wayland(s):
    text = big_text()
    x_copy(s, text)
    until_pasted(s, wl_paste, text, "3 MB X copy, Wayland paste", timeout=30)
    check("clipboard: from X with INCR" in compositor_log(s),
          "the window manager did not read the 3 MB with INCR:\n" + compositor_log(s)[-3000:])


def incr_wayland_to_x(s):
    text = big_text()
    wl_copy(s, text)
    until_pasted(s, x_paste, text, "3 MB Wayland copy, X paste", timeout=30)
    check("bytes to 0x" in compositor_log(s) and "with INCR" in compositor_log(s),
          "the window manager did not send the 3 MB with INCR:\n" + compositor_log(s)[-3000:])


def x_owner_killed(s):
    owner = x_copy(s, TEXT)
    until_pasted(s, wl_paste, TEXT, "X copy, Wayland paste")
    owner.kill(signal.SIGKILL)
    owner.wait(10)
    wait_for("the Wayland selection to be cleared after the X owner's death",
             lambda: wl_paste_fails(s))
    s.check_alive()
    x_copy(s, "again " + TEXT, name="xclip-again")
    until_pasted(s, wl_paste, "again " + TEXT, "a new X copy, Wayland paste")


def x_owner_stopped(s):
    owner = x_copy(s, TEXT)
    until_pasted(s, wl_paste, TEXT, "X copy, Wayland paste")
    baseline = compositor_fds(s)
    owner.kill(signal.SIGSTOP)
    reader = s.client(["wl-paste", "-n"], name="wl-paste-waiting")
    time.sleep(1.0)
    check(reader.alive(), "wl-paste did not wait for the stopped X owner")
    killed = time.monotonic()
    log_before = len(compositor_log(s))
    check(reader.alive(), "wl-paste ended before the owner was killed")
    owner.kill(signal.SIGKILL)
    reader.wait(30)  # a hang guard
    duet.log("the paste ended %.1f s after the owner's death (stdout %r)"
             % (time.monotonic() - killed, reader.lines))
    check(not "".join(reader.lines), "the paste from a dead owner gave %r" % reader.lines)
    # Ended by the owner's death, not by the transfer's timeout (which
    # says so): an order, not a duration, so load cannot turn it round.
    check("no progress in" not in compositor_log(s)[log_before:],
          "the paste ended by the timeout, not the owner's death:\n"
          + compositor_log(s)[-2000:])
    s.check_alive()
    settled_fds(s, baseline, "an X owner dead mid-transfer")


def wayland_source_stopped(s):
    source = wl_copy(s, TEXT)
    until_pasted(s, x_paste, TEXT, "Wayland copy, X paste")
    baseline = compositor_fds(s)
    source.kill(signal.SIGSTOP)
    start = time.monotonic()
    status, out, err = x_paste(s, timeout=30)
    took = time.monotonic() - start
    duet.log("xclip -o from a stopped source: status %d after %.1f s, %r" % (status, took, err))
    check(status != 0 and out == "", "xclip -o from a stopped Wayland source: status %d, %r"
          % (status, out))
    check("did not write it in time" in compositor_log(s),
          "no timeout logged:\n" + compositor_log(s)[-2000:])
    source.kill(signal.SIGKILL)
    source.wait(10)
    # Its source gone, the selection is none and X sees no owner.
    wait_for("CLIPBOARD to have no owner", lambda: x_paste(s, "TARGETS")[0] != 0)
    s.check_alive()
    settled_fds(s, baseline, "a Wayland source stopped mid-transfer")


def requestor_gone(s):
    text = big_text()
    source = wl_copy(s, text)
    until_pasted(s, x_paste, text, "3 MB Wayland copy, X paste", timeout=30)
    baseline = compositor_fds(s)
    source.kill(signal.SIGSTOP)
    requestor = s.client(["xclip", "-selection", "clipboard", "-o"], name="xclip-out-killed")
    # Killed once its request is a transfer, which holds a pipe in the
    # compositor: killed before xclip has asked, as after a fixed pause on
    # a loaded machine, it leaves no transfer to drop. (The deadline is a
    # hang guard. The transfer's 5 s timeout runs from the request, and
    # the source must be let go before it: nothing slow comes between.)
    wait_for("xclip -o's request to become a transfer (the compositor's fds above %d)"
             % baseline, lambda: compositor_fds(s) > baseline or not requestor.alive(), 60)
    duet.log("xclip -o's request is a transfer: the compositor holds %d fds, %d before"
             % (compositor_fds(s), baseline))
    check(requestor.alive(), "xclip -o did not wait for the stopped Wayland source")
    requestor.kill(signal.SIGKILL)
    requestor.wait(30)
    source.kill(signal.SIGCONT)
    dropped = ("the requestor stopped taking the text",
               "the Wayland source did not write it in time")
    wait_for("the transfer to the gone requestor to be dropped",
             lambda: any(why in compositor_log(s) for why in dropped), TIMEOUT_S + 60)
    check(dropped[0] in compositor_log(s), "the transfer was dropped for the stopped source, "
          "not for the gone requestor:\n" + compositor_log(s)[-2000:])
    s.check_alive()
    settled_fds(s, baseline, "a requestor gone mid-transfer")
    until_pasted(s, x_paste, text, "3 MB X paste after a requestor died", timeout=30)


def stuck_reader(s):
    text = big_text()
    x_copy(s, text)
    until_pasted(s, wl_paste, text, "3 MB X copy, Wayland paste", timeout=30)
    baseline = compositor_fds(s)
    # sleep never reads: wl-paste blocks on its stdout, and so stops
    # reading the compositor's pipe.
    stuck = s.client(["sh", "-c", "wl-paste -n | sleep 60"], name="stuck-paste")
    time.sleep(1.0)
    until_pasted(s, wl_paste, text, "another paste beside a stuck one", timeout=30)
    wait_for("the stuck transfer to be dropped",
             lambda: "no progress in %d ms" % (TIMEOUT_S * 1000) in compositor_log(s),
             TIMEOUT_S + 10)
    s.check_alive()
    stuck.kill(signal.SIGKILL)
    settled_fds(s, baseline, "a client that never reads")


def concurrent(s):
    text = big_text()
    x_copy(s, text)
    until_pasted(s, wl_paste, text, "3 MB X copy, Wayland paste", timeout=30)
    outs = [os.path.join(s.workdir, "concurrent-%d.out" % i) for i in range(4)]
    readers = [s.client(["sh", "-c", 'exec wl-paste -n > "$0"', out], name="paste-%d" % i)
               for i, out in enumerate(outs)]
    for i, (reader, out) in enumerate(zip(readers, outs)):
        status = reader.wait(60)
        got = read_file(out)
        check(status == 0 and got == text, "paste %d of 4 at once: status %d, %d chars of %d"
              % (i, status, len(got), len(text)))
    duet.log("4 pastes at once, %d chars each, intact" % len(text))


def restart(s):
    owner = x_copy(s, TEXT)
    until_pasted(s, wl_paste, TEXT, "X copy, Wayland paste")
    pid = one_xwayland(s)
    os.kill(pid, signal.SIGKILL)
    wait_for("the compositor to reap Xwayland",
             lambda: "(pid %d) was killed by signal 9" % pid in compositor_log(s))
    owner.wait(15)
    wait_for("the Wayland selection to be cleared with Xwayland",
             lambda: wl_paste_fails(s))
    check(not xwayland_pids(s), "Xwayland runs again with no X client")
    wl_copy(s, "after restart " + TEXT)
    # The paste is the next Xwayland's first client.
    until_pasted(s, x_paste, "after restart " + TEXT, "a Wayland copy pasted in a new Xwayland")
    check(one_xwayland(s) != pid, "no new Xwayland")


def in_session(name, scenario):
    def test():
        need_clipboard_tools()
        # The window manager's debug log says which way (INCR or not) went.
        os.environ["DUET_XWM_DEBUG"] = "1"
        with duet.Session("xwayland-clipboard-" + name, args=xwayland_args()) as s:
            announced(s)
            scenario(s)
            s.check_alive()
    return test


SCENARIOS = {
    "copy-x-to-wayland": copy_x_to_wayland,
    "copy-wayland-to-x": copy_wayland_to_x,
    "incr-x-to-wayland": incr_x_to_wayland,
    "incr-wayland-to-x": incr_wayland_to_x,
    "x-owner-killed": x_owner_killed,
    "x-owner-stopped": x_owner_stopped,
    "wayland-source-stopped": wayland_source_stopped,
    "requestor-gone": requestor_gone,
    "stuck-reader": stuck_reader,
    "concurrent": concurrent,
    "restart": restart,
}

if __name__ == "__main__":
    duet.main_scenario({name: in_session(name, fn) for name, fn in SCENARIOS.items()})
