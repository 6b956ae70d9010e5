#!/bin/sh
# eval_openb_rollout.sh - `muster eval openb --policy muster-rollout`
# (issue 17, round 13): muster with its share settings chosen per input by
# rollouts (src/engine/score_rollout.c).  Candidate 0 is muster's own
# settings, so --rollout-pick 0 must give muster's figures exactly; the
# choice lists the ten candidates with one chosen, is the same for the
# same rollout seed, and bad picks are usage errors (PICK=9 makes the
# first check fail: candidate 9 differs from muster at seed 42).  On the
# shared default trace, the choice with tune 0.6 and small rollouts;
# skips without it.
# Usage: sh tests/e2e/eval_openb_rollout.sh PATH_TO_MUSTER.
E2E_NAME=eval_openb_rollout.sh; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
D=../shared/data/openb
if [ ! -r "$D/openb_pod_list_default.csv" ]; then
	echo "skipped: ../shared/data not found (needs the openb trace)"
	done_
fi
EV="eval openb --nodes $D/openb_node_list_gpu_node.csv --pods $D/openb_pod_list_default.csv --seed 42"

# Candidate 0 (the defaults) is muster: the same row but for the name.
# shellcheck disable=SC2086
expect pick0 0 "$M" $EV --policies muster,muster-rollout --rollout-pick ${PICK:-0}
has pick0-line "$T/out" "picked by --rollout-pick"
a=$(awk '$1 == "muster" && $2 ~ /^[0-9]/ { print $2, $3, $4, $5 }' "$T/out")
b=$(awk '$1 == "muster-rollout" && $2 ~ /^[0-9]/ { print $2, $3, $4, $5 }' "$T/out")
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "pick0: muster '$a' but muster-rollout '$b'"; fi

# The choice: ten candidates, one chosen, the same twice for one seed.
R="--policies muster-rollout --rollout-nodes 128 --rollouts 2 --rollout-seed 5"
# shellcheck disable=SC2086
expect choose 0 "$M" $EV --tune 0.6 $R
has choose-line "$T/out" "chosen by rollouts"
n=$(grep -c '^  [ *] [ 0-9][0-9]  mg ' "$T/out")
c=$(grep -c '^  \* ' "$T/out")
if [ "$n" = 10 ] && [ "$c" = 1 ]; then ok; else bad "choose: $n candidates, $c chosen"; sed 's/^/  /' "$T/out"; fi
grep '^  [ *] [ 0-9][0-9]  mg ' "$T/out" >"$T/first"
# shellcheck disable=SC2086
expect again 0 "$M" $EV --tune 0.6 $R
grep '^  [ *] [ 0-9][0-9]  mg ' "$T/out" >"$T/second"
if cmp -s "$T/first" "$T/second"; then ok; else bad "again: the same seed chose differently"; fi

# Bad picks.
# shellcheck disable=SC2086
expect pick-range 2 "$M" $EV --policies muster-rollout --rollout-pick 10
# shellcheck disable=SC2086
expect pick-parse 2 "$M" $EV --policies muster-rollout --rollout-pick x
done_
