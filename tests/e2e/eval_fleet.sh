#!/bin/sh
# eval_fleet.sh - black-box tests of `muster eval fleet`: usage errors, a
# missing trace, a run on a tiny trace written here (the table, JSON and
# HTML; muster sends no job twice and starts every job), and, when
# ../shared/data is there, the --quick protocol on the real trace.  When
# python3 is there the JSON is parsed.
# Usage: sh tests/e2e/eval_fleet.sh PATH_TO_MUSTER.  Ends with
# "N passed, N failed".
E2E_NAME=eval_fleet.sh; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
# json_ok NAME FILE: four runs, muster with no duplicate and no job left
# unstarted, multikueue's wasted admissions counted as duplicates.
json_ok() {
	command -v python3 >/dev/null 2>&1 || return 0
	if python3 - "$2" 2>"$T/py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
runs = {r["strategy"]: r for r in d["runs"]}
assert sorted(runs) == ["mcad", "multikueue", "muster", "static"], runs.keys()
m = runs["muster"]
assert m["duplicates"] == 0 and m["never_started"] == 0, m
assert m["completed"] == m["jobs"] > 0, m
mk = runs["multikueue"]
assert mk["duplicates"] <= mk["wasted_admissions"], mk
assert len(d["clusters"]) == 4 and d["clusters"][3]["tier"] == "public"
PY
	then ok; else bad "$1: JSON"; tail -3 "$T/py"; fi
}

expect help 0 "$M" eval fleet --help
has help "$T/out" "--burst-after DUR"
expect eval-help 0 "$M" eval --help
has eval-help "$T/out" "fleet"
expect unknown-option 2 "$M" eval fleet --frob 1
has unknown-option "$T/err" "unknown option"
expect bad-cost 2 "$M" eval fleet --public-cost -1
expect bad-burst 2 "$M" eval fleet --burst-after soon
expect missing-trace 2 "$M" eval fleet --trace "$T/none.csv"
has missing-trace "$T/err" "none.csv"

# A tiny trace: a 16-GPU gang among 1- and 2-GPU jobs of three teams.
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
expect empty-window 2 "$M" eval fleet --trace "$T/tiny.csv" --days 0.1 --from 30d
has empty-window "$T/err" "no job"
expect tiny 0 "$M" eval fleet --trace "$T/tiny.csv" --days 0.125 --json "$T/tiny.json" \
	--report "$T/tiny.html"
has tiny "$T/out" "multikueue"
has tiny-check "$T/out" "check: muster dispatch: 0 duplicates"
has tiny-html "$T/tiny.html" "<svg"
has tiny-html-public "$T/tiny.html" "Public GPU-hours"
json_ok tiny-json "$T/tiny.json"

if [ -r ../shared/data/philly/philly.csv ]; then
	expect quick 0 "$M" eval fleet --quick --json "$T/q.json"
	json_ok quick-json "$T/q.json"
else
	echo "skipped: ../shared/data not found"
fi
done_
