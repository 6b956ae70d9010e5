#!/bin/sh
# dispatch_perf.sh - where bench/dispatch.sh's time goes, per kind of
# process: runs `sh bench/dispatch.sh MUSTER N NODES` (BENCH_PIDS=1) and,
# once it prints its processes' pids, one `perf record --call-graph dwarf`
# each on the dispatcher, the hub `muster up`, the workers' `muster up`s
# and the schedulers, until the bench prints its rate.  Writes OUT/d.data,
# h.data, w.data, s.data and the bench's output OUT/bench.out; read them
# with `perf report -i OUT/w.data --children`.  Needs perf.
# (CG=fp HZ=999: frame-pointer call graphs at 999 Hz, which carry the
# kernel's stacks whole for bench/perf_shares.sh's kernel table at a
# fraction of dwarf's cost; round 22.)
# Usage: sh bench/dispatch_perf.sh MUSTER OUT [N] [NODES]
set -u
M=$1; O=$2; N=${3:-1000}; NODES=${4:-64}
mkdir -p "$O"
# the bench, started, and its processes' pids: BP, d, h, w, s
# shellcheck source=bench/dispatch_pids.sh
. bench/dispatch_pids.sh
P=""
for x in "d $d" "h $h" "w $w" "s $s"; do
	# shellcheck disable=SC2086
	set -- $x
	perf record -q -F "${HZ:-1999}" --call-graph "${CG:-dwarf}" -o "$O/$1.data" -p "$2" >/dev/null 2>&1 &
	P="$P $!"
done
while ! grep -q "dispatched and bound" "$O/bench.out"; do
	kill -0 "$BP" 2>/dev/null || break
	sleep 0.1
done
# shellcheck disable=SC2086
kill -INT $P 2>/dev/null
# shellcheck disable=SC2086
wait $P
wait "$BP"
cat "$O/bench.out"
