#!/bin/sh
# gc.sh - deletion propagation and the garbage collector of `muster up`
# (issue 16), with the real kubectl:
#   - kubectl delete --cascade=orphan: the owner gets the `orphan`
#     finalizer, its dependents lose their ownerReference and stay, then
#     the owner goes;
#   - --cascade=foreground: the owner gets `foregroundDeletion` and stays
#     (deletionTimestamp set) while a dependent with blockOwnerDeletion is
#     held by a finalizer of its own; when that finalizer is removed the
#     dependent goes, and then the owner;
#   - --cascade=background (kubectl's default): the owner goes at once and
#     the collector deletes the dependents whose owners are all gone, while
#     a dependent with a second, live owner only loses the dangling
#     reference; owners are matched by uid, not by name;
#   - a batch/v1 Job and its pods, with each of the three policies;
#   - across a restart (kill -9): an owner deleted while muster up was down
#     (its row removed from the stopped server's database) has its
#     dependents collected after the start, and an owner left waiting with
#     foregroundDeletion is finalized once its blocking dependent goes;
#   - while it runs: a dependent naming an owner uid that never existed, an
#     owner of that name with another uid, or an owner in another
#     namespace is collected at once (kube's virtual owners); a dangling
#     second reference is dropped; a reference to an unserved kind is left.
# Owners here are ConfigMaps (any kind owns the same way; a ReplicaSet-like
# owner of pods needs nothing more), so the test needs no other controller.
# Usage: sh tests/e2e/gc.sh PATH_TO_MUSTER.  Ends with
# "e2e gc: N passed, N failed".  Every process started here is killed on
# exit.
E2E_NAME=gc; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""
on_exit() { [ -n "$UPID" ] && kill -9 "$UPID" 2>/dev/null; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
exists() { kc get "$@" >/dev/null 2>&1; }
gone() { ! kc get "$@" >/dev/null 2>&1; }
uid() { kc get "$@" -o jsonpath='{.metadata.uid}'; }

cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  count: 2
  namePrefix: n-
  allocatable: {cpu: "8", memory: 32Gi}
YAML
up_start "$T/cluster.yaml"

# owner NAME: a ConfigMap owner; dep NAME OWNER [BLOCK [FINALIZER]]: a
# ConfigMap owned by OWNER (by its current uid).
owner() { kc create configmap "$1" >/dev/null; }
dep() {
	u=$(uid cm "$2")
	{
		printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n' "$1"
		printf '  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: %s, uid: %s, blockOwnerDeletion: %s}]\n' \
			"$2" "$u" "${3:-false}"
		[ -n "${4:-}" ] && printf '  finalizers: [%s]\n' "$4"
	} >"$T/dep.yaml"
	kc apply -f "$T/dep.yaml" >/dev/null
}

# --- orphan ---------------------------------------------------------------
owner o1; dep o1a o1; dep o1b o1
expect orphan 0 kc delete cm o1 --cascade=orphan
wait_for orphan-owner-gone 50 gone cm o1
exists cm o1a && exists cm o1b && ok || bad "orphan: a dependent was deleted"
kc get cm o1a -o jsonpath='{.metadata.ownerReferences}' >"$T/out"
[ ! -s "$T/out" ] && ok || bad "orphan: the reference stayed: $(cat "$T/out")"

# --- foreground, held by a blocking dependent -----------------------------
owner f1; dep f1a f1 true example.com/hold; dep f1b f1
expect foreground 0 kc delete cm f1 --cascade=foreground --wait=false
wait_for fg-nonblocking-gone 50 gone cm f1b
kc get cm f1 -o jsonpath='{.metadata.finalizers}|{.metadata.deletionTimestamp}' >"$T/out"
has fg-finalizer "$T/out" '["foregroundDeletion"]|20'
sleep 1
exists cm f1 && ok || bad "foreground: the owner went before its blocking dependent"
kc get cm f1a -o jsonpath='{.metadata.deletionTimestamp}' >"$T/out"
[ -s "$T/out" ] && ok || bad "foreground: the blocking dependent is not being deleted"
kc patch cm f1a --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
wait_for fg-dependent-gone 50 gone cm f1a
wait_for fg-owner-gone 50 gone cm f1

# --- background, a second owner, uid matching -----------------------------
owner b1; owner b2; dep b1a b1; dep b1b b1
u1=$(uid cm b1); u2=$(uid cm b2)
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: both\n  ownerReferences:\n' >"$T/both.yaml"
printf '  - {apiVersion: v1, kind: ConfigMap, name: b1, uid: %s}\n  - {apiVersion: v1, kind: ConfigMap, name: b2, uid: %s}\n' \
	"$u1" "$u2" >>"$T/both.yaml"
kc apply -f "$T/both.yaml" >/dev/null
expect background 0 kc delete cm b1
wait_for bg-dependents-gone 50 gone cm b1a
wait_for bg-dependents-gone-2 50 gone cm b1b
exists cm both && ok || bad "background: a dependent with a live owner was deleted"
wait_for bg-dangling-dropped 50 sh -c "[ \"\$($KC --kubeconfig $T/data/kubeconfig get cm both -o jsonpath='{.metadata.ownerReferences[*].name}')\" = b2 ]"
# a dependent of an old owner of the same name is collected when that
# uid goes, not kept alive by a new owner of the name
owner r1; dep r1a r1
kc delete cm r1 --cascade=orphan >/dev/null; owner r1
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stale\n  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: r1, uid: %s}]\n' \
	"$(uid cm r1)" >"$T/stale.yaml"
