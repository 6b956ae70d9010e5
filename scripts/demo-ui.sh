#!/bin/sh
# demo-ui.sh - the live web UI on a running simulated cluster, in one
# command (`make demo-ui`): starts `muster up` with examples/ui-demo (48
# simulated 8-GPU servers in 6 racks, a queue tree), `muster scheduler`
# with its listener on 127.0.0.1:PORT, and a workload that keeps arriving:
# batch/v1 Jobs of 1 to 32 GPUs (gangs of up to 8 pods) in the queues
# vision, nlp and production, each running 30 s to 6 min (simulated pods
# end after their muster.io/duration).  It prints the UI's address with
# its token and runs until Ctrl-C, which stops everything it started.
#
# Usage: sh scripts/demo-ui.sh [MUSTER] [PORT]   (default build/muster, 10259)
# Environment: DEMO_SECONDS=N stops after N seconds; DEMO_BURST=N jobs at once
# first (default 40); DEMO_EVERY=S seconds between later jobs (default 3).
set -u
M=${1:-build/muster}
PORT=${2:-10259}
D=${DEMO_DIR:-build/demo-ui}
rm -rf "$D"; mkdir -p "$D"
UPID=""; SPID=""
stop() { for p in $SPID $UPID; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap 'stop; exit 0' INT TERM
trap 'stop' EXIT
"$M" up --cluster examples/ui-demo/cluster.yaml --listen 127.0.0.1:0 --data "$D/data" --no-fsync --quiet \
	>"$D/up.out" 2>"$D/up.err" &
UPID=$!
S=""; i=0
while [ $i -lt 100 ]; do
	S=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$D/up.out")
	[ -n "$S" ] && curl -sfk "$S/readyz" >/dev/null 2>&1 && break
	sleep 0.1; i=$((i + 1))
done
[ -n "$S" ] || { cat "$D/up.err"; echo "demo-ui: muster up did not start" >&2; exit 1; }
# muster up speaks TLS and asks for its token
api() { curl --cacert "$D/data/tls.crt" -H "Authorization: Bearer $(cat "$D/data/token")" "$@"; }
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$D/token"
"$M" scheduler --kubeconfig "$D/data/kubeconfig" --no-leader-elect --metrics "127.0.0.1:$PORT" \
	--token-file "$D/token" --ui-history-step "${DEMO_STEP:-10}" --min-runtime 20 \
	>"$D/scheduler.out" 2>"$D/scheduler.log" &
SPID=$!
i=0
while [ $i -lt 100 ] && ! curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; do
	kill -0 $SPID 2>/dev/null || { cat "$D/scheduler.log"; echo "demo-ui: the scheduler did not start (is port $PORT free?)" >&2; exit 1; }
	sleep 0.1; i=$((i + 1))
done

# job N: submits demo job number N (sizes, queues and run times cycle
# through fixed lists, so every run looks the same).
job() {
	n=$1
	set -- vision nlp production nlp vision nlp
	shift $((n % 6)); q=$1
	set -- 1 2 4 8 8 16 32 1 4 2 24 64
	shift $((n % 12)); g=$1
	set -- 45 90 180 360 30 120 240 60 150
	shift $((n % 9)); secs=$1
	pods=1; per=$g
	if [ "$g" -gt 8 ]; then pods=$((g / 8)); per=8; fi
	type=train; [ "$q" = production ] && type=inference
	[ $((n % 5)) -eq 0 ] && type=interactive && pods=1 && per=1
	name="$q-$type-$n"
	api -sf -X POST -H 'Content-Type: application/json' "$S/apis/batch/v1/namespaces/default/jobs" -d "{
	  \"apiVersion\":\"batch/v1\",\"kind\":\"Job\",
	  \"metadata\":{\"name\":\"$name\",\"labels\":{\"muster.io/queue\":\"$q\"},
	    \"annotations\":{\"muster.io/type\":\"$type\",\"muster.io/runtime-estimate\":\"${secs}s\"}},
	  \"spec\":{\"suspend\":true,\"parallelism\":$pods,\"completions\":$pods,\"template\":{
	    \"metadata\":{\"annotations\":{\"muster.io/duration\":\"${secs}s\"}},
	    \"spec\":{\"schedulerName\":\"muster\",\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"main\",
	      \"image\":\"pytorch\",\"resources\":{\"requests\":{\"cpu\":\"4\",\"memory\":\"32Gi\"},
	      \"limits\":{\"nvidia.com/gpu\":\"$per\"}}}]}}}}" >/dev/null ||
		echo "demo-ui: could not submit $name" >&2
}
n=0
while [ $n -lt "${DEMO_BURST:-40}" ]; do job $n; n=$((n + 1)); done
TOKEN=$(cat "$D/token")
echo "muster UI: http://127.0.0.1:$PORT/ui/#token=$TOKEN"
echo "  (Kubernetes API $S, kubeconfig $D/data/kubeconfig; logs in $D/; Ctrl-C stops it all)"
start=$(date +%s)
while :; do
	sleep "${DEMO_EVERY:-3}" & wait $!
	kill -0 $SPID 2>/dev/null || { echo "demo-ui: the scheduler stopped; see $D/scheduler.log" >&2; exit 1; }
	job $n; n=$((n + 1))
	if [ -n "${DEMO_SECONDS:-}" ] && [ $(($(date +%s) - start)) -ge "$DEMO_SECONDS" ]; then break; fi
done
