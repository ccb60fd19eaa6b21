#!/usr/bin/env python3
"""tests/sanitizer_covers.py: with DUET_SANITIZER_RUNS set, a wrapped test
is skipped (77) and says which build runs it; without it, the test script
runs with its arguments and its exit status is the test's. And this
build's own list: in the plain build the tests both builds have (bench-quick,
the KMS guest's kms-clients, every integration test of tests/integration/)
carry the wrapper, in a sanitizer build none does.

usage: test_sanitizer_covers.py WRAPPER BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

wrapper, build = sys.argv[1], sys.argv[2]
fails = []


def run(env_value, script_status):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write("import sys\nprint('ran with', sys.argv[1:])\nsys.exit(%d)\n" % script_status)
    env = dict(os.environ)
    env.pop("DUET_SANITIZER_RUNS", None)
    if env_value is not None:
        env["DUET_SANITIZER_RUNS"] = env_value
    try:
        return subprocess.run([sys.executable, wrapper, f.name, "a", "b c"], env=env,
                              capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)


r = run("build-asan", 0)
if r.returncode != 77 or "SKIP" not in r.stdout or "build-asan" not in r.stdout \
        or "ran with" in r.stdout:
    fails.append("with DUET_SANITIZER_RUNS set: %d %r" % (r.returncode, r.stdout))
for status in (0, 3):
    for value in (None, ""):
        r = run(value, status)
        if r.returncode != status or "ran with ['a', 'b c']" not in r.stdout:
            fails.append("without it (%r), status %d: got %d %r %r"
                         % (value, status, r.returncode, r.stdout, r.stderr))

with open(os.path.join(build, "meson-info", "intro-buildoptions.json")) as f:
    sanitize = [o["value"] for o in json.load(f) if o["name"] == "b_sanitize"][0]
with open(os.path.join(build, "meson-info", "intro-tests.json")) as f:
    tests = {t["name"]: t["cmd"] for t in json.load(f)}
# kms-clients is there only where the KMS backend is built; the others are
# in every build of duet.
required = ("bench-quick", "xwm-pattern-static", "robust-bad-buffer-too-big")
for name in required + ("kms-clients",):
    if name not in tests:
        if name in required:
            fails.append("%s is not in this build's tests" % name)
        continue
    wrapped = any(arg.endswith("sanitizer_covers.py") for arg in tests[name])
    if wrapped != (sanitize == "none"):
        fails.append("%s in a build with b_sanitize=%s: wrapped %s" % (name, sanitize, wrapped))

if fails:
    print("FAIL:\n  " + "\n  ".join(fails))
    sys.exit(1)
print("PASS: skipped with the build named when a sanitizer run follows; run and its status "
      "kept otherwise; b_sanitize=%s, wrapped as it should be" % sanitize)
