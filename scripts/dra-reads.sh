#!/bin/sh
# dra-reads.sh - what `muster scheduler` reads for DRA at scale: PODS pods
# (default 1000), each with a claim from one ResourceClaimTemplate for one
# GPU, on NODES nodes (default 125) of 8 GPUs each (a ResourceSlice per
# node), against `muster up`.  Prints the scheduler's DRA list reads and the
# objects they returned (muster_dra_list_reads_total,
# muster_dra_list_objects_total), the pods bound and the seconds it took,
# once all are bound (or after 600 s).  Not a test: docs/kubernetes.md
# quotes its figures.
# Usage: sh scripts/dra-reads.sh [MUSTER] [PODS] [NODES]
set -u
M=${1:-build/muster}; PODS=${2:-1000}; NODES=${3:-125}
KC=${KC:-/usr/bin/kubectl}
T=$(mktemp -d /tmp/dra-reads.XXXXXX)
UPID=""; SPID=""
trap 'for p in $SPID $UPID; do kill "$p" 2>/dev/null; done; sleep 0.5; rm -rf "$T"' EXIT INT TERM

cat >"$T/cluster.yaml" <<Y
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: n}
spec: {count: $NODES, namePrefix: node-, allocatable: {cpu: "64", memory: 512Gi}}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: q}
spec: {}
Y
"$M" up --cluster "$T/cluster.yaml" --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet \
	>"$T/up.out" 2>"$T/up.err" &
UPID=$!
i=0
while [ "$i" -lt 300 ] && ! grep -q "serving the Kubernetes API" "$T/up.out"; do sleep 0.1; i=$((i + 1)); done
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
{
	cat <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: gpu, deviceClassName: gpu.example.com}]
Y
	# one slice per node, named as the pool names its nodes (node-00 ...)
	for n in $(kc get nodes -o jsonpath='{.items[*].metadata.name}'); do
		cat <<Y
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: $n-gpus}
spec:
  driver: gpu.example.com
  nodeName: $n
  pool: {name: $n, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0, basic: {}}, {name: gpu-1, basic: {}}, {name: gpu-2, basic: {}}, {name: gpu-3, basic: {}},
            {name: gpu-4, basic: {}}, {name: gpu-5, basic: {}}, {name: gpu-6, basic: {}}, {name: gpu-7, basic: {}}]
Y
	done
} >"$T/dra.yaml"
[ "$(grep -c 'kind: ResourceSlice' "$T/dra.yaml")" -eq "$NODES" ] || { echo "dra-reads: the server lists other than $NODES nodes" >&2; exit 1; }
kc create -f "$T/dra.yaml" >/dev/null || exit 1
n=0
while [ "$n" -lt "$PODS" ]; do
	cat <<Y
---
apiVersion: v1
kind: Pod
metadata: {name: p-$n, namespace: default, labels: {muster.io/queue: q}}
spec:
  schedulerName: muster
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
Y
	n=$((n + 1))
done >"$T/pods.yaml"
start=$(date +%s)
"$M" scheduler --kubeconfig "$T/data/kubeconfig" --id r --lease-namespace default --metrics 127.0.0.1:0 \
	--min-runtime 0 >"$T/sched.out" 2>"$T/sched.log" &
SPID=$!
kc create -f "$T/pods.yaml" >/dev/null || exit 1
murl=""
bound=0
while [ $(( $(date +%s) - start )) -lt 600 ]; do
	sleep 2
	[ -n "$murl" ] || murl=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | tail -n 1)
	[ -n "$murl" ] || continue
	curl -sf "$murl/metrics" >"$T/m" || continue
	bound=$(sed -n 's/^muster_binds_total //p' "$T/m")
	[ "${bound:-0}" -ge "$PODS" ] && break
done
echo "pods=$PODS nodes=$NODES bound=$bound seconds=$(( $(date +%s) - start ))" \
	"list_reads=$(sed -n 's/^muster_dra_list_reads_total //p' "$T/m")" \
	"list_objects=$(sed -n 's/^muster_dra_list_objects_total //p' "$T/m")"
