#!/bin/sh
# certs.sh - `muster up`'s own CA and client certificates: the kubeconfig
# trusts DATA/ca.crt (no insecure-skip-tls-verify) and carries a client
# certificate (CN admin, O system:masters) that the server accepts, with
# kubectl and with curl; a certificate the CA signed for another user
# (CN = user, O = groups, as kube-apiserver's x509 authenticator reads
# them) gets what RBAC grants that user or group and 403 for the rest; a
# certificate from another CA, an expired one and one made for servers only
# get 401; the server's token still works; and a restart keeps the CA.
# Usage: sh tests/e2e/certs.sh PATH_TO_MUSTER.  Ends with
# "e2e certs: N passed, N failed".
E2E_NAME=certs; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
UPID=""
on_exit() { [ -n "$UPID" ] && kill "$UPID" 2>/dev/null; wait 2>/dev/null; }
need_kubectl
if ! command -v openssl >/dev/null 2>&1; then
	echo "certs: needs openssl (scripts/install-deps.sh installs it)"; bad "openssl missing"; done_
fi
up_start "$ROOT/examples/cluster-small.yaml"
D=$T/data

# --- the files and the kubeconfig ----------------------------------------------
for f in ca.crt ca.key tls.crt tls.key admin.crt admin.key; do
	[ -s "$D/$f" ] && ok || bad "no $D/$f"
done
hasnt "no insecure-skip-tls-verify" "$D/kubeconfig" "insecure-skip-tls-verify"
hasnt "no token in the kubeconfig" "$D/kubeconfig" "token:"
has "a client certificate" "$D/kubeconfig" "client-certificate-data: "
ca64=$(sed -n 's/^    certificate-authority-data: //p' "$D/kubeconfig")
[ "$(printf %s "$ca64" | base64 -d)" = "$(cat "$D/ca.crt")" ] && ok || bad "the kubeconfig's CA is not ca.crt"
expect "the serving certificate chains to the CA" 0 openssl verify -CAfile "$D/ca.crt" "$D/tls.crt"
expect "the client certificate chains to the CA" 0 openssl verify -CAfile "$D/ca.crt" "$D/admin.crt"
expect "ca is a CA" 0 openssl x509 -in "$D/ca.crt" -noout -text
has "CA:TRUE" "$T/out" "CA:TRUE"

# --- kubectl and curl with the client certificate --------------------------------
expect "kubectl whoami" 0 k auth whoami
has "admin user" "$T/out" "admin"
has "admin groups" "$T/out" "[system:masters system:authenticated]"
expect "kubectl get nodes" 0 k get nodes
has "nodes" "$T/out" "Ready"
cc() { command curl -s -o "$T/body" -w '%{http_code}' --cacert "$D/ca.crt" "$@"; }
[ "$(cc --cert "$D/admin.crt" --key "$D/admin.key" "$S/api/v1/namespaces")" = 200 ] && ok ||
	bad "curl with the client certificate is not 200"
[ "$(cc "$S/api/v1/namespaces")" = 401 ] && ok || bad "curl without credentials is not 401"
[ "$(cc -H "Authorization: Bearer $(cat "$D/token")" "$S/api/v1/namespaces")" = 200 ] && ok ||
	bad "the token no longer works"

# --- a user and group from a certificate the CA signed ----------------------------
# sign NAME SUBJ DAYS EXT: a P-256 key and certificate in $T/NAME.{key,crt}
sign() {
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/$1.key" \
		-subj "$2" -out "$T/$1.csr" 2>/dev/null &&
	printf '%s\n' "$4" >"$T/$1.ext" &&
	openssl x509 -req -in "$T/$1.csr" -CA "$D/ca.crt" -CAkey "$D/ca.key" -CAcreateserial \
		-days "$3" -extfile "$T/$1.ext" -out "$T/$1.crt" 2>/dev/null
}
expect "sign carol" 0 sign carol "/CN=carol/O=viewers/O=team-b" 2 "extendedKeyUsage=clientAuth"
kc() { n=$1; shift; "$KC" --kubeconfig "$T/nocred" --client-certificate "$T/$n.crt" --client-key "$T/$n.key" "$@" >"$T/out" 2>&1; }
# the kubeconfig without credentials (its server and CA only)
nocred() { sed -e '/^    client-certificate-data: /d' -e 's/^    client-key-data: .*/    username: nobody/' "$D/kubeconfig" >"$T/nocred"; }
nocred
expect "carol whoami" 0 kc carol auth whoami
has "carol" "$T/out" "carol"
has "carol groups" "$T/out" "[viewers team-b system:authenticated]"
expect "carol cannot list pods" 1 kc carol get pods
has "carol 403" "$T/out" 'pods is forbidden: User "carol" cannot list resource "pods" in API group "" in the namespace "default"'
cat >"$T/rb.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: default}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewers-read-pods, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects: [{kind: Group, name: viewers}]
EOF
expect "bind the viewers group" 0 k apply -f "$T/rb.yaml"
expect "carol (viewers) lists pods" 0 kc carol get pods
expect "carol still cannot create pods" 1 kc carol run p --image=x --restart=Never
has "create 403" "$T/out" 'User "carol" cannot create resource "pods"'
[ "$(cc --cert "$T/carol.crt" --key "$T/carol.key" "$S/api/v1/namespaces/default/pods")" = 200 ] && ok ||
	bad "curl as carol is not 200"

# --- certificates that name nobody: 401 ----------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/other.key" -out "$T/other.crt" \
	-subj "/CN=admin/O=system:masters" -days 2 -addext extendedKeyUsage=clientAuth 2>/dev/null
[ "$(cc --cert "$T/other.crt" --key "$T/other.key" "$S/api/v1/namespaces")" = 401 ] && ok ||
	bad "a certificate from another CA is not 401"
expect "kubectl with another CA's certificate" 1 kc other get pods
has "kubectl 401" "$T/out" "Unauthorized"
expect "sign a server-only certificate" 0 sign srv "/CN=admin/O=system:masters" 2 "extendedKeyUsage=serverAuth"
[ "$(cc --cert "$T/srv.crt" --key "$T/srv.key" "$S/api/v1/namespaces")" = 401 ] && ok ||
	bad "a certificate without clientAuth is not 401"
if command -v faketime >/dev/null 2>&1; then
	expect "sign an expired certificate" 0 faketime -f '-3d' sh -c "$(command -v openssl) req -new -newkey ec \
		-pkeyopt ec_paramgen_curve:P-256 -nodes -keyout '$T/old.key' -subj '/CN=admin/O=system:masters' \
		-out '$T/old.csr' 2>/dev/null && $(command -v openssl) x509 -req -in '$T/old.csr' -CA '$D/ca.crt' \
		-CAkey '$D/ca.key' -days 1 -out '$T/old.crt' 2>/dev/null"
	[ "$(cc --cert "$T/old.crt" --key "$T/old.key" "$S/api/v1/namespaces")" = 401 ] && ok ||
		bad "an expired certificate is not 401"
fi

# --- a restart keeps the CA and the kubeconfig works on ----------------------------
cp "$D/ca.crt" "$T/ca-before"
kill "$UPID"; wait "$UPID" 2>/dev/null; UPID=""
up_start "$ROOT/examples/cluster-small.yaml"
cmp -s "$D/ca.crt" "$T/ca-before" && ok || bad "the CA changed at a restart"
nocred
expect "carol's certificate after the restart" 0 kc carol get pods
done_
