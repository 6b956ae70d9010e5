#!/bin/sh
# dispatch_reclaim_pdb.sh - `muster dispatch --reclaim` respects the
# workers' PodDisruptionBudgets (docs/dispatch.md, "Reclaim across
# clusters: the leftovers", round 14), as kube-scheduler's preemption and
# `muster scheduler` (tests/e2e/pdb.sh) do: victims whose eviction would
# break a budget are chosen last.  A hub `muster up` and one push worker,
# big (1 x 8 GPUs, its own `muster scheduler`); hub Queues team-a and
# team-b deserve 4 GPUs each; the dispatcher runs with --reclaim
# --min-runtime 3s.  Checked:
#   - team-a's eight one-GPU Jobs a-0 .. a-7 go to big; a budget on big
#     (maxUnavailable 0) covers the copies' pods of all but a-3 and a-4 (their
#     template's label protect=yes); the dispatcher reads it (push: a
#     watch of policy/v1 poddisruptionbudgets) and says so;
#   - team-b's Job b (2 GPUs) takes back two GPUs: the two victims are
#     a-3 and a-4, the only ones outside the budget (without it the
#     engine's order takes the youngest, a-6 and a-7, or a-0 and a-1
#     when all were dispatched in one pass: the earlier submitted first);
#   - the log holds no 403 or sanitizer report.
# With a second argument `pull` (dispatch_reclaim_pdb_pull.sh) big is a
# pull-mode cluster: its `muster dispatch agent` (the account of
# deploy/dispatch-agent-rbac.yaml) reads the budget and reports each
# copy's allowance in its heartbeat (data.pdbs), with the same victims.
# Usage: sh tests/e2e/dispatch_reclaim_pdb.sh PATH_TO_MUSTER [pull].  Ends
# with "e2e dispatch-reclaim-pdb[-pull]: N passed, N failed".
PDB_MODE=${2:-push}
E2E_NAME=dispatch-reclaim-pdb; [ "$PDB_MODE" = pull ] && E2E_NAME=dispatch-reclaim-pdb-pull
E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
. "$(dirname "$0")/lib/reclaim.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_kubectl

printf '%s\n' 'apiVersion: muster.io/v1alpha1' 'kind: Queue' 'metadata: {name: team-a}' \
	'spec: {resources: {gpu: {deserved: 4}}}' '---' 'apiVersion: muster.io/v1alpha1' 'kind: Queue' \
	'metadata: {name: team-b}' 'spec: {resources: {gpu: {deserved: 4}}}' >"$T/hub.yaml"
pool big 1 >"$T/big.yaml"
printf '%s\n' '---' 'apiVersion: muster.io/v1alpha1' 'kind: Queue' 'metadata: {name: team-b}' \
	'spec: {}' >>"$T/big.yaml"
start hub; start big
"$M" scheduler --kubeconfig "$T/big/kubeconfig" --no-leader-elect --min-runtime 0 \
	>"$T/big.s.out" 2>"$T/big.s.log" &
PIDS="$PIDS $!"
h create namespace muster-system
expect "apply deploy/dispatch-rbac.yaml" 0 h apply -f "$ROOT/deploy/dispatch-rbac.yaml"
sa_kc hub muster-dispatch "$T/hub-sa.kc"
if [ "$PDB_MODE" = pull ]; then
	expect "apply deploy/dispatch-agent-rbac.yaml" 0 w big apply -f "$ROOT/deploy/dispatch-agent-rbac.yaml"
	sa_kc hub muster-dispatch-agent "$T/hub-agent.kc"
	sa_kc big muster-dispatch-agent "$T/big-agent.kc"
	printf 'apiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: big}\nspec: {tier: private, mode: pull}\n' >"$T/cl.yaml"
else
	h -n muster-system create secret generic big-kc --from-file=kubeconfig="$T/big/kubeconfig"
	printf 'apiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: big}\nspec: {tier: private, kubeconfigSecret: {name: big-kc}}\n' >"$T/cl.yaml"
fi
expect cluster 0 h apply -f "$T/cl.yaml"
"$M" dispatch --kubeconfig "$T/hub-sa.kc" --interval 100ms --start-timeout 60s --id d1 \
	--reclaim --min-runtime 3s --no-leader-elect >"$T/d.out" 2>"$T/d.log" &
DPID=$!
PIDS="$PIDS $DPID"
if [ "$PDB_MODE" = pull ]; then
	"$M" dispatch agent --hub-kubeconfig "$T/hub-agent.kc" --kubeconfig "$T/big-agent.kc" \
		--cluster big --interval 100ms >"$T/agent.out" 2>"$T/agent.log" &
	PIDS="$PIDS $!"
fi
wait_for ready-big 100 state_is big

# all but a-3 and a-4's pods carry protect=yes (the template's label, kept on the copy)
: >"$T/a.yaml"
for i in 0 1 2 3 4 5 6 7; do
	if [ "$i" != 3 ] && [ "$i" != 4 ]; then
		job "a-$i" team-a 1 600s | sed 's/^  template:$/  template:\n    metadata: {labels: {protect: "yes"}}/'
	else
		job "a-$i" team-a 1 600s
	fi >>"$T/a.yaml"
	echo --- >>"$T/a.yaml"
done
expect "team-a's jobs" 0 h apply -f "$T/a.yaml"
for i in 0 1 2 3 4 5 6 7; do wait_for "a-$i-bound" 150 bound "a-$i"; done
[ "$(w big get pods -l protect=yes -o name | wc -l)" -eq 6 ] && ok || bad "protected pods on big: $(w big get pods -l protect=yes -o name | wc -l)"
printf 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: protect, namespace: default}\nspec:\n  maxUnavailable: 0\n  selector: {matchLabels: {protect: "yes"}}\n' >"$T/pdb.yaml"
w big apply -f "$T/pdb.yaml" >/dev/null && ok || bad "PDB on big"
if [ "$PDB_MODE" = pull ]; then
	seen() { grep -q "cluster big: its agent reports budgets over 6 of its jobs" "$T/d.log"; }
else
	seen() { grep -q "cluster big: 1 disruption budgets, over 6 of its jobs" "$T/d.log"; }
fi
wait_for pdb-read 100 seen || grep "disruption budgets" "$T/d.log"
sleep 3 # past the minimum runtime

job b team-b 2 5s >"$T/b.yaml"
expect "team-b's job b" 0 h apply -f "$T/b.yaml"
wait_for two-preempted 150 two || echo "  preempted: $(preempted | tr '\n' ' ')"
V=$(preempted | sort | tr '\n' ' ')
[ "$V" = "a-3 a-4 " ] && ok || bad "victims '$V', not a-3 and a-4 (outside the budget)"
wait_for b-to-big 150 ann_is job b cluster big || echo "  b: $(ann job b dispatch-reason): $(ann job b dispatch-message)"
[ "$(preempted | wc -l)" -eq 2 ] && ok || bad "preempted: $(preempted | tr '\n' ' ')"

hasnt "no 403" "$T/d.log" "HTTP 403"
hasnt "no sanitizer report" "$T/d.log" "runtime error"
hasnt "no ASan report" "$T/d.log" "AddressSanitizer"
[ "$PDB_MODE" != pull ] || hasnt "agent: no 403" "$T/agent.log" "HTTP 403"
done_
