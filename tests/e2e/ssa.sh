#!/bin/sh
# ssa.sh - server-side apply and field ownership end to end (issue 16),
# with the real kubectl and the official Python client against `muster up`:
#   - every write records metadata.managedFields in FieldsV1 form (kubectl
#     create -> manager kubectl-create, operation Update; apply
#     --server-side -> manager kubectl, operation Apply);
#   - a second field manager that applies a field another owns with a
#     different value gets 409 "Apply failed with 1 conflict: conflict with
#     ..." (kubectl exits 1), and --force-conflicts takes the field over;
#   - the same value is shared; a field a manager stops applying is removed
#     unless another manager owns it; keyed lists (containers by name) are
#     owned element by element and named in conflicts as kube prints them;
#   - fieldManager is required for apply and force only allowed with it
#     (422); the Python client's server_side_apply conflicts and forces;
#   - a container's ports are keyed by (containerPort, protocol), protocol
#     defaulting to TCP; an update's managedFields [] keeps them, [{}]
#     clears them (kube's "Clearing managedFields"); a create's
#     managedFields are kept for what they claim outside the object, the
#     creator owning the rest; an update's given entries lose only what
#     it changed or removed (a claim outside both versions stays); a
#     binding records no owner (as in kube); kubectl's migration from
#     client-side to server-side apply keeps the object whole (a Job's
#     too: its generated selector is not the creator's);
#   - an apply of a Deployment's Scale conflicts with the other owners of
#     spec.replicas, is forced, shares an equal value, and a scale update
#     takes the field over (kube's ScaleHandler);
#   - a keyed list of 1,000 elements (a container's env) is owned element
#     by element: a second manager's conflict names one element, force
#     takes that one, and the first manager's next apply removes only the
#     element it stopped applying (round 11);
#   - muster up's controllers record their writes as kube's components do:
#     the kubelet (node and lease, pod status through /status) and
#     kube-controller-manager (a Job's pods, its status).
# Usage: sh tests/e2e/ssa.sh PATH_TO_MUSTER.  Ends with
# "e2e ssa: N passed, N failed".  Every process started here is killed on
# exit.
E2E_NAME=ssa; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""
on_exit() { [ -n "$UPID" ] && kill -9 "$UPID" 2>/dev/null; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
mf() { kc get "$@" -o jsonpath='{range .metadata.managedFields[*]}{.manager}/{.operation}={.fieldsV1}{"\n"}{end}'; }

cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  count: 1
  namePrefix: n-
  allocatable: {cpu: "8", memory: 32Gi}
YAML
up_start "$T/cluster.yaml"

# --- an Update manager records what it wrote ------------------------------
kc create configmap made --from-literal=k=v >/dev/null
mf cm made >"$T/out"
has create-manager "$T/out" 'kubectl-create/Update={"f:data":{".":{},"f:k":{}}}'

# --- two appliers, a conflict, force, sharing and removal -----------------
cat >"$T/a1.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, labels: {app: web, tier: front}}
data: {x: "1", w: "2"}
YAML
cat >"$T/b1.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, labels: {app: web}}
data: {x: "7"}
YAML
cat >"$T/b2.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, labels: {app: web}}
data: {x: "1"}
YAML
cat >"$T/a2.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, labels: {app: web}}
data: {x: "1"}
YAML
expect apply-a1 0 kc apply --server-side --field-manager=alice -f "$T/a1.yaml"
has apply-a1-out "$T/out" "configmap/cfg serverside-applied"
mf cm cfg >"$T/out"
has apply-owner "$T/out" 'alice/Apply={"f:data":{".":{},"f:w":{},"f:x":{}},"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}}}'
expect conflict 1 kc apply --server-side --field-manager=bob -f "$T/b1.yaml"
has conflict-msg "$T/err" 'Apply failed with 1 conflict: conflict with "alice": .data.x'
[ "$(kc get cm cfg -o jsonpath='{.data.x}')" = 1 ] && ok || bad "a conflicting apply changed the object"
# the 409 Status, as kube-apiserver words it, with one cause per field
api -s -o "$T/body" -w '%{http_code}' -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
	--data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"x":"7","w":"3"}}' \
	"$S/api/v1/namespaces/default/configmaps/cfg?fieldManager=bob" >"$T/code"
