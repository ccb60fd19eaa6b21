#!/usr/bin/env python3
"""Real X11 apps through Xwayland on duet-compositor (--xwayland): each is
a compositor window listed with its WM_CLASS and title, and the
compositor's screenshot shows the app's own drawing where the window is
(not background, not one colour), nothing beyond it.

usage: test_xwayland_apps.py xterm | gtk3-demo | glmark2 | elementary |
                             duet-launch | duet-render | duet-resize |
                             duet-input | duet-roundtrip

xterm: Debian's xterm, magenta, its shell's text in black; a key pressed
through the test protocol reaches it and its shell retitles the window
(OSC 2): the compositor lists the new title (it used to keep the title X
had at map).
gtk3-demo: GTK 3 with GDK_BACKEND=x11, --run=combobox: the demo's
client-side-decorated main window and the Combo Boxes window; a click on
a combo box opens GTK's menu, an override-redirect X window, shown at the
place X gives it, over the window, never listed nor focused; Escape
closes it. The demo closed (WM_DELETE_WINDOW), the main window's header
bar dragged moves it (the compositor's interactive move, asked for by
_NET_WM_MOVERESIZE).
glmark2: glmark2-es2 (its X11 build, EGL on Xwayland): the scene drawn in
its 320x240 window, changing from shot to shot; it ends by itself with a
score.
elementary: EFL's elementary_test -to Button with ELM_DISPLAY=x11.
duet-launch, duet-render, duet-resize, duet-input, duet-roundtrip: duet's
own apps with --backend x11 (the session's clients see both WAYLAND_DISPLAY
and DISPLAY), each doing its job through Xwayland: a first frame reported
and shown (gl and sw); frames drawn and presented, the window's contents
changing; every step of the 8-size table presented at its size in client
and server (_DUET_RESIZE) mode, then the 1920x1080 window on screen;
duet_test key presses (the compositor's seat, Xwayland's wl_keyboard)
reaching the app and flipping its patch on screen; round trips to
Xwayland and through the compositor's X window manager
(_NET_REQUEST_FRAME_EXTENTS), which have no window to show.
"""

import json
import os
import re
import time

import apps
import duet
from duet import check
from test_apps_resize import SIZES, check_steps
from test_xwayland import need_xwayland, screen_size, shot_until, wait_for, xwayland_args

MAGENTA = (255, 0, 255)


def app_env(s, extra=None):
    """Private HOME and XDG dirs: the caller's X resources, GTK settings
    or EFL profile must not change what the test sees."""
    env = {"HOME": s.workdir, "XDG_CONFIG_HOME": os.path.join(s.workdir, "config"),
           "XDG_CACHE_HOME": os.path.join(s.workdir, "cache"), "XENVIRONMENT": os.devnull}
    env.update(extra or {})
    return env


def rect(win):
    return win.x, win.y, win.x + win.w, win.y + win.h


