#!/bin/sh
# run.sh - runs every test against one build directory and adds them up.
#
# Usage: tests/run.sh BUILD_DIR   (make test passes build/asan)
# Suites: the layer map and the call loops inside rooms
# (scripts/check-layers.sh, check-loops.sh), clang's warnings on every
# source as `make fuzz` compiles it (check-clang.sh), unit binaries, scenario files, bad-input cases, fuzz corpus
# replay, and end-to-end CLI scripts (tests/e2e/*.sh).  Every suite prints
# lines ending in "N passed, N failed"; this script sums them and ends with
# one such line.  It exits non-zero if anything failed.
set -u
B=${1:-build/asan}
MUSTER=$B/muster
export MUSTER
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
P=0; F=0
log=$(mktemp); trap 'rm -f "$log"' EXIT

# add_counts LINE: pulls "N passed, N failed" out of a suite's last line.
add_counts() {
	p=$(printf '%s\n' "$1" | sed -n 's/.* \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\1/p')
	f=$(printf '%s\n' "$1" | sed -n 's/.* \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\2/p')
	if [ -z "$p" ]; then F=$((F + 1)); return; fi
	P=$((P + p)); F=$((F + f))
}

# run_suite NAME CMD...: runs a suite, shows its output, counts its summary.
run_suite() {
	name=$1; shift
	t0=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	cat "$log"
	echo "suite $name: $(($(date +%s) - t0)) s"
	last=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$last" ]; then
		echo "suite $name: crashed or printed no summary (exit $rc)"
		F=$((F + 1))
		return
	fi
	add_counts "$last"
	if [ $rc -ne 0 ] && ! printf '%s' "$last" | grep -qE ' [1-9][0-9]* failed'; then
		echo "suite $name: exit $rc with no failure counted"
		F=$((F + 1))
	fi
}

echo "== layers (docs/architecture.md)"
run_suite layers sh scripts/check-layers.sh .
run_suite loops sh scripts/check-loops.sh "$B"
run_suite clang sh scripts/check-clang.sh .

echo "== unit tests"
for t in "$B"/tests/test_*; do
	[ -x "$t" ] || continue
	run_suite "$(basename "$t")" "$t"
done

echo "== scenario files"
run_suite scenarios "$MUSTER" scenario tests/scenarios/*.yaml

echo "== bad input"
run_suite bad-input sh tests/bad-input/run.sh "$MUSTER"

echo "== fuzz corpus replay"
for r in "$B"/replay/fuzz_*; do
	[ -x "$r" ] || continue
	n=$(basename "$r")
	if [ -d "fuzz/corpus/$n" ]; then
		if "$r" "fuzz/corpus/$n" >"$log" 2>&1; then
			echo "replay $n: $(tail -n 1 "$log")"; P=$((P + 1))
		else
			cat "$log"; echo "replay $n: FAILED"; F=$((F + 1))
		fi
	fi
done

echo "== end to end"
for e in tests/e2e/*.sh; do
	[ -f "$e" ] || continue
	run_suite "$(basename "$e")" sh "$e" "$MUSTER"
done

echo
echo "total: $P passed, $F failed"
[ "$F" -eq 0 ]
