"""A live progress line on a terminal, plain lines otherwise."""
import sys
import time


class Progress:
    def __init__(self, total):
        self.total = max(total, 1)
        self.done_units = 0
        self.t0 = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.line = False
        self.where = ""  # what is left besides the time: the caller's words

    def _clear(self):
        if self.line:
            sys.stderr.write("\r\033[K")
            self.line = False

    def say(self, msg):
        self._clear()
        print(msg, file=sys.stderr, flush=True)

    def step(self, experiment, stack, i, n):
        self.done_units += 1
        el = time.monotonic() - self.t0
        left = el / self.done_units * max(self.total - self.done_units, 0)
        text = "[%3d%%] %-18s %-10s run %d/%d  elapsed %s  left ~%s%s" % (
            min(100, 100 * self.done_units // self.total), experiment, stack, i, n,
            fmt(el), fmt(left), "  (%s)" % self.where if self.where else "")
        if self.tty:
            self._clear()
            sys.stderr.write(text)
            sys.stderr.flush()
            self.line = True
        else:
            print(text, file=sys.stderr, flush=True)

    def done(self):
        self._clear()


def fmt(s):
    s = int(s)
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%ds" % s
