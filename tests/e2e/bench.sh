#!/bin/sh
# bench.sh - black-box tests of `muster bench`: help, bad usage, and a
# quick run of two shapes with --json and --report (structure only, never
# timing).  Usage: sh tests/e2e/bench.sh PATH_TO_MUSTER.  Ends with
# "N passed, N failed".
set -u
M=${1:-build/muster}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
P=0; F=0
ok() { P=$((P + 1)); }
bad() { F=$((F + 1)); echo "FAIL $*"; }
# expect NAME WANT_EXIT CMD...: runs CMD, checks its exit code.
expect() {
	name=$1; want=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok; else bad "$name: exit $got, expected $want"; sed 's/^/  /' "$T/err" | head -5; fi
}
has() { # has NAME FILE TEXT
	if grep -q -- "$3" "$2"; then ok; else bad "$1: '$3' not in $2"; fi
}

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
expect unwritable 1 "$M" bench --quick --quiet --shape basic --json /nonexistent/dir/x.json

echo "e2e bench.sh: $P passed, $F failed"
[ "$F" -eq 0 ]
