#!/bin/sh
# dispatch.sh - end-to-end dispatch rate on loopback: a hub `muster up`,
# three worker `muster up`s (each NODES nodes of 8 GPUs) with their own
# `muster scheduler`, and `muster dispatch` (push mode).  N one-pod
# one-GPU Jobs are created on the hub first (not timed); then the
# dispatcher starts, and the time is taken until every job's pod is bound
# on a worker (polled on the workers' APIs every 100 ms).  Prints jobs/s
# dispatched and bound, and the dispatcher's own account of where its time
# went, and each process's CPU seconds to the last bind and SETTLE (3) s
# after it.  Prints figures only; never fails on time.
# Usage: sh bench/dispatch.sh [MUSTER] [N] [NODES]   (build/muster 1000 64)
# (DWRAP="valgrind --tool=callgrind ..." runs the dispatcher under it;
# DLOG=FILE keeps a copy of its log; SWRAP the same for worker w1's
# `muster scheduler`, e.g. "perf record -e cpu-clock -g -o OUT"; the CPU
# lines then count the wrapper's own process, not the wrapped one's)
set -u
M=${1:-build/muster}
N=${2:-1000}
NODES=${3:-64}
KC=${KC:-/usr/bin/kubectl}
T=$(mktemp -d)
PIDS=""
trap 'for p in $PIDS; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
start() {
	"$M" up --cluster "$T/$1.yaml" --listen 127.0.0.1:0 --data "$T/$1" --no-fsync --quiet \
		>"$T/$1.up.out" 2>&1 &
	PIDS="$PIDS $!"
	eval "${1}_P=$!"
	i=0
	while [ "$i" -lt 300 ]; do
		s=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$T/$1.up.out" 2>/dev/null)
		[ -n "$s" ] && curl -sfk "$s/readyz" >/dev/null 2>&1 && { eval "${1}_S=$s"; return 0; }
		sleep 0.1; i=$((i + 1))
	done
	echo "bench dispatch: muster up $1 did not start"; exit 1
}
q='apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {deserved: 100000}}}'
echo "$q" >"$T/hub.yaml"
for n in w1 w2 w3; do
	printf 'apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  count: %s\n  namePrefix: %s-\n  gpuModel: A100\n  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}\n---\n%s\n' \
		"$NODES" "$n" "$q" >"$T/$n.yaml"
done
for n in hub w1 w2 w3; do start "$n"; done
for n in w1 w2 w3; do
	w=""; [ "$n" = w1 ] && w=${SWRAP:-}
	$w "$M" scheduler --kubeconfig "$T/$n/kubeconfig" --no-leader-elect --min-runtime 0 \
		>"$T/$n.s.log" 2>&1 &
	PIDS="$PIDS $!"
	eval "${n}_SP=$!"
done
h() { "$KC" --kubeconfig "$T/hub/kubeconfig" "$@" >/dev/null; }
h create namespace muster-system
for n in w1 w2 w3; do
	h -n muster-system create secret generic "$n" --from-file=kubeconfig="$T/$n/kubeconfig"
	printf 'apiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: %s}\nspec: {tier: private, kubeconfigSecret: {name: %s}}\n' \
		"$n" "$n" | h apply -f -
done
i=0
while [ "$i" -lt "$N" ]; do
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j-%d, labels: {muster.io/queue: team-a}}\nspec:\n  suspend: true\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]\n---\n' "$i"
	i=$((i + 1))
