"""Running one app in a stack and watching it: its JSON-lines trace (the
format of render/'s render_trace), its life, the stack's life, a deadline,
and for tests a fault injected into the stack."""
import os
import signal
import time

from duet_bench import procs
from duet_launch import hang, proc
from duet_launch.traces import JsonLines


class AppFailed(Exception):
    """The app did not do what the experiment needs (the stack is fine)."""


class StackDied(Exception):
    """A process of the stack died while the app ran."""


def check_stack(stack, grace=0.0):
    """Raises StackDied when a process of the stack is gone; with grace
    (s), waits that long for one to go. An app sees its server go (the
    socket closes) before the server's exit shows: the kernel closes a
    dying process's files before it becomes a zombie, and under load the
    bench looked in between (bench-input-killed beside a CPU hog)."""
    end = time.monotonic() + grace
    while True:
        dead = stack.dead()
        if dead:
            raise StackDied("%s (%s) %s" % (dead.role, os.path.basename(dead.argv[0]),
                                             dead.status()))
        if time.monotonic() >= end:
            return
        time.sleep(0.02)


class AppRun:
    counter = 0

    def __init__(self, ctx, stack, argv, extra_env=None, t0=False, role="app"):
        AppRun.counter += 1
        n = AppRun.counter
        self.ctx = ctx
        self.stack = stack
        self.trace = os.path.join(stack.dir, "%s-%d.jsonl" % (role, n))
        self.log = os.path.join(stack.dir, "%s-%d.log" % (role, n))
        self.argv = list(argv)
        env = dict(stack.env, DUET_TRACE=self.trace)
        env.update(extra_env or {})
        self.t0_ns = None
        if t0:
            # CLOCK_MONOTONIC just before the fork (Popen forks at once).
            self.t0_ns = time.monotonic_ns()
            env["DUET_T0_NS"] = str(self.t0_ns)
        self.child = proc.Child(role, self.argv, env, log_path=self.log)
        self.started = time.monotonic()
        self._lines = JsonLines(self.trace)

    @property
    def pid(self):
        return self.child.pid

    @property
    def events(self):
        return self._lines.items

    def read_events(self):
        return self._lines.read()

    def named(self, name):
        return [e for e in self.read_events() if e.get("name") == name]

    def wait(self, until=None, timeout=30.0, sampler=None, experiment=None):
        """Until until(events) is true (the app keeps running) or the app
        exits. Raises StackDied or AppFailed (timeout)."""
        deadline = self.started + procs.patience(timeout)
        while True:
            self.read_events()
            if until and until(self.events):
                return True
            if not self.child.alive():
                self.read_events()
                done = until(self.events) if until else True
                if not done:
                    # An app usually fails because its server went away:
                    # blame the stack when it did. The server's exit may
                    # reach us a moment after the app's.
                    check_stack(self.stack, grace=0.5)
                return done
            check_stack(self.stack)
            self.ctx.fault_hook(self.stack, experiment, time.monotonic() - self.started)
            if sampler:
                sampler.poll()
            if time.monotonic() > deadline:
                raise AppFailed("%s gave no result within %.0f s (%s)"
                                % (os.path.basename(self.argv[0]), timeout,
                                   self.waiting()))
            time.sleep(0.005 if sampler is None else 0.01)

    def waiting(self):
        """Where the app and each stack process wait now, and the app's
        last words: what a timeout's reason needs to tell a hung server
        from a hung app (one CI run, 2026-11-28, only said the app gave
        nothing)."""
        parts, stacks = [], []
        named = [("app", self.pid)] + [("%s %s" % (role, os.path.basename(child.argv[0])),
                                        child.pid) for role, child in self.stack.procs.items()]
        for name, pid in named:
            wait = proc.where_waiting(pid)
            parts.append("%s: %s" % (name, wait))
            if hang.in_lock(wait):
                stacks += ["%s (pid %d), asleep in a lock:" % (name, pid)] + \
                    ["    " + line[:200] for line in hang.user_stack(pid, all_threads=True)]
        tail = (self.log_tail() or "").strip()[-400:]
        return "; ".join(parts) + ("; app's log ends: " + tail if tail else "") + \
            "".join("\n" + line for line in stacks)

    def stop(self):
        if self.child.alive():
            self.child.signal(signal.SIGTERM)
            try:
                self.child.popen.wait(3)
            except Exception:
                pass
        self.child.stop(grace=1.0)

    def stop_traced(self, pid):
        """stop() of an app started under strace -f: the app (pid) first,
        then strace, which ends with its tracee; a SIGTERM to strace
        itself did not end the pair within stop()'s 3 s."""
        if pid is not None:
            try:
                os.kill(pid, signal.SIGTERM)
                self.child.popen.wait(procs.patience(2.0))
            except Exception:  # gone already, or still there: stop() ends it
                pass
        self.stop()

    def exit_status(self):
        return self.child.status()

    def log_tail(self):
        return proc.read_tail(self.log)
