#!/bin/sh
# agent.sh - black-box tests of `muster agent discover` on the recorded
# sysfs trees (tests/data/sysfs) and on this machine's /sys: output content
# in JSON and YAML, exit codes and error messages.  When python3 is there,
# the JSON is also parsed and its structure checked.
# Usage: sh tests/e2e/agent.sh PATH_TO_MUSTER.  Ends with "N passed, N failed".
E2E_NAME=agent; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
D=tests/data/sysfs

expect help 0 "$M" agent --help
has help "$T/out" "agent discover"
expect discover-help 0 "$M" agent discover --help
has discover-help "$T/out" "--node-name"
expect main-help 0 "$M" --help
has main-help "$T/out" "agent"
expect no-subcommand 2 "$M" agent
expect bad-subcommand 2 "$M" agent frob
has bad-subcommand "$T/err" "unknown subcommand"

# dgx8 as JSON.
expect dgx8-json 0 "$M" agent discover --sysfs $D/dgx8 --format json --node-name dgx-01
cp "$T/out" "$T/dgx8.json"
for s in '"apiVersion": "topology.node.k8s.io/v1alpha2"' '"kind": "NodeResourceTopology"' \
	'"metadata": {"name": "dgx-01"}' '"topologyPolicies": ["None"]' \
	'{"name": "node-1", "value": 21}' \
	'{"name": "muster.io/cpus", "value": "0-31,64-95"}' \
	'{"name": "muster.io/cpus", "value": "32-63,96-127"}' \
	'{"name": "muster.io/gpus", "value": "0000:83:00.0,0000:84:00.0,0000:c3:00.0,0000:c4:00.0"}' \
	'"value": "nvlink0:0000:03:00.0|0000:04:00.0|0000:43:00.0|0000:44:00.0;pcie0:0000:03:00.0|0000:04:00.0;pcie1:0000:43:00.0|0000:44:00.0"}' \
	'{"name": "muster.io/nics", "value": "ibp5s0@0000:05:00.0,ibp6s0@0000:06:00.0,ibp69s0@0000:45:00.0,ibp70s0@0000:46:00.0"}' \
	'{"name": "nvidia.com/gpu", "capacity": "4", "allocatable": "4", "available": "4"}' \
	'{"name": "memory", "capacity": "549755813888"'; do
	has dgx8-json "$T/dgx8.json" "$s"
done
n=$(grep -c '"type": "Node"' "$T/dgx8.json")
if [ "$n" -eq 2 ]; then ok; else bad "dgx8: $n zones, expected 2"; fi
hasnt dgx8-json "$T/dgx8.json" "0000:08:00.0" # the BMC's VGA
hasnt dgx8-json "$T/dgx8.json" "numa-assumed"
if [ -s "$T/err" ]; then bad "dgx8: unexpected stderr: $(head -c 200 "$T/err")"; else ok; fi

# The same as YAML (and --opt=value spelling).
expect dgx8-yaml 0 "$M" agent discover --sysfs=$D/dgx8 --format=yaml --node-name=dgx-01
has dgx8-yaml "$T/out" 'apiVersion: "topology.node.k8s.io/v1alpha2"'
has dgx8-yaml "$T/out" '  - name: "node-1"'
has dgx8-yaml "$T/out" '        value: "0-31,64-95"'
has dgx8-yaml "$T/out" '      - name: "nvidia.com/gpu"'
n=$(grep -c '^        capacity: "4"$' "$T/out")
if [ "$n" -eq 2 ]; then ok; else bad "dgx8 yaml: $n zones with 4 GPUs, expected 2"; fi

# pcie4: one zone, numa_node -1 everywhere, PCIe groups only.
expect pcie4 0 "$M" agent discover --sysfs $D/pcie4 --node-name pcie4
has pcie4 "$T/out" '"value": "pcie0:0000:03:00.0|0000:04:00.0;pcie1:0000:13:00.0|0000:14:00.0"}'
has pcie4 "$T/out" '{"name": "muster.io/numa-assumed", "value": "0000:03:00.0,0000:04:00.0,0000:13:00.0,0000:14:00.0,0000:21:00.0,0000:21:00.1"}'
has pcie4 "$T/out" '"value": "enp33s0f0@0000:21:00.0,enp33s0f1@0000:21:00.1"}'
hasnt pcie4 "$T/out" "nvlink"

# Structure check with a real JSON parser, when there is one.
if command -v python3 >/dev/null 2>&1; then
	if python3 - "$T/dgx8.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
assert o["apiVersion"] == "topology.node.k8s.io/v1alpha2"
assert [z["name"] for z in o["zones"]] == ["node-0", "node-1"]
for z in o["zones"]:
    assert z["type"] == "Node"
    r = {x["name"]: x for x in z["resources"]}
    assert r["cpu"]["capacity"] == "64" and r["nvidia.com/gpu"]["available"] == "4"
    assert all(isinstance(c["value"], int) for c in z["costs"])
    a = {x["name"]: x["value"] for x in z["attributes"]}
    assert len(a["muster.io/gpus"].split(",")) == 4
    assert len(a["muster.io/nics"].split(",")) == 4
top = {x["name"]: x["value"] for x in o["attributes"]}
groups = dict(g.split(":", 1) for g in top["muster.io/gpu-link-groups"].split(";"))
assert len(groups["nvlink0"].split("|")) == 8 and len(groups) == 5
PY
	then ok; else bad "dgx8 JSON structure"; fi
fi

# This machine: it must work and name at least one zone.
expect real 0 "$M" agent discover --node-name e2e
has real "$T/out" '"name": "node-'
expect real-yaml 0 "$M" agent discover --format yaml
has real-yaml "$T/out" "kind: \"NodeResourceTopology\""

# Usage and read errors.
expect bad-format 2 "$M" agent discover --sysfs $D/dgx8 --format xml
has bad-format "$T/err" "--format"
expect missing-root 2 "$M" agent discover --sysfs /nonexistent/sysfs
has missing-root "$T/err" "/nonexistent/sysfs: no such directory"
expect not-sysfs 2 "$M" agent discover --sysfs tests/e2e
has not-sysfs "$T/err" "not a sysfs tree"
expect no-value 2 "$M" agent discover --sysfs
has no-value "$T/err" "needs a value"
expect bad-option 2 "$M" agent discover --frob
has bad-option "$T/err" "unknown option"
expect stray-arg 2 "$M" agent discover extra
expect bad-name 2 "$M" agent discover --sysfs $D/dgx8 --node-name Bad_Name
has bad-name "$T/err" "not a valid node name"
mkdir -p "$T/tree/devices/system/node/node0"
printf '0-3,garbage\n' >"$T/tree/devices/system/node/node0/cpulist"
expect bad-cpulist 2 "$M" agent discover --sysfs "$T/tree"
has bad-cpulist "$T/err" "$T/tree/devices/system/node/node0/cpulist: not a valid cpulist"
if [ -w /dev/full ]; then
	expect write-error 1 sh -c "\"$M\" agent discover --sysfs $D/dgx8 --node-name x >/dev/full"
fi

done_
