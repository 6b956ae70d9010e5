#!/bin/sh
# rbac.sh - authentication and RBAC on `muster up`: anonymous requests get
# 401 (health and version excepted); static users of DATA/tokens.csv and a
# service account token from `kubectl create token` are accepted; each
# Role/ClusterRole bound to a user, a group or a service account lets it do
# what it grants and gets 403 (with kube-apiserver's message) for the rest;
# `kubectl auth can-i` answers through SelfSubjectAccessReview, and
# `kubectl auth can-i --list` through SelfSubjectRulesReview;
# SubjectAccessReview, LocalSubjectAccessReview and TokenReview (round 12)
# answer for other users with kube's reasons, causes and messages, guarded
# by RBAC (system:auth-delegator); a ClusterRole
# with an aggregationRule gets the rules of the roles it selects (and
# loses a rule added by hand), as kube-controller-manager's aggregation
# controller does; writing a Role or binding that grants more than the
# writer holds is refused (kube's escalation check), unless it may
# `escalate` or `bind`; the default roles (admin, edit, view aggregated,
# system:public-info-viewer) are there and are reconciled at every start
# (autoupdate); `--as`, `--as-group`, `--as-uid` and as-user-extra work only
# with the `impersonate` verb, and the uid and extras are the user's; `muster scheduler` run with
# deploy/rbac.yaml's service account schedules a pod, while that account
# can do exactly what the file grants; and service account tokens are
# ES256 JWTs whose claims, audiences, expiry (under libfaketime), bound
# pod or Node and ServiceAccount uid are checked, with legacy token Secrets
# filled and the issuer discovery documents served, and the signing key is
# rotated (--service-account-key-file twice, then once); RSA and P-384
# signing keys give RS256 and ES384 tokens with kube's kid and JWKS
# (round 12), and keys kube would not take are refused at start;
# --service-account-max-token-expiration shortens a TokenRequest with
# kube's warning, and a pod-bound 3607 s token for the API audience lives
# a year with warnafter, as kube's safe transition.
# Usage: sh tests/e2e/rbac.sh PATH_TO_MUSTER.  Ends with
# "e2e rbac: N passed, N failed".
E2E_NAME=rbac; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
UPID=""; SPID=""
on_exit() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null; [ -n "$UPID" ] && kill "$UPID" 2>/dev/null; wait 2>/dev/null; }
need_kubectl
mkdir -p "$T/data"
cat >"$T/data/tokens.csv" <<'EOF'
# token,user,uid,"groups"
alice-token-0123456789,alice,1001,"team-a,devs"
bob-token-0123456789,bob,1002
carol-token-0123456789,carol,1003,"ops"
EOF
up_start "$ROOT/examples/cluster-small.yaml"
# ku TOKEN ARGS...: kubectl as a user of tokens.csv (or with a token)
token_kubeconfig none "$T/tok-kubeconfig"
ku() { tok=$1; shift; "$KC" --kubeconfig "$T/tok-kubeconfig" --token "$tok" "$@" >"$T/out" 2>&1; }

# --- anonymous and bad tokens ---------------------------------------------------
code() { command curl -s -o /dev/null -w '%{http_code}' --cacert "$T/data/tls.crt" "$@"; }
[ "$(code "$S/api/v1/pods")" = 401 ] && ok || bad "anonymous list is not 401"
[ "$(code "$S/version")" = 200 ] && ok || bad "anonymous /version is not 200"
[ "$(code "$S/healthz")" = 200 ] && ok || bad "anonymous /healthz is not 200"
[ "$(code -H 'Authorization: Bearer nope' "$S/api")" = 401 ] && ok || bad "a wrong token is not 401"

# --- roles for users and groups ------------------------------------------------
cat >"$T/roles.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: default}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-reads-pods, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects: [{kind: User, name: alice}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: queue-admin}
rules:
- {apiGroups: [muster.io], resources: [queues], verbs: ["*"]}
- {apiGroups: [""], resources: [configmaps], resourceNames: [settings], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: team-a-queues}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: queue-admin}
subjects: [{kind: Group, name: team-a}]
EOF
expect "apply roles" 0 k apply -f "$T/roles.yaml"
expect "settings configmap" 0 k create configmap settings --from-literal=a=1
expect "other configmap" 0 k create configmap other --from-literal=a=1
A=alice-token-0123456789; B=bob-token-0123456789
expect "alice lists pods in default" 0 ku $A get pods
expect "alice cannot list pods in kube-system" 1 ku $A get pods -n kube-system
has "403 message" "$T/out" 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "kube-system"'
expect "alice cannot create pods" 1 ku $A run p --image=x --restart=Never
has "create denied" "$T/out" 'cannot create resource "pods" in API group "" in the namespace "default"'
expect "alice (team-a) manages queues" 0 ku $A apply -f "$ROOT/deploy/examples/queues.yaml"
expect "alice deletes a queue" 0 ku $A delete queue team-a
expect "alice reads the named configmap" 0 ku $A get configmap settings
expect "alice cannot read another" 1 ku $A get configmap other
has "named 403" "$T/out" 'configmaps "other" is forbidden: User "alice" cannot get resource "configmaps"'
expect "alice cannot delete nodes" 1 ku $A delete node a100-0
expect "bob can discover" 0 ku $B api-resources --api-group=muster.io
expect "bob cannot list pods" 1 ku $B get pods
expect "bob cannot list queues" 1 ku $B get queues
has "cluster scope" "$T/out" 'queues.muster.io is forbidden: User "bob" cannot list resource "queues" in API group "muster.io" at the cluster scope'
expect "can-i yes" 0 ku $A auth can-i watch pods -n default
has "yes" "$T/out" "yes"
expect "can-i no" 1 ku $A auth can-i delete pods -n default
has "no" "$T/out" "no"
expect "can-i as admin" 0 k auth can-i '*' '*'
expect "whoami" 0 ku $A auth whoami
has "whoami user" "$T/out" "alice"
has "whoami groups" "$T/out" "[team-a devs system:authenticated]"

