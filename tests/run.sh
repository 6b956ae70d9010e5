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
# E2E_JOBS (default 2) end-to-end scripts run at a time: they are
# isolated (ports chosen by the kernel, their own temporary directories)
# and mostly wait on their daemons, so two share two cores; each one's
# output is kept apart and shown whole when it ends.  E2E_JOBS=1 runs them
# one by one, as before.
set -u
B=${1:-build/asan}
MUSTER=$B/muster
export MUSTER
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
P=0; F=0
log=$(mktemp); lanes=$(mktemp -d); trap 'rm -rf "$log" "$lanes"' EXIT
E2E_JOBS=${E2E_JOBS:-2}

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
	account "$name" $? "$log" $(($(date +%s) - t0))
}

# account NAME RC LOG SECONDS: shows a finished suite's output and counts
# its summary line (a suite with none, or failing without a count, is one
# failure).
account() {
	name=$1; rc=$2
	cat "$3"
	echo "suite $name: $4 s"
	last=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$3" | tail -n 1)
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

# lane_collect: waits (polling every half second) until one of the
# running end-to-end scripts has ended, then shows and counts it.
# (its own names: account and add_counts set name, rc, p and f)
lane_collect() {
	while :; do
		for lane_rc in "$lanes"/*.rc; do
			[ -f "$lane_rc" ] || continue
			lane_k=${lane_rc%.rc}
			lane_code=$(cat "$lane_rc")
			rm -f "$lane_rc"
			account "$(cat "$lane_k.name")" "$lane_code" "$lane_k.log" "$(cat "$lane_k.t")"
			rm -f "$lane_k.name" "$lane_k.log" "$lane_k.t"
			running=$((running - 1))
			return
		done
		sleep 0.5
	done
}

# The longest scripts start first, so that the lanes end together.
FIRST="soak.sh eval_openb_fidelity.sh dispatch.sh dispatch_kinds.sh dispatch_kinds2.sh"
echo "== end to end ($E2E_JOBS at a time)"
e2e_t0=$(date +%s)
list=""
for f in $FIRST; do [ -f "tests/e2e/$f" ] && list="$list tests/e2e/$f"; done
for e in tests/e2e/*.sh; do
	case " $FIRST " in *" ${e#tests/e2e/} "*) ;; *) list="$list $e" ;; esac
done
running=0; i=0
for e in $list; do
	[ -f "$e" ] || continue
	[ "$running" -ge "$E2E_JOBS" ] && lane_collect
	i=$((i + 1)); k="$lanes/$i"
	basename "$e" >"$k.name"
	(
		t0=$(date +%s)
		sh "$e" "$MUSTER" >"$k.log" 2>&1
		rc=$?
		echo $(($(date +%s) - t0)) >"$k.t"
		echo "$rc" >"$k.rc.new" && mv "$k.rc.new" "$k.rc"
	) &
	running=$((running + 1))
done
while [ "$running" -gt 0 ]; do lane_collect; done
wait
echo "end to end: $(($(date +%s) - e2e_t0)) s of wall time"

echo
echo "total: $P passed, $F failed"
[ "$F" -eq 0 ]