has conflict-409 "$T/code" 409
has conflict-2 "$T/body" '"message":"Apply failed with 2 conflicts: conflicts with \"alice\":\n- .data.w\n- .data.x"'
has conflict-cause "$T/body" '{"reason":"FieldManagerConflict","message":"conflict with \"alice\"","field":".data.x"}'
expect force 0 kc apply --server-side --field-manager=bob --force-conflicts -f "$T/b1.yaml"
[ "$(kc get cm cfg -o jsonpath='{.data.x}')" = 7 ] && ok || bad "force did not write the field"
mf cm cfg >"$T/out"
has force-moved "$T/out" 'bob/Apply={"f:data":{".":{},"f:x":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}'
has force-lost "$T/out" 'alice/Apply={"f:data":{".":{},"f:w":{}},"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}}}'
# now alice re-applies the value bob set back and forth: bob owns x
expect conflict-back 1 kc apply --server-side --field-manager=alice -f "$T/a1.yaml"
has conflict-back-msg "$T/err" 'conflict with "bob": .data.x'
# bob applies alice's value: both may own x (shared, no conflict)
expect share-b 0 kc apply --server-side --field-manager=bob -f "$T/b2.yaml"
expect share-a 0 kc apply --server-side --field-manager=alice -f "$T/a1.yaml"
# alice stops applying w and tier: removed; x and app stay (bob owns them)
expect remove 0 kc apply --server-side --field-manager=alice -f "$T/a2.yaml"
kc get cm cfg -o jsonpath='{.data}|{.metadata.labels}' >"$T/out"
has removed "$T/out" '{"x":"1"}|{"app":"web"}'
# bob stops applying everything but the name: x and app stay, alice owns them
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n' >"$T/b3.yaml"
expect shrink 0 kc apply --server-side --field-manager=bob -f "$T/b3.yaml"
kc get cm cfg -o jsonpath='{.data}|{.metadata.labels}' >"$T/out"
has kept-by-other "$T/out" '{"x":"1"}|{"app":"web"}'
mf cm cfg >"$T/out"
hasnt bob-gone "$T/out" 'bob/'

# --- an Update takes fields from an applier -------------------------------
kc patch cm cfg --type=merge -p '{"data":{"x":"5"}}' >/dev/null
mf cm cfg >"$T/out"
has patch-owner "$T/out" 'kubectl-patch/Update={"f:data":{"f:x":{}}}'
expect conflict-update 1 kc apply --server-side --field-manager=alice -f "$T/a2.yaml"
has conflict-update-msg "$T/err" 'Apply failed with 1 conflict: conflict with "kubectl-patch" using v1 at '

# --- keyed lists: containers are owned element by element -----------------
cat >"$T/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: p}}
spec:
  schedulerName: nobody
  containers:
  - {name: a, image: busybox}
  - {name: b, image: busybox}
YAML
expect pod-apply 0 kc apply --server-side -f "$T/pod.yaml"
mf pod p >"$T/out"
has pod-keys "$T/out" '"k:{\"name\":\"a\"}":{".":{},"f:image":{},"f:name":{}}'
kc set image pod/p b=nginx >/dev/null
expect pod-conflict 1 kc apply --server-side -f "$T/pod.yaml"
has pod-conflict-path "$T/err" '.spec.containers[name="b"].image'

