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
expect unwritable 1 "$M" bench --quick --quiet --shape basic --json /nonexistent/dir/x.json

done_
