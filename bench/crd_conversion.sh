#!/bin/sh
# crd_conversion.sh - the cost of a conversion webhook (round 11): a custom
# resource read at its storage version v1 and at v2 through the Python
# webhook of tests/e2e/crds.sh (HTTPS, its own CA), N gets of one object and
# 5 lists of 200, alternated v1 v2 v1 v2.  Prints the wall time per request
# (curl's start-up included, so it measures the machine's load) and the
# server's CPU time per request (/proc/PID/stat, 10 ms ticks), then the
# number of webhook calls and the largest review; then N server-side
# applies at v1 and at v2 (round 12), alternated, with the same figures.
# Cleans up after itself.
# Usage: sh bench/crd_conversion.sh PATH_TO_MUSTER   (N=100 by default;
# KC names kubectl, as in tests/e2e)
set -u
M=$1; T=$(mktemp -d); KC=${KC:-kubectl}; ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$M" up --cluster $ROOT/examples/cluster-small.yaml --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet >"$T/up.out" 2>"$T/up.err" &
UP=$!
i=0; S=""
while [ $i -lt 150 ]; do S=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$T/up.out"); [ -n "$S" ] && curl -sfk "$S/readyz" >/dev/null 2>&1 && break; sleep 0.1; i=$((i+1)); done
k() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
api() { curl -s --cacert "$T/data/tls.crt" -H "Authorization: Bearer $(cat "$T/data/token")" "$@"; }
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$T/ca.key" -out "$T/ca.crt" -days 1 -subj /CN=ca >/dev/null 2>&1
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$T/wh.key" -out "$T/wh.csr" -subj /CN=127.0.0.1 >/dev/null 2>&1
printf 'subjectAltName=IP:127.0.0.1\n' >"$T/wh.ext"
openssl x509 -req -in "$T/wh.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -CAcreateserial -out "$T/wh.crt" -days 1 -extfile "$T/wh.ext" >/dev/null 2>&1
python3 $ROOT/tests/e2e/lib/conv_webhook.py "$T/wh.crt" "$T/wh.key" "$T/wh.port" "$T/wh.log" &
WP=$!
while [ ! -s "$T/wh.port" ]; do sleep 0.1; done
cat >"$T/crd.yaml" <<CRD
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: cogs.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: cogs, kind: Cog}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {replicas: {type: integer}}}}}}}
  - {name: v2, served: true, storage: false, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {replicas: {type: integer}}}}}}}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: "https://127.0.0.1:$(cat "$T/wh.port")/convert", caBundle: "$(base64 -w0 "$T/ca.crt")"}
CRD
k apply -f "$T/crd.yaml" >/dev/null; k wait --for condition=established crd/cogs.example.com >/dev/null
for i in $(seq 1 200); do printf 'apiVersion: example.com/v1\nkind: Cog\nmetadata: {name: c%s}\nspec: {replicas: 1}\n---\n' $i; done >"$T/cogs.yaml"
k apply -f "$T/cogs.yaml" >/dev/null
N=${N:-100}
cpu() { awk '{print $14+$15}' /proc/$UP/stat; }
TCK=$(getconf CLK_TCK)
for v in v1 v2 v1 v2; do
	c0=$(cpu); t0=$(date +%s.%N)
	i=0; while [ $i -lt $N ]; do api -o /dev/null "$S/apis/example.com/$v/namespaces/default/cogs/c1"; i=$((i+1)); done
	t1=$(date +%s.%N); c1=$(cpu)
	for j in 1 2 3 4 5; do api -o /dev/null "$S/apis/example.com/$v/namespaces/default/cogs"; done
	t2=$(date +%s.%N); c2=$(cpu)
	echo "$v: get $(echo "($t1-$t0)*1000/$N" | bc -l | cut -c1-5) ms each, list of 200 $(echo "($t2-$t1)*1000/5" | bc -l | cut -c1-6) ms each; server CPU: get $(echo "($c1-$c0)*1000/$TCK/$N" | bc -l | cut -c1-5) ms, list $(echo "($c2-$c1)*1000/$TCK/5" | bc -l | cut -c1-5) ms"
done
# server-side apply of c2 at v1 (the storage version) and at v2 (round 12:
# read, converted to v2, applied there, converted back), forced past the
# client-side apply's manager, a new value each time
n=0
for v in v1 v2 v1 v2; do
	c0=$(cpu); t0=$(date +%s.%N)
	i=0; while [ $i -lt $N ]; do
		n=$((n+1)); r=$((n*2))
		api -o /dev/null -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
			--data-binary "{\"apiVersion\":\"example.com/$v\",\"kind\":\"Cog\",\"metadata\":{\"name\":\"c2\"},\"spec\":{\"replicas\":$r}}" \
			"$S/apis/example.com/$v/namespaces/default/cogs/c2?fieldManager=bench&force=true"
		i=$((i+1))
	done
	t1=$(date +%s.%N); c1=$(cpu)
	echo "$v: apply $(echo "($t1-$t0)*1000/$N" | bc -l | cut -c1-5) ms each; server CPU $(echo "($c1-$c0)*1000/$TCK/$N" | bc -l | cut -c1-5) ms"
done
echo "webhook calls: $(wc -l <"$T/wh.log"), objects in the largest: $(sort -k2 -n "$T/wh.log" | tail -1 | cut -d' ' -f2)"
kill $WP $UP; wait 2>/dev/null; rm -rf "$T"
