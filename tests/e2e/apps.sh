#!/bin/sh
# apps.sh - what kube-apiserver does with apps/v1 pod templates and with a
# GET of one object that asks for a watch, end to end with kubectl and
# curl against `muster up` (issue 16):
#   - a Deployment's, ReplicaSet's, StatefulSet's and Job's pod template is
#     validated as kube's ValidatePodTemplateSpec: 422 with causes named
#     spec.template.spec.containers[0].name / .image, a bad label key of
#     spec.template.metadata.labels, restartPolicy Always only for the apps
#     kinds ("supported values"), activeDeadlineSeconds refused in a
#     ReplicaSet's and a StatefulSet's template with kube's message;
#   - the template's pod spec is defaulted as kube's SetDefaults_PodSpec
#     (restartPolicy, dnsPolicy, schedulerName, terminationGracePeriodSeconds,
#     imagePullPolicy, terminationMessagePath), on create and on update, a
#     Job's too (so a Job without restartPolicy gets Always, then 422);
#   - GET .../NAME?watch=true answers the object once (kube routes an item
#     path to its Get handler), /watch/.../NAME streams it, and
#     /watch/.../NAME/scale and /status are 404 (those storages do not watch);
#     RBAC sees the item GET as verb get.
# Usage: sh tests/e2e/apps.sh PATH_TO_MUSTER.  Ends with
# "e2e apps: N passed, N failed".  Every process started here is killed on
# exit.
E2E_NAME=apps; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""
on_exit() { [ -n "$UPID" ] && kill -9 "$UPID" 2>/dev/null; }
need_kubectl
up_start_one_node

# --- pod template validation ----------------------------------------------
# tpl KIND NAME SPEC_EXTRA TEMPLATE_SPEC: an apps/v1 (or batch/v1 Job) object
tpl() {
	api=apps/v1; [ "$1" = Job ] && api=batch/v1
	sel="selector: {matchLabels: {app: $2}}"; [ "$1" = Job ] && sel=""
	printf 'apiVersion: %s\nkind: %s\nmetadata: {name: %s}\nspec:\n  %s\n  %s\n  template:\n    metadata: {labels: {app: %s}}\n    spec: %s\n' \
		"$api" "$1" "$2" "$sel" "$3" "$2" "$4" >"$T/$2.yaml"
}
tpl Deployment d-noname "replicas: 1" '{containers: [{image: x}]}'
expect "a container without a name: 422" 1 k create -f "$T/d-noname.yaml"
has "cause spec.template.spec.containers[0].name" "$T/out" 'spec.template.spec.containers[0].name: Required value'
tpl Deployment d-noimage "replicas: 1" '{containers: [{name: c}]}'
expect "a container without an image: 422" 1 k create -f "$T/d-noimage.yaml"
has "cause spec.template.spec.containers[0].image" "$T/out" 'spec.template.spec.containers[0].image: Required value'
tpl ReplicaSet rs-none "replicas: 1" '{containers: []}'
expect "a template without containers: 422" 1 k create -f "$T/rs-none.yaml"
has "cause spec.template.spec.containers" "$T/out" 'spec.template.spec.containers: Required value'
tpl StatefulSet ss-never "serviceName: s" '{restartPolicy: Never, containers: [{name: c, image: x}]}'
expect "restartPolicy Never in a StatefulSet: 422" 1 k create -f "$T/ss-never.yaml"
has "only Always is supported" "$T/out" 'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'
tpl ReplicaSet rs-deadline "replicas: 1" '{activeDeadlineSeconds: 5, containers: [{name: c, image: x}]}'
expect "activeDeadlineSeconds in a ReplicaSet: 422" 1 k create -f "$T/rs-deadline.yaml"
has "kube's message" "$T/out" 'spec.template.spec.activeDeadlineSeconds: Invalid value: 5: activeDeadlineSeconds in ReplicaSet is not Supported'
tpl StatefulSet ss-deadline "serviceName: s" '{activeDeadlineSeconds: 5, containers: [{name: c, image: x}]}'
expect "activeDeadlineSeconds in a StatefulSet: 422" 1 k create -f "$T/ss-deadline.yaml"
has "StatefulSet's message" "$T/out" 'activeDeadlineSeconds in StatefulSet is not Supported'
tpl Deployment d-quant "replicas: 1" '{containers: [{name: c, image: x, resources: {requests: {cpu: lots}}}]}'
expect "a bad quantity: 422" 1 k create -f "$T/d-quant.yaml"
has "cause ...resources.requests[cpu]" "$T/out" 'spec.template.spec.containers[0].resources.requests[cpu]'
tpl Deployment d-dup "replicas: 1" '{containers: [{name: c, image: x}, {name: c, image: y}]}'
expect "two containers of one name: 422" 1 k create -f "$T/d-dup.yaml"
has "Duplicate value" "$T/out" 'spec.template.spec.containers[1].name: Duplicate value: "c"'
tpl Job j-noname "" '{restartPolicy: Never, containers: [{image: x}]}'
expect "a Job's container without a name: 422" 1 k create -f "$T/j-noname.yaml"
has "Job: cause spec.template.spec.containers[0].name" "$T/out" 'spec.template.spec.containers[0].name: Required value'
tpl Job j-always "" '{restartPolicy: Always, containers: [{name: c, image: x}]}'
expect "a Job with restartPolicy Always: 422" 1 k create -f "$T/j-always.yaml"
has "Job: OnFailure or Never" "$T/out" 'supported values: "OnFailure", "Never"'
# every cause at once, as kube lists them
tpl Deployment d-many "replicas: 1" '{containers: [{name: C_1}]}'
expect "two causes: 422" 1 k create -f "$T/d-many.yaml"
has "both causes: name" "$T/out" 'spec.template.spec.containers[0].name: Invalid value'
has "both causes: image" "$T/out" 'spec.template.spec.containers[0].image: Required value'
code=$(api -s -o "$T/body" -w '%{http_code}' -H 'Content-Type: application/json' -X POST \
	--data '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"raw"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c"}]}}}}' \
	"$S/apis/apps/v1/namespaces/default/deployments")
