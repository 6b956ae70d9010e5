#!/bin/sh
# tls_resume.sh - `muster up`'s TLS session tickets (docs/apiserver.md,
# "TLS": round 13), with openssl s_client as the client.  Checked:
#   - a full handshake with admin's client certificate gets a session
#     ticket, and a connection resumed from it (TLSv1.3, "Reused", no
#     certificate sent) is still admin: 200 for the pods;
#   - bob (a certificate the CA signed, no rights): his resumed session is
#     bob's (403), not admin's; a session keeps the identity of the
#     certificate its full handshake verified, whatever certificate the
#     resuming client holds (bob holding admin's session is admin only
#     because he holds its secret; bob's own never becomes admin's);
#   - a certificate the CA did not sign, naming admin in system:masters:
#     not admin after its full handshake, nor after resuming its session
#     (the certificate is verified again on every connection);
#   - a ticket of another `muster up` (its own key, kept in memory) does
#     not resume there: a full handshake;
#   - muster up counts full handshakes and resumed sessions and prints
#     them when it stops;
#   - a client certificate chain is checked in full once (admin, bob: 2)
#     and then answered from the cache of verified chains (admin resumed,
#     bob resumed twice: 3); mallory's, which does not verify, is checked
#     every time (2) and never cached; carol's, valid for a few seconds,
#     is refused (401) once it has expired, not answered from the cache
#     (round 17).
# Usage: sh tests/e2e/tls_resume.sh PATH_TO_MUSTER.  Ends with
# "e2e tls-resume: N passed, N failed".
E2E_NAME=tls-resume; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPS=""
on_exit() { for p in $UPS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }

