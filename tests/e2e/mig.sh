#!/bin/sh
# mig.sh - black-box tests of `muster mig`: the layout of examples/mig as a
# mig-parted config (and as a ConfigMap), parsed back as YAML and checked
# against the demand; `mig eval` runs and the dynamic layout serves more
# compute than the static one, with and without running pods (--running);
# bad usage exits 2.
# Usage: sh tests/e2e/mig.sh PATH_TO_MUSTER.  Ends with "N passed, N failed".
E2E_NAME=mig; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"

expect plan 0 "$M" mig plan --cluster examples/mig/cluster.yaml --workload examples/mig/workload.yaml
has plan "$T/out" "version: v1"
has plan-label "$T/out" "kubectl label node a100-1 nvidia.com/mig.config=muster-a100-1 --overwrite"
# Parse it back: every demanded instance is there; 10 GPUs stay whole for
# train and the 2 that no instance needed stay whole too.
cp "$T/out" "$T/plan.yaml"
if python3 - "$T/plan.yaml" <<'PY'
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
assert c["version"] == "v1"
whole, inst = 0, {}
for name, entries in c["mig-configs"].items():
    assert name.startswith("muster-a100-"), name
    for e in entries:
        if not e["mig-enabled"]:
            whole += len(e["devices"]); continue
        slices = 0
        for p, n in e["mig-devices"].items():
            inst[p] = inst.get(p, 0) + n
            slices += int(p.split("g.")[0]) * n
        assert slices <= 7, e
assert whole == 12, whole
assert inst == {"1g.10gb": 9, "3g.40gb": 4, "2g.20gb": 2}, inst
PY
then ok; else bad "plan: the config does not hold the demand"; fi

expect configmap 0 "$M" mig plan --cluster examples/mig/cluster.yaml --workload examples/mig/workload.yaml \
	--configmap custom-mig-parted-config --namespace gpu-operator
has configmap "$T/out" "kind: ConfigMap"
if python3 -c 'import sys, yaml; d = list(yaml.safe_load_all(open(sys.argv[1])))[0]; c = yaml.safe_load(d["data"]["config.yaml"]); assert d["metadata"]["name"] == "custom-mig-parted-config" and len(c["mig-configs"]) == 2' "$T/out"
then ok; else bad "configmap: not a ConfigMap holding a mig-parted config"; fi

expect eval 0 "$M" mig eval --gpus 16 --rounds 200 --seed 7
has eval "$T/out" "dynamic"
st=$(awk '$1 == "static" { sub("%", "", $2); print $2 }' "$T/out")
dy=$(awk '$1 == "dynamic" { sub("%", "", $2); print $2 }' "$T/out")
if awk -v s="$st" -v d="$dy" 'BEGIN { exit !(d > s) }'; then ok; else bad "eval: dynamic $dy not above static $st"; fi

# With running pods: the layout re-planned around them (mu_mig_replan) keeps
# more of the pool allocated than the static one, and it does re-lay GPUs.
expect running 0 "$M" mig eval --running --gpus 16 --steps 600 --seed 7
st=$(awk '$1 == "static" { sub("%", "", $2); print $2 }' "$T/out")
dy=$(awk '$1 == "dynamic" { sub("%", "", $2); print $2 }' "$T/out")
ch=$(awk '$1 == "dynamic" { print $4 }' "$T/out")
if awk -v s="$st" -v d="$dy" -v c="$ch" 'BEGIN { exit !(d > s && c > 0) }'; then ok
else bad "running: dynamic $dy not above static $st, or no GPU re-laid ($ch)"; fi
expect running-bad-steps 2 "$M" mig eval --running --steps 100
has running-bad-steps "$T/err" "--steps: expected a number from 201"

expect no-verb 2 "$M" mig
expect bad-verb 2 "$M" mig apply
expect plan-no-workload 2 "$M" mig plan --cluster examples/mig/cluster.yaml
expect eval-bad-load 2 "$M" mig eval --load 0
has eval-bad-load "$T/err" "--load: expected a number"
cat >"$T/t4.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: t4, labels: {nvidia.com/gpu.product: Tesla-T4}}
status: {allocatable: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "4"}}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: default}
spec: {}
Y
expect plan-no-mig 2 "$M" mig plan --cluster "$T/t4.yaml" --workload examples/mig/workload.yaml
has plan-no-mig "$T/err" "no node has a MIG-capable GPU"

done_
