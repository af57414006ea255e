#!/bin/sh
# valgrind-logs.sh DIR: fails when a process of `make valgrind` reported a
# memory error or a leak in its log (DIR/PID.log, one per process). A test's
# forked process reports after its test has passed, so the runner's exit code
# misses it; the logs do not. A process that died of a signal on purpose (a
# plugin made to crash its scanner) is left out: its crash is the test's
# subject, and a crash the test did not expect fails the test itself.
set -eu
bad=0
for f in "$1"/*.log; do
	[ -s "$f" ] || continue
	grep -q 'Process terminating with default action of signal' "$f" && continue
	if grep -Eq 'are (definitely|indirectly) lost|Invalid (read|write|free)|uninitialised|Mismatched free|overlap in|Jump to the invalid address|Syscall param' "$f"; then
		echo "valgrind: $f:" >&2
		cat "$f" >&2
		bad=1
	fi
done
[ "$bad" -eq 0 ] && echo "valgrind: no process reported a memory error or a leak ($(ls "$1" | wc -l) logs)"
exit "$bad"
