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
