#!/bin/sh
# same-output.sh - runs two builds of muster on the same inputs and says
# whether every output is byte-identical: the demo's result JSON and HTML,
# each evaluation's JSON (quick sizes; the openb one only beside
# ../shared/data), the verbose output of every scenario file, and the
# simulator's JSON of the bundled examples.  Used to prove that a
# refactoring changed no behaviour.
#
# Usage: scripts/same-output.sh OLD_MUSTER NEW_MUSTER [OUT_DIR]
# Exit status: 0 all identical, 1 some output differs, 2 bad usage.
set -u
[ $# -ge 2 ] || { echo "usage: $0 OLD_MUSTER NEW_MUSTER [OUT_DIR]" >&2; exit 2; }
A=$1; B=$2; OUT=${3:-build/same-output}
D=../shared/data
rm -rf "$OUT"; mkdir -p "$OUT/a" "$OUT/b"

# run_both NAME ARGS...: runs ARGS with each binary; @OUT@ in ARGS becomes
# that binary's output directory.  stdout and stderr are kept too.
run_both() {
	name=$1; shift
	for side in a b; do
		bin=$A; [ $side = b ] && bin=$B
		args=$(printf '%s\n' "$*" | sed "s#@OUT@#$OUT/$side#g")
		# shellcheck disable=SC2086
		$bin $args >"$OUT/$side/$name.stdout" 2>"$OUT/$side/$name.stderr"
		echo $? >"$OUT/$side/$name.rc"
	done
}

run_both demo simulate --cluster examples/demo/cluster.yaml \
	--workload examples/demo/workload.yaml --workload examples/demo/jobs.csv \
	--seed 1 --json @OUT@/demo.json --report @OUT@/demo.html
for f in tests/scenarios/*.yaml; do
	run_both "scenario-$(basename "$f" .yaml)" scenario -v "$f"
done
run_both eval-queues eval queues --quiet --span 6h --reclaim-nodes 0 --json @OUT@/queues.json
if [ -d "$D" ]; then
	run_both eval-philly eval philly --quick --quiet --json @OUT@/philly.json
	run_both eval-topology eval topology --quick --quiet --json @OUT@/topology.json
	run_both eval-openb eval openb --nodes $D/openb/openb_node_list_gpu_node.csv \
		--pods $D/openb/openb_pod_list_default.csv --all --seeds 42-43 \
		--quiet --json @OUT@/openb.json
	run_both sim-philly simulate --cluster examples/philly/cluster.yaml \
		--workload $D/philly/philly.csv --max-jobs 2000 --json @OUT@/philly-sim.json
else
	echo "same-output: ../shared/data absent: the data-driven evaluations skipped"
fi

# Measured run times differ from run to run, and so do the output paths:
# both are masked (JSON keys wall_s, engine_s, engine_ms, engine_ms_per_job,
# load_s, run_s; the "(engine ... s)" line and the report's "Engine time"
# row; the a/ and b/ directories).
# Everything else must match byte for byte.
for f in $(find "$OUT/a" "$OUT/b" -type f); do
	sed -E -i -e 's#"(wall_s|engine_s|engine_ms|engine_ms_per_job|load_s|run_s)": *[0-9.eE+-]+#"\1": T#g' \
		-e 's#\(engine [0-9.]+ s, load [0-9.]+ s, run [0-9.]+ s\)#(engine T)#' \
		-e 's#<td>Engine time</td><td>[^<]*</td>#<td>Engine time</td><td>T</td>#' \
		-e "s#$OUT/[ab]/#OUT/#g" "$f"
done
n=$(find "$OUT/a" -type f | wc -l)
if diff -r "$OUT/a" "$OUT/b" >"$OUT/diff.txt"; then
	echo "same-output: all $n outputs byte-identical"
	exit 0
fi
echo "same-output: outputs differ (see $OUT/diff.txt):"
diff -rq "$OUT/a" "$OUT/b" | head -20
exit 1
