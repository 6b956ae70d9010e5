#!/bin/sh
# fgd_live.sh - `muster scheduler --policy fgd` measures fragmentation
# against the demand of the pods pending and running on the cluster, its
# typical pods (the twenty-second round; before it, fgd had no mix live and
# its measure counted one whole-GPU shape: a node's fragmentation was the
# free share of its partly used GPUs).  `muster up` with n0 (6 GPUs, 6 CPUs),
# n1 and n2 (1 GPU, 8 CPUs each; ties go to the first by name):
#   - six 800m shares (gpu-fraction "0.8", 1 CPU) pinned to n0 fill its
#     CPU; a 200m share pinned to n1 leaves n1's GPU 800m free;
#   - a 100m share free to go anywhere (z has no CPU left) then binds on n2:
#     on n1 it would leave 700m, which the 800m shares (6 of the 8 pods)
#     cannot use (growth 6/8 x 700 = 525 milli-GPU, 37 points), on n2 900m,
#     which they can (growth 0, 50 points).  Without a mix it binds on n1:
#     the measure sees n1's partly used GPU shrink (-100, 52 points) and n2's
#     whole one broken (+900, 28 points);
#   - after a restart the demand is listed again: a second 100m share binds
#     on n2 too (n2's 900m left at 800m still holds an 800m share; n1's at
#     700m does not), where without a mix n1 and n2 tie (-100 each) and
#     n1, the first, takes it;
#   - with the 800m shares deleted, the demand is the small shares only:
#     a third 100m share breaks a whole GPU of n0 (growth 0 for every shape
#     left, the first node on ties), where without a mix it goes on n1.
# All of it twice: with --policy fgd and with --policy muster-supply, whose
# shares go by FGD's points on the same mix here (its reserve is nothing
# without whole-GPU shapes in the demand; no node keeps the spread rule's
# 20 cores a free GPU), so it moves as fgd does and, before this round,
# stayed where fgd stayed.
# Usage: sh tests/e2e/fgd_live.sh PATH_TO_MUSTER.  Ends with
# "e2e fgd_live: N passed, N failed".
E2E_NAME=fgd_live; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
{
	printf 'apiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: team-a}\nspec: {}\n'
	printf -- '---\n{apiVersion: v1, kind: Node, metadata: {name: n0, labels: {pool: z}}, status: {allocatable: {cpu: "6", memory: 64Gi, nvidia.com/gpu: "6"}}}\n'
	for n in 1 2; do
		printf -- '---\n{apiVersion: v1, kind: Node, metadata: {name: n%s, labels: {pool: p%s}}, status: {allocatable: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "1"}}}\n' "$n" "$n"
	done
} >"$T/cluster.yaml"
# pod NAME FRACTION [POOL]: a share of one GPU with 1 CPU, pinned to POOL.
pod() {
	sel=""
	[ $# -gt 2 ] && sel="  nodeSelector: {pool: $3}
"
	printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, labels: {muster.io/queue: team-a}, annotations: {gpu-fraction: "%s"}}\nspec:\n  schedulerName: muster\n%s  containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}}}]\n' \
		"$1" "$2" "$sel"
}
node_of() { kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
bound() { [ -n "$(node_of "$1")" ]; }
on_node() { # CHECK POD NODE
	n=$(node_of "$2")
	[ "$n" = "$3" ] && ok || bad "$1: pod $2 on '$n', expected $3"
}
apply() { # NAME FRACTION [POOL]: applies the pod and waits until it is bound
	pod "$@" >"$T/$1.yaml"
	kc apply -f "$T/$1.yaml" >"$T/out" 2>&1 && ok || bad "apply $1: $(head -c 300 "$T/out")"
	wait_for "$1-bound" 300 bound "$1"
}

# live POLICY: the checks above with --policy POLICY, on a new `muster up`.
live() {
	POL=$1
	rm -rf "$T/data"; : >"$T/sched.log"
	up_start "$T/cluster.yaml"
	sched_start s1 --policy "$POL" -v
	for i in 1 2 3 4 5 6; do pod "z-$i" 0.8 z; done >"$T/z.yaml"
	kc apply -f "$T/z.yaml" >"$T/out" 2>&1 && ok || bad "apply: $(head -c 300 "$T/out")"
	wait_for "$POL/z-bound" 300 bound z-6
	apply x-1 0.2 p1
	on_node "$POL/x-1-on-n1" x-1 n1
	apply free-1 0.1
	on_node "$POL/mix-keeps-n1-for-800s" free-1 n2
	has "$POL/mix-logged" "$T/sched.log" "$POL: the mix is now 3 pod shapes (8 pods pending and running)"

	# a restart: the demand is built again from the pods listed
	kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""
	hasnt "$POL/sanitizers-1" "$T/sched.log" "Sanitizer"
	sched_start s2 --policy "$POL" -v
	apply free-2 0.1
	on_node "$POL/restart-keeps-the-mix" free-2 n2
	has "$POL/mix-relisted" "$T/sched.log" "$POL: the mix is now 3 pod shapes (9 pods pending and running)"

	# the 800m shares gone: only small shares in the demand
	kc delete pod z-1 z-2 z-3 z-4 z-5 z-6 --wait=false >"$T/out" 2>&1 && ok || bad "delete: $(head -c 300 "$T/out")"
	gone() { [ -z "$(kc get pods -o name 2>/dev/null | grep 'pod/z-')" ]; }
	wait_for "$POL/z-gone" 300 gone
	mix_small() { grep -qF "$POL: the mix is now 2 pod shapes (3 pods pending and running)" "$T/sched.log"; }
	wait_for "$POL/mix-without-800s" 300 mix_small
	apply free-3 0.1
	on_node "$POL/small-shares-break-n0" free-3 n0
	kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""
	hasnt "$POL/sanitizers-2" "$T/sched.log" "Sanitizer"
	kill "$UPID" 2>/dev/null; wait "$UPID" 2>/dev/null; UPID=""
}
live fgd
live muster-supply
done_
