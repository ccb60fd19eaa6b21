#!/usr/bin/env python3
"""Tests of lava/ (the board farm).

usage: test_lava.py schema|local
  schema: lava/job-arm64.yaml validates against LAVA's job schema (strict)
          as a template and with its @PLACEHOLDERS@ filled in, and
          lava/duet-bench.yaml against LAVA's test definition schema
          (lava_common, Debian's lava-common); without lava_common, the
          fields LAVA requires are checked by hand (and said so). The job's
          test action names the definition's path, name and params.
  local:  the definition's steps (lava/run-bench) on this machine: a tarball
          of this build (scripts/tarball --build-dir), a real `duet bench
          --quick` on duet-compositor's launch experiment; every line it
          would hand lava-test-case is one LAVA accepts (name, result,
          decimal measurement, units), unique, and together they carry
          every figure of summary.csv and the pass of each experiment; the
          results.json embedded in the log comes back intact through
          `duet-lava collect` (plain and as lavacli's raw YAML) and goes into
          `duet report A B` beside the run's own directory; a block whose
          bytes were changed, or that lost a line, is refused by name.
Environment: DUET_SOURCE_ROOT, DUET_BUILD_DIR.
"""
import base64
import csv
import decimal
import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ["DUET_SOURCE_ROOT"]
sys.path.insert(0, os.path.join(SRC, "bench", "tests"))
from checks import check, fail, on_fail  # noqa: E402

LAVA = os.path.join(SRC, "lava")
NAME_OK = re.compile(r"^[-_a-zA-Z0-9.]+$")
RESULTS = ("pass", "fail", "skip", "unknown")


def load_yaml(path):
    import yaml  # python3-yaml: lava-common depends on it
    with open(path) as f:
        return yaml.safe_load(f)


def filled(text):
    return re.sub(r"@([A-Z_]+)@", lambda m: "value-of-" + m.group(1).lower(), text)


def test_schema():
    import yaml
    job_path = os.path.join(LAVA, "job-arm64.yaml")
    def_path = os.path.join(LAVA, "duet-bench.yaml")
    with open(job_path) as f:
        template = f.read()
    job, testdef = yaml.safe_load(template), load_yaml(def_path)
    check(re.findall(r"@[A-Z_]+@", template), "the job is a template with @PLACEHOLDERS@")
    job_filled = yaml.safe_load(filled(template))
    check(not re.findall(r"@[A-Z_]+@", filled(template)), "filling leaves no placeholder")
    try:
        import voluptuous
        from lava_common.schemas import validate as validate_job
        from lava_common.schemas.test.testdef import validate as validate_testdef
    except ImportError as e:
        print("info: no lava_common (%s): checking the required fields by hand" % e)
        validate_job = validate_testdef = None
    if validate_job:
        for what, data in (("template", job), ("filled-in job", job_filled)):
            try:
                validate_job(data, strict=True)
            except voluptuous.Invalid as e:
                fail("the %s is invalid for LAVA: %s at %s" % (what, e.msg, e.path))
            check(True, "the %s validates against LAVA's job schema (strict)" % what)
        try:
            validate_testdef(testdef)
        except voluptuous.Invalid as e:
            fail("duet-bench.yaml is invalid for LAVA: %s at %s" % (e.msg, e.path))
        check(True, "duet-bench.yaml validates against LAVA's test definition schema")
        broken = dict(job_filled)
        del broken["timeouts"]
        try:
            validate_job(broken, strict=True)
            fail("a job without timeouts validates: the validator checks nothing")
        except voluptuous.Invalid:
            check(True, "the validator refuses a job without its timeouts")
    # The fields LAVA requires, by hand as well (what the schema says too).
    for key in ("job_name", "timeouts", "visibility", "actions", "device_type"):
        check(key in job, "the job has %s" % key)
    check("job" in job["timeouts"], "the job has a job timeout")
    kinds = [next(iter(a)) for a in job["actions"]]
    check(kinds == ["deploy", "boot", "test"], "deploy, boot, test: %s" % kinds)
    check(testdef["metadata"]["format"] == "Lava-Test Test Definition 1.0"
          and NAME_OK.match(testdef["metadata"]["name"]),
          "the definition's format and name")
    test = job["actions"][2]["test"]["definitions"][0]
    check(test["path"] == "lava/duet-bench.yaml" and test["name"] == testdef["metadata"]["name"]
          and test["from"] == "git", "the job's test action names the definition")
    check(set(test["parameters"]) <= set(testdef["params"]),
          "the job sets only params the definition declares: %s" % sorted(test["parameters"]))
    check_ratio_cases()
    for step in testdef["run"]["steps"]:
        prog = shlex.split(step)[0]
        path = os.path.join(SRC, prog)
        check(os.access(path, os.X_OK), "step %r runs %s, an executable of the repository"
              % (step, prog))


