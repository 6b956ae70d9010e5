#!/bin/sh
# cli.sh - black-box tests of the muster command: help, version, simulate
# on the bundled examples (JSON keys, determinism, report), and exit codes.
# Usage: sh tests/e2e/cli.sh PATH_TO_MUSTER.  Ends with "N passed, N failed".
E2E_NAME=cli; . "$(dirname "$0")/lib/common.sh"

expect help 0 "$M" --help
has help "$T/out" "simulate"
expect version 0 "$M" version
has version "$T/out" "muster 0"
expect no-args 2 "$M"
expect unknown-command 2 "$M" frobnicate
has unknown-command "$T/err" "unknown command"
expect simulate-help 0 "$M" simulate --help
has simulate-help "$T/out" "--workload"
expect simulate-no-workload 2 "$M" simulate --cluster examples/demo/cluster.yaml
expect simulate-bad-option 2 "$M" simulate --frob
expect simulate-bad-seed 2 "$M" simulate --cluster examples/demo/cluster.yaml --workload examples/demo/jobs.csv --seed x
expect simulate-missing-file 2 "$M" simulate --cluster /nonexistent.yaml --workload examples/demo/jobs.csv
has simulate-missing-file "$T/err" "/nonexistent.yaml"

# explain shows where a job stands in its queue's order and why.
expect explain-order 0 "$M" explain --cluster examples/demo/cluster.yaml \
	--workload examples/demo/workload.yaml --workload examples/demo/jobs.csv --at 6h llm-pretrain-70b
has explain-order "$T/out" 'order        jct order: level 0, 0 GPU-hours had'
has explain-order-place "$T/out" '1 of 1 waiting in queue "research"'
expect explain-order-fifo 0 "$M" explain --order priority --cluster examples/demo/cluster.yaml \
	--workload examples/demo/workload.yaml --workload examples/demo/jobs.csv --at 6h llm-pretrain-70b
has explain-order-fifo "$T/out" 'order        priority order: priority, then arrival'
expect bad-order 2 "$M" simulate --order lifo --cluster examples/demo/cluster.yaml --workload examples/demo/jobs.csv

# The demo, with JSON and a report.
expect demo 0 "$M" simulate --cluster examples/demo/cluster.yaml --workload examples/demo/workload.yaml \
	--workload examples/demo/jobs.csv --seed 1 --json "$T/a.json" --report "$T/a.html" --quiet
for k in '"summary"' '"jobs"' '"completed"' '"gpu_utilization"' '"avg_wait_s"' '"p95_wait_s"' \
	'"avg_jct_s"' '"makespan_s"' '"preemptions"' '"name"' '"queue"' '"submit_s"' '"start_s"' \
	'"end_s"' '"gpus"'; do
	has "json key $k" "$T/a.json" "$k"
done
has report-svg "$T/a.html" "<svg"
# Same seed, same result (the engine time is wall-clock, so drop it).
"$M" simulate --cluster examples/demo/cluster.yaml --workload examples/demo/workload.yaml \
	--workload examples/demo/jobs.csv --seed 1 --json "$T/b.json" --quiet
if sed 's/"engine_s": *[0-9.e+-]*//' "$T/a.json" | cmp -s - "$(sed 's/"engine_s": *[0-9.e+-]*//' "$T/b.json" >"$T/b2"; echo "$T/b2")"; then ok; else bad "same seed gave different JSON"; fi
# Every job completed and the utilization is a fraction.
util=$(sed -n 's/.*"gpu_utilization": *\([0-9.e+-]*\).*/\1/p' "$T/a.json" | head -n 1)
if awk -v u="$util" 'BEGIN { exit !(u > 0.2 && u <= 1.0) }'; then ok; else bad "gpu_utilization $util not in (0.2, 1]"; fi