# --- request checks -------------------------------------------------------
code=$(api -s -o "$T/body" -w '%{http_code}' -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
	--data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"}}' \
	"$S/api/v1/namespaces/default/configmaps/cfg")
[ "$code" = 422 ] && ok || bad "apply without fieldManager: HTTP $code"
has no-manager "$T/body" 'fieldManager: Required value: is required for apply patch'
code=$(api -s -o "$T/body" -w '%{http_code}' -X PATCH -H 'Content-Type: application/merge-patch+json' \
	--data-binary '{}' "$S/api/v1/namespaces/default/configmaps/cfg?force=true")
[ "$code" = 422 ] && ok || bad "force on a merge patch: HTTP $code"
has force-non-apply "$T/body" 'force: Forbidden: may not be specified for non-apply patch'

# --- ports are keyed by (containerPort, protocol), protocol TCP by default --
cat >"$T/ports.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: ports}
spec:
  schedulerName: nobody
  containers:
  - name: dns
    image: busybox
    ports:
    - {containerPort: 53}
    - {containerPort: 53, protocol: UDP}
YAML
expect ports-apply 0 kc apply --server-side --field-manager=ops -f "$T/ports.yaml"
kc get pod ports -o jsonpath='{.spec.containers[0].ports}' >"$T/out"
has ports-defaulted "$T/out" '[{"containerPort":53,"protocol":"TCP"},{"containerPort":53,"protocol":"UDP"}]'
mf pod ports >"$T/out"
has ports-key-tcp "$T/out" '"k:{\"containerPort\":53,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}'
has ports-key-udp "$T/out" '"k:{\"containerPort\":53,\"protocol\":\"UDP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}'
# a second manager applying the same UDP port shares that element only
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: ports}\nspec:\n  containers:\n  - name: dns\n    ports:\n    - {containerPort: 53, protocol: UDP}\n' >"$T/ports2.yaml"
expect ports-share 0 kc apply --server-side --field-manager=dns -f "$T/ports2.yaml"
mf pod ports >"$T/out"
has ports-shared "$T/out" 'dns/Apply={"f:spec":{"f:containers":{"k:{\"name\":\"dns\"}":{".":{},"f:name":{},"f:ports":{"k:{\"containerPort\":53,\"protocol\":\"UDP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}'

# --- managedFields in an update: [] keeps them, [{}] clears them ----------
kc create configmap reset --from-literal=k=v >/dev/null
kc get cm reset -o json | /usr/bin/python3 -c 'import json,sys; o=json.load(sys.stdin); o["metadata"]["managedFields"]=[]; o["data"]["k"]="w"; print(json.dumps(o))' >"$T/keep.json"
expect put-empty 0 kc replace -f "$T/keep.json"
mf cm reset >"$T/out"
has put-empty-keeps "$T/out" 'kubectl-create/Update={"f:data":{".":{}}}'
has put-empty-takes "$T/out" 'kubectl-replace/Update={"f:data":{"f:k":{}}}'
kc get cm reset -o json | /usr/bin/python3 -c 'import json,sys; o=json.load(sys.stdin); o["metadata"]["managedFields"]=[{}]; print(json.dumps(o))' >"$T/reset.json"
expect put-reset 0 kc replace -f "$T/reset.json"
kc get cm reset -o jsonpath='{.metadata.managedFields}' >"$T/out"
[ ! -s "$T/out" ] && ok || bad "managedFields [{}] did not clear them: $(cat "$T/out")"
kc patch cm reset --type=json -p '[{"op":"add","path":"/metadata/managedFields","value":[{}]},{"op":"replace","path":"/data/k","value":"z"}]' >/dev/null
mf cm reset >"$T/out"
has reset-then-own "$T/out" 'kubectl-patch/Update={"f:data":{"f:k":{}}}'

