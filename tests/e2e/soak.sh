#!/bin/sh
# soak.sh - the chaos soak (tests/soak/soak.py) for a fixed time, and the
# regression test of the split brain it found (tests/soak/fence.py), and
# the durability check and the watch-history fix that the writes-kept false
# alarm led to (tests/soak/durable.py, tests/soak/watchgap.py).
# make test runs SOAK_SECONDS (default 300) with SOAK_SEED (default 1) and
# the multi-cluster dispatcher with SOAK_DISPATCH (default 2) workers;
# `make soak` runs an hour with a random seed.  A failing soak prints its
# seed and keeps its fault schedule and event history in $SOAK_OUT.
# Usage: sh tests/e2e/soak.sh PATH_TO_MUSTER.  Ends with
# "e2e soak: N passed, N failed".
E2E_NAME=soak; . "$(dirname "$0")/lib/common.sh"
need_kubectl
PY=/usr/bin/python3
[ -x "$PY" ] || { bad "needs $PY (scripts/install-deps.sh installs it)"; done_; }
# Under ASan a freed block waits in a quarantine (256 MiB by default), which
# reads as growth in the bounded-memory check: keep it small here.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"; export ASAN_OPTIONS
out=${SOAK_OUT:-build/soak}
rm -rf "$out"; mkdir -p "$out"
if "$PY" tests/soak/fence.py "$M" >"$T/fence" 2>&1; then ok; else cat "$T/fence"; bad "fence: a replica acted after its lease could pass"; fi
tail -n 1 "$T/fence"
# no acknowledged write of muster up lost to a full disk and a kill -9
if "$PY" tests/soak/durable.py "$M" --seed 1 >"$T/durable" 2>&1; then ok; else cat "$T/durable"; bad "durable: an acknowledged write was lost"; fi
tail -n 1 "$T/durable"
# an eviction made while the checker's watch was away (a restart) is still seen
if "$PY" tests/soak/watchgap.py "$M" >"$T/watchgap" 2>&1; then ok; else cat "$T/watchgap"; bad "watchgap: a change made across a restart was missed"; fi
tail -n 1 "$T/watchgap"
seed=${SOAK_SEED:-1}
if [ "$seed" = random ]; then seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); fi
if "$PY" tests/soak/soak.py "$M" --seconds "${SOAK_SECONDS:-300}" --seed "$seed" \
	--dispatch "${SOAK_DISPATCH:-2}" --out "$out" >"$T/soak" 2>&1; then
	ok
else
	bad "soak (seed $seed): see $out/soak.log"
fi
grep -E 'faults by kind|pods created|hub jobs|peak RSS|checks,|FAILED|VIOLATION|^soak:' "$T/soak"
done_
