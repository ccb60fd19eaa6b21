"""How long a Wayland server takes to answer a new client: the round trip
the isolation tests time and the fuzzer asks after each episode, spoken
on the socket without libwayland, so a server that has stopped answering
costs the caller a timeout, not a hang."""
import socket
import struct
import time


def sync_seconds(path, timeout=5.0):
    """Seconds from connecting to path until the server answers
    wl_display.sync, or None (not within timeout, or the connection
    refused or closed)."""
    t0 = time.monotonic()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        # wl_display@1.sync(new wl_callback@2): object, size << 16 | opcode, id
        sock.sendall(struct.pack("=III", 1, 12 << 16, 2))
        buf = b""
        while time.monotonic() - t0 < timeout:
            data = sock.recv(4096)
            if not data:
                return None
            buf += data
            while len(buf) >= 8:
                obj, head = struct.unpack("=II", buf[:8])
                if obj == 2:
                    return time.monotonic() - t0
                buf = buf[max(8, head >> 16):]
        return None
    except OSError:
        return None
    finally:
        sock.close()