# --- SelfSubjectRulesReview: kubectl auth can-i --list ----------------------------
expect "can-i --list" 0 ku $A auth can-i --list -n default
has "list: the Role's rule" "$T/out" "pods                                            []                  []               [get list watch]"
has "list: the named configmap" "$T/out" "configmaps                                      []                  [settings]       [get]"
has "list: the group's ClusterRole" "$T/out" "queues.muster.io"
has "list: system:discovery's URLs" "$T/out" "[/api/*]"
has "list: system:basic-user" "$T/out" "selfsubjectrulesreviews.authorization.k8s.io"
expect "can-i --list in kube-system" 0 ku $A auth can-i --list -n kube-system
hasnt "list: no pod rule outside default" "$T/out" "pods    "
code=$(command curl -s -o "$T/body" -w '%{http_code}' --cacert "$T/data/tls.crt" -H "Authorization: Bearer $A" \
	-H 'Content-Type: application/json' -X POST --data '{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{}}' \
	"$S/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
[ "$code" = 400 ] && ok || bad "a rules review without a namespace gave $code, not 400"
has "no namespace on request" "$T/body" "no namespace on request"

# --- SubjectAccessReview, LocalSubjectAccessReview, TokenReview (round 12) ------
# review FILE KIND SPEC: a review manifest; rv NAME FILE WANT: created as admin,
# its status reads WANT ("ALLOWED|REASON")
review() { printf 'apiVersion: %s\nkind: %s\n%s\n' "$([ "$2" = TokenReview ] && echo authentication.k8s.io/v1 || echo authorization.k8s.io/v1)" "$2" "$3" >"$T/$1.yaml"; }
rv() {
	k create -f "$T/$2.yaml" -o 'jsonpath={.status.allowed}|{.status.reason}'
	if [ "$(cat "$T/out")" = "$3" ]; then ok; else bad "$1: '$(cat "$T/out")', want '$3'"; fi
}
review s1 SubjectAccessReview 'spec: {user: alice, resourceAttributes: {verb: get, resource: pods, namespace: default}}'
rv "SAR: alice may get pods in default, kube's reason" s1 'true|RBAC: allowed by RoleBinding "alice-reads-pods/default" of Role "pod-reader" to User "alice"'
review s2 SubjectAccessReview 'spec: {user: alice, resourceAttributes: {verb: delete, resource: pods, namespace: default}}'
rv "SAR: alice may not delete pods (no reason, as kube's RBAC)" s2 'false|'
review s3 SubjectAccessReview 'spec: {user: zed, groups: [team-a], uid: "7", extra: {k: [v]}, resourceAttributes: {verb: list, group: muster.io, resource: queues}}'
rv "SAR: a group's ClusterRoleBinding" s3 'true|RBAC: allowed by ClusterRoleBinding "team-a-queues" of ClusterRole "queue-admin" to Group "team-a"'
k create -f "$T/s3.yaml" -o 'jsonpath={.spec.uid}/{.spec.extra.k[0]}/{.metadata.creationTimestamp}'
has "SAR: uid and extra answered back" "$T/out" '7/v/'
review s4 SubjectAccessReview 'spec: {user: alice, groups: [team-a], resourceAttributes: {verb: get, resource: configmaps, namespace: default, name: settings}}'
rv "SAR: a resource name granted" s4 'true|RBAC: allowed by ClusterRoleBinding "team-a-queues" of ClusterRole "queue-admin" to Group "team-a"'
review s5 SubjectAccessReview 'spec: {user: alice, groups: [team-a], resourceAttributes: {verb: get, resource: configmaps, namespace: default, name: other}}'
rv "SAR: another name denied" s5 'false|'
cat >"$T/logs.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: log-reader, namespace: default}
rules:
- {apiGroups: [""], resources: [pods/log], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: carol-logs, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: log-reader}
subjects: [{kind: ServiceAccount, name: builder}, {kind: Group, name: ops}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ghost-binding, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: ghost}
subjects: [{kind: User, name: dave}]
EOF
expect "a subresource role and a binding of a missing role" 0 k apply -f "$T/logs.yaml"
review s6 SubjectAccessReview 'spec: {user: carol, groups: [ops], resourceAttributes: {verb: get, resource: pods, subresource: log, namespace: default}}'
rv "SAR: a subresource granted" s6 'true|RBAC: allowed by RoleBinding "carol-logs/default" of Role "log-reader" to Group "ops"'
review s7 SubjectAccessReview 'spec: {user: carol, groups: [ops], resourceAttributes: {verb: get, resource: pods, namespace: default}}'
rv "SAR: not the resource itself" s7 'false|'
review s8 SubjectAccessReview 'spec: {user: "system:serviceaccount:default:builder", resourceAttributes: {verb: get, resource: pods, subresource: log, namespace: default}}'
rv "SAR: a service account subject, kube's name/namespace" s8 'true|RBAC: allowed by RoleBinding "carol-logs/default" of Role "log-reader" to ServiceAccount "builder/default"'
review s9 SubjectAccessReview 'spec: {user: dave, resourceAttributes: {verb: get, resource: pods, namespace: default}}'
rv "SAR: a binding's missing role is the reason" s9 'false|RBAC: role.rbac.authorization.k8s.io "ghost" not found'
review s10 SubjectAccessReview 'spec: {user: x, groups: ["system:masters"], resourceAttributes: {verb: delete, resource: nodes}}'
rv "SAR: system:masters allowed without a reason" s10 'true|'
review s11 SubjectAccessReview 'spec: {groups: ["system:authenticated"], nonResourceAttributes: {verb: get, path: /healthz}}'
k create -f "$T/s11.yaml" -o 'jsonpath={.status.allowed}|{.status.reason}'
has "SAR: a non-resource URL" "$T/out" 'true|RBAC: allowed by ClusterRoleBinding "system:'
review s12 SubjectAccessReview 'spec: {user: bob, nonResourceAttributes: {verb: post, path: /healthz}}'
rv "SAR: a non-resource verb not granted" s12 'false|'
review s13 SubjectAccessReview 'spec: {resourceAttributes: {verb: get, resource: pods}, nonResourceAttributes: {verb: get, path: /x}}'
expect "SAR: invalid spec 422" 1 k create -f "$T/s13.yaml"
has "kube's first cause" "$T/out" '* spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with resourceAttributes'
has "kube's second cause" "$T/out" '* spec.user: Invalid value: "": at least one of user or group must be specified'
review s14 SubjectAccessReview 'metadata: {name: nm}
spec: {user: a}'
expect "SAR: neither attributes, a name: 422" 1 k create -f "$T/s14.yaml"
has "kube's cause" "$T/out" '* spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified'
has "kube's metadata cause" "$T/out" '* metadata: Invalid value: v1.ObjectMeta{Name:"nm", GenerateName:"", Namespace:"", SelfLink:"", UID:"", ResourceVersion:"", Generation:0, CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)'
review l1 LocalSubjectAccessReview 'metadata: {namespace: default}
spec: {user: alice, resourceAttributes: {verb: list, resource: pods, namespace: default}}'
rv "LSAR in default" l1 'true|RBAC: allowed by RoleBinding "alice-reads-pods/default" of Role "pod-reader" to User "alice"'
review l2 LocalSubjectAccessReview 'metadata: {namespace: default}
spec: {user: alice, resourceAttributes: {verb: list, resource: pods, namespace: kube-system}}'
expect "LSAR: another namespace in the spec: 422" 1 k create -f "$T/l2.yaml"
has "kube's cause" "$T/out" 'The LocalSubjectAccessReview "" is invalid: spec.resourceAttributes.namespace: Invalid value: "kube-system": must match metadata.namespace'
review l3 LocalSubjectAccessReview 'metadata: {namespace: default}
spec: {user: alice, nonResourceAttributes: {verb: get, path: /api}}'
expect "LSAR: non-resource: 422" 1 k create -f "$T/l3.yaml"
has "kube's cause" "$T/out" 'spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/api", Verb:"get"}: disallowed on this kind of request'
printf '%s' '{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","metadata":{"namespace":"kube-system"},"spec":{"user":"alice","resourceAttributes":{"verb":"list","resource":"pods","namespace":"kube-system"}}}' >"$T/l4.json"
expect "LSAR: the object's namespace not the URL's: 400" 1 k create --raw /apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews -f "$T/l4.json"
has "kube's message" "$T/out" 'the namespace of the provided object does not match the namespace sent on the request'
expect "LSAR: in kube-system through its URL" 0 k create --raw /apis/authorization.k8s.io/v1/namespaces/kube-system/localsubjectaccessreviews -f "$T/l4.json"
has "denied there" "$T/out" '"allowed":false'
[ "$(code -H "Authorization: Bearer $(cat "$T/data/token")" "$S/apis/authorization.k8s.io/v1/subjectaccessreviews")" = 405 ] && ok ||
	bad "a GET of subjectaccessreviews is not 405"
[ "$(code -H "Authorization: Bearer $(cat "$T/data/token")" "$S/apis/authentication.k8s.io/v1/tokenreviews")" = 405 ] && ok ||
	bad "a GET of tokenreviews is not 405"
expect "SAR in discovery, create only" 0 k api-resources --api-group=authorization.k8s.io -o wide --no-headers
tr -s ' ' <"$T/out" >"$T/out2"
has "subjectaccessreviews" "$T/out2" 'subjectaccessreviews authorization.k8s.io/v1 false SubjectAccessReview create'
has "localsubjectaccessreviews" "$T/out2" 'localsubjectaccessreviews authorization.k8s.io/v1 true LocalSubjectAccessReview create'
expect "TokenReview in discovery, create only" 0 k api-resources --api-group=authentication.k8s.io -o wide --no-headers
tr -s ' ' <"$T/out" >"$T/out2"
has "tokenreviews" "$T/out2" 'tokenreviews authentication.k8s.io/v1 false TokenReview create'
expect "alice may not create a SubjectAccessReview" 1 ku $A create -f "$T/s1.yaml"
has "403" "$T/out" 'subjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope'
k get clusterrole system:auth-delegator -o 'jsonpath={.rules}'
has "the default role system:auth-delegator" "$T/out" '[{"apiGroups":["authentication.k8s.io"],"resources":["tokenreviews"],"verbs":["create"]},{"apiGroups":["authorization.k8s.io"],"resources":["subjectaccessreviews"],"verbs":["create"]}]'
expect "alice bound to system:auth-delegator" 0 k create clusterrolebinding alice-delegator --clusterrole=system:auth-delegator --user=alice
expect "now she may" 0 ku $A create -f "$T/s1.yaml" -o 'jsonpath={.status.allowed}'
has "and is answered" "$T/out" 'true'
review t1 TokenReview "spec: {token: $B}"
k create -f "$T/t1.yaml" -o 'jsonpath={.status.authenticated}|{.status.user.username}|{.status.user.uid}|{.status.user.groups}|{.status.audiences}'
has "TokenReview: a static token" "$T/out" 'true|bob|1002|["system:authenticated"]|["https://kubernetes.default.svc.cluster.local"]'
review t2 TokenReview 'spec: {token: nope}'
k create -f "$T/t2.yaml" -o 'jsonpath={.status.authenticated}|{.status.error}'
has "TokenReview: a bad token" "$T/out" '|invalid bearer token'
expect "a service account" 0 k create sa builder
expect "its token for audience vault" 0 k create token builder --audience vault
review t3 TokenReview "spec: {token: $(cat "$T/out"), audiences: [vault, other]}"
review t4 TokenReview "spec: {token: $(cat "$T/out")}"
k create -f "$T/t3.yaml" -o 'jsonpath={.status.authenticated}|{.status.user.username}|{.status.audiences}|{.status.user.extra}'
has "TokenReview: a bound token for its audience" "$T/out" 'true|system:serviceaccount:default:builder|["vault"]|{"authentication.kubernetes.io/credential-id":["JTI='
k create -f "$T/t4.yaml" -o 'jsonpath={.status.authenticated}|{.status.error}'
has "TokenReview: not for the API audience, kube's error" "$T/out" '|token audiences ["vault"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]'
expect "alice (auth-delegator) reviews a token" 0 ku $A create -f "$T/t1.yaml" -o 'jsonpath={.status.user.username}'
has "bob" "$T/out" 'bob'
expect "bob may not" 1 ku $B create -f "$T/t1.yaml"
has "403" "$T/out" 'cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope'
expect "can-i --as answers through SelfSubjectAccessReview as that user" 0 k auth can-i get pods --subresource=log -n default --as carol --as-group ops
has "yes" "$T/out" yes
review ss SelfSubjectAccessReview 'spec: {resourceAttributes: {verb: get, resource: pods, namespace: default}}'
ku $A create -f "$T/ss.yaml" -o 'jsonpath={.status.allowed}|{.status.reason}'
has "SelfSubjectAccessReview: kube's reason" "$T/out" 'true|RBAC: allowed by RoleBinding "alice-reads-pods/default" of Role "pod-reader" to User "alice"'
expect "bindings of this section removed" 0 k delete -f "$T/logs.yaml"
expect "and alice's" 0 k delete clusterrolebinding alice-delegator
cat >"$T/dangling.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dangling, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: nowhere}
subjects: [{kind: User, name: alice}]
EOF
expect "a binding of a missing Role" 0 k apply -f "$T/dangling.yaml"
command curl -s -o "$T/body" --cacert "$T/data/tls.crt" -H "Authorization: Bearer $A" \
	-H 'Content-Type: application/json' -X POST --data '{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"default"}}' \
	"$S/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
has "incomplete" "$T/body" '"incomplete":true'
has "evaluationError as kube's" "$T/body" 'role.rbac.authorization.k8s.io \"nowhere\" not found'
expect "discovery lists selfsubjectrulesreviews" 0 k api-resources --api-group=authorization.k8s.io
has "discovery: selfsubjectrulesreviews" "$T/out" "selfsubjectrulesreviews"

# --- ClusterRole aggregation (kube-controller-manager's controller) ------------
cat >"$T/agg.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: monitoring}
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {rbac.example.com/aggregate-to-monitoring: "true"}
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bob-monitors}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: monitoring}
subjects: [{kind: User, name: bob}]
EOF
expect "an aggregated ClusterRole" 0 k apply -f "$T/agg.yaml"
expect "bob cannot list pods yet" 1 ku $B auth can-i list pods
cat >"$T/agg2.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: monitor-pods, labels: {rbac.example.com/aggregate-to-monitoring: "true"}}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: monitor-nodes, labels: {rbac.example.com/aggregate-to-monitoring: "true"}}
rules: [{apiGroups: [""], resources: [nodes], verbs: [get, list]}, {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}]
EOF
expect "two roles labelled for it" 0 k apply -f "$T/agg2.yaml"
rules() { k get clusterrole monitoring -o jsonpath='{range .rules[*]}{.resources}{.verbs};{end}'; }
is_rules() { rules; grep -qxF -- "$1" "$T/out"; }
wait_for "aggregated: nodes then pods, by role name, the duplicate once" 50 is_rules '["nodes"]["get","list"];["pods"]["get","list","watch"];'
expect "bob lists pods through the aggregate" 0 ku $B get pods
k get clusterrole monitoring -o jsonpath='{.metadata.managedFields[*].manager}'
has "written by clusterrole-aggregation-controller" "$T/out" "clusterrole-aggregation-controller"
expect "a rule added by hand" 0 k patch clusterrole monitoring --type=json -p '[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}}]'
wait_for "is taken back" 50 is_rules '["nodes"]["get","list"];["pods"]["get","list","watch"];'
expect "unlabel one" 0 k label clusterrole monitor-nodes rbac.example.com/aggregate-to-monitoring-
wait_for "its rules leave the aggregate" 50 is_rules '["pods"]["get","list","watch"];'
expect "bob cannot list nodes" 1 ku $B get nodes

