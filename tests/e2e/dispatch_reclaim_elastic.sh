#!/bin/sh
# dispatch_reclaim_elastic.sh - `muster dispatch --reclaim` takes an
# elastic job's surplus pods before whole jobs (docs/dispatch.md, round
# 17), as the engine's preemption (src/engine/preempt.c) and Volcano's
# elastic scheduling do.  A hub `muster up` and one push worker, big (1 x 8
# GPUs, its own `muster scheduler`); hub Queues team-a and team-b deserve
# 4 GPUs each; the dispatcher runs with --reclaim --min-runtime 3s.
# Checked:
#   - team-a's elastic Job el (parallelism 4 of one GPU each,
#     muster.io/min-member 2) and four one-GPU Jobs a-0 .. a-3 fill big;
#   - team-b's Job b (2 GPUs) takes back two GPUs: el's copy on big is
#     shrunk from 4 to 2 pods (its spec.parallelism 2, two pods left),
#     el stays dispatched there and is not Preempted, no other job is
#     preempted; el's hub Job gets the Warning Event `Shrunk`, the
#     condition Shrunk (True, InCohortReclamation, "from 4 to 2 pods") and
#     the record muster.io/dispatch-shrunk; b goes to big and binds;
#   - (round 18) the intent muster.io/dispatch-shrinking is cleared once
#     the shrink is done; a dispatcher killed (kill -9) with the intent on
#     the hub and the copy back at 4 pods finishes the shrink when it is
#     started again (the copy at 2), and one killed with the copy at 2
#     already leaves it so; el stays on big, not Preempted;
#   - the log holds no sanitizer report.
# With a second argument `pull` big is a pull-mode cluster (round 22):
# the same shrink, recorded by the hub and made by big's agent, which
# answers in muster.io/agent-shrink (cleared with the intent); one PATCH
# per shrink in the agent's log; the restarts kill the agent too and
# start it again before the dispatcher.
# Usage: sh tests/e2e/dispatch_reclaim_elastic.sh PATH_TO_MUSTER [pull].
# Ends with "e2e dispatch-reclaim-elastic[-pull]: N passed, N failed".
EL_MODE=${2:-push}
E2E_NAME=dispatch-reclaim-elastic; [ "$EL_MODE" = pull ] && E2E_NAME=dispatch-reclaim-elastic-pull
E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
. "$(dirname "$0")/lib/reclaim.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_kubectl

reclaim_start big
reclaim_wire big "$EL_MODE"

# el: four one-GPU pods, at least two (the worker's scheduler places the
# others as room allows; the Job controller deletes the pods above a
# lowered parallelism)
job el team-a 1 600s | sed 's/^  annotations: {muster.io\/duration: 600s}$/  annotations: {muster.io\/duration: 600s, muster.io\/min-member: "2"}/; s/^  suspend: true$/  suspend: true\n  parallelism: 4/' >"$T/el.yaml"
expect "team-a's elastic job" 0 h apply -f "$T/el.yaml"
elpods() { w big get pods -l batch.kubernetes.io/job-name=el -o name | wc -l; }
el_bound() { ann job el dispatch-pods | grep -q "^bound=4,"; }
wait_for el-bound 150 el_bound || echo "  el: $(ann job el dispatch-pods), $(elpods) pods"
: >"$T/a.yaml"
for i in 0 1 2 3; do job "a-$i" team-a 1 600s >>"$T/a.yaml"; echo --- >>"$T/a.yaml"; done
expect "team-a's jobs" 0 h apply -f "$T/a.yaml"
for i in 0 1 2 3; do wait_for "a-$i-bound" 150 bound "a-$i"; done
sleep 3 # past the minimum runtime

