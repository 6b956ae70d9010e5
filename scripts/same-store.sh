#!/bin/sh
# same-store.sh - whether two builds of `muster up` store the same bytes for
# the same writes.  Usage: sh scripts/same-store.sh OLD_MUSTER NEW_MUSTER.
#
# Each build serves three simulated nodes with one-second heartbeats; the
# same pods are created (kubectl create and kubectl apply, one and two
# containers, one that completes after a second), bound through
# pods/binding (one binding carries annotations), started by the simulated
# kubelet, and left through three heartbeats; and two Jobs, created
# through the API, whose pods the Job controller makes (one is bound and
# completes, so its Job does; the other waits unbound).  Then the server is stopped
# and its objects table dumped, every row with what differs from run to run
# masked: times (RFC 3339), uids, resourceVersions, the uid prefix of
# container ids, the random suffix of Event names and that of each pod's
# kube-api-access volume (ServiceAccount admission's), the pod names of
# the Jobs, and the cluster CA of the kube-root-ca.crt ConfigMaps (new at
# each start).  The two dumps must be
# the same lines; the exit status is 0 when they are, 1 (with a diff) when
# not, 2 when a server did not start.  Needs kubectl, curl and sqlite3; every
# process started here is killed on exit; takes about 20 s.
set -u
OLD=$1 NEW=$2
W=$(mktemp -d)
PIDS=""
# SAME_STORE_KEEP=DIR keeps the two dumps there
trap 'for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
[ -n "${SAME_STORE_KEEP:-}" ] && cp "$W"/dump.* "$SAME_STORE_KEEP"/
rm -rf "$W"' EXIT INT TERM

cat >"$W/cluster.yaml" <<'EOF'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: n}
spec:
  count: 3
  namePrefix: n-
  allocatable: {cpu: "64", memory: 256Gi}
EOF

# pod NAME CONTAINERS [DURATION]: a pod manifest.
pod() {
	printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: default\n' "$1"
	[ -n "${3:-}" ] && printf '  annotations: {muster.io/duration: "%s"}\n' "$3"
	printf 'spec:\n  schedulerName: none\n  containers:\n'
	i=1
	while [ "$i" -le "$2" ]; do
		printf '  - {name: c%d, image: busybox, resources: {requests: {cpu: 100m}}}\n' "$i"
		i=$((i + 1))
	done
}

# job NAME: a Job manifest, its pod a one-second one (it completes once
# bound).
job() {
	printf -- 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  namespace: default\n' "$1"
	printf 'spec:\n  template:\n    metadata:\n      annotations: {muster.io/duration: "1s"}\n'
	printf '    spec:\n      schedulerName: none\n      restartPolicy: Never\n'
	printf '      containers:\n      - {name: c, image: busybox, resources: {requests: {cpu: 100m}}}\n'
}

# run MUSTER OUT: the masked dump of one build's objects after the writes.
run() {
	D="$W/data.$2"
	"$1" up --cluster "$W/cluster.yaml" --listen 127.0.0.1:0 --data "$D" --no-fsync --quiet --heartbeat 1 \
		>"$W/up.$2.out" 2>"$W/up.$2.err" &
	UP=$!
	PIDS="$PIDS $UP"
	S="" i=0
	while [ "$i" -lt 150 ]; do
		S=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$W/up.$2.out")
		[ -n "$S" ] && curl -sfk "$S/readyz" >/dev/null 2>&1 && break
		sleep 0.1
		i=$((i + 1))
	done
	[ -n "$S" ] || { cat "$W/up.$2.err"; exit 2; }
	KC="kubectl --kubeconfig $D/kubeconfig"
	TOK=$(cat "$D/token")
	for n in a1 a2 a3 a4 a5; do pod "p-$n" 1; done >"$W/a.yaml"
	$KC create -f "$W/a.yaml" >/dev/null
	pod p-two 2 | $KC create -f - >/dev/null
	pod p-done 1 1s | $KC create -f - >/dev/null
	pod p-applied 1 | $KC apply -f - >/dev/null
	# two Jobs: the Job controller makes their pods and writes their
	# status; j-done's pod is bound and completes, j-wait's is not bound
	job j-done | $KC create -f - >/dev/null
	job j-wait | $KC create -f - >/dev/null
	jp="" i=0
	while [ -z "$jp" ] && [ "$i" -lt 100 ]; do
		jp=$($KC get pods -l batch.kubernetes.io/job-name=j-done -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
		[ -n "$jp" ] || sleep 0.1
		i=$((i + 1))
	done
	k=0
	for n in p-a1 p-a2 p-a3 p-a4 p-a5 p-two p-done p-applied "$jp"; do
		node=n-$((k % 3))
		ann=""
		[ "$n" = p-two ] && ann=',"annotations":{"example.com/placed-by":"same-store"}'
		curl -sf --cacert "$D/tls.crt" -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
			-X POST "$S/api/v1/namespaces/default/pods/$n/binding" \
			-d "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$n\"$ann},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"$node\"}}" \
			>/dev/null || echo "binding $n failed" >&2
		k=$((k + 1))
	done
	i=0
	while [ "$i" -lt 100 ]; do
		ph=$($KC get pods -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' 2>/dev/null | sort | uniq -c | tr -s ' ')
		[ "$ph" = " 1 Pending
 7 Running
 2 Succeeded" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	sleep 3.5 # three heartbeats
	kill "$UP"
	wait "$UP" 2>/dev/null
	sqlite3 -separator ' ' "$D/muster.db" "SELECT res, ns, name, body FROM objects" |
		sed -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/TIME/g' \
			-e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UID/g' \
			-e 's/"resourceVersion":"[0-9]+"/"resourceVersion":"RV"/g' \
			-e 's|muster://[0-9a-f]{8}-|muster://UID-|g' \
			-e 's/(j-done|j-wait)-[a-z0-9]{5}/\1-SFX/g' \
			-e 's/(p-[a-z0-9]+|n-[0-9]+|j-[a-z]+(-SFX)?)\.[a-z0-9]{5}/\1.SFX/g' \
			-e 's/kube-api-access-[a-z0-9]{5}/kube-api-access-SFX/g' \
			-e 's/-----BEGIN CERTIFICATE-----[^"]*-----END CERTIFICATE-----/CERT/g' | sort >"$W/dump.$2"
}

run "$OLD" old
run "$NEW" new
n=$(wc -l <"$W/dump.new")
if cmp -s "$W/dump.old" "$W/dump.new"; then
	echo "same-store: the same $n rows (times, uids and versions masked)"
	exit 0
fi
echo "same-store: the stored objects differ:"
diff "$W/dump.old" "$W/dump.new" | cut -c1-400
exit 1
