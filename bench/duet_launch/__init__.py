"""duet_launch: the one way duet starts a display stack (issue 29).

`duet run`, `duet bench`, the integration tests (tests/integration/duet.py)
and the client matrix all start stacks here, and nothing else starts an X
server, a Wayland server or a window manager:

  stack_kinds    the registry: every kind of stack, its processes (by role,
                 in start order), when each is ready, what it can do
  stack          Config (how to start one stack, as data) and Stack
                 (start / stop / env / pids / logs / traces)
  proc           Child: the one process-group child type
  displays       the one display-number / Wayland-socket allocator
  xorg           Xorg's per-run configuration on a KMS card
  enlightenment  Enlightenment's per-run profile, HOME and session bus
  reaper         the watchdog that stops a harness's marked processes
  paths          where duet's programs are; scratch directories in memory
  traces         the JSON-lines files the servers write

Python 3 standard library only. It sits beside the bench's duet_bench in
bench/, so one directory on sys.path finds both; it imports nothing of
duet_bench.
"""
