"""The verdict of a bench run for machines (a board farm, CI, scripts):
pass, fail or skip per experiment and stack, and for the run as a whole,
kept in results.json as "outcome" and printed as one JSON line by
`duet bench --no-report`. The words are LAVA's test case results (pass,
fail, skip, unknown), so a farm can hand them on as they are."""

# A record's status (cli.py) -> its result.
RESULT = {"ok": "pass", "failed": "fail", "skipped": "skip"}


def result_of(status):
    # pending, running and interrupted: the run stopped before it could tell
    return RESULT.get(status, "unknown")


def combine(results):
    """One result for several: any fail fails, then any unknown, then any
    pass passes; all skipped (or none at all) is skip."""
    results = list(results)
    for r in ("fail", "unknown", "pass"):
        if r in results:
            return r
    return "skip"


def failures(results):
    """["experiment x stack", "ipc kind x stack", ...] of every record
    that failed."""
    out = ["%s x %s" % (e, st) for e, per in (results.get("experiments") or {}).items()
           for st, r in per.items() if r.get("status") == "failed"]
    out += ["ipc %s x %s" % (e, st) for st, per in (results.get("ipc") or {}).items()
            for e, r in per.items() if isinstance(r, dict) and r.get("status") == "failed"]
    return out


def records(results):
    """Every experiment x stack and ipc kind x stack record."""
    for per in (results.get("experiments") or {}).values():
        yield from (r for r in per.values() if isinstance(r, dict))
    for per in (results.get("ipc") or {}).values():
        yield from (r for r in per.values() if isinstance(r, dict))


def settle_interrupted(results):
    """An interrupted run's records still "running" become "interrupted".
    The signal can land anywhere, also between a job's "running" and the
    code that would settle it (bench-interrupted beside a CPU hog,
    2026-11-28), so the whole run is settled once, at the interrupt."""
    for r in records(results):
        if r.get("status") == "running":
            r["status"] = "interrupted"


def measured(results):
    """How many experiment x stack records finished with samples: ok ones,
    and failed ones that kept the samples of the rounds that worked (a
    failure in one round stays the record's status)."""
    return sum(1 for per in (results.get("experiments") or {}).values()
               for r in per.values()
               if r.get("status") == "ok" or (r.get("status") == "failed" and r.get("samples")))


def outcome(results, exit_status, problems=()):
    """results.json's "outcome": exit_status is the bench's own; problems
    are failures that belong to no record (apps missing, nothing ran)."""
    exps = {}
    for e, per in (results.get("experiments") or {}).items():
        stacks = {st: result_of(r.get("status")) for st, r in per.items()}
        exps[e] = {"result": combine(stacks.values()), "stacks": stacks}
    ipc = {}
    for st, per in (results.get("ipc") or {}).items():
        # A counting record without a status ran before statuses were kept.
        ipc[st] = {k: result_of(r.get("status", "ok")) for k, r in per.items()
                   if isinstance(r, dict)}
    if exit_status == 0:
        overall = "pass"
    elif exit_status == 130:
        overall = "unknown"  # interrupted: what finished is kept, the rest never ran
    else:
        overall = "fail"
    return {"result": overall, "exit_status": exit_status,
            "failed": failures(results) + list(problems), "measured": measured(results),
            "experiments": exps, "ipc": ipc}


def brief(o, results_path, summary_path):
    """The one line `duet bench --no-report` prints on stdout."""
    return {"result": o["result"], "exit_status": o["exit_status"], "failed": o["failed"],
            "experiments": {e: v["result"] for e, v in o["experiments"].items()},
            "results": results_path, "summary_csv": summary_path}
