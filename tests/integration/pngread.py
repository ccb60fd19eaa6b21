"""A small PNG reader (stdlib only) for checking screenshot pixels.

Handles what duet's writer emits and a little more: 8-bit RGB or RGBA,
non-interlaced, any of the five row filters. Anything else raises ValueError,
so a broken writer shows up as a failed test rather than wrong pixels.
"""

import struct
import zlib
from itertools import accumulate

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Image:
    """Decoded pixels, stored as RGB rows (alpha, if any, is dropped)."""

    def __init__(self, width, height, rows, has_alpha):
        self.width = width
        self.height = height
        self.rows = rows  # list of bytes, 3 * width each
        self.has_alpha = has_alpha

    def pixel(self, x, y):
        row = self.rows[y]
        return (row[3 * x], row[3 * x + 1], row[3 * x + 2])

    def colors(self, x0, y0, x1, y1):
        """Set of distinct colours in [x0, x1) x [y0, y1), clipped."""
        x0, y0 = max(0, x0), max(0, y0)
        x1, y1 = min(self.width, x1), min(self.height, y1)
        seen = set()
        for y in range(y0, y1):
            row = self.rows[y]
            seen.update(zip(row[3 * x0:3 * x1:3], row[3 * x0 + 1:3 * x1:3],
                            row[3 * x0 + 2:3 * x1:3]))
        return seen

    def count_color(self, color, x0, y0, x1, y1):
        """How many pixels of [x0, x1) x [y0, y1) (clipped) are color."""
        x0, y0 = max(0, x0), max(0, y0)
        x1, y1 = min(self.width, x1), min(self.height, y1)
        color = tuple(color)
        n = 0
        for y in range(y0, y1):
            seg = self.rows[y][3 * x0:3 * x1]
            n += sum(1 for p in zip(seg[0::3], seg[1::3], seg[2::3]) if p == color)
        return n

    def count_outside_not(self, color, rect):
        """Pixels outside rect=(x, y, w, h) that differ from color."""
        rx, ry, rw, rh = rect
        x0, x1 = max(0, rx), min(self.width, rx + rw)
        px = bytes(color)
        bad = 0
        for y in range(self.height):
            row = self.rows[y]
            if ry <= y < ry + rh and x0 < x1:
                parts = (row[:3 * x0], row[3 * x1:])
            else:
                parts = (row,)
            for part in parts:
                if part != px * (len(part) // 3):
                    bad += sum(1 for i in range(0, len(part), 3)
                               if part[i:i + 3] != px)
        return bad


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(ftype, line, prior, bpp):
    n = len(line)
    if ftype == 0:
        return bytes(line)
    if ftype == 2:
        # Bytewise add without carries between bytes, on whole rows at once.
        a = int.from_bytes(line, "little")
        b = int.from_bytes(prior, "little")
        low = int.from_bytes(b"\x7f" * n, "little")
        high = int.from_bytes(b"\x80" * n, "little")
        s = ((a & low) + (b & low)) ^ ((a ^ b) & high)
        return s.to_bytes(n, "little")
    if ftype == 1:
        # Each channel is a running sum mod 256; accumulate runs in C.
        out = bytearray(n)
        for c in range(bpp):
            out[c::bpp] = bytes(map((255).__and__, accumulate(line[c::bpp])))
        return bytes(out)
    out = bytearray(line)
    if ftype == 3:
        for i in range(n):
            left = out[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + ((left + prior[i]) >> 1)) & 0xFF
    elif ftype == 4:
        for i in range(n):
            if i >= bpp:
                out[i] = (out[i] + _paeth(out[i - bpp], prior[i], prior[i - bpp])) & 0xFF
            else:
                out[i] = (out[i] + prior[i]) & 0xFF
    else:
        raise ValueError("bad PNG filter type %d" % ftype)
    return bytes(out)


def decode(data):
    if data[:8] != PNG_SIGNATURE:
        raise ValueError("not a PNG file")
    pos = 8
    header = None
    idat = []
    seen_end = False
    while pos + 8 <= len(data):
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = data[pos + 8 + length:pos + 12 + length]
        if len(body) != length or len(crc) != 4:
            raise ValueError("truncated PNG chunk %r" % ctype)
        if zlib.crc32(ctype + body) != struct.unpack(">I", crc)[0]:
            raise ValueError("bad CRC in PNG chunk %r" % ctype)
        pos += 12 + length
        if ctype == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif ctype == b"IDAT":
            idat.append(body)
        elif ctype == b"IEND":
            seen_end = True
            break
    if header is None or not idat or not seen_end:
        raise ValueError("PNG lacks IHDR, IDAT or IEND")
    width, height, depth, ctype, comp, filt, interlace = header
    if depth != 8 or ctype not in (2, 6) or comp != 0 or filt != 0 or interlace != 0:
        raise ValueError("unsupported PNG (depth %d, colour type %d, interlace %d)"
                         % (depth, ctype, interlace))
    if width == 0 or height == 0:
        raise ValueError("empty PNG")
    bpp = 3 if ctype == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(b"".join(idat))
    if len(raw) != height * (stride + 1):
        raise ValueError("PNG data is %d bytes, expected %d" % (len(raw), height * (stride + 1)))
    rows = []
    prior = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = _unfilter(raw[start], raw[start + 1:start + 1 + stride], prior, bpp)
        prior = line
        if bpp == 4:
            rgb = bytearray(3 * width)
            rgb[0::3] = line[0::4]
            rgb[1::3] = line[1::4]
            rgb[2::3] = line[2::4]
            rows.append(bytes(rgb))
        else:
            rows.append(line)
    return Image(width, height, rows, bpp == 4)


def read(path):
    with open(path, "rb") as f:
        return decode(f.read())