[ "$code" = 422 ] && ok || bad "raw POST of a bad template gave $code, not 422"
has "422 Status: reason Invalid" "$T/body" '"reason":"Invalid"'
has "422 Status: the cause's field" "$T/body" '"field":"spec.template.spec.containers[0].image"'
has "422 Status: kube's message" "$T/body" 'Deployment.apps \"raw\" is invalid: spec.template.spec.containers[0].image: Required value'

# --- pod template defaults -------------------------------------------------
tpl Deployment web "replicas: 2" '{containers: [{name: c, image: nginx, ports: [{containerPort: 80}]}]}'
expect "a good Deployment" 0 k create -f "$T/web.yaml"
tj() { k get deploy web -o "jsonpath={.spec.template.spec.$1}"; }
tj restartPolicy; has "template restartPolicy Always" "$T/out" "Always"
tj dnsPolicy; has "template dnsPolicy ClusterFirst" "$T/out" "ClusterFirst"
tj schedulerName; has "template schedulerName" "$T/out" "default-scheduler"
tj terminationGracePeriodSeconds; has "template grace 30" "$T/out" "30"
tj 'containers[0].imagePullPolicy'; has "untagged image: imagePullPolicy Always" "$T/out" "Always"
tj 'containers[0].terminationMessagePath'; has "terminationMessagePath" "$T/out" "/dev/termination-log"
tj 'containers[0].ports[0].protocol'; has "port protocol TCP" "$T/out" "TCP"
tpl StatefulSet db "serviceName: db" '{containers: [{name: c, image: "pg:16"}]}'
expect "a good StatefulSet" 0 k create -f "$T/db.yaml"
k get sts db -o 'jsonpath={.spec.template.spec.containers[0].imagePullPolicy}'
has "tagged image: IfNotPresent" "$T/out" "IfNotPresent"
# a Job's template too; without restartPolicy it gets Always, which a Job refuses
tpl Job jd "" '{restartPolicy: Never, containers: [{name: c, image: x}]}'
expect "a good Job" 0 k create -f "$T/jd.yaml"
k get job jd -o 'jsonpath={.spec.template.spec.dnsPolicy} {.spec.template.spec.containers[0].imagePullPolicy}'
has "Job template defaulted" "$T/out" "ClusterFirst Always"
# a patch dropping a defaulted field is defaulted again: no template change
expect "a Job's defaulted field dropped: not a template change" 0 k patch job jd --type=merge \
	-p '{"spec":{"template":{"spec":{"dnsPolicy":null}}}}'
