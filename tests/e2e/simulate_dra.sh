#!/bin/sh
# simulate_dra.sh - DRA resource claims in `muster simulate`: the
# simulator gives pods their devices from the input's ResourceSlices with
# the allocator of muster scheduler and muster scenario (load/dra.c,
# sim/scn_dra.c).  Two one-hour jobs each need the cluster's one DRA GPU
# (a ResourceClaimTemplate each): the second, arriving a minute later,
# starts when the first ends and its claim is deallocated, although CPUs
# are free on both nodes; a third job without claims starts at once.
# Preemption frees devices: a preemptible low-priority job holding the GPU
# is evicted for a high-priority one that needs it (dra-preempt.yaml of
# tests/scenarios, here in a simulation).  The DRA GPU counts in the GPU
# figures (its driver's name has "gpu", KAI-Scheduler's IsGPUDeviceClass
# rule), and the JSON summary says how many such devices there are.
# Usage: sh tests/e2e/simulate_dra.sh PATH_TO_MUSTER.  Ends with "N passed, N failed".
E2E_NAME=simulate_dra; . "$(dirname "$0")/lib/common.sh"
cat >"$T/cluster.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "16", memory: 64Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "16", memory: 64Gi}}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: default}
spec: {}
---
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
    - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
    - {name: gpu-0, basic: {}}
Y
cat >"$T/workload.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests: [{name: gpu, deviceClassName: gpu.example.com}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: first
  labels: {muster.io/queue: default}
  annotations: {muster.io/duration: 1h}
spec:
  template:
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
      containers: [{name: m, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: second
  labels: {muster.io/queue: default}
  annotations: {muster.io/duration: 1h, muster.io/submit-time: 1m}
spec:
  template:
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
      containers: [{name: m, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: plain
  labels: {muster.io/queue: default}
  annotations: {muster.io/duration: 1h, muster.io/submit-time: 2m}
spec:
  template:
    spec:
      containers: [{name: m, image: x, resources: {requests: {cpu: "1"}}}]
Y
expect simulate-dra 0 "$M" simulate --cluster "$T/cluster.yaml" --workload "$T/workload.yaml" --json "$T/out.json"
has simulate-dra "$T/out" "completed          3 of 3"
# the DRA GPU (driver gpu.example.com) counts as a GPU: the cluster has 1,
# busy from 0 to 2 h, the whole span
has gpu-count-has-the-dra-gpu "$T/out" "2 nodes (1 GPUs)"
has gpu-utilization-counts-it "$T/out" "GPU utilization    100.0% (with 1 DRA GPU devices: drivers named"
has json-dra-gpus "$T/out.json" '"total_gpus": 1, "dra_gpus": 1'
python3 - "$T/out.json" >"$T/starts" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%s=%d" % (j["name"], j["start_s"]) for j in sorted(d["jobs"], key=lambda j: j["name"])))
P
has starts-follow-the-device "$T/starts" "first=0 plain=120 second=3600"

cat >"$T/preempt.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests: [{name: gpu, deviceClassName: gpu.example.com}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: low
  labels: {muster.io/queue: default}
  annotations: {muster.io/duration: 10h, muster.io/priority: "0", muster.io/preemptible: "true"}
spec:
  template:
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
      containers: [{name: m, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: high
  labels: {muster.io/queue: default}
  annotations: {muster.io/duration: 1h, muster.io/priority: "100", muster.io/submit-time: 2h}
spec:
  template:
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
      containers: [{name: m, image: x, resources: {requests: {cpu: "1"}}}]
Y
expect simulate-dra-preempt 0 "$M" simulate --cluster "$T/cluster.yaml" --workload "$T/preempt.yaml" --json "$T/p.json"
python3 - "$T/p.json" >"$T/pre" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%s:start=%d,preemptions=%d" % (j["name"], j["start_s"], j["preemptions"])
               for j in sorted(d["jobs"], key=lambda j: j["name"])))
P
has high-preempts-low-for-the-device "$T/pre" "high:start=7200,preemptions=0 low:start=0,preemptions=1"
done_