job b team-b 2 5s >"$T/b.yaml"
expect "team-b's job b" 0 h apply -f "$T/b.yaml"
wait_for b-to-big 200 ann_is job b cluster big || echo "  b: $(ann job b dispatch-reason): $(ann job b dispatch-message)"
wait_for b-bound 150 bound b
shrunk_cond() { hget job el '{.status.conditions[?(@.type=="Shrunk")].reason}'; }
is_shrunk() { [ "$(shrunk_cond)" = InCohortReclamation ]; }
wait_for el-shrunk 100 is_shrunk || echo "  el's conditions: $(hget job el '{.status.conditions}')"
msg=$(hget job el '{.status.conditions[?(@.type=="Shrunk")].message}')
case "$msg" in *"from 4 to 2 pods"*"team-b"*) ok ;; *) bad "Shrunk message: '$msg'" ;; esac
case "$(ann job el dispatch-shrunk)" in *"	2	InCohortReclamation	"*) ok ;; *) bad "el's record: '$(ann job el dispatch-shrunk)'" ;; esac
par2() { [ "$(w big get job el -o 'jsonpath={.spec.parallelism}')" = 2 ]; }
wait_for el-par-2 50 par2 || echo "  el's parallelism on big: $(w big get job el -o 'jsonpath={.spec.parallelism}')"
two_left() { [ "$(w big get pods -l batch.kubernetes.io/job-name=el -o name | wc -l)" -eq 2 ]; }
wait_for el-two-pods 150 two_left || echo "  el's pods: $(elpods)"
ann_is job el cluster big && ok || bad "el not dispatched to big: '$(ann job el cluster)'"
[ -z "$(hget job el '{.status.conditions[?(@.type=="Preempted")].reason}')" ] && ok || bad "el Preempted"
[ "$(preempted | wc -l)" -eq 0 ] && ok || bad "jobs preempted: $(preempted | tr '\n' ' ')"
shev() { h get events -n default -o jsonpath='{range .items[?(@.reason=="Shrunk")]}{.involvedObject.name} {.type}{"\n"}{end}' && grep -q "^el Warning" "$T/out"; }
wait_for shrunk-event 50 shev || echo "  events: $(cat "$T/out")"
for i in 0 1 2 3; do ann_is job "a-$i" cluster big && ok || bad "a-$i not on big"; done
no_intent() { [ -z "$(ann job el dispatch-shrinking)" ]; }
wait_for el-intent-cleared 50 no_intent || echo "  el's intent: '$(ann job el dispatch-shrinking)'"
if [ "$EL_MODE" = pull ]; then
	# round 22: the agent made it and answered; the hub took the answer
	# off with the intent; the shrink was made once (one PATCH)
	no_answer() { [ -z "$(hget job el '{.metadata.annotations.muster\.io/agent-shrink}')" ]; }
	wait_for el-answer-cleared 50 no_answer || echo "  el's answer: '$(hget job el '{.metadata.annotations.muster\.io/agent-shrink}')'"
	has "the agent's shrink" "$T/agent.log" "copy default/el: shrunk to 2 pods for the hub: HTTP 200"
	[ "$(grep -c "shrunk to 2 pods for the hub" "$T/agent.log")" -eq 1 ] && ok || bad "the agent's shrinks: $(grep -c "shrunk to 2 pods for the hub" "$T/agent.log")"
	[ "$(grep -c "recorded: for its agent" "$T/d.log")" -eq 1 ] && ok || bad "shrinks recorded: $(grep -c "recorded: for its agent" "$T/d.log")"
fi
# round 18: killed between the intent and the worker's PATCH (the intent
# put back by hand on the hub, the copy back at 4), a restarted dispatcher
# finishes the shrink; killed after it (the copy at 2), it leaves the copy
# as it is.  Round 22, pull mode: the agent is killed (kill -9) too and
# started again before the dispatcher; the agent makes the PATCH (or finds
# it made) and answers, and the restarted dispatcher settles from that.
gen=$(ann job el dispatch-generation)
restart_with_intent() {
	kill -9 "$DPID"; wait "$DPID" 2>/dev/null
	[ "$EL_MODE" != pull ] || { kill -9 "$APID"; wait "$APID" 2>/dev/null; }
	expect "el's copy at $1" 0 w big patch job el --type merge -p "{\"spec\":{\"parallelism\":$1}}"
	expect "el's intent put back" 0 h annotate --overwrite job el "muster.io/dispatch-shrinking=$(printf '%s\t2' "$gen")"
	[ "$EL_MODE" != pull ] || reclaim_agent big
	reclaim_dispatcher
}
restart_with_intent 4
if [ "$EL_MODE" = pull ]; then
	fin() { grep -q "job default/el: its shrink to 2 pods on big finished by its agent after the restart" "$T/d.log"; }
	was() { grep -q "job default/el: its shrink to 2 pods on big was done before the restart" "$T/d.log"; }
else
	fin() { grep -q "job default/el: its shrink to 2 pods on big finished after the restart" "$T/d.log"; }
	was() { grep -q "job default/el: its shrink to 2 pods on big was done before the restart" "$T/d.log"; }
fi
wait_for el-shrink-finished 150 fin
wait_for el-par-2-again 50 par2 || echo "  el's parallelism: $(w big get job el -o 'jsonpath={.spec.parallelism}')"
wait_for el-intent-cleared-again 50 no_intent
restart_with_intent 2
wait_for el-shrink-was-done 150 was
wait_for el-intent-cleared-3 50 no_intent
par2 && ok || bad "el's parallelism after the second restart: $(w big get job el -o 'jsonpath={.spec.parallelism}')"
ann_is job el cluster big && ok || bad "el not on big after the restarts: '$(ann job el cluster)'"
[ -z "$(hget job el '{.status.conditions[?(@.type=="Preempted")].reason}')" ] && ok || bad "el Preempted after the restarts"
if [ "$EL_MODE" = pull ]; then
	# the agent's PATCHes: the first shrink and the first restart's (the
	# copy put back at 4), not the second's (the copy at 2 already)
	[ "$(grep -c "shrunk to 2 pods for the hub" "$T/agent.log")" -eq 2 ] && ok || bad "the agent's shrinks after the restarts: $(grep -c "shrunk to 2 pods for the hub" "$T/agent.log")"
	hasnt "no sanitizer report (agent)" "$T/agent.log" "runtime error"
	hasnt "no ASan report (agent)" "$T/agent.log" "AddressSanitizer"
fi

hasnt "no sanitizer report" "$T/d.log" "runtime error"
hasnt "no ASan report" "$T/d.log" "AddressSanitizer"
done_
