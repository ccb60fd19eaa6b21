"""A protocol fuzzer for a Wayland server, driven by the protocol XML
(wlproto.py): every interface the server offers is fuzzed, a new one
without new code.

An episode is one connection: it gets the registry, binds globals (any
version up to the advertised one, sometimes past it), and sends requests
on the objects it has: mostly well-formed (arguments of the declared
types: edge values of ints, strings with and without their NUL, objects
of the right interface or another, fresh and reused new_ids, arrays,
memfds of random sizes), some ill-formed (a size field that lies, an
opcode past the interface's, an object that does not exist, a message cut
short). It ends when the server closes the connection (a protocol error)
or after its share of requests. Everything an episode sends is kept, so a
failure can be replayed and shortened (test_wl_fuzz.py).

All randomness comes from one random.Random per episode, seeded from the
run's seed and the episode's number: the same seed sends the same bytes.
"""
import os
import random
import select
import socket
import time

import wlproto as wp
from wl_sync import sync_seconds  # tests/integration, on the path

# Interfaces never bound: test-only powers on their own socket, and what a
# client cannot make a server do much with but wait (none yet).
SKIP_GLOBALS = {"duet_test"}
EDGE_INTS = [0, 1, -1, 2, 7, 255, 4096, 65535, 1 << 20, (1 << 31) - 1, -(1 << 31), -4096]
EDGE_UINTS = [0, 1, 2, 3, 4, 255, 4096, 65535, 1 << 20, (1 << 31), 0xffffffff]