def check_drawn(img, win, bg, what, min_drawn=0.5, min_colors=16):
    """At least min_drawn of win's area is not background, in at least
    min_colors colours: the app's drawing, not a fill or a hole."""
    x0, y0, x1, y1 = duet.clip_rect(img, win)
    area = max(1, (x1 - x0) * (y1 - y0))
    drawn = area - img.count_color(bg, x0, y0, x1, y1)
    colors = len(img.colors(x0, y0, x1, y1))
    check(drawn >= min_drawn * area, "%s: only %d of the %d pixels of %r are not background"
          % (what, drawn, area, win))
    check(colors >= min_colors, "%s: %d colours in %r, want >= %d" % (what, colors, win,
                                                                        min_colors))
    return "%d%% drawn, %d colours" % (100 * drawn // area, colors)


def check_centred(s, win, what):
    """policy.c's rule 1, the one policy of X and Wayland windows."""
    sw, sh = screen_size(s)
    want = ((sw - win.w) // 2, (sh - win.h) // 2)
    check((win.x, win.y) == want, "%s is at %d,%d, rule 1 centres its %dx%d at %d,%d"
          % ((what, win.x, win.y, win.w, win.h) + want))


def shown_alone(s, win, bg, label, **kw):
    """Screenshots until win shows the app's drawing and all else is
    background; returns the last image."""
    def test(img):
        check_drawn(img, win, bg, label, **kw)
        duet.check_outside_is_background(img, win, bg)
    return shot_until(s, label, test, timeout=30)


def differing(a, b, x0, y0, x1, y1):
    """Pixels of [x0, x1) x [y0, y1) that differ between images a and b."""
    n = 0
    for y in range(max(0, y0), min(a.height, y1)):
        ra, rb = a.rows[y], b.rows[y]
        lo, hi = 3 * max(0, x0), 3 * min(a.width, x1)
        if ra[lo:hi] != rb[lo:hi]:
            n += sum(1 for i in range(lo, hi, 3) if ra[i:i + 3] != rb[i:i + 3])
    return n


# ---------------------------------------------------------------- xterm
def xterm(s):
    duet.third_party("xterm")
    bg = s.background()
    script = "echo duet; read line; printf '\\033]2;duet retitled\\007'; sleep 120"
    p = s.client(["xterm", "-bg", "magenta", "-fg", "black", "-geometry", "60x15",
                  "-T", "duet xterm", "-e", "sh", "-c", script], env=app_env(s))
    win = s.wait_window(app_id="XTerm", timeout=30)
    check(win.title == "duet xterm" and win.focused, "xterm's window: %r" % (win,))
    check(win.w > 300 and win.h > 150, "xterm's 60x15 cells in %dx%d" % (win.w, win.h))
    check_centred(s, win, "xterm's window")

    def magenta_and_text(img):
        x0, y0, x1, y1 = rect(win)
        area = win.w * win.h
        magenta = img.count_color(MAGENTA, x0, y0, x1, y1)
        text = img.count_color((0, 0, 0), x0, y0, x1, y1)
        check(magenta >= 0.8 * area, "only %d of xterm's %d pixels are its magenta"
              % (magenta, area))
        check(text > 20, "%d text pixels in xterm's window (its shell echoed 'duet')" % text)
        duet.check_outside_is_background(img, win, bg)
    shot_until(s, "xterm", magenta_and_text, timeout=30)
    # Return, through the compositor's seat and Xwayland, ends the shell's
    # read; its OSC 2 renames the window after it was mapped.
    s.testctl("key", 28, 1)
    s.testctl("key", 28, 0)
    win = s.wait_window(app_id="XTerm", pred=lambda w: w.title == "duet retitled", timeout=15)
    check(p.alive(), "xterm exited: %s" % p.stderr_tail())
    duet.log("xterm shown at %r, retitled by its shell" % (win,))


# ------------------------------------------------------------ gtk3-demo
GTK_APP = "Gtk3-demo"


def or_windows(s):
    """Viewable override-redirect X windows, children of the root: id ->
    (x, y, w, h)."""
    tree = s.run(["xwininfo", "-root", "-children"]).stdout
    found = {}
    for wid in re.findall(r"^\s+(0x[0-9a-f]+) ", tree, re.M):
        info = s.run(["xwininfo", "-id", wid]).stdout
        if ("Override Redirect State: yes" not in info or
                "Map State: IsViewable" not in info):
            continue
        geo = [int(re.search(r"%s:\s+(-?\d+)" % k, info).group(1)) for k in (
            "Absolute upper-left X", "Absolute upper-left Y", "Width", "Height")]
        # Not GTK's 1x1 helper windows nor its 10x10 one at -100,-100.
        if geo[2] > 1 and geo[3] > 1 and geo[0] + geo[2] > 0 and geo[1] + geo[3] > 0:
            found[wid] = tuple(geo)
    return found


def gtk3_demo(s):
    duet.third_party("gtk3-demo")
    duet.third_party("xwininfo")
    bg = s.background()
    p = s.client(["gtk3-demo", "--run=combobox"], env=app_env(s, {"GDK_BACKEND": "x11"}))
    combo = s.wait_window(app_id=GTK_APP, pred=lambda w: w.title == "Combo Boxes", timeout=40)
    wait_for("gtk3-demo's two windows", lambda: len(s.windows()) == 2, timeout=30)
    wins = s.windows()
    check(all(w.app_id == GTK_APP for w in wins) and wins[0].id == combo.id and
          wins[0].focused, "the demo's windows: %r (Combo Boxes on top, focused)" % wins)
    main = wins[1]
    check_centred(s, combo, "the Combo Boxes window")
    box = duet.Window(0, 0, min(main.x, combo.x), min(main.y, combo.y),
                      max(main.x + main.w, combo.x + combo.w) - min(main.x, combo.x),
                      max(main.y + main.h, combo.y + combo.h) - min(main.y, combo.y), 0, "", "")

    def both_drawn(img):
        check_drawn(img, combo, bg, "Combo Boxes")
        check_drawn(img, main, bg, "the main window (client-side decorations)")
        duet.check_outside_is_background(img, box, bg)
    # The pointer rests on the first combo box (its hover look settles
    # before the shot the menu is compared with).
    at = (combo.x + combo.w // 2, combo.y + 50)
    inject = duet.Injector(s)
    inject("motion", *at)
    shot_until(s, "gtk3-demo", both_drawn, timeout=30)
    time.sleep(0.5)  # GTK's hover transition
    before = s.screenshot("gtk3-demo-hover")
    check(not or_windows(s), "an override-redirect window before the click: %r" % or_windows(s))
    inject("button", "left", 1)
    inject("button", "left", 0)
    menus = wait_for("GTK's menu (an override-redirect window)", lambda: or_windows(s))
    check(len(menus) == 1, "override-redirect windows %r" % menus)
    (wid, (mx, my, mw, mh)), = menus.items()
    # GTK puts the active item over the combo box: the menu covers the
    # pointer, and holds several items.
    check(mx <= at[0] < mx + mw and my <= at[1] < my + mh and mh > 3 * 20,
          "the menu %s at %d,%d %dx%d is not over the combo box at %d,%d"
          % (wid, mx, my, mw, mh, at[0], at[1]))
    menu = duet.Window(0, 0, mx, my, mw, mh, 0, "", "")

    def menu_shown(img):
        changed = differing(before, img, mx, my, mx + mw, my + mh)
        check(changed >= 0.3 * mw * mh, "only %d of the menu's %d pixels at %d,%d changed"
              % (changed, mw * mh, mx, my))
        check_drawn(img, menu, bg, "the menu")
        outside = differing(before, img, 0, 0, img.width, img.height) - changed
        check(outside <= 0.05 * mw * mh, "%d pixels outside the menu changed" % outside)
    shot_until(s, "gtk3-menu", menu_shown)
    wins = s.windows()
    check(len(wins) == 2 and wins[0].id == combo.id and wins[0].focused,
          "the menu is not a window of the policy's (listed, focused): %r" % wins)
    duet.log("GTK's menu %s at %d,%d %dx%d over %r" % (wid, mx, my, mw, mh, combo))
    inject("key", 1, 1)  # Escape, to the X grab of the menu
    inject("key", 1, 0)
    wait_for("the menu to close", lambda: not or_windows(s), timeout=15)
    shot_until(s, "gtk3-menu-closed",
               lambda img: check(differing(before, img, mx, my, mx + mw, my + mh)
                                 < 0.1 * mw * mh, "the menu's area did not go back"))
    # --run makes the demo modal over the main window, whose input GTK
    # then ignores: the demo closed (WM_DELETE_WINDOW), the main window
    # has the focus and takes the drag.
    s.testctl("close", combo.id)
    main = s.wait_window(app_id=GTK_APP, pred=lambda w: w.id == main.id and w.focused and
                         len(s.windows()) == 1, timeout=15)
    drag_header_bar(s, inject, bg, main)
    inject.close()
    check(p.alive(), "gtk3-demo exited: %s" % p.stderr_tail())


def drag_header_bar(s, inject, bg, main):
    """GTK's header bar dragged: GTK asks for the WM's move
    (_NET_WM_MOVERESIZE) once the pointer passed its drag threshold, and
    the compositor's move follows the pointer from then on. (Without it
    GTK moves the window itself, by ConfigureRequest, which rule 10
    refuses: the window stayed.)"""
    def now():
        return [w for w in s.windows() if w.id == main.id][0]
    px, py = main.x + 250, main.y + 26  # the header bar, clear of its widgets
    inject("motion", px, py)
    s.sync()
    time.sleep(0.3)  # GTK picks its header bar's gesture from the pointer's place
    inject("button", "left", 1)
    moving = None
    for i in range(1, 30):
        inject("motion", px + 10 * i, py)
        s.sync()
        w = now()
        if w.x != main.x:
            moving = (w, px + 10 * i)
            break
        time.sleep(0.2)
    check(moving, "dragging GTK's header bar by 290 px did not move its window: %r" % (now(),))
    check(moving[0].x > main.x, "the window moved the wrong way: %r" % (moving[0],))
    w1, x1 = moving
    inject("motion", x1 + 40, py + 60)
    moved = s.wait_window(pred=lambda w: w.id == main.id and (w.x, w.y) == (w1.x + 40, w1.y + 60),
                          timeout=10)
    inject("button", "left", 0)
    # Drawn where it went; the strip it left is background again.
    left = duet.Window(0, 0, main.x, moved.y, moved.x - main.x, moved.h, 0, "", "")

    def shown_moved(img):
        check_drawn(img, moved, bg, "the dragged window")
        x0, y0, x1, y1 = duet.clip_rect(img, left)
        check(img.count_color(bg, x0, y0, x1, y1) == (x1 - x0) * (y1 - y0),
              "the strip %r the window left is not background" % (left,))
    shot_until(s, "gtk3-dragged", shown_moved)
    duet.log("GTK's header bar dragged: %r -> %r" % (main, moved))


# -------------------------------------------------------------- glmark2
def glmark2(s):
    duet.third_party("glmark2-es2")
    bg = s.background()
    p = s.client(["glmark2-es2", "-b", "build:duration=8", "--size", "320x240"],
                 env=app_env(s))
    win = s.wait_window(pred=lambda w: w.title.startswith("glmark2"), timeout=30)
    check((win.w, win.h) == (320, 240), "glmark2's window is %dx%d" % (win.w, win.h))
    check_centred(s, win, "glmark2's window")
    first = shown_alone(s, win, bg, "glmark2", min_drawn=0.1)

    def moved(img):
        changed = differing(first, img, *rect(win))
        check(changed > 0.01 * win.w * win.h, "glmark2's scene did not change (%d pixels)"
              % changed)
        check_drawn(img, win, bg, "glmark2", min_drawn=0.1)
    shot_until(s, "glmark2-later", moved)
    check(p.wait(60) == 0, "glmark2-es2 exited non-zero: %s" % p.stderr_tail())
    out = "\n".join(p.lines)
    fps = re.search(r"\[build\] .*FPS: (\d+)", out)
    score = re.search(r"glmark2 Score: (\d+)", out)
    check(fps and int(fps.group(1)) > 0 and score and int(score.group(1)) > 0,
          "glmark2 reported no frames:\n%s" % out)
    check("llvmpipe" in out or "GL_RENDERER" in out, "no GL renderer line:\n%s" % out)
    duet.log("glmark2: build at %s FPS, score %s" % (fps.group(1), score.group(1)))
    wait_for("glmark2's window to leave the list", lambda: not s.windows())


# ----------------------------------------------------------- elementary
def elementary(s):
    duet.third_party("elementary_test")
    bg = s.background()
    p = s.client(["elementary_test", "-to", "Button"], env=app_env(s, {"ELM_DISPLAY": "x11"}))
    win = s.wait_window(app_id="elementary_test", timeout=40)
    check(win.title == "Buttons" and win.focused, "elementary_test's window: %r" % (win,))
    check_centred(s, win, "elementary_test's window")
    shown_alone(s, win, bg, "elementary")
    check(p.alive(), "elementary_test exited: %s" % p.stderr_tail())


# -------------------------------------------------------- duet's apps
def duet_app(s, env_name, *args, name=None):
    argv = [duet.program(env_name), "--backend", "x11"] + list(args)
    return s.client(argv, name=name, env=apps.app_env())


def record(p, name, start=0, timeout=60):
    _, m = p.wait_line(r'^\{"name":"%s"' % name, start=start, timeout=timeout)
    return json.loads(m.string)


def check_x11(rec, what):
    # The compositor's WM answers frames with _NET_WM_FRAME_DRAWN
    # (xwayland-sync.c): the toolkit's round trip no longer stands in.
    check(rec.get("backend") == "x11" and rec.get("presentation") == "frame-drawn",
          "%s: not through X with frame-drawn presentation: %r" % (what, rec))


def duet_launch(s):
    bg = s.background()
    for engine in ("gl", "sw"):
        p = duet_app(s, "DUET_LAUNCH", "--engine", engine, "--size", "300x200", "--stay",
                     name="launch-" + engine)
        first = record(p, "first_frame")
        check_x11(first, "duet-launch")
        check(first["engine"] == engine and (first["width"], first["height"]) == (300, 200)
              and first["since_t0_ns"] > 0, "first_frame: %r" % first)
        win = s.wait_window(app_id="duet-launch")
        check(win.title == "duet-launch" and (win.w, win.h) == (300, 200) and win.focused,
              "duet-launch's window: %r" % (win,))
        check_centred(s, win, "duet-launch's window")

        def launched(img):
            top = img.pixel(win.x + win.w // 2, win.y + 10)
            check(top[2] > top[0] + 40, "the top of %r is %r, not its blue header" % (win, top))
            body = img.pixel(win.x + win.w // 2, win.y + win.h - 5)
            check(apps.near(body, (237, 237, 242)), "the body of %r is %r, not its clear colour"
                  % (win, body))
            duet.check_outside_is_background(img, win, bg)
        shot_until(s, "launch-" + engine, launched)
        duet.log("duet-launch %s: first frame %.1f ms after exec, shown at %r"
                 % (engine, first["since_t0_ns"] / 1e6, win))
        p.stop()
        wait_for("duet-launch's window to go", lambda: not s.windows())


def duet_render(s):
    bg = s.background()
    p = duet_app(s, "DUET_RENDER", "--size", "320x240", "--duration-ms", "3000",
                 "--scenes", "rect_blend,scrolling")
    win = s.wait_window(app_id="duet-render")
    check(win.title == "duet-render" and (win.w, win.h) == (320, 240),
          "duet-render's window: %r" % (win,))
    check_centred(s, win, "duet-render's window")
    first = shown_alone(s, win, bg, "render", min_colors=8)
    shot_until(s, "render-later", lambda img: check(
        differing(first, img, *rect(win)) > 0.05 * win.w * win.h,
        "duet-render's window did not change"))
    check(p.wait(60) == 0, "duet-render exited non-zero: %s" % p.stderr_tail())
    recs = apps.records("\n".join(p.lines))
    scenes = [r for r in recs if r["name"] == "scene"]
    check([r["scene"] for r in scenes] == ["rect_blend", "scrolling"], "scenes %r" % scenes)
    for r in scenes:
        check_x11(r, "duet-render")
        # Unthrottled: frames replaced before a repaint showed them are
        # discarded, as on duet-xwm.
        check(r["frames"] >= 2 and r["presented"] > 0 and
              r["presented"] + r["discarded"] <= r["frames"] + 1,
              "scene %s: %r" % (r["scene"], r))
    done = [r for r in recs if r["name"] == "render_done"]
    check(len(done) == 1 and done[0]["score_fps"] > 0, "render_done: %r" % done)
    duet.log("duet-render: %s" % ", ".join("%s %d frames" % (r["scene"], r["frames"])
                                           for r in scenes))


CLEAR_RESIZE = (230, 230, 235)  # clients/resize.c's clear colour


def duet_resize(s):
    recs = apps.run_app(s, [duet.program("DUET_RESIZE"), "--backend", "x11", "--mode", "client",
                            "--runs", "1"], timeout=120)
    check_steps(recs, "x11", "gl", "client", 1)
    # Server mode: _DUET_RESIZE to the compositor's X window manager, the
    # policy's resize. From 1920x1080 its window is placed where the last
    # step fits.
    p = duet_app(s, "DUET_RESIZE", "--mode", "server", "--runs", "1", "--stay",
                 "--size", "1920x1080", name="resize-server")
    p.wait_line(r'"name":"resize_done"', timeout=120)
    recs = apps.records("\n".join(p.lines))
    check(not [r for r in recs if r["name"] == "resize_mode"], "server mode fell back: %r"
          % recs)
    done = check_steps(recs, "x11", "gl", "server", 1)
    check(done["requested_mode"] == "server", "resize_done: %r" % done)
    win = s.wait_window(app_id="duet-resize")
    check((win.w, win.h) == SIZES[-1], "after the last step the window is %dx%d"
          % (win.w, win.h))

    def resized(img):
        top = img.pixel(win.x + 40, win.y + 12)
        check(top[2] > top[0] + 40, "top of %r is %r, not the blue title bar" % (win, top))
        for x, y in ((win.x + 3, win.y + win.h - 3), (win.x + win.w - 20, win.y + win.h - 3)):
            check(apps.near(img.pixel(x, y), CLEAR_RESIZE), "pixel %d,%d of %r is %r, not the "
                  "app's" % (x, y, win, img.pixel(x, y)))
    shot_until(s, "resized", resized)
    check(p.alive(), "duet-resize --stay exited")
    duet.log("duet-resize: 8 steps in each mode, %r on screen" % (win,))


PATCH = {"a": (32, 96, 224), "b": (240, 128, 16)}  # clients/input.c's colours


def duet_input(s):
    p = duet_app(s, "DUET_INPUT")
    i = p.wait_line(r'^\{"name":"input_ready"', timeout=30)[0]
    check_x11(record(p, "input_ready"), "duet-input")
    win = s.wait_window(app_id="duet-input")
    check(win.focused and win.title == "duet-input", "duet-input's window: %r" % (win,))
    centre = (win.x + win.w // 2, win.y + win.h // 2)

    def patch(colour):
        return lambda img: check(apps.near(img.pixel(*centre), PATCH[colour], tol=1),
                                 "the patch at %d,%d is %r, want %s"
                                 % (centre + (img.pixel(*centre), colour)))
    shot_until(s, "input-a", patch("a"))
    # duet_test's key goes to the focused wl_surface, Xwayland's, which
    # gives it to the X window that has the X focus.
    for n, colour in ((1, "b"), (2, "a")):
        s.testctl("key", 30, 1)
        s.testctl("key", 30, 0)
        _, m = p.wait_line(r'^\{"name":"input_key".*"press":%d,' % n, start=i, timeout=15)
        k = json.loads(m.string)
        check(k["key"] == 30 and k["colour"] == colour, "press %d: %r" % (n, k))
        shot_until(s, "input-%d" % n, patch(colour))
    duet.log("duet-input: two key presses through Xwayland flipped its patch")


def duet_roundtrip(s):
    for kind in ("server", "wm"):
        r = s.run([duet.program("DUET_ROUNDTRIP"), kind, "--backend", "x11", "--groups", "3",
                   "--trips", "20"], timeout=60, env=apps.app_env())
        check(r.returncode == 0, "duet-roundtrip %s exited %d: %s" % (kind, r.returncode,
                                                                       r.stderr))
        recs = apps.records(r.stdout)
        groups = [x for x in recs if x["name"] == "roundtrip_group"]
        done = [x for x in recs if x["name"] == "roundtrip_done"]
        check(len(groups) == 3 and all(g["kind"] == kind and g["trips"] == 20 and g["ns"] > 0
                                       for g in groups), "%s groups: %r" % (kind, groups))
        check(len(done) == 1 and done[0]["median_trip_ns"] > 0, "%s: %r" % (kind, done))
        duet.log("duet-roundtrip %s through Xwayland: %d ns per trip"
                 % (kind, done[0]["median_trip_ns"]))


def in_session(name, scenario, size="1024x768"):
    def test():
        need_xwayland()
        with duet.Session("xwayland-" + name, size=size, args=xwayland_args()) as s:
            scenario(s)
            s.check_alive()
    return test


if __name__ == "__main__":
    duet.main_scenario({
        "xterm": in_session("xterm", xterm),
        "gtk3-demo": in_session("gtk3-demo", gtk3_demo),
        "glmark2": in_session("glmark2", glmark2),
        "elementary": in_session("elementary", elementary),
        "duet-launch": in_session("duet-launch", duet_launch),
        "duet-render": in_session("duet-render", duet_render),
        # Room for the table's 1920x1080.
        "duet-resize": in_session("duet-resize", duet_resize, size=apps.SCREEN),
        "duet-input": in_session("duet-input", duet_input),
        "duet-roundtrip": in_session("duet-roundtrip", duet_roundtrip),
    })
