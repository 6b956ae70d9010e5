#!/bin/sh
# patch_objects.sh - the objects `muster up` answers to a series of PATCHes
# of one Job (strategic and merge PATCHes of its status, merge, strategic
# and JSON patches of the Job, a finalizer directive, a change of the
# template, which a suspended Job allows) and its final GET, with managedFields, masked (uids, times,
# resourceVersions), on stdout: run it for two builds and diff the
# outputs to see that a change of the write path answers the same.  The
# Job is created suspended; the Job controller's write of `Suspended` is
# waited for (2.5 s) after the PATCH that clears the conditions.
# Usage: sh bench/patch_objects.sh MUSTER > OUT
set -u
M=$1
T=$(mktemp -d)
KC=${KC:-/usr/bin/kubectl}
printf 'apiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: team-a}\nspec: {resources: {gpu: {deserved: 10}}}\n' >"$T/c.yaml"
"$M" up --cluster "$T/c.yaml" --listen 127.0.0.1:0 --data "$T/d" --no-fsync --quiet >"$T/out" 2>&1 &
P=$!
trap 'kill "$P" 2>/dev/null; rm -rf "$T"' EXIT
k() { "$KC" --kubeconfig "$T/d/kubeconfig" "$@"; }
i=0
while [ "$i" -lt 150 ]; do
	[ -f "$T/d/kubeconfig" ] && k get ns >/dev/null 2>&1 && break
	sleep 0.2; i=$((i + 1))
done
printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, labels: {a: "1"}}\nspec:\n  suspend: true\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: x}]\n' |
	k create -f - >/dev/null
o() { k "$@" --show-managed-fields -o json 2>&1; }
o patch job j --subresource=status --type=strategic -p '{"metadata":{"annotations":{"x":"1"},"labels":{"b":"2"}},"status":{"conditions":[{"type":"Dispatched","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:00Z","reason":"R","message":"m"}]}}' >"$T/p1.json"
o patch job j --type=merge -p '{"metadata":{"annotations":{"y":"2","x":null}}}' >"$T/p2.json"
o patch job j --type=strategic -p '{"metadata":{"labels":{"a":null}},"spec":{"parallelism":1}}' >"$T/p3.json"
o patch job j --subresource=status --type=merge -p '{"status":{"conditions":null,"active":0}}' >"$T/p4.json"
sleep 2.5
o patch job j --type=json -p '[{"op":"add","path":"/metadata/annotations/z","value":"3"}]' >"$T/p5.json"
o patch job j --type=strategic -p '{"metadata":{"$deleteFromPrimitiveList/finalizers":["q"],"finalizers":["f/1"]}}' >"$T/p6.json"
o patch job j --type=strategic -p '{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"y"}]}}}}' >"$T/p7.json"
o get job j >"$T/g.json"
for f in p1 p2 p3 p4 p5 p6 p7 g; do
	echo "== $f"
	sed -E 's/"(uid|creationTimestamp|time|resourceVersion|lastTransitionTime|lastProbeTime)": "[^"]*"/"\1": "X"/g;
		s/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UID/g' "$T/$f.json"
done
