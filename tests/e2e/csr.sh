#!/bin/sh
# csr.sh - CertificateSigningRequests (certificates.k8s.io/v1) on `muster up`
# (issue 16), with the real kubectl, openssl (keys and requests) and the
# official Python client:
#   - a create records the requester (spec.username, spec.groups) and is
#     Pending; kube-apiserver's validation refuses a short
#     expirationSeconds, a request that is not a PEM CERTIFICATE REQUEST,
#     no usages, an unknown usage and a signerName without a domain, with
#     its messages; CertificateSubjectRestriction refuses a
#     kube-apiserver-client request for group system:masters;
#   - `kubectl certificate approve` (a protobuf PUT to /approval) and deny;
#     an approved request for kubernetes.io/kube-apiserver-client is
#     signed by muster up's CA: subject, client auth, CA:FALSE (even when
#     the request asks to be a CA), valid from 5 minutes ago for
#     expirationSeconds; the certificate then
#     authenticates (kubectl auth whoami) and RBAC applies to its CN and O;
#   - kubelet signers: a request breaking their rules gets the Failed
#     condition (SignerValidationFailure, kube's message), a good
#     kubelet-serving one is signed with its SANs; an unknown signer's
#     approved request stays unsigned; a client request asking for server
#     auth fails;
#   - /status may not add Approved, approving a denied request is 422, and
#     a user without `approve` on the signer gets 403 (CertificateApproval);
#   - the Python client creates, approves (replace_..._approval) and reads.
# Usage: sh tests/e2e/csr.sh PATH_TO_MUSTER.  Ends with
# "e2e csr: N passed, N failed".  Every process started here is killed on
# exit.
E2E_NAME=csr; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
UPID=""
on_exit() { [ -n "$UPID" ] && kill "$UPID" 2>/dev/null; wait 2>/dev/null; }
need_kubectl
if ! command -v openssl >/dev/null 2>&1; then
	echo "csr: needs openssl (scripts/install-deps.sh installs it)"; bad "openssl missing"; done_
fi
up_start "$ROOT/examples/cluster-small.yaml"

# req NAME SUBJ [SAN]: a P-256 key NAME.key and request NAME.csr
req() {
	if [ -n "${3:-}" ]; then
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/$1.key" \
			-subj "$2" -addext "subjectAltName=$3" -out "$T/$1.csr" 2>/dev/null
	else
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/$1.key" \
			-subj "$2" -out "$T/$1.csr" 2>/dev/null
	fi
}
# csr NAME SIGNER USAGES [EXTRA_SPEC_LINE]: the CSR object of NAME.csr in NAME.yaml
csr() {
	{
		printf 'apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: %s}\n' "$1"
		printf 'spec:\n  request: %s\n  signerName: %s\n  usages: %s\n' "$(base64 -w0 "$T/$1.csr")" "$2" "$3"
		[ -n "${4:-}" ] && printf '  %s\n' "$4"
	} >"$T/$1.yaml"
}
cond() { "$KC" --kubeconfig "$T/data/kubeconfig" get csr "$1" --no-headers | awk '{print $NF}'; }
is_cond() { [ "$(cond "$1")" = "$2" ]; }

# --- create, validation ---------------------------------------------------------
req alice "/CN=alice/O=devs"
csr alice kubernetes.io/kube-apiserver-client '[client auth]' 'expirationSeconds: 3600'
k apply -f "$T/alice.yaml"; has "create" "$T/out" "certificatesigningrequest.certificates.k8s.io/alice created"
k get csr alice; has "get csr: columns" "$T/out" "SIGNERNAME"; has "get csr: pending" "$T/out" "Pending"
has "get csr: requestor" "$T/out" "admin"; has "get csr: duration" "$T/out" "60m"
k get csr alice -o jsonpath='{.spec.username} {.spec.groups}'
has "spec.username/groups from the requester" "$T/out" 'admin ["system:masters","system:authenticated"]'
k get csr --field-selector spec.signerName=kubernetes.io/kube-apiserver-client -o name
has "field selector spec.signerName" "$T/out" "certificatesigningrequest.certificates.k8s.io/alice"

