#!/bin/sh
# affinity.sh - end-to-end placement with pod affinity, anti-affinity and
# topology spread constraints: `muster scheduler` against `muster up`
# (4 nodes in 2 zones), driven by the real kubectl (issue 15):
#   - anti-affinity: three app=web pods that refuse each other per host
#     land on three different nodes (binpack alone would stack them);
#   - the symmetry: a pod without terms stays out of the zone where a
#     bound pod's anti-affinity refuses it (the zone of n-0, where binpack
#     would put it);
#   - affinity: a pod that needs an app=cache pod in its zone lands in the
#     zone of the cache pod (n-3's, not n-0's where binpack would put it);
#   - spread: four pods with maxSkew 1 over zones land two per zone;
#   - namespaceSelector: a pod that wants a cache pod in a namespace
#     labelled team=a lands in the zone of that namespace's cache pod, not
#     the default namespace's; one that wants team=b waits until a
#     namespace is relabelled team=b (muster watches Namespaces).
# Usage: sh tests/e2e/affinity.sh PATH_TO_MUSTER.  Ends with
# "e2e affinity: N passed, N failed".  Every wait is a bounded loop and
# every process started here is killed on exit.
E2E_NAME=affinity; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
# nodes_of SELECTOR: the nodes of the bound pods it selects, one a line.
nodes_of() { kc get pods -l "$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' 2>/dev/null | grep .; }
bound() { nodes_of "$1" | grep -c .; }
is_bound() { [ "$(bound "$1")" -eq "$2" ]; }
zone_of() { kc get node "$1" -o jsonpath='{.metadata.labels.zone}'; }

cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  count: 4
  namePrefix: n-
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
  topology:
    - {label: zone, every: 2, prefix: zone-}
YAML
up_start "$T/cluster.yaml"
sched_start a --lease-duration 15 --retry-period 2
ready() { u=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | tail -n 1); [ -n "$u" ] && curl -sf "$u/readyz" >/dev/null 2>&1; }
wait_for scheduler-ready 300 ready

# pod NAME LABELS [SPEC-LINES]: a one-CPU pod for muster.
pod() {
	printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {%s}\n' "$1" "$2"
	printf 'spec:\n  schedulerName: muster\n'
	[ -n "${3:-}" ] && printf '%s\n' "$3"
	printf '  containers:\n  - {name: main, image: busybox, resources: {requests: {cpu: "1"}}}\n'
}

# --- anti-affinity: one web pod per host -------------------------------------
WEB='  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname'
{ pod web-0 "app: web" "$WEB"; pod web-1 "app: web" "$WEB"; pod web-2 "app: web" "$WEB"; } >"$T/web.yaml"
kc apply -f "$T/web.yaml" >/dev/null
wait_for web-bound 100 is_bound app=web 3
if [ "$(nodes_of app=web | sort -u | wc -l)" -eq 3 ]; then ok; else bad "web pods share a node: $(nodes_of app=web | tr '\n' ' ')"; fi

# --- a bound pod's anti-affinity keeps a pod without terms away ---------------
GUARD='  nodeSelector: {kubernetes.io/hostname: n-0}
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: noisy}}
        topologyKey: zone'
pod guard "app: guard" "$GUARD" >"$T/guard.yaml"
kc apply -f "$T/guard.yaml" >/dev/null
wait_for guard-bound 100 is_bound app=guard 1
GZ=$(zone_of n-0)
{ pod noisy-0 "app: noisy"; pod noisy-1 "app: noisy"; } >"$T/noisy.yaml"
kc apply -f "$T/noisy.yaml" >/dev/null
wait_for noisy-bound 100 is_bound app=noisy 2
for n in $(nodes_of app=noisy); do
	if [ "$(zone_of "$n")" != "$GZ" ]; then ok; else bad "noisy pod on $n, in guard's zone $GZ"; fi
done

