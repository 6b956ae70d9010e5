# reclaim.sh - what the reclaim tests (dispatch_reclaim.sh,
# dispatch_reclaim_pull.sh) share: one-pod hub Jobs held suspended, team-a
# filling a cluster with eight one-GPU jobs, team-b's two-GPU job that
# reclaims two of them, and the reads of the victims' Preempted condition.
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
