"""The scheduler's switches during a traced operation: `perf record` of
sched:sched_switch on every CPU, stamped with CLOCK_MONOTONIC (-k), the
apps' and servers' clock, written as perf script's text into the raw
records (trace_raw.SCHED). Where perf is missing or the kernel will not
let it read the tracepoint (perf_event_paranoid, no tracefs), the
operation is traced without it and the record says why: switches are
context, not the trace's subject, and never fail it."""
import os
import shutil
import select
import signal
import subprocess
import time

from duet_bench import procs
from duet_bench.trace_raw import SCHED, SWITCH

DATA = "sched.data"


class Sched:
    def __init__(self, work):
        self.work = work
        self.child = None
        self.enabled_ns = None  # CLOCK_MONOTONIC once perf said its events were on
        self.record = {"status": "unavailable"}

    def start(self):
        perf = shutil.which("perf")
        if not perf:
            self.record["reason"] = ("perf is not installed (Debian package linux-perf), "
                                     "which reads the kernel's sched_switch tracepoint")
            return self
        # Started disabled (-D -1) and enabled through its control fifo,
        # whose "ack" says the events are on: perf writes its file long
        # before (it took 0.2 s here and missed a whole launch).
        ctl, ack = os.path.join(self.work, "perf-ctl"), os.path.join(self.work, "perf-ack")
        os.mkfifo(ctl)
        os.mkfifo(ack)
        argv = [perf, "record", "-q", "-D", "-1", "--control=fifo:%s,%s" % (ctl, ack),
                "--synth=no", "-e", "sched:sched_switch", "-k", "CLOCK_MONOTONIC", "-a",
                "-o", os.path.join(self.work, DATA)]
        self.record["command"] = " ".join(argv)
        self.err = os.path.join(self.work, "perf.log")
        ack_fd = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
        ctl_fd = None
        try:
            with open(self.err, "w") as err:
                self.child = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                              stdout=subprocess.DEVNULL, stderr=err)
            deadline = time.monotonic() + procs.patience(5.0)
            while ctl_fd is None and time.monotonic() < deadline and self.child.poll() is None:
                try:
                    ctl_fd = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
                except OSError:  # ENXIO: perf has not opened it yet
                    time.sleep(0.005)
            if ctl_fd is not None:
                os.write(ctl_fd, b"enable\n")
                while time.monotonic() < deadline and self.child.poll() is None:
                    if select.select([ack_fd], [], [], 0.05)[0] and \
                            os.read(ack_fd, 16).startswith(b"ack"):
                        self.enabled_ns = time.monotonic_ns()
                        return self
            self._give_up("perf record %s" % ("exited" if self.child.poll() is not None
                                               else "did not start within 5 s"))
            return self
        finally:
            os.close(ack_fd)
            if ctl_fd is not None:
                os.close(ctl_fd)
            os.unlink(ctl)  # perf keeps its ends; the records keep no fifo
            os.unlink(ack)

    def _give_up(self, what):
        self.kill()
        self.child = None
        with open(self.err, errors="replace") as f:
            tail = " ".join(f.read().split())[-300:]
        self.record["reason"] = "%s: %s (the kernel's sched_switch tracepoint is not " \
                                "readable here)" % (what, tail or "no message")

    def stop(self, raw, tids):
        """Stops perf and writes the switches of the threads tids into raw
        (a switch from or to one of them: the other CPUs' work is left
        out); returns the record (meta.json's "sched")."""
        if self.child is None:
            return self.record
        self.child.send_signal(signal.SIGINT)
        try:
            self.child.wait(procs.patience(10.0))
        except subprocess.TimeoutExpired:
            self._give_up("perf record did not stop")
            return self.record
        data = os.path.join(self.work, DATA)
        with open(self.err, "a") as err:
            r = subprocess.run([shutil.which("perf"), "script", "-i", data, "--ns", "-F",
                                "tid,cpu,time,event,trace"], stdout=subprocess.PIPE, stderr=err,
                               stdin=subprocess.DEVNULL, text=True, errors="replace")
        with open(os.path.join(raw, SCHED), "w") as out:
            for line in r.stdout.splitlines(True):
                m = SWITCH.match(line)
                if m and (int(m.group(5)) in tids or int(m.group(7)) in tids):
                    out.write(line)
        os.unlink(data)
        if r.returncode != 0:
            self.child = None
            self._give_up("perf script failed")
            os.unlink(os.path.join(raw, SCHED))
            return self.record
        self.record = {"status": "recorded", "file": SCHED, "command": self.record["command"],
                       "clock": "CLOCK_MONOTONIC", "enabled_ns": self.enabled_ns}
        return self.record

    def kill(self):
        if self.child is not None and self.child.poll() is None:
            self.child.kill()
            self.child.wait()
