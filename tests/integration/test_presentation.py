"""What duet-compositor's headless output says in wp_presentation events
(issue 10: the contents of presentation events), read by a client that asks
feedback for every frame (tests/clients/present-client.c):

  grid    --refresh 60: every frame presented (none discarded: the client
          draws one frame per frame callback), clock CLOCK_MONOTONIC,
          refresh the grid's period, flags 0 (a timer claims no vsync and no
          hardware clock or completion), seq strictly increasing, and each
          time on the grid: t - t0 = (seq - seq0) x period, within 1 ms
  free    --refresh 0 (repaint on damage): refresh 0, as the protocol asks
          of an output with no fixed rate, times increasing and not in the
          future
"""

import math
import time

import duet
from duet import check, log

CLOCK_MONOTONIC = 1
FRAMES = 30


def presented_frames(s):
    client = s.client([duet.program("DUET_PRESENT_CLIENT"), str(FRAMES)], name="present-client")
    client.wait_line(r"^done ", timeout=60)
    with client._cond:
        lines = list(client.lines)
    client.stop()
    clock = [int(line.split()[1]) for line in lines if line.startswith("clock ")]
    check(clock == [CLOCK_MONOTONIC], "clock ids %r, want [CLOCK_MONOTONIC]" % clock)
    discarded = [line for line in lines if line.startswith("discarded")]
    check(not discarded, "frames discarded: %r" % discarded)
    frames = []
    for line in lines:
        if line.startswith("presented "):
            fields = dict(f.split("=") for f in line.split()[2:])
            frames.append((int(fields["seq"]), int(fields["flags"], 16),
                           int(fields["refresh"]), int(fields["t"])))
    check(len(frames) == FRAMES, "%d frames presented, want %d" % (len(frames), FRAMES))
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    for i, (seq, flags, _, t) in enumerate(frames):
        check(flags == 0, "frame %d flags 0x%x: a timer is no vsync, hw clock or completion"
              % (i, flags))
        check(t <= now, "frame %d presented at %d, after now %d" % (i, t, now))
        if i:
            check(t > frames[i - 1][3], "time went from %d to %d at frame %d"
                  % (frames[i - 1][3], t, i))
    return frames


def scenario_grid():
    hz = 60
    period = 1_000_000_000 // hz
    with duet.Session("presentation-grid", refresh=hz) as s:
        frames = presented_frames(s)
    window = min(period // 2, 7_000_000)
    seq0, _, _, t0 = frames[0]
    starts = 0
    for i, (seq, _, refresh, t) in enumerate(frames):
        check(abs(refresh - period) <= 1, "frame %d refresh %d ns, the grid's period is %d"
              % (i, refresh, period))
        if not i:
            continue
        pseq, _, _, pt = frames[i - 1]
        check(seq > pseq, "seq went from %d to %d at frame %d" % (pseq, seq, i))
        off = (t - pt) - (seq - pseq) * refresh
        if abs(off) < 1_000_000:
            continue
        # Not on the last frame's grid: only a client that came back after
        # the tick following its frame (an idle clock) may start a new one,
        # a repaint window after its request, seq going on by the periods
        # that passed (render/README.md).
        starts += 1
        elapsed = (t - pt - window) / period
        check(t - window >= pt + period - 1_000_000
              and seq - pseq == max(1, math.ceil(elapsed - 1e-4)),
              "frame %d at seq %d is %d ns off the grid of frame %d and no start after idle"
              % (i, seq, off, i - 1))
    log("%d frames, seq %d..%d, refresh %d ns, %d starts after idle"
        % (len(frames), seq0, frames[-1][0], period, starts))


def scenario_free():
    with duet.Session("presentation-free", refresh=0) as s:
        frames = presented_frames(s)
    refresh = {f[2] for f in frames}
    check(refresh == {0}, "refresh %r with --refresh 0, want 0 (no fixed rate)" % refresh)
    log("%d frames presented, refresh 0" % len(frames))


SCENARIOS = {"grid": scenario_grid, "free": scenario_free}

if __name__ == "__main__":
    duet.main_scenario(SCENARIOS)
