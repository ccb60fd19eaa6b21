#!/bin/sh
# scripts/guard.sh under /bin/sh (dash on Debian): duet_guard stops a
# process group started with setsid once its time is up, children and all,
# and leaves one that ends in time alone.
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
echo "PASS"