done >"$T/jobs.yaml"
h create -f "$T/jobs.yaml"
echo "bench dispatch: $N jobs on the hub, 3 workers x $NODES nodes x 8 GPUs"
# bound: pods with a node, on all workers, counted by the API server (a
# list of one item and its remainingItemCount), so that the polls do not
# serialise every pod and take the workers' CPU from the run.
bound() {
	c=0
	for n in w1 w2 w3; do
		r=$(curl -s --cacert "$T/$n/tls.crt" -H "Authorization: Bearer $(cat "$T/$n/token")" \
			"$(eval echo "\$${n}_S")/api/v1/pods?labelSelector=muster.io%2Fhub-uid&fieldSelector=spec.nodeName%21%3D&limit=1")
		case "$r" in *'"items":[]'*) continue ;; *'"items":['*) c=$((c + 1)) ;; esac
		k=$(echo "$r" | sed -n 's/.*"remainingItemCount":\([0-9]*\).*/\1/p')
		c=$((c + ${k:-0}))
	done
	echo "$c"
}
# CPU seconds (user + system, from /proc/PID/stat) each process spent
# from the start of the dispatcher to the last bind (the rest before: the
# set-up and the hub's creates, subtracted).
cpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat" 2>/dev/null || echo 0; }
cpu_line() {
	echo "hub_up=$(cpu "$hub_P") w_up=$(cpu "$w1_P")+$(cpu "$w2_P")+$(cpu "$w3_P")" \
		"sched=$(cpu "$w1_SP")+$(cpu "$w2_SP")+$(cpu "$w3_SP")"
}
c0=$(cpu_line)
t0=$(date +%s.%N)
# DWRAP: a command the dispatcher runs under (e.g. "valgrind --tool=callgrind
# --callgrind-out-file=OUT"), for its instruction counts; unset, none
${DWRAP:-} "$M" dispatch --kubeconfig "$T/hub/kubeconfig" --no-leader-elect --interval 20ms >"$T/d.log" 2>&1 &
DP=$!; PIDS="$PIDS $DP"
[ -n "${BENCH_PIDS:-}" ] && echo "bench dispatch: pids dispatcher=$DP hub=$hub_P w=$w1_P,$w2_P,$w3_P sched=$w1_SP,$w2_SP,$w3_SP"
i=0
while [ "$i" -lt 6000 ]; do
	[ "$(bound)" -ge "$N" ] && break
	sleep 0.1; i=$((i + 1))
done
t1=$(date +%s.%N)
c1=$(cpu_line); cd1=$(cpu "$DP")
# and SETTLE seconds later (default 3): the work a bind sets off that ends
# after it (the Job controllers' batched reconciles, 1 s after a pod's
# events; the dispatcher's write-back of Running), counted too
sleep "${SETTLE:-3}"
c2=$(cpu_line); cd2=$(cpu "$DP")
kill "$DP"; wait "$DP" 2>/dev/null
[ -n "${SWRAP:-}" ] && { kill "$w1_SP"; wait "$w1_SP" 2>/dev/null; }; [ -n "${DLOG:-}" ] && cp "$T/d.log" "$DLOG"
awk -v a="$t0" -v b="$t1" -v n="$N" 'BEGIN { printf "bench dispatch: %d jobs dispatched and bound in %.2f s: %.0f jobs/s\n", n, b - a, n / (b - a) }'
# diff A B: each process's CPU seconds in B less those in A
diff_cpu() {
	echo "$1 | $2" | awk -F'|' '{ n = split($1, a, " "); split($2, b, " ");
		for (i = 1; i <= n; i++) { split(a[i], x, "="); split(b[i], y, "="); split(x[2], p, "+"); m = split(y[2], q, "+");
			s = ""; for (k = 1; k <= m; k++) s = s (k > 1 ? "+" : "") sprintf("%.2f", q[k] - p[k]); printf "%s=%s ", x[1], s } }'
}
echo "bench dispatch: CPU s from the dispatcher's start to the last bind: dispatcher=$cd1 $(diff_cpu "$c0" "$c1")"
echo "bench dispatch: CPU s from the dispatcher's start to ${SETTLE:-3} s after it: dispatcher=$cd2 $(diff_cpu "$c0" "$c2")"
grep -E "stopped:|time:|path:" "$T/d.log" | sed 's/^/bench dispatch: /'