# --- muster up's controllers record their writes as kube's components do --
mfs() { kc get "$@" -o jsonpath='{range .metadata.managedFields[*]}{.manager}/{.operation}/{.subresource}={.fieldsV1}{"\n"}{end}'; }
node=$(kc get nodes -o jsonpath='{.items[0].metadata.name}')
mfs node "$node" >"$T/out"
has node-by-kubelet "$T/out" 'kubelet/Update/={"f:metadata":{'
mfs lease "$node" -n kube-node-lease >"$T/out"
has lease-by-kubelet "$T/out" 'kubelet/Update/={"f:spec":{'
kc create job jb --image=busybox >/dev/null
wait_for job-pod 100 sh -c "'$KC' --kubeconfig '$T/data/kubeconfig' get pods -l job-name=jb -o name | grep -q pod/"
pod=$(kc get pods -l job-name=jb -o jsonpath='{.items[0].metadata.name}')
mfs pod "$pod" >"$T/out"
has pod-by-kcm "$T/out" 'kube-controller-manager/Update/={"f:metadata":{'
has pod-by-kcm-owner "$T/out" '"f:ownerReferences":{"k:{\"uid\":'
wait_for job-status 100 sh -c "'$KC' --kubeconfig '$T/data/kubeconfig' get job jb -o jsonpath='{.status.active}' | grep -q 1"
mfs job jb >"$T/out"
has job-status-by-kcm "$T/out" 'kube-controller-manager/Update/status={"f:status":{'
has job-create "$T/out" 'kubectl-create/Update/={"f:spec":{'
api -s -o /dev/null -X POST -H 'Content-Type: application/json' \
	--data-binary "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$pod\"},\"target\":{\"kind\":\"Node\",\"name\":\"$node\"}}" \
	"$S/api/v1/namespaces/default/pods/$pod/binding"
wait_for pod-running 100 sh -c "'$KC' --kubeconfig '$T/data/kubeconfig' get pod $pod -o jsonpath='{.status.phase}' | grep -q Running"
mfs pod "$pod" >"$T/out"
has pod-status-by-kubelet "$T/out" 'kubelet/Update/status={"f:status":{'
has pod-status-keyed "$T/out" '"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}'
has pod-kubelet-phase "$T/out" '"f:phase":{}'
# a binding writes spec.nodeName in storage (BindingREST.setPodNodeAndMetadata,
# GuaranteedUpdate past the field manager): kube records no owner for it
hasnt binding-owns-nothing "$T/out" '"f:nodeName"'
hasnt binding-no-curl-entry "$T/out" 'curl/'

# --- managedFields given on a create ---------------------------------------
# kube's FieldManager.Update decodes them (decodeLiveOrNew) and records the
# creation on top, from an empty live object: every field of the object is
# the creator's and leaves the given entries, which keep what they claim
# outside the object, and their time
cat >"$T/given.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: given
  managedFields:
  - manager: restorer
    operation: Update
    apiVersion: v1
    time: "2020-01-01T00:00:00Z"
    fieldsType: FieldsV1
    fieldsV1: {"f:data": {"f:k": {}}, "f:metadata": {"f:labels": {"f:gone": {}}}}
data: {k: v}
EOF
kc create -f "$T/given.yaml" >/dev/null
mfs2() { kc get "$@" -o jsonpath='{range .metadata.managedFields[*]}{.manager}/{.operation}@{.time}={.fieldsV1}{"\n"}{end}'; }
mfs2 cm given >"$T/out"
has given-kept-outside "$T/out" 'restorer/Update@2020-01-01T00:00:00Z={"f:metadata":{"f:labels":{"f:gone":{}}}}'
has given-creator-owns "$T/out" 'kubectl-create/Update@'
has given-creator-data "$T/out" '={"f:data":{".":{},"f:k":{}}}'
[ "$(wc -l <"$T/out")" -eq 2 ] && ok || bad "given: expected 2 entries: $(cat "$T/out")"
sed -e 's/name: given/name: given2/' -e 's/, "f:metadata": {"f:labels": {"f:gone": {}}}//' "$T/given.yaml" >"$T/given2.yaml"
kc create -f "$T/given2.yaml" >/dev/null
mfs2 cm given2 >"$T/out"
hasnt given-all-inside-dropped "$T/out" 'restorer/'
# an entry kube cannot decode (operation must be Apply or Update) makes it
# ignore the given list: the creator's entry only
sed -e 's/name: given/name: given3/' -e 's/operation: Update/operation: Bogus/' "$T/given.yaml" >"$T/given3.yaml"
kc create -f "$T/given3.yaml" >/dev/null
mfs2 cm given3 >"$T/out"
hasnt given-undecodable-ignored "$T/out" 'restorer'
has given-undecodable-creator "$T/out" 'kubectl-create/Update@'