k get job jd -o 'jsonpath={.spec.template.spec.dnsPolicy}'; has "dnsPolicy defaulted again" "$T/out" "ClusterFirst"
tpl Job jnr "" '{containers: [{name: c, image: x}]}'
expect "a Job without restartPolicy: 422" 1 k create -f "$T/jnr.yaml"
has "Job: defaulted Always refused" "$T/out" 'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'
# an update (a replace without the defaults) is defaulted again
tpl StatefulSet db "serviceName: db" '{containers: [{name: c, image: "pg:16"}]}'
expect "replace without the defaults" 0 k replace -f "$T/db.yaml"
k get sts db -o 'jsonpath={.spec.template.spec.dnsPolicy}'
has "defaulted on update" "$T/out" "ClusterFirst"
expect "a template with restartPolicy Always given" 0 k patch deploy web --type=merge \
	-p '{"spec":{"template":{"spec":{"restartPolicy":"Always"}}}}'
expect "an update that breaks the template: 422" 1 k patch deploy web --type=json \
	-p '[{"op":"remove","path":"/spec/template/spec/containers/0/image"}]'
has "update: cause ...image" "$T/out" 'spec.template.spec.containers[0].image: Required value'

# --- a GET of one object with ?watch=true ----------------------------------
k run p1 --image=x --restart=Never
api -sN -m 3 -o "$T/w1" -w '%{http_code}' "$S/api/v1/namespaces/default/pods/p1?watch=true" >"$T/c1"
has "item GET ?watch=true: 200" "$T/c1" "200"
has "item GET ?watch=true: the Pod itself" "$T/w1" '"kind":"Pod"'
hasnt "item GET ?watch=true: no watch event" "$T/w1" '"type":"ADDED"'
api -sN -m 3 -o "$T/w2" -w '%{http_code}' "$S/api/v1/watch/namespaces/default/pods/p1?timeoutSeconds=1" >"$T/c2"
has "/watch/.../p1 streams it" "$T/w2" '"type":"ADDED"'
api -sN -m 3 -o "$T/w3" -w '%{http_code}' "$S/apis/apps/v1/namespaces/default/deployments/web/scale?watch=true" >"$T/c3"
has "scale ?watch=true: 200" "$T/c3" "200"
has "scale ?watch=true: the Scale once" "$T/w3" '"kind":"Scale"'
hasnt "scale ?watch=true: no event" "$T/w3" '"type":'
api -sN -m 3 -o "$T/w4" -w '%{http_code}' "$S/apis/apps/v1/watch/namespaces/default/deployments/web/scale" >"$T/c4"
has "/watch/.../scale: 404" "$T/c4" "404"
api -sN -m 3 -o "$T/w5" -w '%{http_code}' "$S/api/v1/watch/namespaces/default/pods/p1/status" >"$T/c5"
has "/watch/.../status: 404" "$T/c5" "404"
# RBAC: an item GET with ?watch=true is verb get
cat >"$T/r.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: getter, namespace: default}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: getter, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: getter}
subjects: [{kind: ServiceAccount, name: getter, namespace: default}]
EOF
k create sa getter; k apply -f "$T/r.yaml"
k create token getter; tok=$(cat "$T/out")
gw() { command curl -s -o /dev/null -w '%{http_code}' --cacert "$T/data/tls.crt" -m 3 -H "Authorization: Bearer $tok" "$@"; }
[ "$(gw "$S/api/v1/namespaces/default/pods/p1?watch=true")" = 200 ] && ok || bad "get-only: item ?watch=true is not allowed"
[ "$(gw "$S/api/v1/watch/namespaces/default/pods/p1")" = 403 ] && ok || bad "get-only: /watch/ item is not 403"
done_