# --- escalation prevention (rbac_escalate.c, kube's RBAC REST storage) -------
cat >"$T/delegate.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: rbac-writer, namespace: default}
rules:
- {apiGroups: [rbac.authorization.k8s.io], resources: [roles, rolebindings], verbs: [create, get, update, patch, delete]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: carol-writes-rbac, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: rbac-writer}
subjects: [{kind: User, name: carol}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: carol-reads-pods, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects: [{kind: User, name: carol}]
EOF
expect "carol may write Roles in default" 0 k apply -f "$T/delegate.yaml"
C=carol-token-0123456789
expect "carol grants what she holds" 0 ku $C create role reader2 --verb=get,list --resource=pods
expect "carol cannot grant more" 1 ku $C create role sneaky --verb=get,list,delete --resource=pods,secrets
has "kube's escalation message" "$T/out" 'roles.rbac.authorization.k8s.io "sneaky" is forbidden: user "carol" (groups=["ops" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:'
has "missing rule, compacted" "$T/out" '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}'
has "missing rule 2" "$T/out" '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "delete"]}'
expect "nor by an update" 1 ku $C patch role reader2 --type=json -p '[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["nodes"],"verbs":["get"]}}]'
has "update refused" "$T/out" 'is attempting to grant RBAC permissions not currently held'
expect "a role carol does not hold" 0 k create role secret-reader --verb=get --resource=secrets
expect "carol cannot even label it" 1 ku $C label role secret-reader x=y
has "label refused" "$T/out" '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'
expect "carol binds a role she holds" 0 ku $C create rolebinding b1 --role=reader2 --user=dave
expect "carol cannot bind admin" 1 ku $C create rolebinding b2 --clusterrole=admin --user=dave
has "binding refused" "$T/out" 'rolebindings.rbac.authorization.k8s.io "b2" is forbidden: user "carol"'
expect "a binding of a missing role is 404" 1 ku $C create rolebinding b3 --clusterrole=nowhere --user=dave
has "404 as kube's" "$T/out" 'clusterroles.rbac.authorization.k8s.io "nowhere" not found'
cat >"$T/bind.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: may-bind-edit, namespace: default}
rules:
- {apiGroups: [rbac.authorization.k8s.io], resources: [clusterroles], verbs: [bind], resourceNames: [edit]}
- {apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [escalate]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: carol-may-bind, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: may-bind-edit}
subjects: [{kind: User, name: carol}]
EOF
expect "grant bind on edit and escalate" 0 k apply -f "$T/bind.yaml"
expect "with bind, carol binds edit" 0 ku $C create rolebinding b4 --clusterrole=edit --user=dave
expect "but still not admin" 1 ku $C create rolebinding b5 --clusterrole=admin --user=dave
expect "with escalate, carol writes any Role" 0 ku $C create role sneaky --verb=get,list,delete --resource=pods,secrets
expect "the admin is never checked" 0 k create clusterrole cr1 --verb='*' --resource='*' 

# --- default roles (kube's bootstrap policy) ------------------------------------
for r in cluster-admin admin edit view system:discovery system:basic-user system:public-info-viewer; do
	expect "clusterrole $r" 0 k get clusterrole "$r"
done
expect "binding system:public-info-viewer" 0 k get clusterrolebinding system:public-info-viewer -o jsonpath='{.subjects[*].name}'
has "to both groups" "$T/out" "system:authenticated system:unauthenticated"
k get clusterrole edit -o jsonpath='{.metadata.labels}'
has "edit aggregates into admin" "$T/out" '"rbac.authorization.k8s.io/aggregate-to-admin":"true"'
viewrules() { k get clusterrole view -o jsonpath='{.rules[*].resources}'; grep -q deployments "$T/out"; }
wait_for "view aggregated from system:aggregate-to-view" 50 viewrules
adminrules() { k get clusterrole admin -o jsonpath='{.rules[*].resources}'; grep -q rolebindings "$T/out" && grep -q pods/exec "$T/out" && grep -q controllerrevisions "$T/out"; }
wait_for "admin holds edit's and view's rules" 50 adminrules
expect "bob views with view" 0 k create rolebinding bob-views --clusterrole=view --user=bob -n kube-system
expect "bob reads configmaps" 0 ku $B get configmaps -n kube-system
expect "bob cannot read secrets under view" 1 ku $B get secrets -n kube-system
# reconciled at every start (kube's rbac/bootstrap-roles hook): what was taken out of a default role with
# autoupdate "true" comes back, added to what is there; autoupdate "false" is left alone; deleted ones return
expect "take namespaces out of system:aggregate-to-view" 0 k patch clusterrole system:aggregate-to-view --type=json \
	-p '[{"op":"test","path":"/rules/2/resources","value":["namespaces"]},{"op":"remove","path":"/rules/2"}]'
expect "view's selector replaced" 0 k patch clusterrole view --type=json \
	-p '[{"op":"replace","path":"/aggregationRule/clusterRoleSelectors","value":[{"matchLabels":{"example.com/view":"true"}}]}]'
expect "basic-user bound to another group only" 0 k patch clusterrolebinding system:basic-user --type=json \
	-p '[{"op":"replace","path":"/subjects","value":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"extra-group"}]}]'
expect "system:discovery deleted" 0 k delete clusterrole system:discovery
expect "edit's defaults protected" 0 k annotate --overwrite clusterrole system:aggregate-to-edit rbac.authorization.kubernetes.io/autoupdate=false
expect "and a rule taken out" 0 k patch clusterrole system:aggregate-to-edit --type=json \
	-p '[{"op":"test","path":"/rules/1/verbs","value":["impersonate"]},{"op":"remove","path":"/rules/1"}]'
noview() { k get clusterrole view -o jsonpath='{.rules[*].resources}'; ! grep -q namespaces "$T/out"; }
wait_for "view lost it (aggregation)" 50 noview
kill "$UPID"; wait "$UPID" 2>/dev/null; UPID=""
up_start "$ROOT/examples/cluster-small.yaml"; token_kubeconfig none "$T/tok-kubeconfig"
expect "after a restart" 0 k get clusterrole system:aggregate-to-view -o json --show-managed-fields
tr -d ' \n' <"$T/out" >"$T/flat"
has "the rule is back, broken down as kube's Covers" "$T/flat" '{"apiGroups":[""],"resources":["namespaces"],"verbs":["watch"]}'
has "what stayed is kept" "$T/flat" '"resources":["bindings","events"'
has "reconciled by kube-apiserver" "$T/flat" '"manager":"kube-apiserver","operation":"Update"'
viewns() { k get clusterrole view -o jsonpath='{.rules[*].resources}'; grep -q namespaces "$T/out"; }
wait_for "view has it again" 50 viewns
k get clusterrole view -o jsonpath='{.aggregationRule.clusterRoleSelectors}'
has "view keeps the selector added" "$T/out" 'example.com/view'
has "and gets kube's back" "$T/out" 'rbac.authorization.k8s.io/aggregate-to-view'
k get clusterrolebinding system:basic-user -o jsonpath='{.subjects[*].name}'
has "subjects: union" "$T/out" "extra-group system:authenticated"
expect "system:discovery made again" 0 k get clusterrole system:discovery -o jsonpath='{.metadata.annotations}'
has "annotated autoupdate" "$T/out" '"rbac.authorization.kubernetes.io/autoupdate":"true"'
k get clusterrole system:aggregate-to-edit -o jsonpath='{.rules[*].verbs}'
hasnt "autoupdate false: not reconciled" "$T/out" "impersonate"

# --- impersonation (impersonate.c, kube's WithImpersonation) ------------------
expect "alice cannot act as bob" 1 ku $A get configmaps -n kube-system --as=bob
has "kube's impersonation 403" "$T/out" 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope'
cat >"$T/imp.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: impersonate-bob}
rules:
- {apiGroups: [""], resources: [users], verbs: [impersonate], resourceNames: [bob]}
- {apiGroups: [""], resources: [groups], verbs: [impersonate], resourceNames: [viewers]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-is-bob}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonate-bob}
subjects: [{kind: User, name: alice}]
EOF
expect "grant alice impersonate on bob" 0 k apply -f "$T/imp.yaml"
expect "alice --as=bob reads kube-system configmaps" 0 ku $A get configmaps -n kube-system --as=bob
expect "as bob, not alice's secrets" 1 ku $A get secrets -n kube-system --as=bob
has "denied as bob" "$T/out" 'User "bob" cannot list resource "secrets"'
expect "whoami --as=bob --as-group=viewers" 0 ku $A auth whoami --as=bob --as-group=viewers
has "user bob" "$T/out" "bob"
has "groups asked for, then system:authenticated" "$T/out" "[viewers system:authenticated]"
expect "--as-group=system:masters is refused" 1 ku $A get nodes --as=bob --as-group=system:masters
has "group 403" "$T/out" 'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups"'
expect "--as=system:serviceaccount:x:y checks serviceaccounts" 1 ku $A get nodes --as=system:serviceaccount:kube-system:default
has "sa 403" "$T/out" 'serviceaccounts "default" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"'
code=$(command curl -s -o "$T/body" -w '%{http_code}' --cacert "$T/data/tls.crt" -H "Authorization: Bearer $A" \
	-H 'Impersonate-Group: viewers' "$S/api/v1/nodes")
