"""Ratios between stacks with bootstrap intervals, and the verdicts drawn
from them. Pure functions over lists of numbers (stdlib only), so the unit
tests can feed them data whose answer is known.

The unit of resampling is the round: every round runs every stack once, in
an order of its own, so the samples of one round share the machine's load
of that moment. Resampling whole rounds, the same rounds for both stacks
of a pair, keeps that pairing and lets the round-to-round drift show in
the interval instead of being mistaken for a difference between stacks."""
import math
import random
import statistics

BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95
# Below this many paired rounds a bootstrap over rounds has too few
# distinct resamples (2 rounds: 3) to give an interval worth the name.
MIN_ROUNDS = 3
# Counts (IPC) come from one counting run; there is no sampling interval.
# A ratio within this factor of 1 is read as no difference.
COUNT_TOLERANCE = 1.10

# Pairs compared, as (numerator, denominator): the study's X/W for both
# kinds of stack, then each duet server against the peer of its kind.
PAIRS = [("x11", "wayland"), ("openbox", "weston"), ("x11", "openbox"), ("wayland", "weston"),
         ("e-x11", "e-wayland"), ("mutter-x11", "mutter"), ("i3", "sway")]
# The same project on both architectures (X/W, as the study's ratios).
STUDY_PAIRS = {("x11", "wayland"), ("openbox", "weston"), ("e-x11", "e-wayland"),
               ("mutter-x11", "mutter"), ("i3", "sway")}
PAIR_LABEL = {p: "%s/%s" % p for p in PAIRS}
# The same software on both architectures (the report's pairs section):
# duet's two servers, Enlightenment, GNOME's mutter, sway and its X11 twin i3.
SAME_SOFTWARE = [("x11", "wayland"), ("e-x11", "e-wayland"), ("mutter-x11", "mutter"),
                 ("i3", "sway")]


def median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def cv(vals):
    """Coefficient of variation (sample stdev / mean), None below 2 values
    or for a zero mean."""
    vals = [v for v in vals if v is not None]
    if len(vals) < 2:
        return None
    m = statistics.mean(vals)
    if m == 0:
        return None
    return statistics.stdev(vals) / abs(m)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def by_round(pairs):
    """{round: [value, ...]} from [(sample, value)], values that are None
    left out; a sample without a round (an old result) is in round 1."""
    out = {}
    for s, v in pairs:
        if v is not None:
            out.setdefault(s.get("round", 1), []).append(v)
    return out


def percentile(sorted_vals, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_vals:
        return None
    pos = (len(sorted_vals) - 1) * q
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def paired_ratio(a_rounds, b_rounds, seed, resamples=BOOTSTRAP_RESAMPLES,
                 confidence=CONFIDENCE):
    """Ratio of medians of A over B with a percentile bootstrap interval.

    a_rounds, b_rounds: {round: [values]}. Only rounds where both have
    values are paired; the point ratio uses every value of those rounds.
    Returns {"ratio", "ci_low", "ci_high", "rounds", "n_a", "n_b", "why"}
    where ci_* are None and why says why when there is no interval."""
    common = sorted(set(a_rounds) & set(b_rounds))
    a_all = [v for r in common for v in a_rounds[r]]
    b_all = [v for r in common for v in b_rounds[r]]
    out = {"ratio": ratio(median(a_all), median(b_all)), "ci_low": None, "ci_high": None,
           "rounds": len(common), "n_a": len(a_all), "n_b": len(b_all), "why": None}
    if out["ratio"] is None:
        out["why"] = "no paired samples" if not common else "a median of zero"
        return out
    if len(common) < MIN_ROUNDS:
        out["why"] = "%d round%s" % (len(common), "" if len(common) == 1 else "s")
        return out
    rng = random.Random(seed)
    boots = []
    for _ in range(resamples):
        pick = [common[rng.randrange(len(common))] for _ in common]
        r = ratio(median([v for k in pick for v in a_rounds[k]]),
                  median([v for k in pick for v in b_rounds[k]]))
        if r is not None:
            boots.append(r)
    if len(boots) < resamples // 2:
        out["why"] = "resamples with a zero median"
        return out
    boots.sort()
    tail = (1 - confidence) / 2
    out["ci_low"] = percentile(boots, tail)
    out["ci_high"] = percentile(boots, 1 - tail)
    return out


def count_ratio(a, b):
    """Ratio of two counts from one counting run each (no interval). A
    per-unit count below zero (start-up subtracted, noise larger than the
    effect) has no meaningful ratio."""
    bad = a is None or b is None or a < 0 or b < 0
    return {"ratio": None if bad else ratio(a, b), "ci_low": None, "ci_high": None,
            "rounds": 1, "n_a": 0 if a is None else 1, "n_b": 0 if b is None else 1,
            "why": "no count" if a is None or b is None else
            "a count below zero" if bad else "one count each"}


def side(r, lo=None, hi=None, tolerance=None):
    """+1 when A is clearly above B, -1 when clearly below, 0 when no
    difference, None when it cannot be told."""
    if lo is not None and hi is not None:
        if lo > 1:
            return 1
        if hi < 1:
            return -1
        return 0
    if r is None or tolerance is None:
        return None
    if r > tolerance:
        return 1
    if r < 1 / tolerance:
        return -1
    return 0


def verdict(res, study_ratio=None, count=False):
    """"reproduced" / "not reproduced" / "no difference" for a study pair
    (study_ratio given), "A higher" / "A lower" / "no difference" else;
    "no interval: ..." when neither an interval nor a count decides."""
    s = side(res["ratio"], res["ci_low"], res["ci_high"],
             COUNT_TOLERANCE if count else None)
    study_side = None
    if study_ratio is not None:
        study_side = 1 if study_ratio > 1 else -1 if study_ratio < 1 else 0
    if s is None:
        text = "no interval (%s)" % (res.get("why") or "unknown")
        if study_side is not None and res["ratio"] is not None and res["ratio"] != 1:
            # Said, so the reader is not left guessing, but not a verdict.
            text += "; the point is on the %s side of 1" % (
                "study's" if (res["ratio"] > 1) == (study_side > 0) else "other")
        return text
    if s == 0:
        return "no difference"
    if study_side is None:
        return "higher" if s > 0 else "lower"
    return "reproduced" if s == study_side else "not reproduced"


def stack_order(stacks, rounds, seed):
    """The order of the stacks in each round, drawn from seed, so a run
    can be repeated in the same order."""
    rng = random.Random(seed)
    return [rng.sample(list(stacks), len(stacks)) for _ in range(rounds)]


def new_seed():
    return random.SystemRandom().randrange(1 << 32)
