#!/bin/sh
# horizon_live.sh - `--policy muster-horizon` outside `muster eval`: the
# live scheduler against `muster up` (four 8-GPU nodes) re-chooses muster's
# settings by rollouts as GPU pods fill the cluster, and shows it in its log
# and /metrics; bad policy and horizon options are refused with a clear
# message by `muster scheduler` and `muster simulate`.
#   - 20 one-GPU pods (62.5% of the 32 GPUs) bind: choices are made as
#     they do (at 50% when 16 were bound in one cycle, and at 62%), each
#     logged, and muster_policy_choice{...,checkpoint="1"} shows the last;
#   - 6 more (81%): another choice, at checkpoint 3, and
#     muster_policy_choices_total counts at least two;
#   - muster-rollout and --horizon-* options without muster-horizon are
#     refused (exit 2), as are bad values, naming the option.
# Usage: sh tests/e2e/horizon_live.sh PATH_TO_MUSTER.  Ends with
# "e2e horizon_live: N passed, N failed".
E2E_NAME=horizon_live; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }

# Bad input, before anything starts.
expect rollout-refused 2 "$M" scheduler --policy muster-rollout
has rollout-message "$T/err" "muster-rollout chooses muster's settings once from the whole workload"
expect option-without-policy 2 "$M" scheduler --policy muster --horizon-every 0.2
has option-message "$T/err" "--horizon-every applies to --policy muster-horizon only"
expect bad-from 2 "$M" scheduler --policy muster-horizon --horizon-from 1.5
has bad-from-message "$T/err" "--horizon-from: expected a share of the GPUs from 0 to 1"
expect bad-interval 2 "$M" scheduler --policy muster-horizon --horizon-min-interval soon
has bad-interval-message "$T/err" "--horizon-min-interval: expected a duration"
expect unknown-option 2 "$M" scheduler --policy muster-horizon --horizon-bogus 1
has unknown-message "$T/err" "unknown option --horizon-bogus"
printf '%s\n' 'apiVersion: v1' 'kind: Node' 'metadata: {name: n0}' \
	'status: {allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "8"}}' '---' \
	'apiVersion: muster.io/v1alpha1' 'kind: Queue' 'metadata: {name: default}' 'spec: {}' >"$T/c.yaml"
printf '%s\n' 'apiVersion: muster.io/v1alpha1' 'kind: Workload' 'metadata: {name: w}' \
	'spec: {queue: default, podSets: [{replicas: 1, requests: {nvidia.com/gpu: "1"}}]}' >"$T/w.yaml"
expect sim-rollout-refused 2 "$M" simulate --cluster "$T/c.yaml" --workload "$T/w.yaml" --policy muster-rollout
has sim-rollout-message "$T/err" "muster-rollout chooses muster's settings once"
expect sim-option-without-policy 2 "$M" simulate --cluster "$T/c.yaml" --workload "$T/w.yaml" \
	--horizon-from 0.4
has sim-option-message "$T/err" "--horizon-from applies to --policy muster-horizon only"
expect sim-bad-every 2 "$M" simulate --cluster "$T/c.yaml" --workload "$T/w.yaml" \
	--policy muster-horizon --horizon-every 7
has sim-bad-every-message "$T/err" "--horizon-every"
# scenario files: an unknown horizon option, and horizon under another policy
printf '%s\n' 'apiVersion: muster.io/v1alpha1' 'kind: Scenario' 'metadata: {name: h}' 'spec:' \
	'  policy: muster-horizon' '  horizon: {from: 0.5, to: 3}' '  steps: [{at: 0s}]' >"$T/s1.yaml"
{ echo "---"; cat "$T/c.yaml"; } >>"$T/s1.yaml"
expect scenario-unknown-key 2 "$M" scenario "$T/s1.yaml"
has scenario-unknown-message "$T/err" "spec.horizon.to: unknown horizon option; expected from, every, minInterval or rollouts"
sed -e 's/policy: muster-horizon/policy: muster/' -e 's/to: 3/every: 0.2/' "$T/s1.yaml" >"$T/s2.yaml"
expect scenario-other-policy 2 "$M" scenario "$T/s2.yaml"
has scenario-other-message "$T/err" "horizon and expectHorizon need policy muster-horizon"

need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
cat >"$T/cluster.yaml" <<'Y'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: 4
  namePrefix: gpu-
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {}
Y
up_start "$T/cluster.yaml"
# pods FROM TO: one-GPU pods p-FROM .. p-TO of queue team-a.
pods() {
	i=$1
	while [ "$i" -le "$2" ]; do
		cat <<Y
---
apiVersion: v1
kind: Pod
metadata: {name: p-$i, labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  containers: [{name: main, image: busybox,
                resources: {requests: {cpu: "2", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}]
Y
		i=$((i + 1))
	done
}
bound_count() { kc get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .; }
bound_n() { [ "$(bound_count)" -eq "$1" ]; }
murl() { sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | tail -n 1; }
metrics() { command curl -sf "$(murl)/metrics" >"$T/metrics"; }
at_checkpoint() { metrics && grep -qF "checkpoint=\"$1\"} 1" "$T/metrics"; }
choices() { sed -n 's/^muster_policy_choices_total //p' "$T/metrics"; }

sched_start hz --policy muster-horizon --horizon-min-interval 0
wait_for scheduler-ready 150 sh -c "[ -n \"\$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' '$T/sched.log')\" ]"
pods 1 20 >"$T/pods1.yaml"
kc apply -f "$T/pods1.yaml" >"$T/out" 2>&1 && ok || bad "apply: $(head -c 300 "$T/out")"
wait_for twenty-bound 300 bound_n 20
wait_for checkpoint-1 300 at_checkpoint 1
has choice-logged "$T/sched.log" "muster-horizon: checkpoint 1 (62% of GPUs allocated): mg "
has choice-metric "$T/metrics" 'muster_policy_choice{policy="muster-horizon",settings="mg '
has choice-share "$T/metrics" "muster_policy_choice_gpu_share 0.6250"
# then a gang of six (minMember 2): submitted again as its pods arrive,
# each pod counted as seen once (26 in all), not once per submission
printf 'apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 2, queue: team-a}\n' \
	>"$T/pods2.yaml"
pods 21 26 | sed 's/labels: {muster.io\/queue: team-a}/labels: {muster.io\/pod-group: g}/' >>"$T/pods2.yaml"
kc apply -f "$T/pods2.yaml" >"$T/out" 2>&1 && ok || bad "apply: $(head -c 300 "$T/out")"
wait_for twenty-six-bound 300 bound_n 26
wait_for checkpoint-3 300 at_checkpoint 3
has second-logged "$T/sched.log" "muster-horizon: checkpoint 3 (81% of GPUs allocated)"
has seen-once "$T/sched.log" "1 pod shapes seen (26 pods)"
[ "$(choices)" -ge 2 ] 2>/dev/null && ok || bad "muster_policy_choices_total $(choices), expected 2 or more"
# a clean stop: no sanitizer report (leaks show at exit)
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""
hasnt sanitizers "$T/sched.log" "Sanitizer"
done_
