#!/bin/sh
# audit.sh - kube-apiserver's audit log in `muster up` (round 12):
# --audit-policy-file with a policy that logs pods (and pods/log) at
# RequestResponse, secrets at Metadata without the RequestReceived stage,
# and nothing else; --audit-log-path gets one audit.k8s.io/v1 Event per
# line per stage, checked field by field with python3: the level, the
# auditID (also the Audit-Id response header, and the client's own
# Audit-ID kept), the stages (RequestReceived then ResponseComplete;
# ResponseStarted for a watch), kube's verbs, the user, impersonatedUser,
# sourceIPs, userAgent, objectRef with its subresource, responseStatus
# (with the Status of a failure), the request and response objects only
# at their levels and without managedFields (omitManagedFields),
# microsecond timestamps and the authorization annotations (allow, and
# forbid for a user RBAC refuses).  The log file is made 0600, and bad
# policy files stop `muster up` with a message naming the file and field.
# Usage: sh tests/e2e/audit.sh PATH_TO_MUSTER.  Ends with
# "e2e audit: N passed, N failed".
E2E_NAME=audit; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
UPID=""
on_exit() { [ -n "$UPID" ] && kill "$UPID" 2>/dev/null; wait 2>/dev/null; }
need_kubectl
command -v python3 >/dev/null 2>&1 || { bad "python3 missing"; done_; }
mkdir -p "$T/data"
printf '%s\n' 'alice-token-0123456789,alice,1001,"team-a"' >"$T/data/tokens.csv"
cat >"$T/policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitManagedFields: true
rules:
- level: RequestResponse
  resources:
  - group: ""
    resources: ["pods", "pods/log"]
- level: Metadata
  resources:
  - {group: "", resources: [secrets]}
  omitStages: [RequestReceived]
- level: None
EOF
LOG="$T/audit.log"

# --- bad policy files are refused, naming the file and the field ------------------
refused() { # NAME POLICY_TEXT WANT_IN_STDERR
	printf '%s\n' "$2" >"$T/bad.yaml"
	"$M" up --listen 127.0.0.1:0 --data "$T/bad-data" --no-fsync --quiet --audit-log-path "$T/bad.log" \
		--audit-policy-file "$T/bad.yaml" >"$T/out" 2>"$T/err" &
	bp=$!
	i=0
	while kill -0 $bp 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 $bp 2>/dev/null; then kill $bp; wait $bp 2>/dev/null; bad "$1: muster up started"; return; fi
	wait $bp; [ $? -ne 0 ] && ok || bad "$1: exit 0"
	has "$1: file named" "$T/err" "$T/bad.yaml"
	has "$1: message" "$T/err" "$3"
}
refused "bad level" 'apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
- level: Everything' 'rules[1].level: Unsupported value: "Everything"'
refused "unknown field" 'apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  verb: [get]' 'unknown field "rules[0].verb"'
refused "no rules" '{"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": []}' 'loaded illegal policy with 0 rules'
refused "bad stage" 'apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  omitStages: [Started]' 'rules[0].omitStages[0]: Unsupported value: "Started"'
refused "bad url" 'apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  nonResourceURLs: ["/api*/x"]' "rules[0].nonResourceURLs[0]: Invalid value"

# --- the server with the policy ---------------------------------------------------
"$M" up --cluster "$ROOT/examples/cluster-small.yaml" --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet \
	--audit-policy-file "$T/policy.yaml" --audit-log-path "$LOG" >"$T/up.out" 2>"$T/up.err" &
UPID=$!
i=0; S=""
while [ "$i" -lt 150 ]; do
	S=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$T/up.out" 2>/dev/null) # made by the child
	if [ -n "$S" ] && command curl -sfk "$S/readyz" >/dev/null 2>&1; then break; fi
	kill -0 "$UPID" 2>/dev/null || break
	sleep 0.1; i=$((i + 1))
done
[ -n "$S" ] && ok || { cat "$T/up.err"; bad "muster up did not start"; done_; }
[ "$(stat -c %a "$LOG")" = 600 ] && ok || bad "the log is not 0600: $(stat -c %a "$LOG")"

cat >"$T/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: audited, namespace: default}
spec: {schedulerName: nobody, containers: [{name: c, image: busybox}]}
EOF
expect "create pod" 0 k create -f "$T/pod.yaml"
expect "get pod" 0 k get pod audited -o json --show-managed-fields
has "the server keeps managedFields" "$T/out" '"managedFields"'
expect "create secret" 0 k create secret generic s1 --from-literal=k=v
expect "list configmaps" 0 k get configmaps
api -s -D "$T/hdr" -o /dev/null "$S/api/v1/namespaces/default/pods/audited"
ID=$(sed -n 's/^[Aa]udit-[Ii]d: *\([^\r]*\).*/\1/p' "$T/hdr")
[ -n "$ID" ] && ok || bad "no Audit-Id header"
api -s -H 'Audit-ID: my-own-id-42' -o /dev/null "$S/api/v1/namespaces/default/pods"
api -s -o /dev/null "$S/api/v1/namespaces/default/pods/audited/log?container=c"
api -s -o /dev/null "$S/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1"
token_kubeconfig alice-token-0123456789 "$T/alice"
expect "alice cannot list pods" 1 "$KC" --kubeconfig "$T/alice" get pods -n kube-system
expect "impersonated get" 0 k get pod audited --as alice --as-group system:masters
sleep 1.5 # the watch's timeout, and the writer

