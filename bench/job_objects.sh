#!/bin/sh
# job_objects.sh - what one admitted Job leaves in the store, to compare
# two builds by hand: a `muster up` of 4 nodes and a `muster scheduler`,
# one Job (annotated muster.io/admitted, muster.io/duration 3s, one GPU);
# the Job read raw (with managedFields) while it runs (2.5 s after its
# create) and after it completed (5 s later), its pods and the Events,
# each masked (times, uids, generated names' suffixes, resourceVersions)
# into OUT/*.m.json.  Then `diff OLD/job.m.json NEW/job.m.json`.  Needs jq.
# Usage: sh bench/job_objects.sh MUSTER OUT
set -u
B=$1; O=$2; KC=${KC:-/usr/bin/kubectl}
rm -rf "$O"; mkdir -p "$O"
printf 'apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  count: 4\n  namePrefix: w-\n  gpuModel: A100\n  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}\n---\napiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: team-a}\nspec: {resources: {gpu: {deserved: 100000}}}\n' >"$O/c.yaml"
"$B" up --cluster "$O/c.yaml" --listen 127.0.0.1:0 --data "$O/d" --no-fsync --quiet >"$O/up.out" 2>&1 &
UP=$!
i=0
while ! grep -q "serving the Kubernetes API" "$O/up.out"; do
	sleep 0.2; i=$((i + 1))
	[ $i -gt 300 ] && { echo "job_objects: muster up did not start"; kill "$UP"; exit 1; }
done
S=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$O/up.out")
"$B" scheduler --kubeconfig "$O/d/kubeconfig" --no-leader-elect --min-runtime 0 >"$O/s.log" 2>&1 &
SP=$!
sleep 2
printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j1, labels: {muster.io/queue: team-a}, annotations: {muster.io/admitted: "true", muster.io/duration: 3s}}\nspec:\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]\n' |
	"$KC" --kubeconfig "$O/d/kubeconfig" create -f - >/dev/null
get() { curl -s --cacert "$O/d/tls.crt" -H "Authorization: Bearer $(cat "$O/d/token")" "$S$1" >"$O/$2.json"; }
sleep 2.5
get /apis/batch/v1/namespaces/default/jobs/j1 job-running
sleep 5
get /apis/batch/v1/namespaces/default/jobs/j1 job
get /api/v1/namespaces/default/pods pods
get /api/v1/namespaces/default/events events
kill "$SP" "$UP"; wait "$SP" "$UP" 2>/dev/null
for f in job-running job pods events; do
	jq -S 'walk(if type == "string" and test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T") then "TIME"
		elif type == "string" and test("^[0-9a-f]{8}-[0-9a-f]{4}-") then "UID" else . end)
	| walk(if type == "object" then del(.resourceVersion) else . end)
	| walk(if type == "string" then sub("-[a-z0-9]{5}$"; "-XXXXX") | sub("\\.[0-9a-z]{5,}$"; ".SFX") else . end)' \
		"$O/$f.json" >"$O/$f.m.json"
done
echo "job_objects: $O/job-running.m.json job.m.json pods.m.json events.m.json"
