# shellcheck shell=sh disable=SC2034,SC2001
# dispatch_pids.sh - sourced (with `.`) by bench/dispatch_perf.sh and
# bench/dispatch_kern.sh, after they set M, N, NODES and O: starts
# `sh bench/dispatch.sh M N NODES` with BENCH_PIDS=1, its output in
# O/bench.out, waits until it prints its processes' pids, and sets BP (the
# bench's pid), d (the dispatcher), h (the hub `muster up`), w (the three
# workers' `muster up`s, comma-separated) and s (their schedulers).  Exits
# with the bench's output when it ends before that.  (Round 22: the two
# scripts had each a copy of this.)
BENCH_PIDS=1 sh bench/dispatch.sh "$M" "$N" "$NODES" >"$O/bench.out" 2>&1 &
BP=$!
while ! grep -q "pids dispatcher" "$O/bench.out" 2>/dev/null; do
	kill -0 "$BP" 2>/dev/null || { cat "$O/bench.out"; exit 1; }
	sleep 0.05
done
l=$(grep "pids dispatcher" "$O/bench.out")
d=$(echo "$l" | sed 's/.*dispatcher=\([0-9]*\).*/\1/')
h=$(echo "$l" | sed 's/.*hub=\([0-9]*\).*/\1/')
w=$(echo "$l" | sed 's/.* w=\([0-9,]*\).*/\1/')
s=$(echo "$l" | sed 's/.*sched=\([0-9,]*\).*/\1/')