[ "$code" = 500 ] && ok || bad "a group without a user gave $code, not kube's 500"
has "without impersonating a user" "$T/body" "without impersonating a user"
expect "the admin impersonates anyone" 0 k auth whoami --as=zed --as-group=g1
has "zed" "$T/out" "zed"
# the impersonated uid and extras become the request's user (authentication.k8s.io uids, userextras/KEY)
expect "--as-uid needs impersonate on uids" 1 ku $A get nodes --as=bob --as-uid=u-1
has "uid 403" "$T/out" 'uids.authentication.k8s.io "u-1" is forbidden: User "alice" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope'
cat >"$T/imp2.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: impersonate-uid-extras}
rules:
- {apiGroups: [authentication.k8s.io], resources: [uids], verbs: [impersonate], resourceNames: [u-1]}
- {apiGroups: [authentication.k8s.io], resources: [userextras/scopes, userextras/example.com/team], verbs: [impersonate]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-uid-extras}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonate-uid-extras}
subjects: [{kind: User, name: alice}]
EOF
expect "grant alice uids and two extras" 0 k apply -f "$T/imp2.yaml"
expect "whoami --as=bob --as-uid=u-1" 0 ku $A auth whoami --as=bob --as-uid=u-1 -o jsonpath='{.status.userInfo.uid}'
has "the uid is kept" "$T/out" "u-1"
# kubectl sends extras from the kubeconfig's as-user-extra (client-go escapes the key's "/" as %2F)
sed -e 's/^  user:$/  user:\n    as: bob\n    as-user-extra:\n      scopes: [read, write]\n      example.com\/team: [ml]/' \
	"$T/tok-kubeconfig" >"$T/extra-kubeconfig"