# --- managedFields given on an update ----------------------------------------
# kube's Updater.Update (structured-merge-diff merge/update.go) takes the
# given entries and removes from them only what the update removed
# (compare.Removed, the fields the stored object had and the new one lacks):
# a claim on a field neither version has stays, a claim on a removed one goes
cat >"$T/upd.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: given
  managedFields:
  - manager: restorer2
    operation: Update
    apiVersion: v1
    time: "2021-01-01T00:00:00Z"
    fieldsType: FieldsV1
    fieldsV1: {"f:data": {"f:k": {}, "f:k2": {}}, "f:metadata": {"f:annotations": {"f:ghost": {}}}}
data: {k2: w}
EOF
kc replace -f "$T/upd.yaml" --field-manager=putter >"$T/out" 2>&1; has update-given-replaced "$T/out" "replaced"
mfs2 cm given >"$T/out"
has update-kept-outside "$T/out" 'restorer2/Update@2021-01-01T00:00:00Z={"f:metadata":{"f:annotations":{"f:ghost":{}}}}'
hasnt update-removed-field-dropped "$T/out" '"f:k":{}'
has update-writer-owns-changed "$T/out" 'putter/Update@'

# --- kubectl's migration from client-side to server-side apply ----------------
# kubectl hands the client-side applier's fields to the new field manager
# (a JSON patch of managedFields), then applies: what that manager owned and
# no longer applies goes (the defaulted fields, which defaulting puts back),
# but a path that only leads to such fields (metadata above the
# last-applied annotation) is not removed whole, as structured-merge-diff's
# RemoveItems
cat >"$T/sts.yaml" <<'EOF'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: mig}
spec:
  selector: {matchLabels: {app: mig}}
  template:
    metadata: {labels: {app: mig}}
    spec: {containers: [{name: c, image: x}]}
EOF
kc apply -f "$T/sts.yaml" >/dev/null
kc apply --server-side --field-manager=mover -f "$T/sts.yaml" >"$T/out" 2>&1
has migrate-applied "$T/out" "statefulset.apps/mig serverside-applied"
hasnt migrate-no-warning "$T/out" "failed to re-apply configuration"
kc get sts mig -o jsonpath='{.metadata.name} {.spec.replicas} {.spec.selector.matchLabels.app}' >"$T/out" 2>&1
has migrate-object-whole "$T/out" "mig 1 mig"
# the same for a Job: kube's Job strategy generates the selector and the
# controller-uid labels after the field manager recorded the create, so the
# client-side applier does not own them and the migration does not hand
# them over; a defaulted field the applier stops applying (completions) is
# defaulted again, as kube's structured-merge manager does
cat >"$T/job.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: mig}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x}]
EOF
kc apply -f "$T/job.yaml" >/dev/null
kc get job mig -o jsonpath='{.metadata.managedFields[0].fieldsV1}' >"$T/out" 2>&1
hasnt job-creator-no-selector "$T/out" '"f:selector"'
hasnt job-creator-no-uid-label "$T/out" 'controller-uid'
kc apply --server-side -f "$T/job.yaml" >"$T/out" 2>&1
kc apply --server-side -f "$T/job.yaml" >>"$T/out" 2>&1
has job-migrate-applied "$T/out" "job.batch/mig serverside-applied"
hasnt job-migrate-no-warning "$T/out" "failed to re-apply configuration"
hasnt job-migrate-no-immutable "$T/out" "field is immutable"
kc get job mig -o jsonpath='{.spec.completions} {.spec.selector.matchLabels}' >"$T/out" 2>&1
has job-migrate-object-whole "$T/out" '1 {"batch.kubernetes.io/controller-uid":'