csr alice kubernetes.io/kube-apiserver-client '[client auth]' 'expirationSeconds: 599'
sed -i 's/name: alice/name: short/' "$T/alice.yaml"
k create -f "$T/alice.yaml"
has "expirationSeconds < 600" "$T/out" 'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)'
printf 'apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: junk}\nspec:\n  request: %s\n  signerName: example\n  usages: []\n' \
	"$(printf 'not a pem' | base64 -w0)" >"$T/junk.yaml"
k create -f "$T/junk.yaml"
has "not a CSR" "$T/out" 'spec.request: Invalid value: "<request data>": PEM block type must be CERTIFICATE REQUEST'
has "no usages" "$T/out" 'spec.usages: Required value: usages must be provided'
has "signerName form" "$T/out" "must be a fully qualified domain and path of the form 'example.com/signer-name'"
csr alice kubernetes.io/kube-apiserver-client '[client auth, flying]'
sed -i 's/name: alice/name: unknown-usage/' "$T/alice.yaml"
k create -f "$T/alice.yaml"; has "unknown usage" "$T/out" 'spec.usages[1]: Unsupported value: "flying"'
req root "/CN=root/O=system:masters"
csr root kubernetes.io/kube-apiserver-client '[client auth]'
k create -f "$T/root.yaml"
has "system:masters refused" "$T/out" 'certificatesigningrequests.certificates.k8s.io "root" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed'

# --- approve, sign, authenticate -----------------------------------------------
"$KC" --kubeconfig "$T/data/kubeconfig" certificate approve alice -v=8 >"$T/out" 2>&1
has "approve" "$T/out" "certificatesigningrequest.certificates.k8s.io/alice approved"
has "kubectl sends the approval as protobuf" "$T/out" "Content-Type: application/vnd.kubernetes.protobuf"
wait_for "issued" 50 is_cond alice "Approved,Issued"
k describe csr alice; has "describe: requester" "$T/out" "Requesting User:"; has "describe: subject" "$T/out" "alice"
has "describe: status" "$T/out" "Approved,Issued"
k get csr alice -o jsonpath='{.status.conditions[0].type}/{.status.conditions[0].reason}'
has "Approved condition" "$T/out" "Approved/KubectlApprove"
k get csr alice -o jsonpath='{.status.certificate}'
base64 -d "$T/out" >"$T/alice.crt"
openssl x509 -in "$T/alice.crt" -noout -subject -issuer -ext extendedKeyUsage,basicConstraints >"$T/x509" 2>&1
has "subject" "$T/x509" "CN = alice, O = devs"; has "issuer" "$T/x509" "CN = muster-up-ca"
has "client auth" "$T/x509" "TLS Web Client Authentication"; has "not a CA" "$T/x509" "CA:FALSE"
span() {
	nb=$(date -d "$(openssl x509 -in "$1" -noout -startdate | cut -d= -f2)" +%s)
	na=$(date -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%s)
	echo $((na - nb))
}
[ "$(span "$T/alice.crt")" = 3900 ] && ok || bad "alice's certificate spans $(span "$T/alice.crt") s, not 300 + 3600"
openssl verify -CAfile "$T/data/ca.crt" "$T/alice.crt" >"$T/out" 2>&1; has "chains to the CA" "$T/out" "OK"
ka() { "$KC" --server "$S" --certificate-authority "$T/data/ca.crt" --client-certificate "$T/alice.crt" \
	--client-key "$T/alice.key" --kubeconfig /dev/null "$@" >"$T/out" 2>&1; }
ka auth whoami; has "the certificate authenticates" "$T/out" "alice"; has "its O is a group" "$T/out" "devs"
ka get pods
has "RBAC applies to it" "$T/out" 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"'
k create rolebinding devs-view --clusterrole=cluster-admin --group=devs -n default
ka get pods; has "its group's binding applies" "$T/out" "No resources found"

# the request's own extensions are not copied (kube's PermissiveSigningPolicy
# zeros them): one asking to be a CA gets CA:FALSE and no certificate signing
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/ca-ask.key" -subj "/CN=mallory" \
	-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
	-out "$T/ca-ask.csr" 2>/dev/null
