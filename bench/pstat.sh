#!/bin/sh
# pstat.sh - a wrapper for bench/dispatch.sh's DWRAP or SWRAP that reports
# what the wrapped process used: on the bench's TERM it writes the
# process's minor page faults, CPU seconds (user + system), peak resident
# set and thread count (from /proc/PID/stat and /proc/PID/status) to OUT,
# then ends the process.  Round 21 counted the dispatcher's page faults
# with it (docs/dispatch.md, "Dispatch throughput (issue 18, round 21)").
# Usage: DWRAP="sh bench/pstat.sh OUT" sh bench/dispatch.sh ...
set -u
o=$1
shift
"$@" &
c=$!
trap 'awk -v t="$(getconf CLK_TCK)" "{ printf \"minflt=%d cpu=%.2f \", \$10, (\$14 + \$15) / t }" "/proc/$c/stat" >"$o"
	grep -E "VmHWM|Threads" "/proc/$c/status" | tr -s " \t\n" " " >>"$o"; echo >>"$o"
	kill "$c"; wait "$c"; exit 0' TERM
wait "$c"