grep -q as-user-extra "$T/extra-kubeconfig" && ok || bad "no as-user-extra in the kubeconfig"
kx() { "$KC" --kubeconfig "$T/extra-kubeconfig" --token "$A" "$@" >"$T/out" 2>&1; }
expect "whoami with extras" 0 kx auth whoami -o json
tr -d ' \n' <"$T/out" >"$T/flat"
has "two values of one key" "$T/flat" '"scopes":["read","write"]'
has "an escaped key undone" "$T/flat" '"example.com/team":["ml"]'
has "as bob" "$T/flat" '"username":"bob"'
sed -i 's/example.com\/team: \[ml\]/other: [x]/' "$T/extra-kubeconfig"
expect "an extra not granted" 1 kx get nodes
has "extra 403" "$T/out" 'userextras.authentication.k8s.io "x" is forbidden: User "alice" cannot impersonate resource "userextras/other" in API group "authentication.k8s.io" at the cluster scope'
expect "a static token's uid (tokens.csv)" 0 ku $A auth whoami -o jsonpath='{.status.userInfo.uid}'
has "uid 1001" "$T/out" "1001"

# --- deploy/rbac.yaml's service account runs the scheduler --------------------------
expect "apply deploy/rbac.yaml" 0 k apply -f "$ROOT/deploy/rbac.yaml"
expect "create a token" 0 k create token muster-scheduler -n muster-system
SA=$(cat "$T/out")
case "$SA" in eyJ*.*.*) ok ;; *) bad "the token is not a JWS: $SA" ;; esac
# what the file grants ...
for q in "list nodes" "watch namespaces" "delete pods" "create pods --subresource=binding" \
	"create pods --subresource=eviction" "patch pods --subresource=status" "create events" \
	"patch events" "update jobs.batch" "create queues.muster.io" \
	"update podgroups.muster.io --subresource=status" "list podgroups.scheduling.x-k8s.io" \
	"watch noderesourcetopologies.topology.node.k8s.io" "update leases -n muster-system"; do
	# shellcheck disable=SC2086
	expect "granted: $q" 0 ku "$SA" auth can-i $q
done
# ... and nothing more
for q in "create pods" "update nodes" "get secrets" "update leases -n default" "list configmaps" \
	"delete jobs.batch" "create clusterroles.rbac.authorization.k8s.io" "patch queues.muster.io" \
	"create noderesourcetopologies.topology.node.k8s.io"; do
	# shellcheck disable=SC2086
	expect "denied: $q" 1 ku "$SA" auth can-i $q
done
expect "the account cannot read secrets" 1 ku "$SA" get secrets -n muster-system
has "sa 403" "$T/out" 'User "system:serviceaccount:muster-system:muster-scheduler" cannot list resource "secrets"'
token_kubeconfig "$SA" "$T/sa-kubeconfig"
"$M" scheduler --kubeconfig "$T/sa-kubeconfig" --id rbac-test --lease-namespace muster-system \
	--min-runtime 0 --lease-duration 6 --retry-period 1 >"$T/sched.out" 2>"$T/sched.log" &