# --- affinity: next to the cache, by zone ------------------------------------
pod cache "app: cache" '  nodeSelector: {kubernetes.io/hostname: n-3}' >"$T/cache.yaml"
kc apply -f "$T/cache.yaml" >/dev/null
wait_for cache-bound 100 is_bound app=cache 1
FRONT='  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchExpressions: [{key: app, operator: In, values: [cache]}]}
        topologyKey: zone'
{ pod front-0 "app: front" "$FRONT"; pod front-1 "app: front" "$FRONT"; } >"$T/front.yaml"
kc apply -f "$T/front.yaml" >/dev/null
wait_for front-bound 100 is_bound app=front 2
CZ=$(zone_of n-3)
for n in $(nodes_of app=front); do
	if [ "$(zone_of "$n")" = "$CZ" ]; then ok; else bad "front pod on $n, not in the cache's zone $CZ"; fi
done

# --- spread: two per zone ----------------------------------------------------
SPREAD='  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: spread}}'
{ for i in 0 1 2 3; do pod "spread-$i" "app: spread" "$SPREAD"; done; } >"$T/spread.yaml"
kc apply -f "$T/spread.yaml" >/dev/null
wait_for spread-bound 100 is_bound app=spread 4
for z in zone-0 zone-1; do
	c=0
	for n in $(nodes_of app=spread); do [ "$(zone_of "$n")" = "$z" ] && c=$((c + 1)); done
	if [ "$c" -eq 2 ]; then ok; else bad "$z holds $c spread pods, expected 2"; fi
done

# --- namespaceSelector: namespaces chosen by their labels --------------------
# nsa (team=a) holds a cache pod on n-1 (zone-0); the default namespace's
# cache pod is on n-3 (zone-1).  A pod that wants a cache pod in a team=a
# namespace lands in zone-0; one that wants a team=b namespace's waits
# until nsa is relabelled team=b.
kc create namespace nsa >/dev/null && kc label namespace nsa team=a >/dev/null && ok || bad "namespace nsa"
kc create namespace nsb >/dev/null && kc label namespace nsb team=c >/dev/null && ok || bad "namespace nsb"
pod cachea "app: cache" '  nodeSelector: {kubernetes.io/hostname: n-1}' | sed 's/^  name: cachea$/  name: cachea\n  namespace: nsa/' >"$T/cachea.yaml"
kc apply -f "$T/cachea.yaml" >/dev/null
cachea() { [ -n "$(kc -n nsa get pod cachea -o jsonpath='{.spec.nodeName}' 2>/dev/null)" ]; }
wait_for cachea-bound 100 cachea
nssel() { printf '  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n'
	printf '      - labelSelector: {matchLabels: {app: cache}}\n        namespaceSelector: {matchLabels: {team: %s}}\n' "$1"
	printf '        topologyKey: zone'; }
pod nssel "app: nssel" "$(nssel a)" >"$T/nssel.yaml"
kc apply -f "$T/nssel.yaml" >/dev/null
wait_for nssel-bound 100 is_bound app=nssel 1
AZ=$(zone_of n-1)
if [ "$(zone_of "$(nodes_of app=nssel)")" = "$AZ" ]; then ok; else bad "nssel on $(nodes_of app=nssel), not in $AZ (the team=a cache's zone)"; fi
pod nsselb "app: nsselb" "$(nssel b)" >"$T/nsselb.yaml"
kc apply -f "$T/nsselb.yaml" >/dev/null
sleep 1.5
if [ "$(bound app=nsselb)" -eq 0 ]; then ok; else bad "nsselb bound with no team=b namespace holding a cache pod"; fi
kc label namespace nsa team=b --overwrite >/dev/null
wait_for nsselb-bound-after-relabel 100 is_bound app=nsselb 1
if [ "$(zone_of "$(nodes_of app=nsselb)")" = "$AZ" ]; then ok; else bad "nsselb on $(nodes_of app=nsselb), not in $AZ"; fi
done_
