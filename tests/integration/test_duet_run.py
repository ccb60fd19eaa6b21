#!/usr/bin/env python3
"""`duet run STACK -- CMD`: CMD runs inside a fresh stack, its exit status
is passed on, and nothing the launcher started outlives it.

usage: test_duet_run.py x11|wayland|x11-screenshot[-pixman|-xrender]|usage|all-gone-STACK|
                        xwayland|weston-xwayland

xwayland, weston-xwayland: CMD is an X client: it gets DISPLAY (no
WAYLAND_DISPLAY), the launcher started the Wayland server and the server
its Xwayland, duet's own X client draws its first frame and xterm -e true
exits 0 there, and once the run returns the server and Xwayland are gone.
Skipped, with one line, where Xwayland (or weston's xwayland.so) is missing.

all-gone-STACK: `duet run STACK -- sh -c 'setsid sleep 600 & sleep 4'` returns
only once every process the run started has exited: the stack's, their
helpers, CMD and a daemon CMD started (it left CMD's process group, as E's
efreetd leaves E's): at the moment it returns, no process carrying the
run's mark (a variable only this run's environment has, which every
process it starts inherits) is alive. The run's output goes to files, not
pipes, so that nothing waits for a process that still holds them.
"""

import os
import re
import signal
import subprocess
import sys
import time

import duet
import pngread
from duet import check
from duet_launch import enlightenment, reaper, stack_kinds
from duet_launch import stack as launch_stack


def launcher():
    return duet.program("DUET_LAUNCHER")


def run(args, tmp, timeout=60, env_extra=None):
    argv = [sys.executable, launcher()] + args
    env = duet.base_env(os.path.join(tmp, "runtime"))
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    env.update(env_extra or {})
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise duet.Failure("%s did not exit within %d s" % (" ".join(args), timeout))
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def processes():
    """pid -> (ppid, argv) of every live process we can see."""
    procs = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            procs[int(name)] = (int(fields[1]), [a.decode("utf-8", "replace") for a in argv if a])
    return procs


def wait_gone(pids, what, timeout=5):
    """The processes must be gone (reaped ones vanish at once; slow exits
    get a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        left = {pid: argv for pid, (_, argv) in processes().items() if pid in pids}
        if not left:
            return
        if time.monotonic() > deadline:
            raise duet.Failure("%s still running after the launcher exited: %r" % (what, left))
        time.sleep(0.1)


def run_probe(stack_args, tmp, stack):
    """`duet run STACK -- sh -c PROBE`: while CMD runs, notes every process
    the launcher started (its children) and a background child CMD leaves
    behind; CMD then exits 3, and all of them must be gone afterwards.
    Returns (DISPLAY, WAYLAND_DISPLAY, names of the launcher's children)."""
    flag = os.path.join(tmp, "go")
    probe = ('echo "DISPLAY=${DISPLAY:-} WAYLAND_DISPLAY=${WAYLAND_DISPLAY:-}"; '
             'sleep 600 & echo "stray=$!"; '
             'while [ ! -e "$0" ]; do sleep 0.05; done; exit 3')
    argv = [sys.executable, launcher(), "run", stack] + stack_args + ["--", "sh", "-c", probe,
                                                                     flag]
    env = duet.base_env(os.path.join(tmp, "runtime"))
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    errpath = os.path.join(tmp, "stderr")
    with open(errpath, "w") as err:
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=err, text=True, start_new_session=True)
    try:
        lines = []
        deadline = time.monotonic() + 40
        while not (lines and lines[-1].startswith("stray=")):
            line = proc.stdout.readline()
            check(line and time.monotonic() < deadline,
                  "CMD did not start (launcher status %s); stderr:\n%s"
                  % (proc.poll(), open(errpath).read()[-3000:]))
            lines.append(line.strip())
        # The launcher's children, and theirs (the Xwayland a Wayland
        # server started).
        now = processes()
        stack_procs = {pid: argv for pid, (ppid, argv) in now.items() if ppid == proc.pid}
        stack_procs.update({pid: argv for pid, (ppid, argv) in now.items()
                            if ppid in stack_procs and os.path.basename(argv[0] if argv else "")
                            == "Xwayland"})
        open(flag, "w").close()
        status = proc.wait(40)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    stderr = open(errpath).read()
    check(status == 3, "`duet run %s -- sh -c '...; exit 3'` exited %d; stderr:\n%s"
          % (stack, status, stderr[-3000:]))
    m = re.match(r"DISPLAY=(\S*) WAYLAND_DISPLAY=(\S*)$", lines[0])
    check(m, "CMD printed %r" % lines)
    stray = int(lines[-1].split("=")[1])
    names = sorted(os.path.basename(a[0]) for a in stack_procs.values() if a)
    duet.log("launcher's children while CMD ran: %s" % names)
    wait_gone({stray}, "CMD's background child (pid %d)" % stray)
    wait_gone(set(stack_procs), "the stack's processes %r" % stack_procs)
    return m.group(1), m.group(2), names