def check_ratio_cases():
    """Ratio rows (two stacks or more) on a hand-made summary.csv: the
    ratio and its interval as cases; a ratio without a value is skip."""
    d = tempfile.mkdtemp(prefix="duet-lava-ratio-")
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump({"machine": {"cores": 4, "emulation": "qemu (test)"},
                   "outcome": {"result": "fail", "experiments": {"launch": {
                       "result": "fail", "stacks": {"x11": "fail", "wayland": "pass"}}}}}, f)
    with open(os.path.join(d, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "row", "stack", "median", "ratio", "ci_low", "ci_high", "unit"])
        w.writerow(["launch_ms", "ratio", "x11/wayland", "", "1.25", "1.1", "1.4", "ratio"])
        w.writerow(["cpu_peak", "ratio", "openbox/weston", "", "", "", "", "ratio"])
        w.writerow(["cpu_peak", "stack", "x11", "35.5", "", "", "", "% of one core"])
    r = subprocess.run([sys.executable, os.path.join(LAVA, "duet-lava"), "cases", d,
                        "--print"], capture_output=True, text=True, timeout=60)
    got = {c[0]: c for c in parse_cases(r.stdout)}
    check(got.get("launch_ms.ratio.x11-wayland") == ("launch_ms.ratio.x11-wayland", "pass",
                                                    "1.25", "ratio")
          and got["launch_ms.ratio.x11-wayland.ci_low"][2] == "1.1"
          and got["launch_ms.ratio.x11-wayland.ci_high"][2] == "1.4",
          "a ratio and its interval become cases: %s" % sorted(got))
    check(got["cpu_peak.ratio.openbox-weston"][1:] == ("skip", None, None),
          "a ratio without a value is skip")
    check(got["cpu_peak.x11"][2:] == ("35.5", "pct_of_one_core"), "units without spaces: %s"
          % (got["cpu_peak.x11"],))
    check(got["duet-bench"][1] == "fail" and got["experiment.launch.x11"][1] == "fail"
          and got["machine.emulated"][2] == "1", "the failures and the emulation carried")
    shutil.rmtree(d)


def parse_cases(output):
    """[(name, result, measurement, units)] of the lava-test-case lines,
    each checked as LAVA's dispatcher reads it: the signal's fields are
    split at whitespace and each KEY=VALUE at its one '='."""
    cases = []
    for line in output.splitlines():
        if not line.startswith("lava-test-case "):
            continue
        argv = shlex.split(line)[1:]
        name, opts = argv[0], dict(zip(argv[1::2], argv[2::2]))
        check(NAME_OK.match(name) and len(name) <= 100, "case name %r is LAVA's kind" % name)
        check(opts.get("--result") in RESULTS, "%s: result %s" % (name, opts.get("--result")))
        value = opts.get("--measurement")
        if value is not None:
            check(decimal.Decimal(value).is_finite(), "%s: measurement %s is a decimal"
                  % (name, value))
            units = opts.get("--units", "")
            check(units and not re.search(r"[\s=]", units), "%s: units %r" % (name, units))
        cases.append((name, opts["--result"], value, opts.get("--units")))
    return cases


def damaged_logs(log):
    """Two damaged copies of a log with one embedded block, each damaged so
    that the bytes it carries change: flipping base64 bits may hit only the
    deflate stream's padding (the bytes survive, rightly accepted), so the
    damage is chosen, not random."""
    lines = log.splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.startswith("DUETB64:")]
    begin = next(i for i, line in enumerate(lines) if line.startswith("DUET-RESULTS-BEGIN"))
    raw = gzip.decompress(base64.b64decode("".join(lines[i][8:].strip() for i in at)))
    # The same length, one byte other, properly compressed: only the SHA-256
    # of the BEGIN line can tell.
    other = raw.replace(b"{", b"[", 1) if raw.startswith(b"{") else b" " + raw[1:]
    text = base64.b64encode(gzip.compress(other, mtime=0)).decode()
    body = ["DUETB64:%s\n" % text[i:i + 72] for i in range(0, len(text), 72)]
    edited = lines[:begin + 1] + body + lines[at[-1] + 1:]
    check(len(at) >= 3, "the block has lines enough to lose one (%d)" % len(at))
    missing = lines[:at[1]] + lines[at[1] + 1:]
    return {"with other bytes": "".join(edited), "missing a line": "".join(missing)}


