# fleet.sh - what the dispatcher's end-to-end tests (dispatch_groups.sh,
# dispatch_kinds.sh, dispatch_kinds2.sh) share: `muster up` clusters with data in $T/NAME, a
# GPU NodePool and queue team-a for each, kubectl on the hub and on a
# cluster, ServiceAccount kubeconfigs, and the waits on the dispatcher's
# log.  Sourced after lib/common.sh (it uses T, M, KC, bad and done_);
# processes started are added to PIDS and killed on exit.

# fleet_needs_crds: sets ROOT (the checkout) and W (the real workloads'
# CRDs and samples in ../shared/data), and ends the test as skipped when
# they are not there; it needs kubectl.
fleet_needs_crds() {
	ROOT=$(cd "$(dirname "$0")/../.." && pwd)
	W="$ROOT/../shared/data/k8s/workloads"
	if [ ! -d "$W/crds" ]; then
		echo "skipped: ../shared/data/k8s/workloads not found (no CRDs)"
		done_
	fi
	need_kubectl
}

PIDS=""
on_exit() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	[ -n "${E2E_KEEP:-}" ] && cp "$T"/*.log "$T"/*.err "$E2E_KEEP"/ 2>/dev/null
}

# fleet_hub_queue: the hub's cluster file, $T/hub.yaml: one Queue, team-a,
# which the fleet tests' jobs name.
fleet_hub_queue() {
	printf '%s\n' 'apiVersion: muster.io/v1alpha1' 'kind: Queue' 'metadata: {name: team-a}' \
		'spec: {}' >"$T/hub.yaml"
}

# fleet_agent_small: the pull-mode agent of the cluster small (its log in
# $T/agent.log), then waits until small and big are Ready on the hub.
fleet_agent_small() {
	"$M" dispatch agent --hub-kubeconfig "$T/hub-agent.kc" --kubeconfig "$T/small-agent.kc" \
		--cluster small --interval 100ms >"$T/agent.out" 2>"$T/agent.log" &
	APID=$!
	PIDS="$PIDS $!"
	for n in small big; do wait_for "ready-$n" 100 state_is "$n"; done
}

# pool PREFIX COUNT: a cluster file with COUNT 8-GPU nodes named PREFIX-*
# and the queue team-a.
pool() {
	cat <<EOF
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: $2
  namePrefix: $1-
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {}
EOF
}
# start NAME [OPTIONS]: a `muster up` of $T/NAME.yaml with data in $T/NAME
# (on port LPORT when set), waited for until it is ready (15 s at most).
start() {
	n=$1; shift
	"$M" up --cluster "$T/$n.yaml" --listen "127.0.0.1:${LPORT:-0}" --data "$T/$n" --no-fsync --quiet "$@" \
		>"$T/$n.up.out" 2>"$T/$n.up.err" &
	PIDS="$PIDS $!"
	i=0
	while [ "$i" -lt 150 ]; do
		s=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$T/$n.up.out" 2>/dev/null)
		if [ -n "$s" ] && command curl -sfk "$s/readyz" >/dev/null 2>&1; then return 0; fi
		sleep 0.1; i=$((i + 1))
	done
	cat "$T/$n.up.err"; bad "muster up $n did not start"; done_
}
# h ARGS: kubectl on the hub, output in $T/out.  w CLUSTER ARGS: kubectl
# on CLUSTER.
h() { "$KC" --kubeconfig "$T/hub/kubeconfig" "$@" >"$T/out" 2>&1; }
w() { n=$1; shift; "$KC" --kubeconfig "$T/$n/kubeconfig" "$@" 2>/dev/null; }
# hget KIND NAME JSONPATH: a field of a hub object.  ann KIND NAME KEY: its
# annotation muster.io/KEY; ann_is KIND NAME KEY VALUE: whether it is VALUE.
hget() { "$KC" --kubeconfig "$T/hub/kubeconfig" get "$1" "$2" -o "jsonpath=$3" 2>/dev/null; }
ann() { hget "$1" "$2" "{.metadata.annotations.muster\.io/$3}"; }
ann_is() { [ "$(ann "$1" "$2" "$3")" = "$4" ]; }
# sa_kc CLUSTER ACCOUNT OUT: a kubeconfig of CLUSTER with ACCOUNT's token
# (namespace muster-system) instead of the admin's client certificate.
sa_kc() {
	tok=$("$KC" --kubeconfig "$T/$1/kubeconfig" create token "$2" -n muster-system)
	sed -e '/^    client-certificate-data: /d' -e "s/^    client-key-data: .*/    token: $tok/" \
		"$T/$1/kubeconfig" >"$3"
}
# state_is CLUSTER: whether the hub's Cluster is Ready.  serves CLUSTER
# KIND: whether the dispatcher (log $T/d.log) found that CLUSTER serves KIND.
state_is() { [ "$(hget cluster "$1" '{.status.state}')" = Ready ]; }
serves() { grep -q "cluster $1: serves $2 " "$T/d.log"; }
# fleet_wire: with hub, small and big started, a scheduler on small and on
# big, the dispatcher's RBAC on the hub and the pull agent's on small, the
# ServiceAccount kubeconfigs $T/hub-sa.kc, hub-agent.kc and small-agent.kc,
# and the hub's Clusters: small (region eu, pull mode) and big (region us,
# push, its kubeconfig in Secret big-kc).  Uses expect (lib/common.sh).
fleet_wire() {
	for n in small big; do
		"$M" scheduler --kubeconfig "$T/$n/kubeconfig" --no-leader-elect --min-runtime 0 \
			>"$T/$n.s.out" 2>"$T/$n.s.log" &
		PIDS="$PIDS $!"
	done
	h create namespace muster-system
	expect "apply deploy/dispatch-rbac.yaml" 0 h apply -f "$ROOT/deploy/dispatch-rbac.yaml"
	expect "apply deploy/dispatch-agent-rbac.yaml" 0 w small apply -f "$ROOT/deploy/dispatch-agent-rbac.yaml"
	sa_kc hub muster-dispatch "$T/hub-sa.kc"
	sa_kc hub muster-dispatch-agent "$T/hub-agent.kc"
	sa_kc small muster-dispatch-agent "$T/small-agent.kc"
	h -n muster-system create secret generic big-kc --from-file=kubeconfig="$T/big/kubeconfig"
	printf 'apiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: small, labels: {region: eu}}\nspec: {tier: private, mode: pull}\n---\napiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: big, labels: {region: us}}\nspec: {tier: private, kubeconfigSecret: {name: big-kc}}\n' >"$T/cl.yaml"
	expect clusters 0 h apply -f "$T/cl.yaml"
}
