"""Which receive read which send: the messages of a traced operation.

A Unix stream socket delivers bytes in the order they were sent, whatever
the calls that sent and read them, so the sends on one end and the
receives on the other line up by byte offset. Each send becomes one
message to the receive that read its last byte (the message is whole
there); a receive that read several sends ends several messages, and a
send read in pieces by several receives is one message, to the last.

The offsets count from strace's attach: bytes sent before it and still
queued at the reader then (trace_record reads each socket's receive queue
at attach, meta "queued") are the reader's first bytes, sent by no traced
call. Datagram and seqpacket sockets are left out: a read there takes one
packet, not a byte range, and the stacks use none for their protocols.
"""


def streams(calls):
    """{stream: (sends, receives)} of the calls that moved bytes on a
    stream socket, each list in time order (trace_raw.Call.stream)."""
    out = {}
    for c in calls:
        if c.ipc and c.bytes and c.stream is not None:
            out.setdefault(c.stream, ([], []))[0 if c.sends else 1].append(c)
    for sends, recvs in out.values():
        sends.sort(key=lambda c: (c.ts, c.tid))
        recvs.sort(key=lambda c: (c.ts, c.tid))
    return out


def match(calls, queued=None):
    """[(send, receive, first byte, bytes)] for every send whose last byte
    a traced receive read; queued: {reader's inode: bytes in its receive
    queue at attach}."""
    queued = queued or {}
    out = []
    for stream, (sends, recvs) in streams(calls).items():
        reader = recvs[0].inode if recvs else None
        r, r_end = 0, (recvs[0].bytes - queued.get(reader, 0)) if recvs else 0
        at = 0  # the send's offset in the stream
        for s in sends:
            last = at + s.bytes - 1
            while r < len(recvs) and r_end <= last:
                r += 1
                if r < len(recvs):
                    r_end += recvs[r].bytes
            if r >= len(recvs):
                break  # read after the operation, or never
            out.append((s, recvs[r], at, s.bytes))
            at += s.bytes
    return out
