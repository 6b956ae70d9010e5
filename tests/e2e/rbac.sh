#!/bin/sh
# rbac.sh - authentication and RBAC on `muster up`: anonymous requests get
# 401 (health and version excepted); static users of DATA/tokens.csv and a
# service account token from `kubectl create token` are accepted; each
# Role/ClusterRole bound to a user, a group or a service account lets it do
# what it grants and gets 403 (with kube-apiserver's message) for the rest;
# `kubectl auth can-i` answers through SelfSubjectAccessReview, and
# `kubectl auth can-i --list` through SelfSubjectRulesReview; a ClusterRole
# with an aggregationRule gets the rules of the roles it selects (and
# loses a rule added by hand), as kube-controller-manager's aggregation
# controller does; and
# `muster scheduler` run with deploy/rbac.yaml's service account schedules
# a pod, while that account can do exactly what the file grants.
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

# --- deploy/rbac.yaml's service account runs the scheduler --------------------------
expect "apply deploy/rbac.yaml" 0 k apply -f "$ROOT/deploy/rbac.yaml"
expect "create a token" 0 k create token muster-scheduler -n muster-system
SA=$(cat "$T/out")
case "$SA" in musa.muster-system.muster-scheduler-token-*) ok ;; *) bad "token: $SA" ;; esac
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
# deleting the token's Secret revokes it
expect "find the token secret" 0 k get secrets -n muster-system -o name
sec=$(grep muster-scheduler-token "$T/out" | head -1)
expect "revoke" 0 k delete -n muster-system "$sec"
expect "revoked token" 1 ku "$SA" get nodes
has "401" "$T/out" "Unauthorized"
done_
