"""The Wayland protocols a server may offer, read from their XML (the
system's wayland.xml and wayland-protocols, and duet's own), and the wire
format: what the fuzzer needs to speak to a server without libwayland, so
that it can also say what libwayland-client never would.

A message is (object id, opcode, payload, fds): the header is the object
id, then (size << 16 | opcode), both native-endian 32-bit words; the
payload is the arguments, each a 32-bit word, strings and arrays a length
word then the bytes padded to 4; fds travel beside, as SCM_RIGHTS.
"""
import array
import glob
import os
import socket
import struct
import subprocess
import xml.etree.ElementTree as ET

# Argument types of the protocol XML.
TYPES = ("int", "uint", "fixed", "string", "object", "new_id", "array", "fd")


class Arg:
    def __init__(self, el):
        self.name = el.get("name")
        self.type = el.get("type")
        self.interface = el.get("interface")
        self.nullable = el.get("allow-null") == "true"
        self.enum = el.get("enum")


class Message:
    def __init__(self, el, opcode):
        self.name = el.get("name")
        self.opcode = opcode
        self.since = int(el.get("since", "1"))
        self.destructor = el.get("type") == "destructor"
        self.args = [Arg(a) for a in el.findall("arg")]


class Interface:
    def __init__(self, el, source):
        self.name = el.get("name")
        self.version = int(el.get("version", "1"))
        self.source = source
        self.requests = [Message(m, i) for i, m in enumerate(el.findall("request"))]
        self.events = [Message(m, i) for i, m in enumerate(el.findall("event"))]
        # enum name -> [values]
        self.enums = {}
        for e in el.findall("enum"):
            vals = []
            for entry in e.findall("entry"):
                v = entry.get("value")
                vals.append(int(v, 0))
            self.enums[e.get("name")] = vals


def xml_files(extra=()):
    """wayland.xml, every XML of wayland-protocols, and extra ones."""
    def datadir(pkg):
        try:
            return subprocess.run(["pkg-config", "--variable=pkgdatadir", pkg],
                                  capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None
    files = []
    core = datadir("wayland-scanner") or "/usr/share/wayland"
    files.append(os.path.join(core, "wayland.xml"))
    protos = datadir("wayland-protocols") or "/usr/share/wayland-protocols"
    files += sorted(glob.glob(os.path.join(protos, "**", "*.xml"), recursive=True))
    return [f for f in files + list(extra) if os.path.exists(f)]


def load(extra=()):
    """{interface name: Interface} of every protocol found."""
    ifaces = {}
    for path in xml_files(extra):
        root = ET.parse(path).getroot()
        for el in root.findall("interface"):
            ifaces.setdefault(el.get("name"), Interface(el, os.path.basename(path)))
    return ifaces


def enum_values(ifaces, owner, enum):
    """The values of enum (\"name\" of owner, or \"iface.name\")."""
    if not enum:
        return None
    iface, name = (enum.split(".", 1) if "." in enum else (owner.name, enum))
    it = ifaces.get(iface)
    return it.enums.get(name) if it else None


# ------------------------------------------------------------------ wire

def pad(n):
    return (n + 3) & ~3


def word(v, signed=False):
    return struct.pack("=i" if signed else "=I", v)


def string(s, terminate=True):
    """s (bytes) as a protocol string; None is the null string (length 0)."""
    if s is None:
        return word(0)
    body = s + (b"\0" if terminate else b"")
    return word(len(body)) + body + b"\0" * (pad(len(body)) - len(body))


def blob(b):
    return word(len(b)) + b + b"\0" * (pad(len(b)) - len(b))


def message(obj, opcode, payload, size=None):
    """A message's bytes; size overrides the header's size field (an
    ill-formed message)."""
    n = 8 + len(payload) if size is None else size
    return word(obj) + word(((n & 0xffff) << 16) | (opcode & 0xffff)) + payload


def send(sock, data, fds=()):
    if fds:
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
        return sock.sendmsg([data], anc)
    return sock.sendmsg([data])


class Reader:
    """The server's events, split into messages; fds passed with them are
    closed at once (the fuzzer never uses them)."""

    def __init__(self):
        self.buf = b""

    def feed(self, sock):
        """Reads what is there; False when the server closed the socket."""
        try:
            data, anc, _, _ = sock.recvmsg(1 << 16, socket.CMSG_SPACE(28 * 4))
        except BlockingIOError:
            return True
        except (ConnectionResetError, BrokenPipeError):
            return False
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds = array.array("i")
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
                for fd in fds:
                    os.close(fd)
        if not data:
            return False
        self.buf += data
        return True

    def messages(self):
        while len(self.buf) >= 8:
            obj, head = struct.unpack("=II", self.buf[:8])
            size = head >> 16
            if size < 8 or len(self.buf) < size:
                return
            yield obj, head & 0xffff, self.buf[8:size]
            self.buf = self.buf[size:]


def decode(msg, payload):
    """msg's arguments from payload: [(Arg, value)]; fds are not in the
    payload (value None). Stops at a short payload."""
    out, at = [], 0
    for a in msg.args:
        if a.type == "fd":
            out.append((a, None))
            continue
        if at + 4 > len(payload):
            break
        (v,) = struct.unpack("=i" if a.type in ("int", "fixed") else "=I", payload[at:at + 4])
        at += 4
        if a.type in ("string", "array"):
            data = payload[at:at + v]
            at += pad(v)
            v = data.rstrip(b"\0") if a.type == "string" else data
        out.append((a, v))
    return out
