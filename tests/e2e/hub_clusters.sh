#!/bin/sh
# hub_clusters.sh - end-to-end tests of the hub's Cluster kind
# (clusters.muster.io, docs/dispatch.md) on `muster up`, driven by kubectl:
# discovery, apply, the table of `kubectl get clusters` with its status
# columns, and the validation of bad Clusters (no tier, an unknown tier or
# mode, push mode without a kubeconfig Secret, a negative price).
# Usage: sh tests/e2e/hub_clusters.sh PATH_TO_MUSTER.  Ends with
# "e2e hub_clusters: N passed, N failed".  The server is killed on exit.
E2E_NAME=hub_clusters; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""
on_exit() { [ -n "$UPID" ] && kill -9 "$UPID" 2>/dev/null; }
need_kubectl

cat >"$T/hub.yaml" <<'EOF2'
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec:
  resources:
    gpu: {deserved: 16}
EOF2
up_start "$T/hub.yaml"

k api-resources; has api-resources "$T/out" "clusters"
has api-resources-short "$T/out" "mcl"

cat >"$T/clusters.yaml" <<'EOF2'
apiVersion: muster.io/v1alpha1
kind: Cluster
metadata: {name: onprem-big, labels: {region: eu}}
spec:
  tier: private
  kubeconfigSecret: {name: onprem-big-kubeconfig, namespace: muster-system}
---
apiVersion: muster.io/v1alpha1
kind: Cluster
metadata: {name: cloud}
spec:
  tier: public
  mode: push
  costPerGPUHour: 2.5
  kubeconfigSecret: {name: cloud-kubeconfig}
---
apiVersion: muster.io/v1alpha1
kind: Cluster
metadata: {name: edge-1}
spec: {tier: edge, mode: pull}
EOF2
if k apply -f "$T/clusters.yaml"; then ok; else bad "apply: $(cat "$T/out")"; fi
k get clusters; has get "$T/out" "TIER"
has get-row "$T/out" "onprem-big"
has get-pull "$T/out" "pull"
k get clusters -o wide; has get-wide "$T/out" "2.5"
k get mcl cloud -o yaml; has get-yaml "$T/out" "costPerGPUHour: 2.5"
k get clusters -l region=eu -o name; has selector "$T/out" "cluster.muster.io/onprem-big"
hasnt selector-other "$T/out" "cloud"
# The hub writes status through the subresource; the table shows it.
# (TLS and a token are always on: the certificate and token muster up keeps)
code=$(api -s -o "$T/body" -w '%{http_code}' -X PATCH \
	-H 'Content-Type: application/merge-patch+json' \
	--data-binary '{"status":{"state":"Ready","gpus":240,"freeGPUs":16,"running":28}}' \
	"$S/apis/muster.io/v1alpha1/clusters/onprem-big/status")
if [ "$code" = 200 ]; then ok; else bad "status patch: HTTP $code"; fi
k get clusters onprem-big; has status-state "$T/out" "Ready"
has status-gpus "$T/out" "240"

# bad_cluster NAME SPEC TEXT: applying SPEC is refused, naming TEXT.
bad_cluster() {
	printf 'apiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: bad}\n%s\n' "$2" \
		>"$T/bad.yaml"
	if k apply -f "$T/bad.yaml"; then bad "$1: accepted"; else ok; fi
	has "$1" "$T/out" "$3"
}
bad_cluster no-spec "" "spec"
bad_cluster no-tier "spec: {mode: pull}" "spec.tier"
bad_cluster bad-tier "spec: {tier: moon, mode: pull}" "supported values: \"private\""
bad_cluster bad-mode "spec: {tier: edge, mode: carrier-pigeon}" "spec.mode"
bad_cluster no-secret "spec: {tier: private}" "spec.kubeconfigSecret.name"
bad_cluster bad-cost "spec: {tier: public, mode: pull, costPerGPUHour: -1}" "spec.costPerGPUHour"
k get clusters bad; has not-stored "$T/out" "NotFound"
done_
