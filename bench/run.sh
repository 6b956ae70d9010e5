#!/bin/sh
# run.sh - benchmarks that print figures (never pass/fail on time).
#
# Usage: sh bench/run.sh BUILD_DIR.  Runs `muster bench` (every shape of
# docs/evaluation.md "Speed and memory": JSON lines, and the HTML report
# BUILD_DIR/bench/report.html with the targets and the scaling plot), then
# each bench/bench_* binary, the live UI's pages in headless Chromium
# (bench_ui --serve and bench/ui_page.js), then times whole simulations of the real
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

# The live UI's pages in headless Chromium at 5,000 nodes / 50,000 pods
# (bench_ui --serve, bench/ui_page.js); skipped without node or chromium.
if command -v node >/dev/null 2>&1 && [ -x /usr/bin/chromium ] && [ -x "$B/rel/bench/bench_ui" ]; then
	"$B/rel/bench/bench_ui" --serve 300 >"$B/bench/ui-serve.out" 2>&1 &
	ui_pid=$!
	i=0
	while [ $i -lt 120 ] && ! grep -q '^serving ' "$B/bench/ui-serve.out"; do sleep 1; i=$((i + 1)); done
	ui_url=$(sed -n 's/^serving //p' "$B/bench/ui-serve.out")
	if [ -n "$ui_url" ]; then
		node bench/ui_page.js "$ui_url" || echo "bench: ui_page.js failed"
	else
		echo "bench: bench_ui --serve did not start"
	fi
	kill "$ui_pid" 2>/dev/null
	wait "$ui_pid" 2>/dev/null
else
	echo "bench: skipped the UI page timings: needs node and /usr/bin/chromium"
fi

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