csr ca-ask kubernetes.io/kube-apiserver-client '[client auth]'
k create -f "$T/ca-ask.yaml"; k certificate approve ca-ask
wait_for "CA-asking request issued" 50 is_cond ca-ask "Approved,Issued"
k get csr ca-ask -o jsonpath='{.status.certificate}'; base64 -d "$T/out" >"$T/ca-ask.crt"
openssl x509 -in "$T/ca-ask.crt" -noout -text >"$T/x509" 2>&1
has "asked CA:TRUE, got CA:FALSE" "$T/x509" "CA:FALSE"; hasnt "no certificate signing" "$T/x509" "Certificate Sign"

# --- deny, and what may not change --------------------------------------------------
req bob "/CN=bob"
csr bob kubernetes.io/kube-apiserver-client '[client auth]'
k create -f "$T/bob.yaml"
k certificate deny bob; has "deny" "$T/out" "certificatesigningrequest.certificates.k8s.io/bob denied"
sleep 0.5; is_cond bob Denied && ok || bad "bob is $(cond bob), not Denied"
k get csr bob -o json
python3 - "$T/out" >"$T/bob.json" <<'EOF'
import json, sys
o = json.load(open(sys.argv[1]))
o["status"]["conditions"].append({"type": "Approved", "status": "True", "reason": "Late"})
print(json.dumps(o))
EOF
k replace --raw /apis/certificates.k8s.io/v1/certificatesigningrequests/bob/approval -f "$T/bob.json"
has "approving a denied request" "$T/out" "Approved and Denied conditions are mutually exclusive"
req carol "/CN=carol"
csr carol kubernetes.io/kube-apiserver-client '[client auth]'
k create -f "$T/carol.yaml"
k get csr carol -o json
python3 - "$T/out" >"$T/carol.json" <<'EOF'
import json, sys
o = json.load(open(sys.argv[1]))
o["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "ViaStatus"}]}
print(json.dumps(o))
EOF
k replace --raw /apis/certificates.k8s.io/v1/certificatesigningrequests/carol/status -f "$T/carol.json"
has "/status may not approve" "$T/out" 'status.conditions: Forbidden: updates may not add a condition of type "Approved"'
k replace --raw /apis/certificates.k8s.io/v1/certificatesigningrequests/carol -f "$T/carol.json"
sleep 0.3; is_cond carol Pending && ok || bad "a write to the main resource changed carol's status: $(cond carol)"

# a user allowed to update approvals but not to approve for the signer
cat >"$T/approver.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: csr-approver}
rules:
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests, certificatesigningrequests/approval], verbs: [get, list, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: csr-approver}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: csr-approver}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
EOF
k delete rolebinding devs-view -n default
k apply -f "$T/approver.yaml"
ka certificate approve carol
has "approve needs the signer" "$T/out" 'certificatesigningrequests.certificates.k8s.io "carol" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"'
cat >"$T/signer.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: csr-signer-approve}
rules:
- {apiGroups: [certificates.k8s.io], resources: [signers], resourceNames: [kubernetes.io/kube-apiserver-client], verbs: [approve]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: csr-signer-approve}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: csr-signer-approve}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
EOF
k apply -f "$T/signer.yaml"
ka certificate approve carol; has "approve granted on the signer" "$T/out" "approved"
wait_for "carol issued" 50 is_cond carol "Approved,Issued"