python3 - "$LOG" "$ID" >"$T/py" 2>&1 <<'EOF'
import json, re, sys
log, hid = sys.argv[1], sys.argv[2]
ev = [json.loads(l) for l in open(log)]
fails = []
def check(name, cond):
    print(("ok " if cond else "FAIL ") + name)
ts = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
check("every line is an audit.k8s.io/v1 Event", all(e["kind"] == "Event" and e["apiVersion"] == "audit.k8s.io/v1" for e in ev))
check("microsecond timestamps", all(ts.match(e["stageTimestamp"]) and ts.match(e["requestReceivedTimestamp"]) for e in ev))
res = lambda e: e.get("objectRef", {}).get("resource")
check("only pods and secrets logged", ev and all(res(e) in ("pods", "secrets") for e in ev))
cr = [e for e in ev if res(e) == "pods" and e["verb"] == "create"]
check("pod create: two stages", [e["stage"] for e in cr] == ["RequestReceived", "ResponseComplete"])
check("pod create: one auditID", len({e["auditID"] for e in cr}) == 1 and re.match(r"^[0-9a-f-]{36}$", cr[0]["auditID"]))
rc = cr[-1]
check("pod create: level", rc["level"] == "RequestResponse")
check("pod create: objectRef", rc["objectRef"] == {"resource": "pods", "namespace": "default", "name": "audited", "apiVersion": "v1"})
check("pod create: 201", rc["responseStatus"] == {"metadata": {}, "code": 201})
check("pod create: requestObject", rc["requestObject"]["metadata"]["name"] == "audited")
check("pod create: responseObject without managedFields", rc["responseObject"]["kind"] == "Pod" and "managedFields" not in rc["responseObject"]["metadata"] and rc["responseObject"]["metadata"].get("uid"))
check("pod create: not on RequestReceived", "requestObject" not in cr[0] and "responseStatus" not in cr[0] and "annotations" not in cr[0])
check("pod create: user", rc["user"]["username"] and "system:masters" in rc["user"]["groups"] and "system:authenticated" in rc["user"]["groups"])
check("pod create: sourceIPs", rc["sourceIPs"] == ["127.0.0.1"])
check("pod create: userAgent", rc.get("userAgent", "").startswith("kubectl"))
check("pod create: allow", rc["annotations"]["authorization.k8s.io/decision"] == "allow" and "authorization.k8s.io/reason" in rc["annotations"])
check("pod create: requestURI", rc["requestURI"].startswith("/api/v1/namespaces/default/pods"))
sc = [e for e in ev if res(e) == "secrets"]
check("secret: ResponseComplete only", [e["stage"] for e in sc] == ["ResponseComplete"] and sc[0]["verb"] == "create")
check("secret: Metadata, no objects", sc[0]["level"] == "Metadata" and "requestObject" not in sc[0] and "responseObject" not in sc[0])
check("secret: its name from the body is not read at Metadata", sc[0]["objectRef"] == {"resource": "secrets", "namespace": "default", "apiVersion": "v1"})
hd = [e for e in ev if e["auditID"] == hid]
check("Audit-Id header is the event's", len(hd) == 2 and hd[-1]["verb"] == "get")
check("client Audit-ID kept", [e["verb"] for e in ev if e["auditID"] == "my-own-id-42"] == ["list", "list"])
lg = [e for e in ev if e.get("objectRef", {}).get("subresource") == "log"]
check("pods/log logged with its subresource", lg and lg[-1]["objectRef"]["name"] == "audited" and lg[-1]["verb"] == "get")
w = [e for e in ev if e["verb"] == "watch"]
check("watch: three stages", [e["stage"] for e in w] == ["RequestReceived", "ResponseStarted", "ResponseComplete"] and w[1]["responseStatus"]["code"] == 200 and "responseObject" not in w[2])
fb = [e for e in ev if e["user"].get("username") == "alice" and e["stage"] == "ResponseComplete"]
check("forbidden: decision forbid", fb and fb[0]["annotations"]["authorization.k8s.io/decision"] == "forbid")
check("forbidden: Status", fb and fb[0]["responseStatus"]["code"] == 403 and fb[0]["responseStatus"]["reason"] == "Forbidden" and fb[0]["responseStatus"]["status"] == "Failure" and "cannot list resource" in fb[0]["responseStatus"]["message"])
check("forbidden: verb list, cluster of kube-system", fb and fb[0]["verb"] == "list" and fb[0]["objectRef"]["namespace"] == "kube-system")
im = [e for e in ev if "impersonatedUser" in e and e["stage"] == "ResponseComplete"]
check("impersonation: user and impersonatedUser", im and im[0]["impersonatedUser"]["username"] == "alice" and "system:masters" in im[0]["impersonatedUser"]["groups"] and im[0]["user"]["username"] != "alice")
EOF
grep -q . "$T/py" || bad "python printed nothing"
while read -r st name; do
	case "$st" in ok) ok ;; FAIL) bad "$name" ;; *) bad "python: $st $name" ;; esac
done <"$T/py"
done_