# up NAME: starts a muster up with data in $T/NAME; sets PORT_NAME.
up() {
	"$M" up --cluster examples/cluster-small.yaml --listen 127.0.0.1:0 --data "$T/$1" \
		--no-fsync >"$T/$1.out" 2>&1 &
	UPS="$UPS $!"
	eval "PID_$1=$!"
	i=0
	while [ "$i" -lt 150 ]; do
		p=$(sed -n 's/.*serving the Kubernetes API on https:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/$1.out")
		[ -n "$p" ] && { eval "PORT_$1=$p"; return 0; }
		sleep 0.2; i=$((i + 1))
	done
	bad "muster up $1 did not start"; done_
}
# get PORT OUT [s_client options...]: GET the default namespace's pods
# over one TLS connection; the reply's status and the session's state
# (New or Reused) into OUT (s_client's dump of a ticket may come on the
# status line's line).
get() {
	port=$1; out=$2; shift 2
	{ printf 'GET /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'; sleep 1; } |
		openssl s_client -connect "127.0.0.1:$port" -CAfile "$T/a/ca.crt" "$@" 2>/dev/null |
		grep -oE '(New|Reused), TLSv1\.[0-9]|HTTP/1\.1 [0-9]{3}' >"$out"
}

up a; up b
D=$T/a
# bob: signed by a's CA; mallory: self-signed, claims admin in system:masters
openssl req -new -newkey rsa:2048 -nodes -keyout "$T/bob.key" -subj "/CN=bob" -out "$T/bob.csr" 2>/dev/null
openssl x509 -req -in "$T/bob.csr" -CA "$D/ca.crt" -CAkey "$D/ca.key" -CAcreateserial -days 1 \
	-extfile /dev/stdin -out "$T/bob.crt" 2>/dev/null <<EOF
extendedKeyUsage=clientAuth
EOF
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/mal.key" -subj "/CN=admin/O=system:masters" \
	-days 1 -addext extendedKeyUsage=clientAuth -out "$T/mal.crt" 2>/dev/null
[ -s "$T/bob.crt" ] && [ -s "$T/mal.crt" ] && ok || bad "test certificates"

# admin: full, then resumed without a certificate: still admin
get "$PORT_a" "$T/r1" -cert "$D/admin.crt" -key "$D/admin.key" -sess_out "$T/admin.sess"
has "admin full handshake" "$T/r1" "New, TLSv1.3"
has "admin allowed" "$T/r1" "HTTP/1.1 200"
[ -s "$T/admin.sess" ] && ok || bad "no session ticket from muster up"
get "$PORT_a" "$T/r2" -sess_in "$T/admin.sess"
has "admin resumed" "$T/r2" "Reused, TLSv1.3"
has "admin resumed is admin" "$T/r2" "HTTP/1.1 200"

# bob: his own session stays his, even resumed
get "$PORT_a" "$T/r3" -cert "$T/bob.crt" -key "$T/bob.key" -sess_out "$T/bob.sess"
has "bob full handshake" "$T/r3" "New, TLSv1.3"
has "bob forbidden" "$T/r3" "HTTP/1.1 403"
get "$PORT_a" "$T/r4" -cert "$T/bob.crt" -key "$T/bob.key" -sess_in "$T/bob.sess"
has "bob resumed" "$T/r4" "Reused, TLSv1.3"
has "bob resumed is bob" "$T/r4" "HTTP/1.1 403"
get "$PORT_a" "$T/r4b" -sess_in "$T/bob.sess"
has "bob resumed without cert is bob" "$T/r4b" "HTTP/1.1 403"

# mallory: not signed by the CA; neither full nor resumed is admin
get "$PORT_a" "$T/r5" -cert "$T/mal.crt" -key "$T/mal.key" -sess_out "$T/mal.sess"
hasnt "unknown cert is not admin" "$T/r5" "HTTP/1.1 200"
has "unknown cert answered" "$T/r5" "HTTP/1.1 40"
if [ -s "$T/mal.sess" ]; then
	get "$PORT_a" "$T/r6" -cert "$T/mal.crt" -key "$T/mal.key" -sess_in "$T/mal.sess"
	hasnt "unknown cert resumed is not admin" "$T/r6" "HTTP/1.1 200"
	has "unknown cert resumed answered" "$T/r6" "HTTP/1.1 40"
else
	ok; ok # no session at all for it: nothing to resume
fi

# another server's ticket: a full handshake there
get "$PORT_b" "$T/r7" -CAfile "$T/b/ca.crt" -cert "$T/b/admin.crt" -key "$T/b/admin.key" -sess_in "$T/admin.sess"
has "another server's ticket: full handshake" "$T/r7" "New, TLSv1.3"

# carol: signed by the CA, valid for a few seconds; her chain is cached
# while it is valid, and once it has expired it is checked again and
# refused (401), not answered from the cache (round 17)
printf '[ca]\ndefault_ca = c\n[c]\ndatabase = %s/ca.idx\nnew_certs_dir = %s\nserial = %s/ca.serial\npolicy = p\ndefault_md = sha256\n[p]\ncommonName = supplied\n' \
	"$T" "$T" "$T" >"$T/ca.cnf"
: >"$T/ca.idx"; echo 01 >"$T/ca.serial"
openssl req -new -newkey rsa:2048 -nodes -keyout "$T/carol.key" -subj "/CN=carol" -out "$T/carol.csr" 2>/dev/null
until_s=$(($(date +%s) + 6))
openssl ca -batch -config "$T/ca.cnf" -cert "$D/ca.crt" -keyfile "$D/ca.key" -in "$T/carol.csr" \
	-out "$T/carol.crt" -notext -startdate 20200101000000Z \
	-enddate "$(date -u -d "@$until_s" +%Y%m%d%H%M%SZ)" >/dev/null 2>&1
[ -s "$T/carol.crt" ] && ok || bad "carol's certificate"
get "$PORT_a" "$T/r8" -cert "$T/carol.crt" -key "$T/carol.key"
has "carol while valid is carol" "$T/r8" "HTTP/1.1 403"
while [ "$(date +%s)" -le "$until_s" ]; do sleep 1; done
get "$PORT_a" "$T/r9" -cert "$T/carol.crt" -key "$T/carol.key"
has "carol expired is refused" "$T/r9" "HTTP/1.1 401"

# the counts, printed at stop: admin, bob, mallory full (3); admin,
# bob twice (and mallory's) resumed
kill "$PID_a"; wait "$PID_a" 2>/dev/null
has "counts printed" "$T/a.out" "muster up: TLS sessions:"
full=$(sed -n 's/.*TLS sessions: \([0-9]*\) full handshakes, \([0-9]*\) resumed.*/\1/p' "$T/a.out")
res=$(sed -n 's/.*TLS sessions: \([0-9]*\) full handshakes, \([0-9]*\) resumed.*/\2/p' "$T/a.out")
echo "  muster up a: $full full handshakes, $res resumed"
[ "${full:-0}" -ge 3 ] && [ "${res:-0}" -ge 3 ] && ok || bad "counts: $full full, $res resumed"
chk=$(sed -n 's/.*client certificates: \([0-9]*\) chains checked in full, \([0-9]*\) answered.*/\1/p' "$T/a.out")
hit=$(sed -n 's/.*client certificates: \([0-9]*\) chains checked in full, \([0-9]*\) answered.*/\2/p' "$T/a.out")
echo "  muster up a: $chk client certificate chains checked in full, $hit from the cache"
# mallory's second check is there only when it got a session to resume
mal=1; [ -s "$T/mal.sess" ] && mal=2
# admin, bob, carol twice (valid, then expired), mallory once or twice
[ "${chk:-x}" = $((4 + mal)) ] && ok || bad "certificates checked in full: $chk, expected $((4 + mal))"
[ "${hit:-x}" = 3 ] && ok || bad "certificates from the cache: $hit, expected 3"
done_