# --- server-side apply of a Scale (kube's ScaleHandler) ---------------------
kc create deployment sc --image=x --replicas=2 >/dev/null
scale_apply() { # QUERY REPLICAS: an apply of the Scale, the answer in $T/out
	api -s -o "$T/out" -w '%{http_code}' -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
		--data "{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\",\"metadata\":{\"name\":\"sc\"},\"spec\":{\"replicas\":$2}}" \
		"$S/apis/apps/v1/namespaces/default/deployments/sc/scale?$1" >"$T/code"
}
scale_apply fieldManager=hpa 5
has scale-apply-conflict-409 "$T/code" 409
has scale-apply-conflict-owner "$T/out" 'Apply failed with 1 conflict: conflict with \"kubectl-create\" using apps/v1'
has scale-apply-conflict-field "$T/out" '"field":".spec.replicas"'
scale_apply '' 5
has scale-apply-needs-manager "$T/out" 'fieldManager: Required value: is required for apply patch'
scale_apply 'fieldManager=hpa&force=true' 5
has scale-apply-forced "$T/code" 200
has scale-apply-answers-scale "$T/out" '"kind":"Scale"'
scale_mf() { kc get deploy sc -o jsonpath='{.spec.replicas} {range .metadata.managedFields[*]}{.manager}/{.operation}/{.subresource}={.fieldsV1.f:spec.f:replicas};{end}' >"$T/out" 2>&1; }
scale_mf
has scale-apply-owner "$T/out" '5 kubectl-create/Update/=;hpa/Apply/scale={};'
scale_apply fieldManager=other 5
scale_mf
has scale-apply-shared "$T/out" 'hpa/Apply/scale={};other/Apply/scale={};'
kc scale deploy sc --replicas=3 >/dev/null
scale_mf
has scale-update-takes-over "$T/out" '3 kubectl-create/Update/=;kubectl/Update/scale={};'
scale_apply fieldManager=hpa 7
has scale-apply-conflicts-with-scale-updater "$T/out" 'conflict with \"kubectl\" with subresource \"scale\"'

# --- a keyed list of 1,000 elements is owned element by element (round 11) --
# (it was owned whole over 256 elements; ssa.c indexes long lists by key)
big() { # big NAME SKIP...: a Deployment whose container has env V0..V999, not SKIP
	nm=$1; shift
	printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s}\n' "$nm"
	printf 'spec:\n  replicas: 0\n  selector: {matchLabels: {app: big}}\n  template:\n'
	printf '    metadata: {labels: {app: big}}\n    spec:\n      containers:\n      - name: c\n        image: x\n        env:\n'
	i=0
	while [ "$i" -lt 1000 ]; do
		case " $* " in *" $i "*) ;; *) printf '        - {name: V%d, value: v}\n' "$i" ;; esac
		i=$((i + 1))
	done
}
big d-big >"$T/big.yaml"
expect "alice applies 1,000 env vars" 0 kc apply --server-side --field-manager=alice -f "$T/big.yaml"
printf '%s\n' 'apiVersion: apps/v1' 'kind: Deployment' 'metadata: {name: d-big}' \
	'spec: {template: {spec: {containers: [{name: c, env: [{name: V500, value: w}]}]}}}' >"$T/big-bob.yaml"
