#!/bin/sh
# jobs_callgrind.sh - the instructions a `muster up` (its Job controller,
# simulated kubelets and API) and a `muster scheduler` spend on N one-GPU
# Jobs, without the machine's load: both run under valgrind's callgrind;
# the Jobs (64 nodes of 8 GPUs) are made as the dispatcher makes its
# copies (src/dispatch/dutil.c mu__dcopy: unsuspended, queue team-a,
# labelled muster.io/hub-uid, annotated muster.io/admitted "true",
# muster.io/hub-job and the dispatch generation, the template labelled
# with both: without muster.io/admitted the scheduler suspends a Job it
# sees before its pod, then resumes it, which a copy never goes through)
# and created by
# one kubectl.  Instrumentation is on from just before that create (the
# start-up, the cluster's nodes and the scheduler's first lists are not
# counted); the bench's own `kubectl get pods` polls are, as the server's
# mu__do_list (subtract it).  Once all their pods run (and 5 s more) both
# processes are stopped with SIGTERM, which writes OUT/up.cg and OUT/s.cg.  Compare
# two builds per call, e.g. `callgrind_annotate --inclusive=yes
# --tree=calling OUT/s.cg | grep via_loader` (the numbers of calls differ
# with the timing: the whole processes' counts are not comparable).
# Takes one to two minutes for 200 Jobs.
# Usage: sh bench/jobs_callgrind.sh MUSTER OUT [N]
set -u
B=$1; O=$2; N=${3:-200}; KC=${KC:-/usr/bin/kubectl}
rm -rf "$O"; mkdir -p "$O"
printf 'apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  count: 64\n  namePrefix: w-\n  gpuModel: A100\n  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}\n---\napiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: team-a}\nspec: {resources: {gpu: {deserved: 100000}}}\n' >"$O/c.yaml"
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$O/up.cg" "$B" up --cluster "$O/c.yaml" \
	--listen 127.0.0.1:0 --data "$O/d" --no-fsync --quiet >"$O/up.out" 2>&1 &
UP=$!
i=0
while ! grep -q "serving the Kubernetes API" "$O/up.out"; do
	sleep 0.5; i=$((i + 1))
	[ $i -gt 240 ] && { echo "jobs_callgrind: muster up did not start"; kill "$UP"; exit 1; }
done
sleep 2
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$O/s.cg" "$B" scheduler --kubeconfig "$O/d/kubeconfig" \
	--no-leader-elect --min-runtime 0 >"$O/s.log" 2>&1 &
SP=$!
# instrumentation goes on once the scheduler has listed everything (its
# first lists are not per job), and not before 8 s
sleep 8
i=0
while ! grep -q "every resource listed" "$O/s.log"; do
	sleep 0.5; i=$((i + 1))
	[ $i -gt 240 ] && { echo "jobs_callgrind: the scheduler did not list"; kill "$SP" "$UP"; exit 1; }
done
i=0
while [ $i -lt "$N" ]; do
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j-%d\n  labels: {muster.io/queue: team-a, muster.io/hub-uid: u%d}\n  annotations: {muster.io/dispatch-generation: "1", muster.io/hub-job: default/j-%d, muster.io/admitted: "true"}\nspec:\n  suspend: false\n  template:\n    metadata: {labels: {muster.io/hub-uid: u%d, muster.io/dispatch-generation: "1"}}\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]\n---\n' "$i" "$i" "$i" "$i"
	i=$((i + 1))
done >"$O/jobs.yaml"
callgrind_control -i on "$UP" >/dev/null 2>&1; callgrind_control -i on "$SP" >/dev/null 2>&1
t0=$(date +%s)
"$KC" --kubeconfig "$O/d/kubeconfig" create -f "$O/jobs.yaml" >/dev/null
i=0
r=0
while [ $i -le 300 ]; do
	r=$("$KC" --kubeconfig "$O/d/kubeconfig" get pods --no-headers 2>/dev/null | grep -c Running)
	[ "$r" -ge "$N" ] && break
	sleep 2; i=$((i + 1))
done
echo "jobs_callgrind: $r of $N pods running after $(($(date +%s) - t0)) s"
sleep 5
kill -TERM "$SP"; wait "$SP"
kill -TERM "$UP"; wait "$UP"
ls "$O"/*.cg