# A tiny cluster where one gang cannot fit: it must stay unstarted.
cat >"$T/c.yaml" <<'Y'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: n}
spec: {count: 2, allocatable: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "8"}}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: q}
spec: {}
Y
cat >"$T/w.csv" <<'C'
name,queue,submit_s,duration_s,pods,gpu
fits,q,0,100,2,8
toobig,q,0,100,3,8
after,q,10,50,1,8
C
expect tiny 0 "$M" simulate --cluster "$T/c.yaml" --workload "$T/w.csv" --json "$T/t.json" --quiet
has tiny-completed "$T/t.json" '"completed": 2'
if grep -q '"name": "toobig".*"start_s": null' "$T/t.json" || \
   tr -d '\n' <"$T/t.json" | grep -q '"name": "toobig"[^}]*"start_s": null'; then ok; else bad "toobig started"; fi

# GPU-share policies: fgd measures fragmentation against the workload's own
# pod shapes, so it runs on any workload; an unknown policy is refused.
cat >"$T/share.csv" <<'C'
name,queue,submit_s,duration_s,pods,gpu,gpu_milli
half,q,0,100,1,0,500
quarter,q,0,100,1,0,250
whole,q,0,100,1,1,0
C
expect fgd 0 "$M" simulate --cluster "$T/c.yaml" --workload "$T/share.csv" --policy fgd \
	--json "$T/fgd.json" --quiet
has fgd-completed "$T/fgd.json" '"completed": 3'
expect muster-policy 0 "$M" simulate --cluster "$T/c.yaml" --workload "$T/share.csv" \
	--policy muster --quiet
expect bad-policy 2 "$M" simulate --cluster "$T/c.yaml" --workload "$T/share.csv" --policy frob

# A mix names at most 63 GPU models: fgd says so, binpack does not care.
i=0
while [ $i -lt 64 ]; do
	printf 'apiVersion: muster.io/v1alpha1\nkind: Workload\nmetadata: {name: j%d}\nspec:\n  queue: team-a\n  podSets:\n    - requests: {cpu: "1", nvidia.com/gpu: "1"}\n      gpuModels: [M%d]\n---\n' $i $i
	i=$((i + 1))
done >"$T/models.yaml"
expect fgd-models 2 "$M" simulate --cluster examples/cluster-small.yaml --workload "$T/models.yaml" --policy fgd
has fgd-models "$T/err" "more than 63 GPU models"
expect binpack-models 0 "$M" simulate --cluster examples/cluster-small.yaml --workload "$T/models.yaml" --quiet

# muster eval openb on a tiny trace: 4 nodes of 2 GPUs, whole and shared pods.
printf 'sn,cpu_milli,memory_mib,gpu,model\n' >"$T/nodes.csv"
for i in 0 1 2 3; do printf 'n%d,32000,131072,2,T4\n' $i >>"$T/nodes.csv"; done
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n' >"$T/pods.csv"
for i in 0 1 2 3 4 5; do
	printf 'p%d,4000,8192,1,1000,,LS,Running,0,10,0\nq%d,2000,4096,1,300,,LS,Running,0,10,0\n' $i $i >>"$T/pods.csv"
done
expect eval-openb-paper 2 "$M" eval openb --nodes "$T/nodes.csv" --pods "$T/pods.csv" \
	--policy fgd --paper "$T/none.csv"
has eval-openb-paper "$T/err" "none.csv: cannot open"
expect eval-openb 0 "$M" eval openb --nodes "$T/nodes.csv" --pods "$T/pods.csv" \
	--policies fgd,bestfit --seeds 1-2 --json "$T/openb.json"
has eval-openb "$T/out" "4 nodes, 8 GPUs, 12 pods"
has eval-openb-fgd "$T/out" "^  fgd "
has eval-openb-json "$T/openb.json" '"alloc"'
# The old eval-* spellings: the same stdout as the new, a note on stderr.
for o in philly topology queues; do
	"$M" eval $o --help >"$T/new" 2>/dev/null
	expect "eval-$o alias" 0 "$M" eval-$o --help
	if cmp -s "$T/out" "$T/new"; then ok; else bad "eval-$o --help: stdout differs from eval $o --help"; fi
	has "eval-$o alias note" "$T/err" "is now 'muster eval $o'"
done

done_
