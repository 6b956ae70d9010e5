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
# pull-mode cluster: its `muster dispatch agent --budgets` (the account of
# deploy/dispatch-agent-rbac.yaml) reads the budget (big's audit log shows
# its list or watch of them) and reports each copy's allowance in its
# heartbeat (data.pdbs), with the same victims.
# Usage: sh tests/e2e/dispatch_reclaim_pdb.sh PATH_TO_MUSTER [pull].  Ends
# with "e2e dispatch-reclaim-pdb[-pull]: N passed, N failed".
PDB_MODE=${2:-push}
E2E_NAME=dispatch-reclaim-pdb; [ "$PDB_MODE" = pull ] && E2E_NAME=dispatch-reclaim-pdb-pull
E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
. "$(dirname "$0")/lib/reclaim.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_kubectl

# pull: the agent watches the budgets with --budgets (the hub reclaims);
# big's audit log shows its requests on them
pdb_audit "$T/audit.yaml"
RECLAIM_UP_FLAGS="--audit-policy-file $T/audit.yaml --audit-log-path $T/big.audit"
[ "$PDB_MODE" = pull ] && RECLAIM_AGENT_FLAGS=--budgets
reclaim_start big
reclaim_wire big "$PDB_MODE"

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
if [ "$PDB_MODE" = pull ]; then
	pdb_watched "$T/big.audit" && ok || bad "the agent (--budgets) made no list or watch of budgets"
fi
done_