# --- kubelet signers, unknown signers, failed rules --------------------------------
req k1 "/CN=system:node:n1/O=devs"
csr k1 kubernetes.io/kube-apiserver-client-kubelet '[digital signature, client auth]'
k create -f "$T/k1.yaml"; k certificate approve k1
wait_for "kubelet client, wrong O: Failed" 50 is_cond k1 "Approved,Failed"
k get csr k1 -o jsonpath='{.status.conditions[1].reason}: {.status.conditions[1].message}'
has "Failed's reason and message" "$T/out" "SignerValidationFailure: subject organization is not system:nodes"
req k2 "/CN=system:node:n1/O=system:nodes"
csr k2 kubernetes.io/kubelet-serving '[digital signature, server auth]'
k create -f "$T/k2.yaml"; k certificate approve k2
wait_for "kubelet serving without SAN: Failed" 50 is_cond k2 "Approved,Failed"
k get csr k2 -o jsonpath='{.status.conditions[1].message}'; has "SAN required" "$T/out" "DNS or IP subjectAltName is required"
req k3 "/CN=system:node:n1/O=system:nodes" "DNS:n1.example,IP:10.0.0.7"
csr k3 kubernetes.io/kubelet-serving '[digital signature, key encipherment, server auth]' 'expirationSeconds: 600'
k create -f "$T/k3.yaml"; k certificate approve k3
wait_for "kubelet serving signed" 50 is_cond k3 "Approved,Issued"
k get csr k3 -o jsonpath='{.status.certificate}'; base64 -d "$T/out" >"$T/k3.crt"
openssl x509 -in "$T/k3.crt" -noout -ext subjectAltName,extendedKeyUsage >"$T/x509" 2>&1
has "SANs kept" "$T/x509" "DNS:n1.example, IP Address:10.0.0.7"; has "server auth" "$T/x509" "TLS Web Server Authentication"
[ "$(span "$T/k3.crt")" = 900 ] && ok || bad "the 600 s certificate spans $(span "$T/k3.crt") s, not 900"
req k4 "/CN=dave"
csr k4 kubernetes.io/kube-apiserver-client '[client auth, server auth]'
k create -f "$T/k4.yaml"; k certificate approve k4
wait_for "client signer, server usage: Failed" 50 is_cond k4 "Approved,Failed"
k get csr k4 -o jsonpath='{.status.conditions[1].message}'
has "usage message" "$T/out" "invalid usage for client certificate: server auth"
req ext "/CN=erin"
csr ext example.com/custom '[client auth]'
k create -f "$T/ext.yaml"; k certificate approve ext; sleep 1
is_cond ext Approved && ok || bad "an unknown signer's request is $(cond ext), not Approved (unsigned)"
k get csr k3 -o jsonpath='{.metadata.managedFields[*].manager}/{.metadata.managedFields[*].subresource}' --show-managed-fields
has "managedFields: approval by kubectl, signing by kube-controller-manager" "$T/out" "kube-controller-manager"
has "managedFields: the approval subresource" "$T/out" "approval"

# --- the Python client -------------------------------------------------------------
if /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
	req py "/CN=pat/O=devs"
	/usr/bin/python3 - "$T/data/kubeconfig" "$T/py.csr" >"$T/out" 2>&1 <<'EOF'
import base64, sys, time
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
api = client.CertificatesV1Api()
body = client.V1CertificateSigningRequest(
    metadata=client.V1ObjectMeta(name="py"),
    spec=client.V1CertificateSigningRequestSpec(
        request=base64.b64encode(open(sys.argv[2], "rb").read()).decode(),
        signer_name="kubernetes.io/kube-apiserver-client", usages=["client auth"], expiration_seconds=7200))
made = api.create_certificate_signing_request(body)
print("created by", made.spec.username)
made.status = client.V1CertificateSigningRequestStatus(conditions=[client.V1CertificateSigningRequestCondition(
    type="Approved", status="True", reason="PythonApprove", message="approved from python")])
api.replace_certificate_signing_request_approval("py", made)
for _ in range(50):
    got = api.read_certificate_signing_request("py")
    if got.status.certificate:
        break
    time.sleep(0.2)
pem = base64.b64decode(got.status.certificate).decode()
print("issued", pem.splitlines()[0])
print("listed", [c.metadata.name for c in api.list_certificate_signing_request(
    field_selector="spec.signerName=kubernetes.io/kube-apiserver-client").items if c.metadata.name == "py"])
EOF
	has "python: create" "$T/out" "created by admin"
	has "python: approve and read the certificate" "$T/out" "issued -----BEGIN CERTIFICATE-----"
	has "python: list by signer" "$T/out" "listed ['py']"
else
	bad "python3-kubernetes is missing (scripts/install-deps.sh installs it)"
fi

done_
