# reclaim.sh - what the reclaim tests (dispatch_reclaim.sh, dispatch_reclaim_elastic.sh,
# dispatch_reclaim_pull.sh, dispatch_reclaim_kinds.sh, dispatch_reclaim_pdb.sh
# and its pull mode) share: their set-up (a hub and one worker, its
# scheduler, the accounts, the Cluster, the dispatcher with --reclaim and
# in pull mode the agent: reclaim_start, reclaim_wire), one-pod hub Jobs
# held suspended, team-a filling a cluster with eight one-GPU jobs,
# team-b's two-GPU job that reclaims two of them, and the reads of the
# victims' Preempted condition.
# Sourced after lib/common.sh and lib/fleet.sh (it uses T, KC, h, ann,
# expect and wait_for).

# job NAME QUEUE GPUS DURATION: a one-pod hub Job, held suspended
job() {
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels: {muster.io/queue: %s}\n  annotations: {muster.io/duration: %s}\nspec:\n  suspend: true\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "%s"}}}]\n' \
		"$1" "$2" "$4" "$3"
}
bound() { ann job "$1" dispatch-pods | grep -q "^bound=1,"; }

# preempted: the hub Jobs with the condition Preempted, a name a line
preempted() {
	"$KC" --kubeconfig "$T/hub/kubeconfig" get jobs -o \
		'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Preempted")].reason}{"\n"}{end}' \
		2>/dev/null | awk '$2 != "" {print $1}'
}
two() { [ "$(preempted | wc -l)" -eq 2 ]; }

# victims_gone CLUSTER: for each victim of $V whose hub Job reads Queued,
# no copy of its first dispatch (generation 1) on CLUSTER: its copy went
# before it was taken back.  A copy of a later generation is no failure:
# once b is done (5 s) the victims are sent again, and a loaded run can
# read the phase before that and the worker after (seen in round 23: the
# phase Queued, then a-3's generation-2 copy made at b's end).
victims_gone() {
	for v in $V; do
		ph=$(ann job "$v" dispatch-phase)
		g=$(w "$1" get job "$v" -o 'jsonpath={.metadata.annotations.muster\.io/dispatch-generation}' 2>/dev/null)
		[ "$ph" != Queued ] || [ "$g" != 1 ] && ok || bad "$v queued on the hub with its copy on $1"
	done
}

# fill_and_claim: team-a's eight one-GPU jobs bound and past the minimum
# runtime (3 s), then team-b's two-GPU job b; waits for two victims and
# sets V to their names.  BEFORE_CLAIM, when set, is run just before b is
# made (dispatch_reclaim.sh holds the copies there with a finalizer).
fill_and_claim() {
	: >"$T/a.yaml"
	for i in 0 1 2 3 4 5 6 7; do job "a-$i" team-a 1 600s >>"$T/a.yaml"; echo --- >>"$T/a.yaml"; done
	expect "team-a's jobs" 0 h apply -f "$T/a.yaml"
	for i in 0 1 2 3 4 5 6 7; do wait_for "a-$i-bound" 150 bound "a-$i"; done
	sleep 3 # past the minimum runtime
	[ -z "${BEFORE_CLAIM:-}" ] || eval "$BEFORE_CLAIM"
	job b team-b 2 5s >"$T/b.yaml"
	expect "team-b's job b" 0 h apply -f "$T/b.yaml"
	wait_for two-preempted 150 two || echo "  preempted: $(preempted | tr '\n' ' ')"
	V=$(preempted | tr '\n' ' ')
	echo "  victims: $V"
}

# reclaim_start CLUSTER: the set-up every reclaim test begins with, up to
# its servers: hub Queues team-a and team-b (4 GPUs deserved each), the
# worker CLUSTER's file $T/CLUSTER.yaml (one 8-GPU node, `pool`, unless the
# test wrote its own) with a queue team-b too, then a `muster up` of the
# hub and of CLUSTER (with RECLAIM_UP_FLAGS, when set, for CLUSTER).
reclaim_start() {
	printf '%s\n' 'apiVersion: muster.io/v1alpha1' 'kind: Queue' 'metadata: {name: team-a}' \
		'spec: {resources: {gpu: {deserved: 4}}}' '---' 'apiVersion: muster.io/v1alpha1' \
		'kind: Queue' 'metadata: {name: team-b}' 'spec: {resources: {gpu: {deserved: 4}}}' \
		>"$T/hub.yaml"
	[ -f "$T/$1.yaml" ] || pool "$1" 1 >"$T/$1.yaml"
	printf '%s\n' '---' 'apiVersion: muster.io/v1alpha1' 'kind: Queue' 'metadata: {name: team-b}' \
		'spec: {}' >>"$T/$1.yaml"
	start hub
	# shellcheck disable=SC2086 # flags, split on purpose
	start "$1" ${RECLAIM_UP_FLAGS:-}
}

