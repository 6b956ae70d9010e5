#!/bin/sh
# run.sh - benchmarks that print figures (never pass/fail on time).
#
# Usage: sh bench/run.sh BUILD_DIR.  Runs `muster bench` (every shape of
# docs/evaluation.md "Speed and memory": JSON lines, and the HTML report
# BUILD_DIR/bench/report.html with the targets and the scaling plot), then
# each bench/bench_* binary, then times whole simulations of the real
# traces in ../shared/data when they are there (skipped otherwise),
# reporting wall time and peak RSS.
set -u
B=${1:-build}
M=$B/muster
D=../shared/data
mkdir -p "$B/bench"
"$M" bench --report "$B/bench/report.html" --json "$B/bench/results.json" ||
	echo "bench: muster bench failed"
echo "bench: report in $B/bench/report.html"
for b in "$B"/rel/bench/bench_*; do
	[ -x "$b" ] && "$b"
done

# sim_bench NAME ARGS...: one simulation, timed with GNU time's %e and %M.
sim_bench() {
	name=$1; shift
	out=$(mktemp)
	if /usr/bin/time -f '%e %M' -o "$out.time" "$M" simulate --quiet "$@" --json "$out"; then
		read -r secs kb <"$out.time"
		jobs=$(sed -n 's/.*"jobs": *\([0-9]*\).*/\1/p' "$out" | head -n 1)
		printf '{"bench": "%s", "jobs": %s, "wall_s": %s, "peak_rss_mb": %d}\n' \
			"$name" "${jobs:-0}" "$secs" $((kb / 1024))
	else
		echo "bench $name: simulate failed"
	fi
	rm -f "$out" "$out.time"
}

if [ ! -x /usr/bin/time ]; then
	echo "bench: /usr/bin/time not found (apt-get install time); trace benchmarks skipped"
elif [ -d "$D" ]; then
	sim_bench openb-default --cluster "$D/openb/openb_node_list_gpu_node.csv" \
		--workload "$D/openb/openb_pod_list_default.csv"
	sim_bench philly-10k --cluster examples/philly/cluster.yaml \
		--workload "$D/philly/philly.csv" --max-jobs 10000
	sim_bench philly-all --cluster examples/philly/cluster.yaml \
		--workload "$D/philly/philly.csv"
else
	echo "bench: skipped trace simulations: $D not found"
fi
sim_bench demo --cluster examples/demo/cluster.yaml \
	--workload examples/demo/workload.yaml --workload examples/demo/jobs.csv