class Episode:
    """One connection's requests (see the module's comment)."""

    def __init__(self, ifaces, path, rng, max_requests, without=()):
        self.ifaces = ifaces
        # "interface.request"s never sent (a peer's known crash left out,
        # to see what else it does); without them the draws are as ever.
        self.without = set(without)
        self.rng = rng
        self.max_requests = max_requests
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.sock.setblocking(False)
        self.reader = wp.Reader()
        # id -> (Interface, version); 1 is wl_display.
        self.objects = {1: (ifaces["wl_display"], 1)}
        self.next_id = 2
        self.globals = []          # (name, interface, version) from the registry
        self.registry = None
        self.sent = []             # (bytes, [fd sizes]) in order, for replay
        self.requests = 0
        self.closed = False
        self.error = None          # (object, code, text) of wl_display.error

    # ------------------------------------------------------------ events

    def pump(self, wait=0.0):
        """Reads the server's events; False once it closed the socket."""
        if self.closed:
            return False
        r, _, _ = select.select([self.sock], [], [], wait)
        if r and not self.reader.feed(self.sock):
            self.closed = True
        for obj, opcode, payload in self.reader.messages():
            self.event(obj, opcode, payload)
        return not self.closed

    def event(self, obj, opcode, payload):
        known = self.objects.get(obj)
        if not known or opcode >= len(known[0].events):
            return
        iface, version = known
        msg = iface.events[opcode]
        args = wp.decode(msg, payload)
        if iface.name == "wl_display" and msg.name == "error":
            self.error = tuple(v for _, v in args)
        elif iface.name == "wl_display" and msg.name == "delete_id" and args:
            self.objects.pop(args[0][1], None)
        elif iface.name == "wl_registry" and msg.name == "global" and len(args) == 3:
            self.globals.append((args[0][1], args[1][1].decode(errors="replace"), args[2][1]))
        elif iface.name == "wl_registry" and msg.name == "global_remove" and args:
            self.globals = [g for g in self.globals if g[0] != args[0][1]]
        for a, v in args:
            # Objects the server makes (data offers, feedback objects).
            if a.type == "new_id" and a.interface in self.ifaces and v:
                self.objects[v] = (self.ifaces[a.interface], version)

    # ------------------------------------------------------------ sending

    def send(self, data, fds=(), fd_sizes=(), text=""):
        self.sent.append((data, list(fd_sizes), text))
        self.requests += 1
        try:
            wp.send(self.sock, data, fds)
        except (BrokenPipeError, ConnectionResetError):
            self.closed = True
        except BlockingIOError:
            # The server stopped reading us: wait for it, then give up.
            if not self.pump(1.0):
                return
            try:
                wp.send(self.sock, data, fds)
            except OSError:
                self.closed = True
        finally:
            for fd in fds:
                os.close(fd)

    def new_id(self):
        i = self.next_id
        self.next_id += 1
        return i

    def start(self):
        """The registry and its globals: wl_display.sync's callback is done
        (and its id deleted) after every global."""
        self.registry = self.new_id()
        self.objects[self.registry] = (self.ifaces["wl_registry"], 1)
        self.send(wp.message(1, 1, wp.word(self.registry)), text="wl_display.get_registry")
        cb = self.new_id()
        self.objects[cb] = (self.ifaces["wl_callback"], 1)
        self.send(wp.message(1, 0, wp.word(cb)), text="wl_display.sync")
        deadline = time.monotonic() + 5
        while cb in self.objects and time.monotonic() < deadline and self.pump(0.05):
            pass

    def bind(self, among=None):
        """A random global (of among), at a random version (now and then
        past it)."""
        fit = [g for g in (among or self.globals)
               if g[1] in self.ifaces and g[1] not in SKIP_GLOBALS]
        if not fit:
            return
        name, iface, version = self.rng.choice(fit)
        v = self.rng.randint(1, version)
        if self.rng.random() < 0.03:
            v = version + self.rng.randint(1, 3)
        new = self.new_id()
        self.objects[new] = (self.ifaces[iface], v)
        payload = (wp.word(name) + wp.string(iface.encode()) + wp.word(v) + wp.word(new))
        self.send(wp.message(self.registry, 0, payload),
                  text="wl_registry.bind(%d, %s, %d) -> %d" % (name, iface, v, new))

    # --------------------------------------------------------- arguments

    def of_interface(self, name):
        return [i for i, (it, _) in self.objects.items() if it.name == name]

    def arg(self, iface, version, a, fds, sizes):
        rng = self.rng
        t = a.type
        if t == "int":
            return wp.word(rng.choice(EDGE_INTS) if rng.random() < 0.3
                           else rng.randint(0, 512), signed=True)
        if t == "uint":
            vals = wp.enum_values(self.ifaces, iface, a.enum)
            if vals and rng.random() < 0.7:
                return wp.word(rng.choice(vals) & 0xffffffff)
            return wp.word(rng.choice(EDGE_UINTS) if rng.random() < 0.5
                           else rng.randint(0, 4096))
        if t == "fixed":
            return wp.word(rng.randint(-(1 << 31), (1 << 31) - 1), signed=True)
        if t == "string":
            r = rng.random()
            if r < 0.05 and a.nullable:
                return wp.string(None)
            if r < 0.07:
                return wp.string(bytes(rng.randrange(1, 256) for _ in range(rng.randint(0, 8))),
                                 terminate=False)
            n = rng.choice([0, 1, 8, 64, 4000]) if rng.random() < 0.2 else rng.randint(1, 16)
            return wp.string(bytes(rng.randrange(32, 127) for _ in range(n)))
        if t == "object":
            r = rng.random()
            same = self.of_interface(a.interface) if a.interface else list(self.objects)
            if r < 0.88 and same:
                # The newest most often: chains (a surface, its xdg_surface,
                # its toplevel, a buffer for it) go deeper than uniform picks.
                return wp.word(rng.choice(same[-3:]) if rng.random() < 0.7 else rng.choice(same))
            if r < 0.92 and (a.nullable or r < 0.9):
                return wp.word(0)
            if r < 0.97:
                return wp.word(rng.choice(list(self.objects)))
            return wp.word(rng.randint(2, 0xffffffff))
        if t == "new_id":
            r = rng.random()
            if a.interface is None:
                # wl_registry.bind's form; bind() does it properly.
                name = rng.choice(list(self.ifaces))
                i = self.new_id()
                self.objects[i] = (self.ifaces[name], 1)
                return wp.string(name.encode()) + wp.word(1) + wp.word(i)
            if r < 0.97:
                # A new object has the version of the one that made it.
                i = self.new_id()
                self.objects[i] = (self.ifaces.get(a.interface) or iface, version)
                return wp.word(i)
            if r < 0.985:
                return wp.word(rng.choice(list(self.objects)))
            return wp.word(rng.choice([0, 0xff000000 + rng.randint(0, 16), self.next_id + 50]))
        if t == "array":
            n = rng.choice([0, 4, 16, 64]) if rng.random() < 0.8 else rng.randint(0, 512)
            return wp.blob(bytes(rng.randrange(256) for _ in range(n)))
        if t == "fd":
            size = rng.choice([0, 4096, 65536, 1 << 20, rng.randint(0, 1 << 16)])
            fd = os.memfd_create("wl-fuzz", os.MFD_CLOEXEC)
            os.ftruncate(fd, size)
            fds.append(fd)
            sizes.append(size)
            return b""
        raise ValueError("unknown argument type %r" % t)

    def satisfiable(self, msg):
        for a in msg.args:
            if a.type == "object" and a.interface and not a.nullable and \
                    not self.of_interface(a.interface):
                offered = [g for g in self.globals if g[1] == a.interface]
                if not offered:
                    return False
                self.bind(offered)
        return True

    def request(self):
        """One random request on a random object, sometimes ill-formed."""
        rng = self.rng
        # The registry binds through bind(); wl_display's requests now and
        # then (a sync, a second registry).
        pick = [i for i, (it, _) in self.objects.items()
                if it.name not in ("wl_display", "wl_registry")]
        obj = rng.choice(pick) if pick and rng.random() < 0.98 else rng.choice(list(self.objects))
        iface, version = self.objects[obj]
        reqs = [m for m in iface.requests if m.since <= max(version, 1)]
        if rng.random() < 0.01:
            reqs = iface.requests  # now and then one newer than the object
        if self.without:
            reqs = [m for m in reqs if "%s.%s" % (iface.name, m.name) not in self.without]
        # Mostly requests whose object arguments can be right: those that
        # need an object the episode has none of (a seat, an output) bind
        # its global first, or wait for another turn.
        if rng.random() < 0.95:
            reqs = [m for m in reqs if self.satisfiable(m)]
        if not reqs:
            return
        msg = rng.choice(reqs)
        fds, sizes = [], []
        payload = b"".join(self.arg(iface, version, a, fds, sizes) for a in msg.args)
        r = rng.random()
        text = "%s@%d.%s(%s)" % (iface.name, obj, msg.name, describe(msg, payload))
        if r < 0.005:
            data = wp.message(obj, len(iface.requests) + rng.randint(0, 3), payload)
            text += " with an opcode past the interface's"
        elif r < 0.01:
            size = rng.choice([0, 4, 8, 12, len(payload) + 8 + 4, 0xffff])
            data = wp.message(obj, msg.opcode, payload, size=size)
            text += " with a size field of %d for %d bytes" % (size, len(payload) + 8)
        elif r < 0.015:
            data = wp.message(obj, msg.opcode, payload)[:rng.randint(4, 8 + len(payload))]
            text += " cut to %d of %d bytes" % (len(data), len(payload) + 8)
        elif r < 0.02:
            other = rng.randint(self.next_id + 1, 0xfeffffff)
            data = wp.message(other, msg.opcode, payload)
            text += " sent to object %d, which does not exist" % other
        else:
            data = wp.message(obj, msg.opcode, payload)
        self.send(data, fds, sizes, text + " [%d payload bytes%s]" % (
            len(payload), ", fds of %s bytes" % sizes if sizes else ""))
        if msg.destructor:
            self.objects.pop(obj, None)

    def run(self):
        self.start()
        while not self.closed and self.requests < self.max_requests:
            if self.rng.random() < 0.15 or len(self.objects) < 4:
                self.bind()
            else:
                self.request()
            self.pump(0.0)
        self.pump(0.05)
        self.sock.close()