kc apply -f "$T/stale.yaml" >/dev/null
kc delete cm r1 >/dev/null
wait_for uid-matched 50 gone cm stale
exists cm r1a && ok || bad "an orphaned dependent was collected"

# --- a Job and its pods ---------------------------------------------------
job() {
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: %s}\nspec:\n  parallelism: 2\n  completions: 2\n' "$1"
	printf '  template:\n    metadata: {annotations: {muster.io/duration: "600"}}\n'
	printf '    spec:\n      restartPolicy: Never\n      schedulerName: nobody\n      containers: [{name: c, image: busybox}]\n'
}
npods() { [ "$(kc get pods -l job-name="$1" -o name 2>/dev/null | wc -l)" -eq "$2" ]; }
for pol in orphan foreground background; do
	job "j-$pol" >"$T/job.yaml"; kc apply -f "$T/job.yaml" >/dev/null
	wait_for "job-$pol-pods" 50 npods "j-$pol" 2
	expect "job-$pol-delete" 0 kc delete job "j-$pol" --cascade=$pol
	wait_for "job-$pol-gone" 50 gone job "j-$pol"
	if [ $pol = orphan ]; then
		sleep 1
		npods j-orphan 2 && ok || bad "orphan: the Job's pods were deleted"
		kc get pods -l job-name=j-orphan -o jsonpath='{.items[*].metadata.ownerReferences}' >"$T/out"
		[ ! -s "$T/out" ] && ok || bad "orphan: the pods kept their reference"
	else
		wait_for "job-$pol-pods-gone" 100 npods "j-$pol" 0
	fi
done
# --- owners that never existed, while muster up runs ---------------------
# kube's collector makes a "virtual" node for an owner it has not seen and
# confirms it with a live GET (attemptToDelete): absent (no such name, another
# uid, or not in the dependent's namespace) means the dependent is collected.
# ghost NAME NS REFS: a ConfigMap in NS whose ownerReferences are REFS
ghost() {
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n  ownerReferences: %s\n' \
		"$1" "$2" "$3" >"$T/ghost.yaml"
	kc apply -f "$T/ghost.yaml" >/dev/null
}
ghost v1 default '[{apiVersion: v1, kind: ConfigMap, name: nobody, uid: 00000000-0000-0000-0000-00000000dead}]'
wait_for virtual-never-existed 50 gone cm v1
owner v2
ghost v2a default '[{apiVersion: v1, kind: ConfigMap, name: v2, uid: 00000000-0000-0000-0000-00000000beef}]'
wait_for virtual-other-uid 50 gone cm v2a
exists cm v2 && ok || bad "virtual: the owner of that name was collected"
kc create namespace elsewhere >/dev/null; kc create configmap v3 -n elsewhere >/dev/null
ghost v3a default "[{apiVersion: v1, kind: ConfigMap, name: v3, uid: $(uid cm v3 -n elsewhere)}]"
wait_for virtual-other-namespace 50 gone cm v3a
ghost v3b elsewhere "[{apiVersion: v1, kind: ConfigMap, name: v3, uid: $(uid cm v3 -n elsewhere)}]"
owner v4
ghost v4a default "[{apiVersion: v1, kind: ConfigMap, name: v4, uid: $(uid cm v4)}, {apiVersion: v1, kind: ConfigMap, name: nobody, uid: 00000000-0000-0000-0000-0000000000aa}]"
ghost v5 default '[{apiVersion: example.com/v1, kind: Unserved, name: x, uid: 00000000-0000-0000-0000-0000000000bb}]'
wait_for virtual-dangling-ref-dropped 50 sh -c "[ \"\$($KC --kubeconfig $T/data/kubeconfig get cm v4a -o jsonpath='{.metadata.ownerReferences[*].name}')\" = v4 ]"
exists cm v3b -n elsewhere && ok || bad "virtual: a dependent in its owner's namespace was collected"
exists cm v5 && ok || bad "virtual: a dependent of a kind muster up does not serve was collected"

# --- owners deleted while muster up was down ------------------------------
owner g1; dep g1a g1; dep g1b g1; owner g2; dep g2a g2
owner h1; dep h1a h1 true example.com/hold
expect restart-fg 0 kc delete cm h1 --cascade=foreground --wait=false
wait_for restart-fg-marked 50 sh -c "$KC --kubeconfig $T/data/kubeconfig get cm h1a -o jsonpath='{.metadata.deletionTimestamp}' | grep -q 20"
kill -9 "$UPID"; wait "$UPID" 2>/dev/null; UPID=""
python3 - "$T/data/muster.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("DELETE FROM objects WHERE res = '/configmaps' AND ns = 'default' AND name = 'g1'").rowcount
db.commit()
sys.exit(0 if n == 1 else 1)
PY
[ $? -eq 0 ] && ok || bad "restart: the owner's row was not found in the database"
up_start "$T/cluster.yaml"
wait_for restart-collected 50 gone cm g1a
wait_for restart-collected-2 50 gone cm g1b
exists cm g2a && ok || bad "restart: a dependent of a live owner was collected"
exists cm h1 && ok || bad "restart: the foreground owner went before its blocking dependent"
kc patch cm h1a --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
wait_for restart-fg-dependent-gone 50 gone cm h1a
wait_for restart-fg-owner-gone 50 gone cm h1
done_
