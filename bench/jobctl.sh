#!/bin/sh
# jobctl.sh - what `muster up`'s Job controller (src/apiserver/jobctl.c)
# costs for many Jobs: a `muster up` without nodes gets N one-pod Jobs
# (not suspended, created by one kubectl in 1,000s), and the time is taken
# until every one of them has its pod and counts it active (a list of the
# Jobs every 0.5 s).  Prints the CPU seconds (user + system, from
# /proc/PID/stat) `muster up` spent from its start to that point, and the
# wall time: creates, pods and status included, so the cost per Job shows
# whether a Job's sync grows with the number of pods (it did: each
# reconcile listed every pod of the namespace).  Prints figures only;
# never fails on time.  Noisy on a shared machine: pair runs of two
# builds alternately, and give `uptime` beside the figures.
# Usage: sh bench/jobctl.sh [MUSTER] [N]   (build/muster 2000)
set -u
M=${1:-build/muster}
N=${2:-2000}
KC=${KC:-/usr/bin/kubectl}
T=$(mktemp -d)
UP=""
trap '[ -n "$UP" ] && kill -9 "$UP" 2>/dev/null; rm -rf "$T"' EXIT
printf 'apiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: team-a}\nspec: {}\n' >"$T/c.yaml"
"$M" up --cluster "$T/c.yaml" --listen 127.0.0.1:0 --data "$T/d" --no-fsync --quiet >"$T/up.out" 2>&1 &
UP=$!
i=0
until s=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$T/up.out" 2>/dev/null) &&
	[ -n "$s" ] && curl -sfk "$s/readyz" >/dev/null 2>&1; do
	sleep 0.1; i=$((i + 1))
	[ "$i" -lt 300 ] || { echo "bench jobctl: muster up did not start"; exit 1; }
done
t0=$(date +%s.%N)
i=0
while [ "$i" -lt "$N" ]; do
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j-%d}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: x}]\n---\n' "$i" >>"$T/jobs-$((i / 1000)).yaml"
	i=$((i + 1))
done
for f in "$T"/jobs-*.yaml; do
	"$KC" --kubeconfig "$T/d/kubeconfig" create -f "$f" >/dev/null || { echo "bench jobctl: create failed"; exit 1; }
done
active() {
	"$KC" --kubeconfig "$T/d/kubeconfig" get jobs -o 'jsonpath={range .items[*]}{.status.active}{"\n"}{end}' |
		grep -c '^1$'
}
while [ "$(active)" -lt "$N" ]; do sleep 0.5; done
t1=$(date +%s.%N)
cpu=$(awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$UP/stat")
echo "bench jobctl: $N Jobs, each with its pod active: muster up CPU ${cpu} s," \
	"wall $(echo "$t1 - $t0" | bc) s (load: $(uptime | sed 's/.*load average: //'))"