SPID=$!
cat >"$T/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: scheduled-by-sa}
spec:
  schedulerName: muster
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
EOF
expect "create a muster pod" 0 k apply -f "$T/pod.yaml"
bound() { k get pod scheduled-by-sa -o jsonpath='{.spec.nodeName}' && grep -q . "$T/out"; }
wait_for "bound by the service account's scheduler" 150 bound
hasnt "no 403 in the scheduler's log" "$T/sched.log" "forbidden"
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""
# --- service account tokens are signed JWTs (satoken.c) -------------------------
# claims JWT KEY=VALUE...: the token's header and payload decoded by
# python3: ES256 with a kid and a 64-byte signature, and each claim (a
# dotted path; "kubernetes.io" is one key) equal to VALUE
claims() {
	/usr/bin/python3 - "$@" >"$T/claims" 2>&1 <<'EOF'
import base64, json, sys
tok, want = sys.argv[1], sys.argv[2:]
h, p, sig = tok.split(".")
dec = lambda s: base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
hdr, c = json.loads(dec(h)), json.loads(dec(p))
print(json.dumps(hdr), json.dumps(c))
assert hdr["alg"] == "ES256" and hdr["kid"], hdr
assert len(dec(sig)) == 64
for w in want:
    k, v = w.split("=", 1)
    got = c
    path = k.replace("kubernetes.io.", "kubernetes.io\0").split("\0")
    path = path[:1] + (path[1].split(".") if len(path) > 1 else [])
    for part in path:
        got = got[part]
    assert str(got) == v, (k, got, v)
EOF
}
k get sa muster-scheduler -n muster-system -o jsonpath='{.metadata.uid}'; uid=$(cat "$T/out")
claims "$SA" iss=https://kubernetes.default.svc.cluster.local sub=system:serviceaccount:muster-system:muster-scheduler \
	"aud=['https://kubernetes.default.svc.cluster.local']" kubernetes.io.namespace=muster-system \
	kubernetes.io.serviceaccount.name=muster-scheduler "kubernetes.io.serviceaccount.uid=$uid" && ok ||
	{ cat "$T/claims"; bad "the token's claims"; }
expect "a token for 20 minutes, two audiences" 0 k create token muster-scheduler -n muster-system --duration 20m \
	--audience https://kubernetes.default.svc.cluster.local --audience other
T20=$(cat "$T/out")
/usr/bin/python3 -c 'import base64,json,sys; s=sys.argv[1].split(".")[1]; c=json.loads(base64.urlsafe_b64decode(s+"="*(-len(s)%4))); sys.exit(0 if c["exp"]-c["iat"]==1200 and c["nbf"]==c["iat"] and c["aud"][1]=="other" else 1)' "$T20" &&
	ok || bad "--duration 20m is not exp - iat = 1200 with both audiences"
expect "the two-audience token works" 0 ku "$T20" get nodes
expect "a token for another audience" 0 k create token muster-scheduler -n muster-system --audience vault
expect "is 401" 1 ku "$(cat "$T/out")" get nodes
has "wrong audience 401" "$T/out" "Unauthorized"
expect "under 10 minutes is refused" 1 k create token muster-scheduler -n muster-system --duration 5m
has "kube's duration message" "$T/out" "may not specify a duration less than 10 minutes"
TAMPER=$(printf '%s' "$SA" | sed 's/\.\(.\)/.X\1/')
expect "a tampered token is 401" 1 ku "$TAMPER" get nodes
# bound to a pod: valid while that pod exists
expect "a pod to bind to" 0 k run holder -n muster-system --image=x --restart=Never \
	--overrides='{"spec":{"serviceAccountName":"muster-scheduler","nodeName":"a100-1"}}'
expect "a token bound to it" 0 k create token muster-scheduler -n muster-system --bound-object-kind Pod \
	--bound-object-name holder
TPOD=$(cat "$T/out")
claims "$TPOD" kubernetes.io.pod.name=holder && ok || { cat "$T/claims"; bad "the pod claim"; }
expect "the bound token works" 0 ku "$TPOD" get nodes
# the pod's node (ServiceAccountTokenPodNodeInfo) is in the claims, and the user's uid and extras are kube's
k get node a100-1 -o jsonpath='{.metadata.uid}'; nuid=$(cat "$T/out")
claims "$TPOD" kubernetes.io.node.name=a100-1 "kubernetes.io.node.uid=$nuid" && ok || { cat "$T/claims"; bad "the node claim"; }
expect "whoami with the bound token" 0 ku "$TPOD" auth whoami -o json
tr -d ' \n' <"$T/out" >"$T/flat"
has "the account's uid" "$T/flat" "\"uid\":\"$uid\""
has "pod-name extra" "$T/flat" '"authentication.kubernetes.io/pod-name":["holder"]'
has "node-name extra" "$T/flat" '"authentication.kubernetes.io/node-name":["a100-1"]'
has "node-uid extra" "$T/flat" "\"authentication.kubernetes.io/node-uid\":[\"$nuid\"]"
has "credential-id extra" "$T/flat" '"authentication.kubernetes.io/credential-id":["JTI='
expect "a pod of another account" 0 k run other-sa -n muster-system --image=x --restart=Never
expect "is refused" 1 k create token muster-scheduler -n muster-system --bound-object-kind Pod --bound-object-name other-sa
has "kube's 400" "$T/out" 'cannot bind token for serviceaccount "muster-scheduler" to pod running with different serviceaccount name.'
expect "delete the pod" 0 k delete pod holder -n muster-system --grace-period=0 --force
gone_pod() { ! k get pod holder -n muster-system; }
wait_for "the pod is gone" 50 gone_pod
expect "the bound token is then 401" 1 ku "$TPOD" get nodes
expect "binding to a missing pod is 404" 1 k create token muster-scheduler -n muster-system --bound-object-kind Pod \
	--bound-object-name nope
has "404" "$T/out" 'pods "nope" not found'
# bound to a Node (ServiceAccountTokenNodeBinding): valid while that Node exists with its uid
printf '%s\n' 'apiVersion: v1' 'kind: Node' 'metadata: {name: tok-node}' >"$T/node.yaml"
expect "a Node to bind to" 0 k create -f "$T/node.yaml"
expect "a token bound to it" 0 k create token muster-scheduler -n muster-system --bound-object-kind Node \
	--bound-object-name tok-node
TNODE=$(cat "$T/out")
k get node tok-node -o jsonpath='{.metadata.uid}'; tnuid=$(cat "$T/out")
claims "$TNODE" kubernetes.io.node.name=tok-node "kubernetes.io.node.uid=$tnuid" && ok || { cat "$T/claims"; bad "the node claim"; }
expect "the node-bound token works" 0 ku "$TNODE" auth whoami -o json
tr -d ' \n' <"$T/out" >"$T/flat"
has "its node extras" "$T/flat" "\"authentication.kubernetes.io/node-name\":[\"tok-node\"],\"authentication.kubernetes.io/node-uid\":[\"$tnuid\"]"
expect "delete the Node" 0 k delete node tok-node
expect "and make it again" 0 k create -f "$T/node.yaml"
expect "the token of the old Node is 401" 1 ku "$TNODE" get nodes
has "node 401" "$T/out" "Unauthorized"
expect "binding to a missing Node is 404" 1 k create token muster-scheduler -n muster-system --bound-object-kind Node \
	--bound-object-name nope
