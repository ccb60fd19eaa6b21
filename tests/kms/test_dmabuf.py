#!/usr/bin/env python3
"""zwp_linux_dmabuf_v1 in duet-compositor (compositor/core/linux-dmabuf.c).

usage: test_dmabuf.py absent|errors|client

  absent   headless, where EGL cannot import dmabufs (llvmpipe without a
           render node: this machine): the global is not offered, the
           compositor says why, clients see no zwp_linux_dmabuf_v1. Where
           EGL can import, the protocol errors are checked instead.
  errors   on the KMS device of the guest (scripts/test-kms), where EGL
           (kms_swrast) imports: the global is offered (version 4) with XR24
           in the implicit layout, its feedback names the card as the main
           device and lists the formats in its table; every protocol error
           the spec defines is
           posted for its case, an import the driver refuses is the
           'failed' event (create) or invalid_wl_buffer (create_immed),
           and the compositor lives on
  client   weston-simple-dmabuf-egl (GBM buffers on the card, drawn with
           GL) on the KMS device: the compositor logs the import, the
           protocol log shows the client's buffers came through
           zwp_linux_dmabuf_v1 and none through wl_shm, and the screenshot
           of the scanout shows the client's pixels
"""

import glob
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

import duet  # noqa: E402
from duet import check  # noqa: E402
import test_kms  # noqa: E402

# mode -> (interface, code) of the expected protocol error, or an event.
ERRORS = {
    "already_used": ("zwp_linux_buffer_params_v1", 0),
    "plane_idx": ("zwp_linux_buffer_params_v1", 1),
    "plane_set": ("zwp_linux_buffer_params_v1", 2),
    "incomplete": ("zwp_linux_buffer_params_v1", 3),
    "invalid_format": ("zwp_linux_buffer_params_v1", 4),
    "invalid_dimensions": ("zwp_linux_buffer_params_v1", 5),
    "out_of_bounds": ("zwp_linux_buffer_params_v1", 6),
    "invalid_wl_buffer": ("zwp_linux_buffer_params_v1", 7),
}
XR24_IMPLICIT = "modifier XR24 0x00ffffffffffffff"


def dmabuf_client(s, mode):
    r = s.run([duet.program("DUET_DMABUF_CLIENT"), mode])
    check(r.returncode == 0, "duet-dmabuf-client %s: status %d; stderr:\n%s"
          % (mode, r.returncode, r.stderr))
    return r.stdout.strip().splitlines()


def check_errors(s, card=None):
    lines = dmabuf_client(s, "globals")
    check(lines and lines[0] in ("dmabuf version 3", "dmabuf version 4"), "globals: %r" % lines)
    if card:
        # Version 4 where the compositor knows its DRM device: the card.
        check(lines[0] == "dmabuf version 4", "globals: %r, want version 4 on KMS" % lines)
        check_feedback(s, card)
    check(XR24_IMPLICIT in lines, "XR24 in the implicit layout not offered: %r" % lines)
    for mode, (iface, code) in ERRORS.items():
        lines = dmabuf_client(s, mode)
        want = "error %s %d" % (iface, code)
        check(lines == [want], "%s: got %r, want %r" % (mode, lines, want))
        s.check_alive()
    # A memfd is no dmabuf the driver takes: not the client's fault.
    lines = dmabuf_client(s, "failed")
    check(lines == ["failed"], "failed: got %r" % lines)
    check("linux-dmabuf: not imported" in s.compositor.stderr_tail(200000),
          "the refused import was not logged")
    s.check_alive()
    duet.log("every zwp_linux_buffer_params_v1 error and the failed event as specified")


def check_feedback(s, card):
    st = os.stat(card)
    dev = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    lines = dmabuf_client(s, "feedback")
    want = ["main_device " + dev, "target_device " + dev, "flags 0"]
    check([line for line in lines if line.split()[0] in ("main_device", "target_device",
                                                         "flags")] == want,
          "feedback %r, want %r" % (lines, want))
    check(lines[0].startswith("table ") and lines[-2:] == ["tranche_done", "done"],
          "feedback events out of order: %r" % lines)
    check("entry XR24 0x00ffffffffffffff" in lines, "no XR24 implicit entry: %r" % lines)
    entries = len([line for line in lines if line.startswith("entry")])
    lines = dmabuf_client(s, "unadvertised")
    check(lines == ["error zwp_linux_buffer_params_v1 4"],
          "a modifier not advertised (version 4): %r" % lines)
    duet.log("version 4 feedback: main device %s (%s), %d table entries" % (dev, card, entries))


def test_absent():
    with duet.Session("dmabuf-absent") as s:
        s.background()
        log = s.compositor.stderr_tail(200000)
        if "linux-dmabuf: offered" in log:
            duet.log("EGL imports dmabufs here: checking the protocol errors instead")
            check_errors(s)
            return
        check("linux-dmabuf: not offered: the renderer cannot import dmabufs" in log,
              "the compositor did not say why linux-dmabuf is not offered:\n" + log[-2000:])
        lines = dmabuf_client(s, "globals")
        check(lines == ["dmabuf absent"], "zwp_linux_dmabuf_v1 is advertised: %r" % lines)


