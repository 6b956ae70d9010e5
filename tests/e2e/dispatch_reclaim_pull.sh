#!/bin/sh
# dispatch_reclaim_pull.sh - `muster dispatch --reclaim` with the victims
# on a pull-mode cluster (docs/dispatch.md, "Hub queues: the engine's
# whole semantics", round 12 and its twelfth-round addendum): the victim is
# withdrawn through the agent as a copy that did not start in time is (its
# cluster label comes off, the agent deletes the copy, and two heartbeats
# later the hub takes it back).  A hub `muster up` and one worker, small
# (1 x 8 GPUs, its own `muster scheduler`), in pull mode through its
# `muster dispatch agent`; hub Queues team-a and team-b deserve 4 GPUs
# each; the dispatcher runs with --reclaim --min-runtime 3s.  The
# dispatcher and the agent run as the accounts of deploy/dispatch-rbac.yaml
# and deploy/dispatch-agent-rbac.yaml.  Checked:
#   - team-a's eight 1-GPU Jobs (10 min each) all go to small, their copies
#     made by the agent, and are bound;
#   - team-b's Job b (2 GPUs, 5 s) fits nowhere; exactly two of team-a's
#     Jobs get the condition Preempted (InCohortReclamation); each is back
#     on the hub ("back to the hub (Preempted)") only once its copy on small
#     is gone;
#   - b goes to small and succeeds; the two victims are sent again
#     (generation 2), one copy each on small, and bound; the six others
#     never left; no third job was withdrawn;
#   - a restart remembers the victims (muster.io/dispatch-preempted, written
#     with the withdraw): after a kill -9 of the dispatcher and a new one,
#     the victims keep the condition Preempted, and team-b's second Job b2
#     takes two other Jobs of team-a, never the same twice;
#   - the agent, run without --budgets, makes no request on small's
#     PodDisruptionBudgets (small's audit log), and the hub (--reclaim)
#     says once that it does not weigh them there;
#   - no 403 and no sanitizer report in any log.
# Usage: sh tests/e2e/dispatch_reclaim_pull.sh PATH_TO_MUSTER.  Ends with
# "e2e dispatch-reclaim-pull: N passed, N failed".
E2E_NAME=dispatch-reclaim-pull; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
. "$(dirname "$0")/lib/reclaim.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_kubectl

pdb_audit "$T/audit.yaml"
RECLAIM_UP_FLAGS="--audit-policy-file $T/audit.yaml --audit-log-path $T/small.audit"
reclaim_start small
reclaim_wire small pull

# --- team-a fills the cluster; team-b's job b takes back two GPUs ------------
fill_and_claim
for v in $V; do
	r=$(hget job "$v" '{.status.conditions[?(@.type=="Preempted")].reason}')
	[ "$r" = InCohortReclamation ] && ok || bad "$v: Preempted reason $r"
	ann job "$v" dispatch-preempted | grep -q "^InCohortReclamation	Preempted on cluster small" && ok ||
		bad "$v: record $(ann job "$v" dispatch-preempted)"
done
backs() { for v in $V; do grep -q "job default/$v: back to the hub (Preempted)" "$T/d.log" || return 1; done; }
wait_for victims-back 200 backs
victims_gone small

wait_for b-to-small 150 ann_is job b cluster small || echo "  b: $(ann job b dispatch-reason): $(ann job b dispatch-message)"
wait_for b-succeeded 300 ann_is job b dispatch-phase Succeeded || echo "  b: $(ann job b dispatch-phase)"
for v in $V; do
	wait_for "$v-sent-again" 150 ann_is job "$v" dispatch-generation 2 || echo "  $v: $(ann job "$v" dispatch-generation) $(ann job "$v" dispatch-reason)"
	wait_for "$v-bound-again" 150 bound "$v"
	n=$(w small get jobs -o name | grep -c "^job.batch/$v\$")
	[ "$n" -eq 1 ] && ok || bad "$v: $n copies on small"
done
for i in 0 1 2 3 4 5 6 7; do
	case " $V " in *" a-$i "*) continue ;; esac
	ann_is job "a-$i" dispatch-generation 1 && ok || bad "a-$i: generation $(ann job "a-$i" dispatch-generation)"
done
[ "$(grep -c 'back to the hub (Preempted)' "$T/d.log")" -eq 2 ] && ok ||
	bad "$(grep -c 'back to the hub (Preempted)' "$T/d.log") jobs preempted, not 2"

# --- a restart remembers the victims --------------------------------------------
kill -9 "$DPID"; wait "$DPID" 2>/dev/null
reclaim_dispatcher d2.out d2.log
adopted() { [ "$(grep -c ': adopted on small' "$T/d2.log")" -ge 8 ]; }
wait_for adopted-after-restart 150 adopted
sleep 4 # past the minimum runtime of the adopted jobs
job b2 team-b 2 5s >"$T/b2.yaml"
expect "team-b's job b2" 0 h apply -f "$T/b2.yaml"
four() { [ "$(preempted | wc -l)" -eq 4 ]; }
wait_for four-preempted 150 four || echo "  preempted: $(preempted | tr '\n' ' ')"
for v in $V; do
	r=$(hget job "$v" '{.status.conditions[?(@.type=="Preempted")].reason}')
	[ "$r" = InCohortReclamation ] && ok || bad "$v: condition Preempted after the restart: '$r'"
done
backs2() { [ "$(grep -c 'back to the hub (Preempted)' "$T/d2.log")" -ge 2 ]; }
wait_for victims2-back 200 backs2
for v in $V; do
	grep -q "job default/$v: back to the hub (Preempted)" "$T/d2.log" && bad "$v a victim twice" || ok
done
wait_for b2-to-small 150 ann_is job b2 cluster small || echo "  b2: $(ann job b2 dispatch-reason): $(ann job b2 dispatch-message)"

grep -i "runtime error\|AddressSanitizer\|LeakSanitizer" "$T/d.log" "$T/d2.log" "$T/agent.log" && bad "sanitizer" || ok
hasnt "no 403 for the restarted dispatcher" "$T/d2.log" "HTTP 403"
hasnt "no 403 for the dispatcher" "$T/d.log" "HTTP 403"
hasnt "no 403 for the agent" "$T/agent.log" "HTTP 403"
# the agent runs without --budgets: it asked small nothing about
# PodDisruptionBudgets (the audit log has none of its requests on them),
# and the reclaiming hub said once that it does not weigh them there
[ -f "$T/small.audit" ] && ! pdb_watched "$T/small.audit" && ok ||
	bad "the agent without --budgets listed or watched budgets (or no audit log)"
[ "$(grep -c "cluster small: its agent reports no disruption budgets" "$T/d.log")" -eq 1 ] && ok ||
	bad "the hub's note on the unread budgets: $(grep -c "reports no disruption budgets" "$T/d.log") times"
done_
