#!/usr/bin/env python3
"""wlcs (the Wayland Conformance Suite) against duet-compositor, beside Mir.

  conformance.py run --runner WLCS --module SO --out JSON [--expected FILE]
                     [--timeout S] [--shards N] [-- WLCS-ARGS...]
      Runs the whole suite on one module, split into N runner processes at
      once (gtest's sharding; default 12), each with a fresh XDG_RUNTIME_DIR,
      their gtest JSON reports merged into JSON. Most of a run's time is
      tests waiting out wlcs' 10 s timeout for an event that does not come
      (duet's and Mir's expected failures), not work, so the shards wait
      side by side. With --expected (duet's list of expected
      failures) it exits 1 when a test fails that the list does not name,
      when a test the list names passes or is missing (the list must stay
      true), or when the runner crashed or hung; without it (Mir's
      reference run) only a crash or hang fails.
  conformance.py doc DUET_JSON MIR_JSON EXPECTED > docs/conformance.md
      The side-by-side table per wlcs suite and the expected-failure list.

A test is skipped when wlcs recorded the `wlcs-skip-test` property (it binds
a protocol or version the module does not list), failed when it has a
failure and no such property, passed otherwise.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

PASS, FAIL, SKIP = "pass", "fail", "skip"


def outcomes(report):
    """{"Suite.test": (outcome, first failure line)} from gtest's JSON."""
    got = {}
    for suite in report.get("testsuites", []):
        for t in suite.get("testsuite", []):
            failures = t.get("failures", [])
            if "wlcs-skip-test" in t:
                kind = SKIP
            elif failures:
                kind = FAIL
            else:
                kind = PASS
            why = failures[0]["failure"].splitlines()[-1] if failures else ""
            got["%s.%s" % (suite["name"], t["name"])] = (kind, why)
    return got


def read_expected(path):
    """{"Suite.test": reason}: one test a line, `Suite.test  # reason`."""
    expected = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, reason = line.partition("#")
            if not sep or not reason.strip():
                raise SystemExit("%s:%d: %s has no reason (`Suite.test  # reason`)"
                                 % (path, n, name.strip()))
            expected[name.strip()] = reason.strip()
    return expected


def merge(reports):
    """One gtest JSON report of the shards' reports: a suite that several
    shards ran once, its tests in their order."""
    merged, by_name = {"testsuites": []}, {}
    for report in reports:
        for suite in report.get("testsuites", []):
            if suite["name"] not in by_name:
                by_name[suite["name"]] = dict(suite, testsuite=[])
                merged["testsuites"].append(by_name[suite["name"]])
            by_name[suite["name"]]["testsuite"].extend(suite.get("testsuite", []))
    return merged


def run_shards(cmd, out, shards, timeout, name):
    """Runs CMD as SHARDS gtest shards at once, each with a fresh
    XDG_RUNTIME_DIR and a report of its own; writes the merged report to
    OUT. Returns a failure line (a crash or a hang) or None."""
    with tempfile.TemporaryDirectory(prefix="duet-wlcs-") as tmp:
        procs, reports = [], []
        for i in range(shards):
            runtime = os.path.join(tmp, "runtime-%d" % i)
            os.mkdir(runtime, 0o700)
            reports.append(os.path.join(tmp, "shard-%d.json" % i))
            env = dict(os.environ, XDG_RUNTIME_DIR=runtime, GTEST_TOTAL_SHARDS=str(shards),
                       GTEST_SHARD_INDEX=str(i))
            env.pop("GTEST_SHARD_STATUS_FILE", None)
            procs.append(subprocess.Popen(cmd + ["--gtest_output=json:" + reports[-1]], env=env))
        deadline = time.monotonic() + timeout
        failure = None
        for i, p in enumerate(procs):
            try:
                rc = p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                failure = failure or "FAIL: wlcs on %s did not finish in %s s (a hang, shard %d of %d)" \
                    % (name, timeout, i + 1, shards)
                p.kill()
                p.wait()
                continue
            if rc not in (0, 1) or not os.path.exists(reports[i]):
                failure = failure or "FAIL: wlcs on %s ended with status %d and %s report " \
                    "(a crash, shard %d of %d)" % (name, rc, "a" if os.path.exists(reports[i])
                                                  else "no", i + 1, shards)
        if failure:
            return failure
        loaded = []
        for path in reports:
            with open(path) as f:
                loaded.append(json.load(f))
    with open(out, "w") as f:
        json.dump(merge(loaded), f, indent=1)
    return None


def listed_tests(cmd):
    """The tests the runner lists (--gtest_list_tests), as "Suite.test"."""
    with tempfile.TemporaryDirectory(prefix="duet-wlcs-") as runtime:
        out = subprocess.run(cmd + ["--gtest_list_tests"], env=dict(os.environ, XDG_RUNTIME_DIR=runtime),
                             stdout=subprocess.PIPE, universal_newlines=True, timeout=300).stdout
    tests, suite = [], ""
    for line in out.splitlines():
        line = line.split("#")[0].rstrip()
        if line.startswith("  ") and suite:
            tests.append(suite + line.strip())
        elif line.endswith("."):
            suite = line
    return tests


