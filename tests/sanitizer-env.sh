# Sanitizer options of the ASan build's tests, in one place. Sourced (with
# repo_root set to the source tree) by scripts/test before the ASan pass and
# by the KMS guest's script that scripts/test-kms writes; to run the ASan
# tests by hand the same way:
#   repo_root=$PWD . tests/sanitizer-env.sh && meson test -C build-asan
# The caller's own options come after these, so they win.
#
# detect_leaks=1: LeakSanitizer checks every sanitized process at exit.
# tests/lsan.supp names the system libraries' own leaks, never duet's; Mesa's
# DRI driver, which eglTerminate would unload (its frames then unnamed), is
# kept loaded by duet's GL code instead (render_keep_loaded in render.h).
# The harness (tests/integration/duet.py) fails a test whose servers or
# clients report an error at exit.
# print_suppressions=0: no table of the suppressions used in every log.
# (libwayland's SIGBUS handler for truncated shm pools works under ASan as
# is: ASan lets programs install their own handlers by default.)
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$repo_root/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