expect "bob's apply of one element with another value conflicts" 1 kc apply --server-side --field-manager=bob -f "$T/big-bob.yaml"
has "the conflict names that element only" "$T/err" 'Apply failed with 1 conflict: conflict with "alice": .spec.template.spec.containers[name="c"].env[name="V500"].value'
expect "bob forces it" 0 kc apply --server-side --field-manager=bob --force-conflicts -f "$T/big-bob.yaml"
kc get deployment d-big --show-managed-fields -o 'jsonpath={.metadata.managedFields[?(@.manager=="bob")].fieldsV1}' >"$T/out"
n=$(grep -o 'k:{\\"name\\":\\"V' "$T/out" | wc -l)
[ "$n" -eq 1 ] && ok || bad "bob owns $n env elements, want 1"
has "bob owns V500's value" "$T/out" '"k:{\"name\":\"V500\"}":{".":{},"f:name":{},"f:value":{}}'
kc get deployment d-big --show-managed-fields -o 'jsonpath={.metadata.managedFields[?(@.manager=="alice")].fieldsV1}' >"$T/out"
n=$(grep -o 'k:{\\"name\\":\\"V' "$T/out" | wc -l)
[ "$n" -eq 1000 ] && ok || bad "alice owns $n env elements, want 1000 (V500's name shared)"
has "alice no longer owns V500's value" "$T/out" '"k:{\"name\":\"V500\"}":{".":{},"f:name":{}}'

big d-big 7 500 >"$T/big2.yaml"
expect "alice applies again without V7 (and V500, now bob's)" 0 kc apply --server-side --field-manager=alice -f "$T/big2.yaml"
kc get deployment d-big -o 'jsonpath={.spec.template.spec.containers[0].env[*].name}' >"$T/out"
n=$(tr ' ' '\n' <"$T/out" | grep -c .)
[ "$n" -eq 999 ] && ok || bad "env has $n elements after alice dropped V7, want 999"
hasnt "V7, which only alice owned, is removed" "$T/out" ' V7 '
kc get deployment d-big -o 'jsonpath={.spec.template.spec.containers[0].env[?(@.name=="V500")].value}' >"$T/out"
has "V500 stays bob's value" "$T/out" 'w'

# --- the Python client ----------------------------------------------------
if /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
	/usr/bin/python3 - "$T/data/kubeconfig" >"$T/py" 2>&1 <<'PY'
import json, sys
from kubernetes import client, config
from kubernetes.dynamic import DynamicClient
config.load_kube_config(config_file=sys.argv[1])
core = client.CoreV1Api()
core.create_namespaced_config_map("default", {"metadata": {"name": "py"}, "data": {"a": "1"}})
m = core.read_namespaced_config_map("py", "default").metadata.managed_fields
print("create", m[0].manager, m[0].operation, json.dumps(m[0].fields_v1, sort_keys=True))
cms = DynamicClient(client.ApiClient()).resources.get(api_version="v1", kind="ConfigMap")
# this client's server_side_apply sends a body it is given serialized
body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py"}, "data": {"a": "2"}})
try:
    cms.server_side_apply(body=body, name="py", namespace="default", field_manager="py-apply")
    print("no conflict")
except Exception as e:
    print("conflict", e.status, json.loads(e.body)["details"]["causes"][0]["field"])
r = cms.server_side_apply(body=body, name="py", namespace="default", field_manager="py-apply",
                          force_conflicts=True)
print("forced", r.data.a, sorted((x.manager, x.operation) for x in r.metadata.managedFields))
# a Job's pod: made by the Job controller, its status written by the kubelet
pod = core.list_namespaced_pod("default", label_selector="job-name=jb").items[0]
print("owners", sorted((x.manager, x.operation, x.subresource or "") for x in pod.metadata.managed_fields))
# an update whose managedFields are one empty entry clears them
cm = core.read_namespaced_config_map("py", "default")
cm.metadata.managed_fields = [client.V1ManagedFieldsEntry()]
print("reset", core.replace_namespaced_config_map("py", "default", cm).metadata.managed_fields)
PY
	has py-create "$T/py" 'create OpenAPI-Generator Update {"f:data": {".": {}, "f:a": {}}}'
	has py-conflict "$T/py" 'conflict 409 .data.a'
	has py-force "$T/py" "forced 2 [('OpenAPI-Generator', 'Update'), ('py-apply', 'Apply')]"
	has py-owners "$T/py" "owners [('kube-controller-manager', 'Update', ''), ('kubelet', 'Update', 'status')]"
	has py-reset "$T/py" "reset None"
else
	bad "python3-kubernetes is missing (scripts/install-deps.sh installs it)"
fi
done_
