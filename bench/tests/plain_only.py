#!/usr/bin/env python3
"""Stands in, in a sanitizer build, for a test of the bench's own Python
logic (bench/meson.build's plain_only): that logic runs once, in the plain
build, and a sanitizer adds nothing to it. The test is listed and counted
as skipped here, with where it runs."""
import sys

print("SKIP: %s checks the bench's Python logic; it runs in the plain build "
      "(the C programs it drives run under the sanitizers in their own tests)"
      % " ".join([sys.argv[1].rsplit("/", 1)[-1]] + sys.argv[2:] if len(sys.argv) > 1
                 else ["this test"]))
sys.exit(77)