def render_card():
    """The card with a render node beside it (virtio-gpu; vkms has none):
    the compositor and the client share it."""
    for card in test_kms.cards():
        name = os.path.basename(os.path.realpath(card))
        if glob.glob("/sys/class/drm/%s/device/drm/renderD*" % name):
            return card
    raise duet.Failure("no card with a render node: %s" % test_kms.cards())


class DmabufSession(test_kms.KmsSession):
    def __init__(self, name, card, compositor_env=None):
        super().__init__(name)
        self.extra_args += ["--drm-device", card]
        self.compositor_env = compositor_env or {}

    def start(self):
        # The compositor's environment is the test's (duet.base_env).
        saved = dict(os.environ)
        os.environ.update(self.compositor_env)
        try:
            super().start()
        finally:
            os.environ.clear()
            os.environ.update(saved)


def test_errors():
    card = render_card()
    with DmabufSession("dmabuf-errors", card) as s:
        s.wait_log("linux-dmabuf: offered")
        check_errors(s, card)


def corners_upright(img, win, bg, min_non_bg, min_colors):
    """simple-dmabuf-egl's square has a green corner top left and a red one
    bottom left, whatever its buffers' row order (GL draws bottom-up, and
    weston 10 says so with the y_invert flag): shown the right way up, the
    green pixels are above the red ones."""
    what = test_kms.content_check(img, win, bg, min_non_bg, min_colors)
    x0, y0, x1, y1 = duet.clip_rect(img, win)
    ys = {"red": [], "green": []}
    for y in range(y0, y1, 2):
        for x in range(x0, x1, 2):
            r, g, b = img.pixel(x, y)[:3]
            if r > 160 and g < 60 and b < 60:
                ys["red"].append(y)
            elif g > 160 and r < 60 and b < 60:
                ys["green"].append(y)
    check(ys["red"] and ys["green"], "no red or no green corner in %r" % (win,))
    red = sum(ys["red"]) / len(ys["red"])
    green = sum(ys["green"]) / len(ys["green"])
    check(green < red, "upside down: the green corner (mean y %.0f) is below the red one "
          "(%.0f)" % (green, red))
    return "%s, green corner above red (y %.0f < %.0f)" % (what, green, red)


def protocol_counts(path, pid):
    with open(path) as f:
        data = json.load(f)
    for c in data.get("clients", []):
        if c.get("pid") == pid:
            return c.get("messages", {})
    raise duet.Failure("client %d not in the protocol log %s: %r" % (pid, path, data))


def test_client():
    card = render_card()
    client_bin = duet.third_party("weston-simple-dmabuf-egl")
    # The compositor counts each client's messages into it (protocol-log.c).
    plog = os.path.join(tempfile.mkdtemp(prefix="duet-dmabuf-"), "protocol.json")
    with DmabufSession("dmabuf-client", card, {"DUET_PROTOCOL_LOG": plog}) as s:
        s.wait_log("linux-dmabuf: offered")
        bg = s.background()
        s.wait_log("screenshots read the scanned-out buffer")
        # GBM and GL on the card: Mesa's kms_swrast (llvmpipe drawing into
        # dumb buffers, exported as dmabufs); not the forced-software path
        # the other clients take, which has no GBM.
        env = {"LIBGL_ALWAYS_SOFTWARE": "0", "MESA_LOADER_DRIVER_OVERRIDE": "kms_swrast",
               "HOME": s.workdir}
        proc = s.client([client_bin, "--drm-render-node=" + card], name="simple-dmabuf-egl",
                        env=env)
        win, what = s.wait_client_shown(
            proc, "simple-dmabuf-egl", lambda img, win: corners_upright(img, win, bg, 0.3, 2),
            bg, margin=64, timeout=90, pause=0.5, window_timeout=60)
        duet.log("simple-dmabuf-egl on the scanout: %s in its %dx%d window"
                 % (what, win.w, win.h))
        s.wait_log("linux-dmabuf: imported")
        imports = s.log_text().count("linux-dmabuf: imported")
        pid = proc.pid
        proc.stop()
        # The log is rewritten when a client disconnects.
        deadline = time.monotonic() + 30
        while True:
            try:
                msgs = protocol_counts(plog, pid)
                break
            except (OSError, ValueError, duet.Failure):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        created = msgs.get("zwp_linux_buffer_params_v1.create", 0) + \
            msgs.get("zwp_linux_buffer_params_v1.create_immed", 0)
        check(created > 0 and msgs.get("zwp_linux_buffer_params_v1.add", 0) >= created,
              "the client made no dmabuf buffers: %r" % msgs)
        check(msgs.get("wl_surface.attach", 0) > 0, "the client attached nothing: %r" % msgs)
        shm = {k: v for k, v in msgs.items() if k.startswith("wl_shm")}
        check(not shm, "the client used wl_shm: %r" % shm)
        check(imports >= created, "%d buffers created, %d imports logged" % (created, imports))
        duet.log("%d dmabuf buffers imported, %d attaches, no wl_shm request"
                 % (created, msgs["wl_surface.attach"]))
        s.check_alive()


def test():
    {
        "absent": test_absent,
        "errors": test_errors,
        "client": test_client,
    }[sys.argv[1]]()


if __name__ == "__main__":
    duet.main(test)
