#!/bin/sh
# horizon_change.sh - a live `--policy muster-horizon` re-choice that
# changes where a pod goes (round 16), and `muster kexplain` saying which
# settings placed a pod.  `muster up` with four 2-GPU nodes: n0, n1 with 16
# CPUs, n2, n3 with 5 (a 4-CPU one-GPU pod strands their second device).
#   - one at a time, each bound before the next: a 1-GPU pod (4 CPUs), an
#     800m share (gpu-fraction "0.8", half a CPU), again both, and a third
#     share: n0 and n1 hold a pod and a share each, n2 a share; 55% of the
#     GPUs are allocated (4,400 of 8,000 milli-GPU), past the first
#     checkpoint (50%);
#   - the rollouts, from the demand seen (both shapes), choose the
#     large-share rule on ("mg on": a share of 700m and more placed by the
#     CPU-aware growth, where the CPU left is as short as the GPUs), which
#     the defaults have off for this demand: muster_policy_changes_total 1;
#   - then one more 800m share lands on n3 (the rule on: the empty
#     CPU-poor node), where muster with its settings unchosen puts it on n2
#     (HZFROM=1 moves the first checkpoint out of reach: no choice, and the
#     probe-node check fails);
#   - kexplain shows the settings that placed each pod: the defaults before
#     any choice for the first pods, "mg on ... chosen at checkpoint 0" for
#     the probe, and with --scheduler the settings now (after the probe a
#     second choice, at 65%, takes the rule back off: the probe's line
#     still says what placed it).
# The node each setting gives was found with `muster scenario` on the same
# cluster (docs/policy.md, round 16).  Usage: sh tests/e2e/horizon_change.sh
# PATH_TO_MUSTER.  Ends with "e2e horizon_change: N passed, N failed".
E2E_NAME=horizon_change; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
{
	printf 'apiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: team-a}\nspec: {}\n'
	for i in 0 1 2 3; do
		cpu=16; [ "$i" -ge 2 ] && cpu=5
		printf -- '---\n{apiVersion: v1, kind: Node, metadata: {name: n%d}, status: {allocatable: {cpu: "%d", memory: 64Gi, nvidia.com/gpu: "2"}}}\n' "$i" "$cpu"
	done
} >"$T/cluster.yaml"
up_start "$T/cluster.yaml"
# pod NAME: a1, a2 one GPU with 4 CPUs; anything else an 800m share.
pod() {
	if [ "${1#a}" != "$1" ]; then
		r='requests: {cpu: "4", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}'; an='{}'
	else
		r='requests: {cpu: 500m}'; an='{gpu-fraction: "0.8"}'
	fi
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, labels: {muster.io/queue: team-a}, annotations: %s}\nspec:\n  schedulerName: muster\n  containers: [{name: main, image: busybox, resources: {%s}}]\n' \
		"$1" "$an" "$r"
}
node_of() { kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
bound() { [ -n "$(node_of "$1")" ]; }
murl() { sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | tail -n 1; }
changes() { command curl -sf "$(murl)/metrics" | sed -n 's/^muster_policy_changes_total //p'; }
changed() { [ "$(changes)" = 1 ]; }

printf 'hz-token\n' >"$T/token"
sched_start hz --policy muster-horizon --horizon-min-interval 0 --horizon-from "${HZFROM:-0.5}" \
	--token-file "$T/token"
wait_for scheduler-ready 150 sh -c "[ -n \"\$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' '$T/sched.log')\" ]"
for p in a1 s1 a2 s2 s3; do
	pod "$p" >"$T/$p.yaml"
	kc apply -f "$T/$p.yaml" >"$T/out" 2>&1 && ok || bad "apply $p: $(head -c 300 "$T/out")"
	wait_for "$p-bound" 120 bound "$p"
done
where="$(node_of a1) $(node_of s1) $(node_of a2) $(node_of s2) $(node_of s3)"
[ "$where" = "n0 n0 n1 n1 n2" ] && ok || bad "first pods on '$where', expected 'n0 n0 n1 n1 n2'"
wait_for settings-changed 90 changed
has choice-logged "$T/sched.log" "muster-horizon: checkpoint 0 (55% of GPUs allocated): mg on, reserve 0.75"
pod probe >"$T/probe.yaml"
kc apply -f "$T/probe.yaml" >"$T/out" 2>&1 && ok || bad "apply probe: $(head -c 300 "$T/out")"
wait_for probe-bound 120 bound probe
n=$(node_of probe)
[ "$n" = n3 ] && ok || bad "probe on '$n': expected n3, where only the chosen settings (mg on) put it"

# kexplain: the settings that placed each pod, and the scheduler's now.
expect kexplain-first 0 "$M" kexplain --kubeconfig "$T/data/kubeconfig" -n default a1
has first-defaults "$T/out" "placed by:  muster-horizon: mg auto, reserve 0.75, demand auto, mem auto (muster's defaults: no choice yet)"
expect kexplain-probe 0 "$M" kexplain --kubeconfig "$T/data/kubeconfig" -n default probe
has probe-setting "$T/out" "placed by:  muster-horizon: mg on, reserve 0.75, demand auto, mem auto (candidate "
has probe-checkpoint "$T/out" ", chosen at checkpoint 0, 55% of GPUs allocated; choice 1, changed)"
# the probe took the allocation to 65%: a second choice (checkpoint 1)
# takes the rule back off (the demand seen is mostly shares now)
choices2() { [ "$(command curl -sf "$(murl)/metrics" | sed -n 's/^muster_policy_choices_total //p')" = 2 ]; }
wait_for second-choice 90 choices2
expect kexplain-live 0 "$M" kexplain --kubeconfig "$T/data/kubeconfig" -n default --scheduler "$(murl)" --token-file "$T/token" probe
has live-policy "$T/out" "policy now: muster-horizon: mg auto, reserve 0.75, demand auto, mem auto (candidate 1, chosen at checkpoint 1; 2 choices, 2 changed the settings)"
has live-probe-still "$T/out" "placed by:  muster-horizon: mg on, reserve 0.75, demand auto, mem auto (candidate 6 of 10, chosen at checkpoint 0"
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""
hasnt sanitizers "$T/sched.log" "Sanitizer"
done_