def socket_served(path):
    """True if a live process holds a Unix socket bound to path."""
    inodes = set()
    try:
        with open("/proc/net/unix") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if len(fields) >= 8 and fields[7] == path:
                    inodes.add(fields[6])
    except OSError:
        return False
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                target = os.readlink("/proc/%s/fd/%s" % (pid, fd))
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    return True
        except OSError:
            continue
    return False


def case_x11(tmp):
    display, wl, names = run_probe(["--size", "640x480"], tmp, "x11")
    check(re.fullmatch(r":\d+", display), "CMD saw DISPLAY=%r" % display)
    check(wl == "", "CMD saw WAYLAND_DISPLAY=%r under x11" % wl)
    check("Xvfb" in names and "duet-xwm" in names, "the launcher did not start Xvfb and "
          "duet-xwm itself: its children were %s" % names)
    path = "/tmp/.X11-unix/X" + display[1:]
    # Tests run in parallel and -displayfd hands out the lowest free number,
    # so another test's Xvfb may already listen there: only a socket nobody
    # serves is one ours left behind.
    check(not os.path.exists(path) or socket_served(path),
          "Xvfb left its socket %s behind" % path)
    duet.log("x11: exit status 3 passed on; Xvfb and duet-xwm on %s are gone" % display)


def case_wayland(tmp):
    display, wl, names = run_probe(["--size", "640x480", "--refresh", "30"], tmp, "wayland")
    check(display == "", "CMD saw DISPLAY=%r under wayland" % display)
    check(wl, "CMD saw no WAYLAND_DISPLAY")
    check("duet-compositor" in names, "the launcher did not start duet-compositor itself: its "
          "children were %s" % names)
    duet.log("wayland: exit status 3 passed on; duet-compositor on %s is gone" % wl)
    r = run(["run", "wayland", "--", "true"], tmp)
    check(r.returncode == 0, "`duet run wayland -- true` exited %d: %s" % (r.returncode, r.stderr))
    # duet_test only with --test-protocol, reached through DUET_TEST_DISPLAY
    # (docs/security.md).
    script = 'test -n "$DUET_TEST_DISPLAY" && "$DUET_TESTCTL" sync'
    r = run(["run", "wayland", "--test-protocol", "--", "sh", "-c", script], tmp)
    check(r.returncode == 0, "duet-testctl under `duet run wayland --test-protocol` exited %d: %s"
          % (r.returncode, r.stderr))
    r = run(["run", "wayland", "--", "sh", "-c", '"$DUET_TESTCTL" sync'], tmp)
    check(r.returncode == 1, "duet-testctl without --test-protocol exited %d, want 1: %s"
          % (r.returncode, r.stderr))


