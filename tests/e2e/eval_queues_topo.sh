#!/bin/sh
# eval_queues_topo.sh - black-box tests of `muster eval queues` and
# `muster eval topology`: usage errors, a small queues run (its reclaim
# bounds, the controls, the JSON), and a topology run on a tiny Clos network
# and trace written here (the table, JSON and HTML; topology-aware placement
# keeps every gang within one ToR where the blind engines do not).  When
# ../shared/data is there the topology --quick protocol runs on the real
# network and trace.  When python3 is there the JSON is parsed.
# Usage: sh tests/e2e/eval_queues_topo.sh PATH_TO_MUSTER.  Ends with
# "N passed, N failed".
E2E_NAME=eval_queues_topo.sh; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"

# --- muster eval queues -------------------------------------------------
expect q-help 0 "$M" eval queues --help
has q-help "$T/out" "--reclaim-nodes N"
expect q-unknown 2 "$M" eval queues --frob 1
has q-unknown "$T/err" "muster eval queues: unknown option '--frob' (see --help)"
expect q-missing 2 "$M" eval queues --seed
has q-missing "$T/err" "missing value or unknown option '--seed'"
expect q-bad-span 2 "$M" eval queues --span soon
has q-bad-span "$T/err" "bad value for --span: 'soon'"
expect q-bad-only 2 "$M" eval queues --only everything
# 16 nodes over 6 hours: too small for the weighted target (exit 1), but
# reclaim keeps its bounds and every control comes out worse.
expect q-small 1 "$M" eval queues --nodes 16 --span 6h --reclaim-nodes 0 --json "$T/q.json"
has q-small "$T/out" "(the control must fail): OK"
has q-small-bound "$T/out" "min-runtime  60s: A holds 64 GPUs after 30.0 s"
has q-small-verdict "$T/out" "some targets NOT MET"
if command -v python3 >/dev/null 2>&1; then
	if python3 - "$T/q.json" 2>"$T/py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["nodes"] == 16 and d["span_s"] == 21600, d
for k in ("fairness", "weighted"):
    e, c = d[k], d[k + "_control"]
    assert len(e["queues"]) == (4 if k == "fairness" else 3), e
    assert 0 < e["gpu_utilization"] <= 1 and e["completed"] <= e["jobs"], e
    assert c["preemptions"] == 0, c
w, wc = d["weighted"], d["weighted_control"]
assert w["max_deviation"] < wc["max_deviation"], (w, wc)
assert len(d["reclaim"]) >= 4, d["reclaim"]
PY
	then ok; else bad "q-small: JSON"; tail -3 "$T/py"; fi
fi
expect q-only 0 "$M" eval queues --nodes 16 --only reclaim --reclaim-nodes 0 --quiet
[ -s "$T/out" ] && bad "q-only: --quiet printed $(head -1 "$T/out")" || ok

# --- muster eval topology -----------------------------------------------
expect t-help 0 "$M" eval topology --help
has t-help "$T/out" "--max-jobs N"
expect t-unknown 2 "$M" eval topology --frob 1
has t-unknown "$T/err" "muster eval topology: unknown option '--frob' (see --help)"
expect t-bad-load 2 "$M" eval topology --load none
has t-bad-load "$T/err" "bad value for --load: 'none'"
expect t-missing-net 2 "$M" eval topology --topology "$T/none.csv" --trace "$T/none2.csv"
has t-missing-net "$T/err" "none"

# Two DSWs, each of two PSWs of two ToRs of two hosts: 16 hosts of 8 GPUs.
{
	echo "ip,DSW,PSW,ASW"
	i=0
	for g in G1 G2; do for p in P1 P2; do for s in S1 S2; do for h in a b; do
		i=$((i + 1)); echo "host$i,$g,$p,$g$p$s"
	done; done; done; done
} >"$T/net.csv"
# Gangs of 16 GPUs (two hosts: one ToR when placed well) and 8-GPU jobs.
{
	echo "timestamp,duration,num_gpus,gpu_time,cluster"
	for h in 00 01 02 03; do
		for m in 00 20 40; do
			echo "2017-10-01 $h:$m:00,3600,16,57600,a"
			echo "2017-10-01 $h:$m:30,1800,8,14400,b"
		done
	done
} >"$T/trace.csv"
expect t-tiny 0 "$M" eval topology --topology "$T/net.csv" --trace "$T/trace.csv" \
	--json "$T/t.json" --report "$T/t.html"
has t-tiny "$T/out" "muster-required"
has t-tiny-html "$T/t.html" "<svg"
has t-tiny-csp "$T/t.html" "default-src 'none'"
if command -v python3 >/dev/null 2>&1; then
	if python3 - "$T/t.json" 2>"$T/py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["hosts"] == 16 and d["gpus_per_host"] == 8, d
pol = {p["policy"]: p for p in d["policies"]}
assert sorted(pol) == ["blind-binpack", "blind-spread", "muster-preferred",
                       "muster-required"], pol.keys()
for p in pol.values():
    assert p["started"] == p["jobs"] > 0, p
# every 16-GPU gang fits one ToR (two hosts): the topology-aware ones keep it there
for k in ("muster-preferred", "muster-required"):
    assert pol[k]["within_tightest"] == pol[k]["gangs"] == 12, pol[k]
# ...where the blind ones, filling hosts in their own order, split most
for k in ("blind-binpack", "blind-spread"):
    assert pol[k]["within_tightest"] < pol[k]["gangs"] // 2, pol[k]
PY
	then ok; else bad "t-tiny: JSON"; tail -3 "$T/py"; fi
fi

if [ -r ../shared/data/topology/lingjun_topo.csv ] && [ -r ../shared/data/philly/philly.csv ]; then
	expect t-quick 0 "$M" eval topology --quick --quiet --json "$T/tq.json"
else
	echo "skipped: ../shared/data not found (the real network and trace)"
fi
done_