has "nodes 404" "$T/out" 'nodes "nope" not found'
# ServiceAccountIssuerDiscovery
expect "openid configuration" 0 k get --raw /.well-known/openid-configuration
has "issuer" "$T/out" '"issuer":"https://kubernetes.default.svc.cluster.local"'
has "jwks_uri" "$T/out" '"jwks_uri":"https://kubernetes.default.svc.cluster.local/openid/v1/jwks"'
expect "jwks" 0 k get --raw /openid/v1/jwks
kid=$(/usr/bin/python3 -c 'import base64,json,sys; s=sys.argv[1].split(".")[0]; print(json.loads(base64.urlsafe_b64decode(s+"="*(-len(s)%4)))["kid"])' "$SA")
has "the token's kid is the key's" "$T/out" "\"kid\":\"$kid\""
has "P-256 with x and y" "$T/out" '"crv":"P-256","alg":"ES256","x":"'
expect "an account reads them (system:service-account-issuer-discovery)" 0 ku "$SA" get --raw /openid/v1/jwks
expect "a user does not" 1 ku $B get --raw /openid/v1/jwks
# a legacy kubernetes.io/service-account-token Secret gets a JWT (the tokens controller)
printf '%s\n' 'apiVersion: v1' 'kind: Secret' 'type: kubernetes.io/service-account-token' \
	'metadata: {name: sched-legacy, namespace: muster-system, annotations: {kubernetes.io/service-account.name: muster-scheduler}}' \
	>"$T/legacy.yaml"
expect "a legacy token Secret" 0 k apply -f "$T/legacy.yaml"
k get secret sched-legacy -n muster-system -o jsonpath='{.data.token}'
LEG=$(base64 -d <"$T/out")
claims "$LEG" iss=kubernetes/serviceaccount kubernetes.io/serviceaccount/secret.name=sched-legacy \
	"kubernetes.io/serviceaccount/service-account.uid=$uid" && ok || { cat "$T/claims"; bad "legacy claims"; }
expect "the legacy token works" 0 ku "$LEG" get nodes
# the token survives a restart (DATA/sa.key); a 20-minute one expires
# (the server's clock two hours on; kube's leeway is 60 s)
kill "$UPID"; wait "$UPID" 2>/dev/null; UPID=""
up_start "$ROOT/examples/cluster-small.yaml"; token_kubeconfig none "$T/tok-kubeconfig"
expect "the token after a restart" 0 ku "$T20" get nodes
if [ -f /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ]; then
	kill "$UPID"; wait "$UPID" 2>/dev/null; UPID=""
	export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 FAKETIME=+2h
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	up_start "$ROOT/examples/cluster-small.yaml"; token_kubeconfig none "$T/tok-kubeconfig"
	unset LD_PRELOAD FAKETIME
	expect "an expired token is 401" 1 ku "$T20" get nodes
	has "expired 401" "$T/out" "must be logged in to the server"
	expect "a legacy token does not expire" 0 ku "$LEG" get nodes
	kill "$UPID"; wait "$UPID" 2>/dev/null; UPID=""
	up_start "$ROOT/examples/cluster-small.yaml"; token_kubeconfig none "$T/tok-kubeconfig"
else
	echo "rbac: SKIPPED the expiry check: libfaketime is missing"
fi
# a ServiceAccount deleted and made again does not accept the old tokens
expect "delete the account" 0 k delete sa muster-scheduler -n muster-system
expect "make it again" 0 k create sa muster-scheduler -n muster-system
expect "the old token is 401" 1 ku "$SA" get nodes
has "401" "$T/out" "Unauthorized"
expect "and the legacy one" 1 ku "$LEG" get nodes
expect "a new token" 0 k create token muster-scheduler -n muster-system
expect "works" 0 ku "$(cat "$T/out")" get nodes
# --- service account signing key rotation (kube's --service-account-signing-key-file and repeated
# --service-account-key-file): tokens of the old key stay valid while it is listed
# up_keys FLAGS...: restarts muster up on the same data with FLAGS
up_keys() {
	kill "$UPID"; wait "$UPID" 2>/dev/null; UPID=""
	"$M" up --cluster "$ROOT/examples/cluster-small.yaml" --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet \
		"$@" >"$T/up.out" 2>"$T/up.err" &
	UPID=$!
	i=0; S=""
	while [ "$i" -lt 150 ]; do
		S=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$T/up.out")
		if [ -n "$S" ] && command curl -sfk "$S/readyz" >/dev/null 2>&1; then break; fi
		kill -0 "$UPID" 2>/dev/null || break
		sleep 0.1; i=$((i + 1))
	done
	token_kubeconfig none "$T/tok-kubeconfig"
}
kidof() { /usr/bin/python3 -c 'import base64,json,sys; s=sys.argv[1].split(".")[0]; print(json.loads(base64.urlsafe_b64decode(s+"="*(-len(s)%4)))["kid"])' "$1"; }
expect "a token of the old key" 0 k create token muster-scheduler -n muster-system
TOLD=$(cat "$T/out"); OLDKID=$(kidof "$TOLD")
openssl ecparam -name prime256v1 -genkey -noout -out "$T/new.key" 2>/dev/null && ok || bad "openssl made no key"
up_keys --service-account-signing-key-file "$T/new.key" --service-account-key-file "$T/data/sa.key" \
	--service-account-key-file "$T/new.key"
expect "rotated: the old token still works" 0 ku "$TOLD" get nodes
expect "a new token" 0 k create token muster-scheduler -n muster-system
TNEW=$(cat "$T/out"); NEWKID=$(kidof "$TNEW")
[ -n "$NEWKID" ] && [ "$NEWKID" != "$OLDKID" ] && ok || bad "the new token's kid $NEWKID is the old key's"
expect "works" 0 ku "$TNEW" get nodes
expect "the JWKS" 0 k get --raw /openid/v1/jwks
has "lists the old key" "$T/out" "\"kid\":\"$OLDKID\""
has "and the new one" "$T/out" "\"kid\":\"$NEWKID\""
up_keys --service-account-signing-key-file "$T/new.key" --service-account-key-file "$T/new.key"
expect "the old key removed: its token is 401" 1 ku "$TOLD" get nodes
has "old key 401" "$T/out" "must be logged in to the server"
expect "the new token works" 0 ku "$TNEW" get nodes
expect "the JWKS" 0 k get --raw /openid/v1/jwks
hasnt "without the old key" "$T/out" "\"kid\":\"$OLDKID\""
# --- RSA, P-384 signing keys (round 12: kube's RS256 and ES384) ------------------
# kidder FILE: kube's kid of a PEM key's public half
kidder() { openssl pkey -in "$1" -pubout -outform DER 2>/dev/null | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d '=\n'; }
algof() { /usr/bin/python3 -c 'import base64,json,sys; s=sys.argv[1].split(".")[0]; print(json.loads(base64.urlsafe_b64decode(s+"="*(-len(s)%4)))["alg"])' "$1"; }
openssl genrsa -out "$T/rsa.key" 2048 2>/dev/null && openssl ecparam -name secp384r1 -genkey -noout -out "$T/p384.key" 2>/dev/null &&
	openssl genrsa -out "$T/rsa1024.key" 1024 2>/dev/null && openssl ecparam -name secp256k1 -genkey -noout -out "$T/k1.key" 2>/dev/null &&
	openssl pkey -in "$T/rsa.key" -pubout -out "$T/rsa.pub" 2>/dev/null && ok || bad "openssl made no keys"
