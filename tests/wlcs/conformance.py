#!/usr/bin/env python3
"""wlcs (the Wayland Conformance Suite) against duet-compositor, beside Mir.

  conformance.py run --runner WLCS --module SO --out JSON [--expected FILE]
                     [--timeout S] [-- WLCS-ARGS...]
      Runs the whole suite on one module (a fresh XDG_RUNTIME_DIR, gtest's
      JSON report into JSON). With --expected (duet's list of expected
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


def run(args):
    opts = {"--timeout": "3000", "--expected": None}
    rest = []
    it = iter(args)
    for a in it:
        if a == "--":
            rest = list(it)
            break
        if a not in ("--runner", "--module", "--out", "--expected", "--timeout"):
            raise SystemExit("conformance.py run: unknown option %s" % a)
        opts[a] = next(it, None)
    for need in ("--runner", "--module", "--out"):
        if not opts.get(need):
            raise SystemExit("conformance.py run: %s is needed" % need)
    name = os.path.basename(opts["--module"])
    with tempfile.TemporaryDirectory(prefix="duet-wlcs-") as runtime:
        env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
        if os.path.exists(opts["--out"]):
            os.unlink(opts["--out"])
        cmd = [opts["--runner"], opts["--module"], "--gtest_output=json:" + opts["--out"]] + rest
        print("conformance: %s" % " ".join(cmd), flush=True)
        try:
            rc = subprocess.run(cmd, env=env, timeout=float(opts["--timeout"])).returncode
        except subprocess.TimeoutExpired:
            print("FAIL: wlcs on %s did not finish in %s s (a hang)" % (name, opts["--timeout"]))
            return 1
    if rc not in (0, 1) or not os.path.exists(opts["--out"]):
        print("FAIL: wlcs on %s ended with status %d and %s report (a crash)"
              % (name, rc, "a" if os.path.exists(opts["--out"]) else "no"))
        return 1
    with open(opts["--out"]) as f:
        got = outcomes(json.load(f))
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