def test_local():
    tmp = tempfile.mkdtemp(prefix="duet-lava-test-")
    on_fail(lambda: print("kept: " + tmp))
    tarball = os.path.join(tmp, "duet.tar.gz")
    r = subprocess.run([os.path.join(SRC, "scripts", "tarball"), "--build-dir",
                        os.environ["DUET_BUILD_DIR"], "--out", tarball],
                       capture_output=True, text=True, timeout=120)
    print(r.stdout[-1000:], r.stderr[-2000:])
    check(r.returncode == 0 and os.path.isfile(tarball), "scripts/tarball packs this build")
    listing = subprocess.run(["tar", "-tzf", tarball], capture_output=True, text=True).stdout
    for member in ("tools/duet", "build/compositor/duet-compositor", "debian-packages.txt",
                   "lava/duet-lava", "lava/run-bench", "scripts/packages.sh"):
        check(re.search(r"^duet-[^/]+/%s$" % re.escape(member), listing, re.M),
              "the tarball holds " + member)

    # The definition's steps, as LAVA runs them (no lava-test-case on PATH:
    # the lines come out as text).
    work = os.path.join(tmp, "work")
    env = dict(os.environ, DUET_TARBALL_URL="file://" + tarball, DUET_WORK=work,
               BENCH_ARGS="--quick --stacks wayland --experiments launch",
               GOVERNOR="", RESULTS_NAME="test-board", DUET_LAVA_NO_APT="1")
    env.pop("DUET_BUILD_DIR")  # the tarball's own build/ must be found
    check(not shutil.which("lava-test-case", path=env["PATH"]), "no lava-test-case on PATH")
    r = subprocess.run([os.path.join(LAVA, "run-bench")], env=env, capture_output=True,
                       text=True, timeout=240)
    print(r.stderr[-3000:])
    check(r.returncode == 0, "lava/run-bench exits 0 (status %d)" % r.returncode)
    cases = parse_cases(r.stdout)
    names = [c[0] for c in cases]
    check(len(names) == len(set(names)), "no case name repeats (LAVA stops at a repeat)")
    got = {c[0]: c for c in cases}
    for name in ("duet-install", "duet-bench", "experiment.launch",
                 "experiment.launch.wayland", "ipc.launch.wayland", "ipc.strace_launch.wayland"):
        check(got.get(name, (0, ""))[1] == "pass", "%s: pass (%s)" % (name, got.get(name)))
    check(got["machine.emulated"][2] == "0", "machine.emulated: 0 here")
    results = os.path.join(work, "results")
    with open(os.path.join(results, "summary.csv"), newline="") as f:
        rows = [row for row in csv.DictReader(f) if row["row"] == "stack"]
    check(rows, "summary.csv has figures (%d)" % len(rows))
    for row in rows:
        name = "%s.%s" % (row["metric"], row["stack"])
        c = got.get(name)
        if row["median"]:
            check(c and c[1] == "pass" and decimal.Decimal(c[2]) == decimal.Decimal(
                row["median"]), "%s: measurement %s = summary.csv's median %s"
                % (name, c and c[2], row["median"]))
        else:
            check(c and c[1] == "skip" and c[2] is None, "%s: no median, skip" % name)
    check(got["launch_ms.wayland"][3] == "ms" and got["launch_ipc.wayland"][2],
          "launch_ms in ms, and the launch IPC count: %s" % (got["launch_ipc.wayland"],))

    # Home through the log: plain, and as `lavacli jobs logs --raw` gives it.
    logs = os.path.join(tmp, "logs")
    os.makedirs(logs)
    with open(os.path.join(logs, "plain.log"), "w") as f:
        f.write(r.stdout)
    with open(os.path.join(logs, "raw.yaml"), "w") as f:
        for line in r.stdout.splitlines():
            f.write('- {"dt": "2026-01-01T00:00:00", "lvl": "target", "msg": %s}\n'
                    % json.dumps(line))
    with open(os.path.join(results, "results.json"), "rb") as f:
        original = f.read()
    for log in ("plain.log", "raw.yaml"):
        out = os.path.join(tmp, "collected-" + log)
        k = subprocess.run([sys.executable, os.path.join(LAVA, "duet-lava"), "collect",
                            os.path.join(logs, log), "--out", out], capture_output=True,
                           text=True, timeout=60)
        print(k.stdout, k.stderr)
        with open(os.path.join(out, "test-board", "results.json"), "rb") as f:
            check(k.returncode == 0 and f.read() == original,
                  "%s: duet-lava collect gives back results.json byte for byte" % log)
    for how, text in damaged_logs(r.stdout).items():
        damaged = os.path.join(logs, "damaged-%s.log" % how.replace(" ", "-"))
        with open(damaged, "w") as f:
            f.write(text)
        out = os.path.join(tmp, "damaged-" + how.replace(" ", "-"))
        k = subprocess.run([sys.executable, os.path.join(LAVA, "duet-lava"), "collect",
                            damaged, "--out", out], capture_output=True, text=True,
                           timeout=60)
        check(k.returncode != 0 and "results test-board:" in k.stderr
              and "Traceback" not in k.stderr
              and not os.path.exists(os.path.join(out, "test-board")),
              "a block %s is refused by name and not written (status %d: %s)"
              % (how, k.returncode, k.stderr.strip()[-300:]))
    cmp_dir = os.path.join(tmp, "cmp")
    k = subprocess.run([sys.executable, os.path.join(SRC, "tools", "duet"), "report",
                        os.path.join(tmp, "collected-raw.yaml", "test-board"), results,
                        "--out", cmp_dir], capture_output=True, text=True, timeout=120)
    print(k.stdout[-800:], k.stderr[-800:])
    check(k.returncode == 0 and os.path.getsize(os.path.join(cmp_dir, "compare.md")) > 0,
          "duet report puts the collected run beside the run's own directory")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    {"schema": test_schema, "local": test_local}[sys.argv[1]]()
    print("PASS")
