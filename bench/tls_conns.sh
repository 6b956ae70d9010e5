#!/bin/sh
# tls_conns.sh - the instructions `muster up` spends per new TLS connection
# that authenticates with a client certificate: N connections (curl, one
# each), every one a full handshake with the kubeconfig's admin
# certificate and one GET of a pod list (limit 1).  The server runs under
# callgrind with instrumentation off until the connections start
# (examples/cluster-small.yaml's simulated nodes keep ticking meanwhile, a
# small part of the count); prints the instructions in all and per
# connection, and the server's own counts of handshakes and of client
# certificate chains checked in full or answered from its cache (round 17,
# docs/apiserver.md).  Needs valgrind and curl.  Figures only, never fails.
# Usage: sh bench/tls_conns.sh MUSTER [N]   (N: 50)
set -u
M=$1; N=${2:-50}
T=$(mktemp -d)
P=
trap '[ -n "$P" ] && kill "$P" 2>/dev/null; rm -rf "$T"' EXIT
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$T/cg" "$M" up \
	--cluster examples/cluster-small.yaml --listen 127.0.0.1:0 --data "$T/a" --no-fsync >"$T/out" 2>&1 &
P=$!
i=0
while [ "$i" -lt 600 ]; do
	s=$(sed -n 's/.*serving the Kubernetes API on \(https[^ ]*\).*/\1/p' "$T/out")
	[ -n "$s" ] && break
	sleep 0.2; i=$((i + 1))
done
[ -n "$s" ] || { echo "tls_conns: muster up did not start"; exit 1; }
sleep 5
callgrind_control -i on "$P" >/dev/null
i=0
while [ "$i" -lt "$N" ]; do
	curl -s -o /dev/null --cacert "$T/a/ca.crt" --cert "$T/a/admin.crt" --key "$T/a/admin.key" \
		"$s/api/v1/namespaces/default/pods?limit=1"
	i=$((i + 1))
done
kill "$P"; wait "$P"; P=
ir=$(callgrind_annotate "$T/cg" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
echo "tls_conns: $N connections: ${ir:-?} instructions, $(( ${ir:-0} / N )) per connection"
grep "TLS sessions\|client certificates" "$T/out"