# reclaim_dispatcher [OUT LOG]: `muster dispatch --reclaim --min-runtime 3s`
# as the hub's muster-dispatch account, its output appended to $T/OUT and
# $T/LOG (d.out, d.log); sets DPID.  Run again after a kill -9 to restart.
reclaim_dispatcher() {
	"$M" dispatch --kubeconfig "$T/hub-sa.kc" --interval 100ms --start-timeout 60s --id d1 \
		--reclaim --min-runtime 3s --no-leader-elect >>"$T/${1:-d.out}" 2>>"$T/${2:-d.log}" &
	DPID=$!
	PIDS="$PIDS $DPID"
}

# reclaim_wire CLUSTER push|pull: after reclaim_start, CLUSTER's `muster
# scheduler`, the dispatcher's RBAC on the hub (and the agent's on
# CLUSTER in pull mode), the ServiceAccount kubeconfigs ($T/hub-sa.kc;
# pull: $T/hub-agent.kc, $T/CLUSTER-agent.kc), the hub's Cluster (pull
# mode, or its kubeconfig in Secret CLUSTER-kc), the dispatcher
# (reclaim_dispatcher) and in pull mode CLUSTER's `muster dispatch agent`
# (with RECLAIM_AGENT_FLAGS; log $T/agent.log); waits until CLUSTER is
# Ready on the hub.  Uses expect and wait_for (lib/common.sh).
reclaim_wire() {
	"$M" scheduler --kubeconfig "$T/$1/kubeconfig" --no-leader-elect --min-runtime 0 \
		>"$T/$1.s.out" 2>"$T/$1.s.log" &
	PIDS="$PIDS $!"
	h create namespace muster-system
	expect "apply deploy/dispatch-rbac.yaml" 0 h apply -f "$ROOT/deploy/dispatch-rbac.yaml"
	if [ "$2" = pull ]; then
		expect "apply deploy/dispatch-agent-rbac.yaml" 0 w "$1" apply -f "$ROOT/deploy/dispatch-agent-rbac.yaml"
	fi
	sa_kc hub muster-dispatch "$T/hub-sa.kc"
	if [ "$2" = pull ]; then
		sa_kc hub muster-dispatch-agent "$T/hub-agent.kc"
		sa_kc "$1" muster-dispatch-agent "$T/$1-agent.kc"
		printf 'apiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: %s}\nspec: {tier: private, mode: pull}\n' \
			"$1" >"$T/cl.yaml"
	else
		h -n muster-system create secret generic "$1-kc" --from-file=kubeconfig="$T/$1/kubeconfig"
		printf 'apiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: %s}\nspec: {tier: private, kubeconfigSecret: {name: %s-kc}}\n' \
			"$1" "$1" >"$T/cl.yaml"
	fi
	expect cluster 0 h apply -f "$T/cl.yaml"
	reclaim_dispatcher
	[ "$2" != pull ] || reclaim_agent "$1"
	wait_for "ready-$1" 100 state_is "$1"
}

# reclaim_agent CLUSTER: CLUSTER's `muster dispatch agent` (pull mode,
# with RECLAIM_AGENT_FLAGS), its output appended to $T/agent.out and
# $T/agent.log; sets APID.  Run again after a kill -9 to restart it.
reclaim_agent() {
	# shellcheck disable=SC2086 # flags, split on purpose
	"$M" dispatch agent --hub-kubeconfig "$T/hub-agent.kc" --kubeconfig "$T/$1-agent.kc" \
		--cluster "$1" --interval 100ms ${RECLAIM_AGENT_FLAGS:-} >>"$T/agent.out" 2>>"$T/agent.log" &
	APID=$!
	PIDS="$PIDS $APID"
}

# pdb_audit FILE: an audit.k8s.io/v1 Policy in FILE that logs the
# requests on PodDisruptionBudgets only (for RECLAIM_UP_FLAGS: which of
# them a worker was asked).  pdb_watched LOG: whether the agent's account
# listed or watched them (the audit log LOG).
pdb_audit() {
	printf '%s\n' 'apiVersion: audit.k8s.io/v1' 'kind: Policy' 'rules:' '- level: Metadata' \
		'  resources: [{group: policy, resources: [poddisruptionbudgets]}]' '- level: None' >"$1"
}
pdb_watched() {
	grep 'system:serviceaccount:muster-system:muster-dispatch-agent' "$1" 2>/dev/null |
		grep -q '"verb": *"\(list\|watch\)"'
}
