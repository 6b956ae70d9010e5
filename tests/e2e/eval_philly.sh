#!/bin/sh
# eval_philly.sh - black-box tests of `muster eval philly`: usage errors,
# a missing trace, an empty window, a run on a tiny trace written here
# (tables, JSON and HTML), and, when ../shared/data is there, the --quick
# protocol on the real trace.  When python3 is there the JSON is parsed.
# Usage: sh tests/e2e/eval_philly.sh PATH_TO_MUSTER.  Ends with
# "N passed, N failed".
E2E_NAME=eval_philly.sh; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
# json_runs NAME FILE N: the JSON parses and holds N runs.
json_runs() {
	command -v python3 >/dev/null 2>&1 || return 0
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["runs"]) == int(sys.argv[2]); assert len(d["experiments"]["jct"]) == 6; assert len(d["tradeoff"]) == 6' "$2" "$3" 2>"$T/py"; then ok; else bad "$1: JSON"; head -3 "$T/py"; fi
}

expect help 0 "$M" eval philly --help
has help "$T/out" "--report FILE"
expect main-help 0 "$M" --help
has main-help "$T/out" "openb, philly, topology, queues"
# One `muster eval` lists its evaluations; unknown names and old spellings.
expect eval-help 0 "$M" eval --help
has eval-help "$T/out" "philly"
has eval-help-openb "$T/out" "openb"
has eval-help-topology "$T/out" "topology"
has eval-help-queues "$T/out" "queues"
expect eval-none 2 "$M" eval
expect eval-unknown 2 "$M" eval frob
has eval-unknown "$T/err" "expected one of: openb philly topology queues"
expect eval-openb-help 0 "$M" eval openb --help
has eval-openb-help "$T/out" "--seeds"
expect old-spelling 0 "$M" eval-philly --help
has old-spelling "$T/err" "is now 'muster eval philly'"
has old-spelling-usage "$T/out" "usage: muster eval philly"
expect unknown-option 2 "$M" eval philly --frob 1
has unknown-option "$T/err" "unknown option"
expect bad-load 2 "$M" eval philly --load x
expect missing-trace 2 "$M" eval philly --trace "$T/none.csv"
has missing-trace "$T/err" "none.csv"

# A tiny trace: a 16-GPU gang among 1-GPU jobs over three hours.
{
	echo "timestamp,duration,num_gpus,gpu_time,cluster"
	for h in 00 01 02; do
		for m in 00 10 20 30 40 50; do
			echo "2017-10-01 $h:$m:00,1800,1,1800,a"
			echo "2017-10-01 $h:$m:30,5400,2,10800,b"
		done
		echo "2017-10-01 $h:15:00,3600,16,57600,c"
	done
} >"$T/tiny.csv"
expect empty-window 2 "$M" eval philly --trace "$T/tiny.csv" --days 0.1 --from 30d
has empty-window "$T/err" "no job"
expect tiny 01 "$M" eval philly --trace "$T/tiny.csv" --days 0.125 --json "$T/tiny.json" \
	--report "$T/tiny.html"
has tiny "$T/out" "backfill and large jobs"
has tiny "$T/out" "Tiresias"
has tiny-tradeoff "$T/out" "JCT trade-off"
has tiny-goals "$T/out" "JCT goals (issue 21"
has tiny-html-tradeoff "$T/tiny.html" "Trade-off: mean JCT"
has tiny-html "$T/tiny.html" "<svg"
json_runs tiny-json "$T/tiny.json" 11

if [ -r ../shared/data/philly/philly.csv ]; then
	expect quick 01 "$M" eval philly --quick --json "$T/q.json"
	has quick "$T/out" "offered load 0.900"
	json_runs quick-json "$T/q.json" 11
else
	echo "skipped: ../shared/data not found"
fi
done_