def run(args):
    opts = {"--timeout": "3000", "--expected": None, "--shards": "12"}
    rest = []
    it = iter(args)
    for a in it:
        if a == "--":
            rest = list(it)
            break
        if a not in ("--runner", "--module", "--out", "--expected", "--timeout", "--shards"):
            raise SystemExit("conformance.py run: unknown option %s" % a)
        opts[a] = next(it, None)
    for need in ("--runner", "--module", "--out"):
        if not opts.get(need):
            raise SystemExit("conformance.py run: %s is needed" % need)
    name = os.path.basename(opts["--module"])
    if os.path.exists(opts["--out"]):
        os.unlink(opts["--out"])
    cmd = [opts["--runner"], opts["--module"]] + rest
    shards = int(opts["--shards"])
    print("conformance: %s, %d shards at once" % (" ".join(cmd), shards), flush=True)
    failure = run_shards(cmd, opts["--out"], shards, float(opts["--timeout"]), name)
    if failure:
        print(failure)
        return 1
    with open(opts["--out"]) as f:
        got = outcomes(json.load(f))
    listed = listed_tests(cmd)
    if len(got) != len(listed):
        print("FAIL: the shards ran %d tests, the runner lists %d: missing %s"
              % (len(got), len(listed), ", ".join(sorted(set(listed) - set(got))[:10])))
        return 1
    counts = {k: sum(1 for v in got.values() if v[0] == k) for k in (PASS, FAIL, SKIP)}
    print("conformance: %s: %d tests, %d passed, %d failed, %d skipped"
          % (name, len(got), counts[PASS], counts[FAIL], counts[SKIP]))
    if not opts["--expected"]:
        return 0
    expected = read_expected(opts["--expected"])
    bad = []
    for test, (kind, why) in sorted(got.items()):
        if kind == FAIL and test not in expected:
            bad.append("FAIL: %s failed, and is not on the expected list: %s" % (test, why))
        elif kind != FAIL and test in expected:
            bad.append("FAIL: %s %s, but the expected list says it fails (%s): take it off"
                       % (test, "passed" if kind == PASS else "was skipped", expected[test]))
    for test in sorted(set(expected) - set(got)):
        bad.append("FAIL: %s is on the expected list but wlcs has no such test" % test)
    for line in bad:
        print(line)
    print("conformance: %d expected failures, %d problems" % (len(expected), len(bad)))
    return 1 if bad else 0


def suites(got):
    """{suite: {pass: n, fail: n, skip: n}}"""
    table = {}
    for test, (kind, _) in got.items():
        row = table.setdefault(test.split(".")[0].split("/")[-1], {PASS: 0, FAIL: 0, SKIP: 0})
        row[kind] += 1
    return table


def doc(duet_json, mir_json, expected_path):
    with open(duet_json) as f:
        duet = outcomes(json.load(f))
    with open(mir_json) as f:
        mir = outcomes(json.load(f))
    expected = read_expected(expected_path)
    ds, ms = suites(duet), suites(mir)
    empty = {PASS: 0, FAIL: 0, SKIP: 0}
    out = ["# Conformance: wlcs on duet-compositor and on Mir", "",
           "Generated by `tests/wlcs/conformance.py doc` from one run of each module"
           " (`./scripts/test` leaves duet's in `build-asan/meson-logs/wlcs-duet.json`, where"
           " it ran with the sanitizers and the pixman renderer, and Mir's in"
           " `build/meson-logs/wlcs-mir.json`; `meson test -C build wlcs-duet` by hand runs"
           " duet's with the GL renderer). Do not edit by hand.", "",
           "A test is skipped when it binds a protocol or version the module does not list;"
           " \"offered\" marks the suites where duet ran at least one test.", "",
           "| suite | tests | duet pass | duet fail | duet skip | Mir pass | Mir fail | Mir skip"
           " | offered |", "|---|---|---|---|---|---|---|---|---|"]
    total = {"duet": dict(empty), "mir": dict(empty)}
    offered = {"duet": dict(empty), "mir": dict(empty)}
    for name in sorted(set(ds) | set(ms)):
        d, m = ds.get(name, empty), ms.get(name, empty)
        on = d[PASS] + d[FAIL] > 0
        for k in empty:
            total["duet"][k] += d[k]
            total["mir"][k] += m[k]
            if on:
                offered["duet"][k] += d[k]
                offered["mir"][k] += m[k]
        out.append("| %s | %d | %d | %d | %d | %d | %d | %d | %s |"
                   % (name, sum(d.values()), d[PASS], d[FAIL], d[SKIP], m[PASS], m[FAIL], m[SKIP],
                      "yes" if on else ""))
    for label, t in (("all suites", total), ("offered suites", offered)):
        out.append("| **%s** | %d | %d | %d | %d | %d | %d | %d | |"
                   % (label, sum(t["duet"].values()), t["duet"][PASS], t["duet"][FAIL],
                      t["duet"][SKIP], t["mir"][PASS], t["mir"][FAIL], t["mir"][SKIP]))
    ran = [t for t, (kind, _) in duet.items() if kind != SKIP]
    out += ["", "On the %d tests duet ran (its protocols and versions), duet passes %d and Mir %d."
            % (len(ran), sum(1 for t in ran if duet[t][0] == PASS),
               sum(1 for t in ran if mir.get(t, ("",))[0] == PASS))]
    mir_passes = sorted(t for t in expected if mir.get(t, ("",))[0] == PASS)
    out += ["", "## duet's expected failures (tests/wlcs/expected-failures.txt)", "",
            "%d tests; %d of them pass on Mir." % (len(expected), len(mir_passes)), "",
            "| test | Mir | reason |", "|---|---|---|"]
    for t in sorted(expected):
        out.append("| %s | %s | %s |" % (t, mir.get(t, ("absent",))[0], expected[t]))
    print("\n".join(out))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "run":
        return run(argv[2:])
    if len(argv) == 5 and argv[1] == "doc":
        return doc(*argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
