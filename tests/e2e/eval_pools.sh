#!/bin/sh
# eval_pools.sh - `muster eval pools --quick` end to end (issue 23): the
# three modes run on the openb nodes and a Philly window, the figures and
# the HTML report come out; without ../shared/data it must say it skipped
# and exit 0.  Usage: sh tests/e2e/eval_pools.sh PATH_TO_MUSTER.  Ends with
# "e2e eval_pools: N passed, N failed".
E2E_NAME=eval_pools; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
expect skip 0 "$M" eval pools --quick --nodes "$T/none.csv"
has skip-says "$T/out" "skipped: $T/none.csv not found"
expect bad-option 2 "$M" eval pools --days soon
has bad-option-says "$T/err" "--days: bad value"
if [ ! -r ../shared/data/openb/openb_node_list_gpu_node.csv ] || [ ! -r ../shared/data/philly/philly.csv ]; then
	echo "eval_pools: skipped the run: ../shared/data not found"
	done_
fi
expect quick 0 "$M" eval pools --quick --report "$T/pools.html"
has pools "$T/out" "in 7 pools"
has modes "$T/out" "fallback    pooled    strict"
has fallback-line "$T/out" "ran on a pool that was not their first choice"
has report "$T/pools.html" "<svg"
has report-title "$T/pools.html" "GPU utilization per pool"
done_
