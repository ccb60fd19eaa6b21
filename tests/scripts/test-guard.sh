#!/bin/sh
# scripts/guard.sh under /bin/sh (dash on Debian): duet_guard stops a
# process group started with setsid once its time is up, children and all,
# and leaves one that ends in time alone; and a script stopped by TERM while
# duet_run_stoppable runs a long command stops at once, that command too.
set -u
. "$1/scripts/guard.sh"
fail() { echo "FAIL: $1"; exit 1; }

# A group of three: the leader and two children, all sleeping long.
setsid sh -c 'sleep 300 & sleep 300 & wait' &
group=$!
sleep 0.5
[ "$(ps -o pgid= -p "$group" | tr -d ' ')" = "$group" ] ||
	fail "setsid did not make $group a group leader"
members=$(ps -o pid= -g "$group" | wc -l)
[ "$members" -eq 3 ] || fail "the group has $members processes, want 3"
duet_guard test-guard 2 "$group"
status=$?
sleep 0.5
left=$(ps -o pid=,args= -g "$group")
# (Not `wait` first: it would wait for the sleeps to end by themselves.)
kill -KILL "-$group" 2>/dev/null
wait "$group" 2>/dev/null
[ "$status" -eq 124 ] || fail "duet_guard returned $status for a group past its time, want 124"
[ -z "$left" ] || fail "the group outlived the guard: $left"

# A group that ends before its time.
setsid sh -c 'sleep 0.3' &
group=$!
duet_guard test-guard 30 "$group"
status=$?
wait "$group"
[ "$status" -eq 0 ] || fail "duet_guard returned $status for a group that ended in time"
# duet_run_stoppable: scripts/test's TERM trap runs during a long command.
script_dir=$(mktemp -d)
cat >"$script_dir/stoppable.sh" <<EOF
. "$1/scripts/guard.sh"
trap 'duet_stop_running; exit 130' TERM
duet_run_stoppable sleep 300
echo "ran to its end"
EOF
sh "$script_dir/stoppable.sh" &
script=$!
sleeper=
for _ in $(seq 50); do
	sleeper=$(pgrep -P "$script" -x sleep) && break
	sleep 0.1
done
[ -n "$sleeper" ] || fail "the script's command did not start"
kill -TERM "$script"
# A hang guard: stopped, the script ends at once; without
# duet_run_stoppable its trap would wait for the 300 s sleep.
for _ in $(seq 100); do
	kill -0 "$script" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$script" 2>/dev/null; then
	kill -KILL "$script" "$sleeper" 2>/dev/null
	rm -rf "$script_dir"
	fail "a script stopped by TERM still ran its command after 10 s"
fi
wait "$script"
status=$?
rm -rf "$script_dir"
[ "$status" -eq 130 ] || fail "the stopped script exited $status, want 130 (its trap's)"
if kill -0 "$sleeper" 2>/dev/null; then
	kill -KILL "$sleeper"
	fail "the command outlived the script that was stopped"
fi
echo "PASS"
