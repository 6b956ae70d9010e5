#!/bin/sh
# bench.sh - black-box tests of `muster bench`: help, bad usage, and a
# quick run of two shapes with --json and --report (structure only, never
# timing).  Usage: sh tests/e2e/bench.sh PATH_TO_MUSTER.  Ends with
# "N passed, N failed".
E2E_NAME=bench.sh; . "$(dirname "$0")/lib/common.sh"

expect help 0 "$M" bench --help
has help "$T/out" "gang-topology"
expect unknown-shape 2 "$M" bench --shape basic,nope
has unknown-shape "$T/err" "unknown shape 'nope'"
expect unknown-option 2 "$M" bench --frob
expect missing-value 2 "$M" bench --json
expect bad-seed 2 "$M" bench --seed x

expect quick 0 "$M" bench --quick --shape basic,cycle --json "$T/b.json" --report "$T/b.html"
n=$(grep -c '^{"shape": ' "$T/out")
if [ "$n" -eq 2 ]; then ok; else bad "quick: $n JSON lines, expected 2"; fi
for k in '"shape": "basic"' '"shape": "cycle"' '"decisions_per_s": ' '"p50_us": ' \
	'"p99_us": ' '"peak_rss_mb": ' '"cycle_ms": ' '"build_ms": '; do
	has quick-json "$T/out" "$k"
done
has quick-table "$T/err" "MISSED\|OK"
has json-file "$T/b.json" '^\['
has json-file "$T/b.json" '"shape": "cycle"'
has report "$T/b.html" "<table>"
has report "$T/b.html" "Quick run"
# The fleet shape (src/fleet): dispatches, the refill passes, memory.
expect quick-fleet 0 "$M" bench --quick --shape fleet --json "$T/f.json"
for k in '"shape": "fleet"' '"decisions_per_s": ' '"pending": ' '"cycle_ms": ' \
	'"peak_rss_mb": '; do
	has quick-fleet-json "$T/f.json" "$k"
done
has quick-fleet-table "$T/err" "dispatch decisions/s"

expect bad-scale 2 "$M" bench --scale 0
has bad-scale "$T/err" "bad value for --scale"

# The varied shapes, quick: one record each (blocked-selectors two: half
# and all of its running pods), decisions counted only when real, and
# openb-replay skipped clearly without the data.
V=unique,backlog,blocked-selectors,gangs4,gang-blocked,classes,reclaim-queues,openb-replay
expect varied 0 "$M" bench --quick --quiet --shape $V --data "$T/nodata"
n=$(grep -c '^{"shape": ' "$T/out")
if [ "$n" -eq 9 ]; then ok; else bad "varied: $n JSON lines, expected 9"; fi
for k in '"shape": "unique".*"decisions_per_s": ' '"shape": "backlog".*"cycle_ms": ' \
	'"shape": "blocked-selectors".*"running": ' '"shape": "gangs4".*"engine_ms": ' \
	'"shape": "gang-blocked".*"cold_cycle_ms": ' '"shape": "classes".*"rss_base_mb": ' \
	'"shape": "reclaim-queues".*"queues": 8' '"shape": "openb-replay", "skipped": "openb data not found'; do
	has varied-json "$T/out" "$k"
done
expect unwritable 1 "$M" bench --quick --quiet --shape basic --json /nonexistent/dir/x.json

done_
