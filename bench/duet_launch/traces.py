"""The JSON-lines files duet's servers (DUET_TRACE) and weston's timeline
scope write, read as they grow."""
import json


class JsonLines:
    """A file another process appends JSON lines to, read incrementally.
    Lines that are not JSON objects (weston's plain log lines share the
    file with its timeline) are skipped."""

    def __init__(self, path):
        self.path = path
        self.items = []
        self._offset = 0
        self._partial = b""

    def read(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return self.items
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if not line.startswith(b"{"):
                continue
            try:
                self.items.append(json.loads(line))
            except ValueError:
                pass
        return self.items
