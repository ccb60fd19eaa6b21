# Sourced by scripts that run something that may hang (scripts/test-kms's
# guest): POSIX sh, so it works under dash as /bin/sh.
#
# duet_guard WHO SECONDS PID
#   Waits for PID to end. PID leads a process group of its own (started as
#   `setsid CMD &` from a script without job control, where setsid does
#   not fork and $! is the group's id). Past SECONDS it says so on stderr,
#   sends the group SIGTERM, SIGKILL 5 s later, and returns 124 (as
#   timeout(1) does); otherwise it returns 0. Whoever started PID still
#   reaps it with `wait`.
#   (dash's kill takes no `--`: `kill -TERM -- -PGID` is an error there
#   and signals nothing, so the group is named as a plain negative pid.)
duet_guard() {
	duet_guard_deadline=$(($(date +%s) + $2))
	while kill -0 "$3" 2>/dev/null; do
		if [ "$(date +%s)" -ge "$duet_guard_deadline" ]; then
			echo "$1: ran past $2 s; stopping process group $3" >&2
			kill -TERM "-$3" 2>/dev/null
			duet_guard_grace=$(($(date +%s) + 5))
			while kill -0 "-$3" 2>/dev/null && [ "$(date +%s)" -lt "$duet_guard_grace" ]; do
				sleep 1
			done
			kill -KILL "-$3" 2>/dev/null
			return 124
		fi
		sleep 1
	done
	return 0
}

# duet_run_stoppable CMD [ARG...]
#   Runs CMD and returns its status, but as a background job that the
#   caller waits for: a shell runs its INT/TERM trap only once the
#   foreground command has ended, so a script stopped during a long
#   `meson test` would stop only when the tests had ended. `wait` returns at
#   once on a trapped signal; the trap then calls duet_stop_running, which
#   sends CMD SIGTERM (meson test then stops its tests and exits).
#   CMD must be a program, not a shell function. (An asynchronous command
#   of a shell without job control ignores SIGINT; SIGTERM stops it.)
duet_running=
duet_run_stoppable() {
	"$@" &
	duet_running=$!
	wait "$duet_running"
	duet_run_status=$?
	duet_running=
	return "$duet_run_status"
}

# duet_stop_running: SIGTERM to what duet_run_stoppable runs, if anything,
# and waits for it to end.
duet_stop_running() {
	if [ -n "$duet_running" ]; then
		kill -TERM "$duet_running" 2>/dev/null
		wait "$duet_running" 2>/dev/null
		duet_running=
	fi
}