def describe(msg, payload):
    """msg's arguments as sent in payload, for a reproducer a person reads:
    `new 13, @6, 0, "text", array of 4 bytes, fd`."""
    out = []
    for a, v in wp.decode(msg, payload):
        if a.type == "new_id" and a.interface is None:
            out.append("...")  # wl_registry.bind's form: bind() writes its own text
            break
        if a.type == "new_id":
            out.append("new %d" % v)
        elif a.type == "object":
            out.append("@%d" % v if v else "null")
        elif a.type == "fixed":
            out.append("%g" % (v / 256.0))
        elif a.type == "string":
            out.append(repr(v.decode("utf-8", "replace")) if len(v) <= 24 else
                       "a string of %d bytes" % len(v))
        elif a.type == "array":
            out.append("array of %d bytes" % len(v))
        elif a.type == "fd":
            out.append("fd")
        else:
            out.append(str(v))
    return ", ".join(out)


def probe(path, timeout=5.0):
    """Whether the server answers a new client's round trip in time."""
    return sync_seconds(path, timeout) is not None


def replay(path, sent):
    """Sends an episode's recorded messages again (fds: fresh memfds of the
    recorded sizes), reading events meanwhile."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.setblocking(False)
    reader = wp.Reader()
    for data, sizes, _ in sent:
        fds = []
        for size in sizes:
            fd = os.memfd_create("wl-fuzz", os.MFD_CLOEXEC)
            os.ftruncate(fd, size)
            fds.append(fd)
        try:
            wp.send(s, data, fds)
        except OSError:
            break
        finally:
            for fd in fds:
                os.close(fd)
        r, _, _ = select.select([s], [], [], 0)
        if r and not reader.feed(s):
            break
    time.sleep(0.05)
    s.close()
