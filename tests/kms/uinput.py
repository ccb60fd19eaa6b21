"""Virtual input devices through /dev/uinput (Linux), for the KMS input test:
the kernel makes them real evdev devices (/dev/input/event*), which udev
tags and libinput opens like any keyboard, mouse or touchscreen. Standard library only
(fcntl.ioctl, struct); the legacy uinput_user_dev write sets them up, which
every kernel since 2.6 takes."""

import fcntl
import os
import struct
import time

EV_SYN, EV_KEY, EV_REL, EV_ABS = 0, 1, 2, 3
SYN_REPORT = 0
REL_X, REL_Y, REL_WHEEL = 0, 1, 8
ABS_X, ABS_Y = 0, 1
ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID = 0x2f, 0x35, 0x36, 0x39
BTN_LEFT, BTN_RIGHT, BTN_MIDDLE = 0x110, 0x111, 0x112
BTN_TOUCH = 0x14a
INPUT_PROP_DIRECT = 0x01
KEY_A = 30
BUS_VIRTUAL = 0x06

# _IOW('U', n, int) and _IO('U', n)
UI_SET_EVBIT = 0x40045564
UI_SET_KEYBIT = 0x40045565
UI_SET_RELBIT = 0x40045566
UI_SET_ABSBIT = 0x40045567
UI_SET_PROPBIT = 0x4004556e
UI_DEV_CREATE = 0x5501
UI_DEV_DESTROY = 0x5502
ABS_CNT = 64


class Device:
    """keys: EV_KEY codes; rels: EV_REL codes; abs: {code: (min, max)};
    props: INPUT_PROP_* bits."""

    def __init__(self, name, keys=(), rels=(), abs=None, props=(), product=1):
        abs = abs or {}
        self.name = name
        self.fd = os.open("/dev/uinput", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            for ev, codes, bit in ((EV_KEY, keys, UI_SET_KEYBIT), (EV_REL, rels, UI_SET_RELBIT),
                                   (EV_ABS, abs, UI_SET_ABSBIT)):
                if codes:
                    fcntl.ioctl(self.fd, UI_SET_EVBIT, ev)
                    for code in codes:
                        fcntl.ioctl(self.fd, bit, code)
            for prop in props:
                fcntl.ioctl(self.fd, UI_SET_PROPBIT, prop)
            absmax = [0] * ABS_CNT
            absmin = [0] * ABS_CNT
            for code, (lo, hi) in abs.items():
                absmin[code], absmax[code] = lo, hi
            # struct uinput_user_dev: name[80], input_id, ff_effects_max,
            # absmax, absmin, absfuzz, absflat.
            setup = struct.pack("80sHHHHI", name.encode(), BUS_VIRTUAL, 0x1d6b, product, 1, 0)
            setup += struct.pack("%di" % ABS_CNT, *absmax)
            setup += struct.pack("%di" % ABS_CNT, *absmin)
            setup += bytes(2 * 4 * ABS_CNT)
            os.write(self.fd, setup)
            fcntl.ioctl(self.fd, UI_DEV_CREATE)
        except OSError:
            os.close(self.fd)
            raise

    def emit(self, *events):
        """events: (type, code, value)...; a SYN_REPORT ends them."""
        now = time.time()
        sec, usec = int(now), int((now % 1) * 1e6)
        data = b"".join(struct.pack("llHHi", sec, usec, t, c, v)
                        for t, c, v in list(events) + [(EV_SYN, SYN_REPORT, 0)])
        os.write(self.fd, data)

    def close(self):
        if self.fd >= 0:
            fcntl.ioctl(self.fd, UI_DEV_DESTROY)
            os.close(self.fd)
            self.fd = -1


def keyboard(name):
    # udev calls it a keyboard when it has the keys Esc..D (codes 1-31).
    return Device(name, keys=range(1, 128), product=1)


def mouse(name):
    return Device(name, keys=(BTN_LEFT, BTN_RIGHT, BTN_MIDDLE), rels=(REL_X, REL_Y, REL_WHEEL),
                  product=2)


def tablet(name, width, height):
    """An absolute pointer like qemu's tablet (udev: a mouse with absolute
    axes); the range is the output's size, so positions map 1:1."""
    return Device(name, keys=(BTN_LEFT, BTN_RIGHT, BTN_MIDDLE),
                  abs={ABS_X: (0, width - 1), ABS_Y: (0, height - 1)}, product=3)


class Touchscreen(Device):
    """A multitouch screen (protocol type B: one slot per finger, a
    tracking id while it touches) over a width x height output, so that
    positions map 1:1 as the tablet's do. INPUT_PROP_DIRECT and BTN_TOUCH
    make udev call it a touchscreen (ID_INPUT_TOUCHSCREEN) and libinput a
    touch device; ABS_X/ABS_Y carry the first finger, as drivers send for
    single-touch readers."""

    SLOTS = 10

    def __init__(self, name, width, height):
        super().__init__(name, keys=(BTN_TOUCH,),
                         abs={ABS_X: (0, width - 1), ABS_Y: (0, height - 1),
                              ABS_MT_SLOT: (0, self.SLOTS - 1),
                              ABS_MT_TRACKING_ID: (0, 65535),
                              ABS_MT_POSITION_X: (0, width - 1),
                              ABS_MT_POSITION_Y: (0, height - 1)},
                         props=(INPUT_PROP_DIRECT,), product=4)
        self.next_id = 1
        self.down = set()

    def touch_down(self, slot, x, y):
        events = [(EV_ABS, ABS_MT_SLOT, slot), (EV_ABS, ABS_MT_TRACKING_ID, self.next_id),
                  (EV_ABS, ABS_MT_POSITION_X, x), (EV_ABS, ABS_MT_POSITION_Y, y)]
        self.next_id += 1
        if not self.down:
            events.append((EV_KEY, BTN_TOUCH, 1))
        self.down.add(slot)
        self.emit(*(events + [(EV_ABS, ABS_X, x), (EV_ABS, ABS_Y, y)]))

    def touch_move(self, slot, x, y):
        self.emit((EV_ABS, ABS_MT_SLOT, slot), (EV_ABS, ABS_MT_POSITION_X, x),
                  (EV_ABS, ABS_MT_POSITION_Y, y), (EV_ABS, ABS_X, x), (EV_ABS, ABS_Y, y))

    def touch_up(self, slot):
        self.down.discard(slot)
        events = [(EV_ABS, ABS_MT_SLOT, slot), (EV_ABS, ABS_MT_TRACKING_ID, -1)]
        if not self.down:
            events.append((EV_KEY, BTN_TOUCH, 0))
        self.emit(*events)