def case_x11_screenshot(tmp, renderer=None):
    shot = os.path.join(tmp, "x11.png")
    out = os.path.join(tmp, "pattern.out")
    # CMD shows the pattern, waits until it is drawn and composited, ends.
    # With --test-control, duet-xctl screenshot works inside the run too.
    live = os.path.join(tmp, "live.png")
    script = ('"$0" --size 100x80 > "$1" & '
              'while ! grep -q mapped "$1"; do sleep 0.05; done; "$2" sync; sleep 0.3; '
              '"$2" screenshot "$3"')
    extra = ["--renderer", renderer] if renderer else []
    r = run(["run", "x11", "--size", "320x200", "--screenshot", shot, "--test-control"] + extra
            + ["--", "sh", "-c", script, duet.program("DUET_X11_TEST_PATTERN"), out,
             duet.program("DUET_XCTL"), live], tmp)
    check(r.returncode == 0, "duet run x11 --screenshot exited %d; stderr:\n%s"
          % (r.returncode, r.stderr[-3000:]))
    check(os.path.exists(shot), "--screenshot wrote no file")
    check(os.path.exists(live), "duet-xctl screenshot inside `duet run --test-control` wrote "
          "no file")
    img = pngread.read(shot)
    check((img.width, img.height) == (320, 200), "screenshot is %dx%d, screen 320x200"
          % (img.width, img.height))
    # Centered, as duet's policy places every new window.
    win = duet.Window(0, 0, (320 - 100) // 2, (200 - 80) // 2, 100, 80, 0, "", "")
    bad, examples = duet.pattern_mismatches(img, win)
    check(bad == 0, "the exit screenshot does not show the 100x80 pattern centered: %d pixels "
          "differ, e.g. %s" % (bad, examples))
    # A present path the engine cannot take is refused before any X
    # connection: pixman's frames are in memory (no egl-swap), xrender's in
    # a pixmap in the server (no path to pick at all).
    refused = {"pixman": ("egl", "--renderer gl"), "xrender": ("shm", "--renderer gl or pixman")}
    if renderer in refused:
        present, says = refused[renderer]
        bad = subprocess.run([duet.program("DUET_XWM"), "--renderer", renderer, "--present",
                              present], capture_output=True, text=True, timeout=20)
        check(bad.returncode == 2 and says in bad.stderr,
              "duet-xwm --renderer %s --present %s exited %d: %r"
              % (renderer, present, bad.returncode, bad.stderr))
    if renderer:
        said = {"xrender": "XRender"}.get(renderer, renderer)
        check("rendering with %s" % said in r.stderr,
              "duet-xwm did not say it renders with %s:\n%s" % (renderer, r.stderr[-2000:]))


def case_usage(tmp):
    for args in (["run", "vnc", "--", "true"], ["run", "x11"], ["run", "x11", "--size", "0x0",
                 "--", "true"], ["run", "x11", "--refresh", "60", "--", "true"],
                 ["run", "e-x11", "--renderer", "pixman", "--", "true"],
                 ["run", "x11", "--renderer", "vulkan", "--", "true"],
                 ["run", "wayland", "--renderer", "xrender", "--", "true"], ["frobnicate"],
                 []):
        r = run(args, tmp, timeout=20)
        check(r.returncode == 2, "duet %s exited %d, want 2" % (" ".join(args), r.returncode))
        check(r.stderr.strip(), "duet %s printed no error" % " ".join(args))
    r = run(["run", "vnc", "--", "true"], tmp)
    check("vnc" in r.stderr and "x11" in r.stderr and "wayland" in r.stderr,
          "unknown stack error does not name it and the choices: %r" % r.stderr)
    for args in (["--help"], ["run", "--help"]):
        r = run(args, tmp, timeout=20)
        check(r.returncode == 0 and "run" in r.stdout, "duet %s failed: %d %r"
              % (" ".join(args), r.returncode, r.stdout))
    r = run(["run", "--help"], tmp, timeout=20)
    for word in ("x11", "wayland", "--size", "--screenshot", "--refresh", "--renderer",
                 "-- CMD"):
        check(word in r.stdout, "duet run --help does not mention %s" % word)
    # A missing command is the command's failure (127), not the stack's.
    r = run(["run", "wayland", "--", "/nonexistent/duet-no-such-command"], tmp)
    if os.environ.get("DUET_COMPOSITOR"):
        check(r.returncode == 127, "a command that does not exist gave %d" % r.returncode)


def case_x11_wm_dies(tmp):
    # The WM is SIGKILLed under CMD: the launcher must notice, stop CMD and
    # the rest of the stack, and fail as the stack (125), not wait for CMD.
    # CMD would sleep for longer than run()'s hang guard, so a launcher
    # that waited for it fails there; it must be gone once the launcher is.
    pidfile = os.path.join(tmp, "wm-dies-cmd.pid")
    script = ('pkill -9 -f "duet-xwm --display $DISPLAY\\b"; echo $$ > %s; exec sleep 600'
              % pidfile)
    t0 = time.monotonic()
    r = run(["run", "x11", "--size", "320x200", "--", "sh", "-c", script], tmp)
    took = time.monotonic() - t0
    check(r.returncode == 125, "duet run x11 exited %d after its WM died, want 125; stderr:\n%s"
          % (r.returncode, r.stderr[-2000:]))
    check("died while CMD ran" in r.stderr, "the launcher did not say the WM died: %s"
          % r.stderr[-2000:])
    with open(pidfile) as f:
        cmd = int(f.read())
    try:
        wait_gone({cmd}, "CMD (pid %d)" % cmd)
    finally:
        try:
            os.kill(cmd, signal.SIGKILL)  # only if the launcher left it
        except ProcessLookupError:
            pass
    duet.log("the launcher exited %.1f s after starting, CMD stopped" % took)


def case_wayland_server_dies(tmp):
    # CMD fails because its compositor was killed, and exits at once, often
    # before the launcher has seen the compositor go: the failure is still
    # the stack's (125, with the reason), not CMD's status 1.
    script = 'pkill -9 -f "duet-compositor --socket $WAYLAND_DISPLAY\\b"; exit 1'
    r = run(["run", "wayland", "--size", "320x200", "--", "sh", "-c", script], tmp)
    check(r.returncode == 125, "duet run wayland exited %d after its compositor died, want 125; "
          "stderr:\n%s" % (r.returncode, r.stderr[-2000:]))
    check("duet-compositor" in r.stderr and "died while CMD ran" in r.stderr,
          "the launcher did not say the compositor died: %s" % r.stderr[-2000:])
    # A CMD failing on its own, with the stack alive, keeps its status.
    r = run(["run", "wayland", "--size", "320x200", "--", "sh", "-c", "exit 3"], tmp)
    check(r.returncode == 3, "a failing CMD's status 3 came back as %d" % r.returncode)


def skip_missing(stack):
    """One line, and the test is skipped, where the stack cannot run here."""
    why = launch_stack.missing(launch_stack.Config(stack))
    if why:
        raise duet.Skip("%s cannot run here: %s" % (stack, why))


def case_xwayland(tmp, stack):
    skip_missing(stack)
    display, wl, names = run_probe(["--size", "640x480"], tmp, stack)
    check(re.fullmatch(r":\d+", display), "CMD saw DISPLAY=%r under %s" % (display, stack))
    check(wl == "", "CMD saw WAYLAND_DISPLAY=%r under %s: its clients are X clients" % (wl, stack))
    server = stack_kinds.get(stack).programs[0][0]
    check(server in names and "Xwayland" in names, "the launcher's %s and its Xwayland were not "
          "running while CMD ran: %s" % (server, names))
    duet.log("%s: DISPLAY=%s, exit status 3 passed on; %s and Xwayland are gone"
             % (stack, display, server))
    pattern = duet.program("DUET_X11_TEST_PATTERN")
    r = run(["run", stack, "--", pattern, "--size", "100x80", "--exit-after-first-frame"], tmp)
    check(r.returncode == 0, "`duet run %s -- duet-x11-test-pattern --exit-after-first-frame` "
          "exited %d; stderr:\n%s" % (stack, r.returncode, r.stderr[-3000:]))
    check("mapped" in r.stdout, "duet-x11-test-pattern said nothing of its window: %r"
          % r.stdout[-500:])
    xterm = duet.third_party("xterm")
    r = run(["run", stack, "--", xterm, "-e", "true"], tmp)
    check(r.returncode == 0, "`duet run %s -- xterm -e true` exited %d; stderr:\n%s"
          % (stack, r.returncode, r.stderr[-3000:]))
    r = run(["run", stack, "--", "sh", "-c", "exit 7"], tmp)
    check(r.returncode == 7, "`duet run %s -- sh -c 'exit 7'` exited %d" % (stack, r.returncode))
    duet.log("%s: duet-x11-test-pattern drew its first frame, xterm -e true exited 0" % stack)


DAEMON_CMD = "setsid sleep 600 </dev/null >/dev/null 2>&1 & sleep 4"


def case_all_gone(tmp, stack):
    if stack_kinds.get(stack).enlightenment and enlightenment.missing():
        raise duet.Skip("Enlightenment cannot run here: %s" % enlightenment.missing())
    if stack_kinds.get(stack).xwayland:
        skip_missing(stack)
    mark = ("DUET_RUN_GONE", "%d-%s" % (os.getpid(), os.urandom(4).hex()))
    env = duet.base_env(os.path.join(tmp, "runtime"))
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    env[mark[0]] = mark[1]
    out = os.path.join(tmp, "output")
    with open(out, "w") as f:
        proc = subprocess.Popen([sys.executable, launcher(), "run", stack, "--", "sh", "-c",
                                 DAEMON_CMD], env=env, stdin=subprocess.DEVNULL, stdout=f,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        status = proc.wait(120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise duet.Failure("duet run %s did not return within 120 s" % stack)
    left = {}
    for pid in reaper.marked(*mark):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                left[pid] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            pass
    output = open(out).read()
    try:
        check(status == 0, "`duet run %s -- sh -c '%s'` exited %d:\n%s"
              % (stack, DAEMON_CMD, status, output[-3000:]))
        check(not left, "`duet run %s` returned while processes it started still ran: %s"
              % (stack, left))
    finally:
        reaper.stop_marked(*mark)
    duet.log("%s: nothing the run started was alive when it returned" % stack)


CASES = {"x11": case_x11, "wayland-server-dies": case_wayland_server_dies, "wayland": case_wayland, "x11-screenshot": case_x11_screenshot,
         "x11-screenshot-pixman": lambda tmp: case_x11_screenshot(tmp, "pixman"),
         "x11-screenshot-xrender": lambda tmp: case_x11_screenshot(tmp, "xrender"),
         "x11-wm-dies": case_x11_wm_dies, "usage": case_usage,
         "xwayland": lambda tmp: case_xwayland(tmp, "xwayland"),
         "weston-xwayland": lambda tmp: case_xwayland(tmp, "weston-xwayland")}
CASES.update({"all-gone-" + name: (lambda tmp, name=name: case_all_gone(tmp, name))
              for name in stack_kinds.RUN})


def test():
    duet.run_case_in_tmpdir(CASES, "duet-run-test-")


if __name__ == "__main__":
    duet.main(test)