up_keys --service-account-signing-key-file "$T/rsa.key" --service-account-key-file "$T/rsa.pub" \
	--service-account-key-file "$T/new.key"
expect "an RSA signing key: a token" 0 k create token muster-scheduler -n muster-system
TRSA=$(cat "$T/out")
[ "$(algof "$TRSA")" = RS256 ] && [ "$(kidof "$TRSA")" = "$(kidder "$T/rsa.key")" ] && ok ||
	bad "the RSA token's alg $(algof "$TRSA") / kid $(kidof "$TRSA"), want RS256 / $(kidder "$T/rsa.key")"
expect "the RSA token works" 0 ku "$TRSA" get nodes
expect "the P-256 token still works (its key listed)" 0 ku "$TNEW" get nodes
expect "the JWKS" 0 k get --raw /openid/v1/jwks
has "lists the RSA key as kube's JWK" "$T/out" "{\"use\":\"sig\",\"kty\":\"RSA\",\"kid\":\"$(kidder "$T/rsa.key")\",\"alg\":\"RS256\",\"n\":\""
has "with kube's exponent" "$T/out" '"e":"AQAB"'
expect "the OpenID configuration" 0 k get --raw /.well-known/openid-configuration
has "both algorithms, sorted" "$T/out" '"id_token_signing_alg_values_supported":["ES256","RS256"]'
up_keys --service-account-signing-key-file "$T/p384.key" --service-account-key-file "$T/p384.key" \
	--service-account-key-file "$T/rsa.key" --service-account-max-token-expiration 2h
expect "a P-384 signing key: a token" 0 k create token muster-scheduler -n muster-system
T384=$(cat "$T/out")
[ "$(algof "$T384")" = ES384 ] && [ "$(kidof "$T384")" = "$(kidder "$T/p384.key")" ] && ok || bad "the P-384 token's alg $(algof "$T384")"
expect "the P-384 token works" 0 ku "$T384" get nodes
expect "the RSA token still works" 0 ku "$TRSA" get nodes
expect "the P-256 token does not (its key no longer listed)" 1 ku "$TNEW" get nodes
expect "the JWKS" 0 k get --raw /openid/v1/jwks
has "lists the P-384 key" "$T/out" "\"kid\":\"$(kidder "$T/p384.key")\",\"crv\":\"P-384\",\"alg\":\"ES384\""
review t5 TokenReview "spec: {token: $T384}"
k create -f "$T/t5.yaml" -o 'jsonpath={.status.authenticated}|{.status.user.username}'
has "TokenReview of the P-384 token" "$T/out" 'true|system:serviceaccount:muster-system:muster-scheduler'
# --- --service-account-max-token-expiration; pods' extended tokens (round 12) ----
claim() { /usr/bin/python3 -c 'import base64,json,sys; s=sys.argv[1].split(".")[1]; c=json.loads(base64.urlsafe_b64decode(s+"="*(-len(s)%4))); print(eval(sys.argv[2]))' "$1" "$2"; }
expect "a token asked for 5h" 0 k create token muster-scheduler -n muster-system --duration 5h
[ "$(claim "$(grep "^eyJ" "$T/out")" 'c["exp"]-c["iat"]')" = 7200 ] && ok || bad "not shortened to the 2h maximum"
has "kube's warning" "$T/out" 'Warning: requested expiration of 18000 seconds shortened to 7200 seconds'
printf '%s\n' 'apiVersion: v1' 'kind: Pod' 'metadata: {name: p-tok}' 'spec: {serviceAccountName: builder, containers: [{name: c, image: x}]}' >"$T/p-tok.yaml"
expect "a pod of builder" 0 k create -f "$T/p-tok.yaml"
expect "a pod-bound token of 3607 s, as the kubelet asks" 0 k create token builder --bound-object-kind Pod --bound-object-name p-tok --duration 3607s
TEXT=$(cat "$T/out")
[ "$(claim "$TEXT" 'c["exp"]-c["iat"]')/$(claim "$TEXT" 'c["kubernetes.io"]["warnafter"]-c["iat"]')" = 31536000/3607 ] && ok ||
	bad "extended token: $(claim "$TEXT" 'c["exp"]-c["iat"]') s, warnafter $(claim "$TEXT" 'c["kubernetes.io"].get("warnafter",0)-c["iat"]')"
expect "the extended token works" 0 ku "$TEXT" auth whoami
expect "the same for another audience" 0 k create token builder --bound-object-kind Pod --bound-object-name p-tok --duration 3607s --audience vault
[ "$(claim "$(cat "$T/out")" 'c["exp"]-c["iat"]')/$(claim "$(cat "$T/out")" '"warnafter" in c["kubernetes.io"]')" = 3607/False ] && ok || bad "a token for vault was extended"
expect "3608 s is not extended" 0 k create token builder --bound-object-kind Pod --bound-object-name p-tok --duration 3608s
[ "$(claim "$(cat "$T/out")" 'c["exp"]-c["iat"]')" = 3608 ] && ok || bad "3608 s was extended"
expect "a token of 3607 s bound to no pod" 0 k create token builder --duration 3607s
[ "$(claim "$(cat "$T/out")" 'c["exp"]-c["iat"]')" = 3607 ] && ok || bad "an unbound 3607 s token was extended"
kill "$UPID"; wait "$UPID" 2>/dev/null; UPID=""
"$M" up --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet --service-account-signing-key-file "$T/rsa1024.key" \
	>"$T/out" 2>&1 && bad "a 1024-bit RSA signing key was accepted" || ok
has "and said why" "$T/out" "a PEM private key: RSA of 2048-8192 bits"
"$M" up --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet --service-account-key-file "$T/k1.key" \
	>"$T/out" 2>&1 && bad "a secp256k1 key was accepted" || ok
has "and said why" "$T/out" "an EC key on curve secp256k1 (kube takes P-256, P-384 and P-521)"
"$M" up --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet --service-account-key-file "$T/rsa1024.key" \
	>"$T/out" 2>&1 && bad "a 1024-bit RSA key was accepted" || ok
has "and said why" "$T/out" "a PRIVATE KEY block that is an RSA key of 1024 bits (muster takes 2048 to 8192)"
"$M" up --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet --service-account-max-token-expiration 30m \
	>"$T/out" 2>&1 && bad "a 30m maximum was accepted" || ok
has "kube's message" "$T/out" "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"
"$M" up --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet --service-account-key-file "$T/data/tokens.csv" \
	>"$T/out" 2>&1 && bad "a key file without a key was accepted" || ok
has "and said why" "$T/out" "tokens.csv holds no PEM key"

done_
