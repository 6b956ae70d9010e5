#!/bin/sh
# eval_openb_rollout.sh - `muster eval openb --policy muster-rollout`
# (issue 17, round 13): muster with its share settings chosen per input by
# rollouts (src/engine/score_rollout.c).  Candidate 0 is muster's own
# settings, so --rollout-pick 0 must give muster's figures exactly; the
# choice lists the ten candidates with one chosen, is the same for the
# same rollout seed, and bad picks are usage errors (PICK=9 makes the
# first check fail: candidate 9 differs from muster at seed 42).  Round 14's
# muster-horizon (the choice made again at checkpoints of the arrivals):
# with tune 0.8 it chooses at x = 50, 60, 70 and 80 (four choices, at
# least one change), and with its first checkpoint past the end
# (--horizon-from 2) it chooses never and is muster-rollout row for row
# (NOHORIZON=1 moves the checkpoints out of reach in the first check too,
# which makes it fail).  Round 15: each seed's line also says how many
# choices had all ten candidates tied and, at the last choice, how many
# shared the top and the winner's lead over the next worth.  The fifteenth
# round (branch s16-hz): how many of those ties the tie's
# measures decided, the tie rule named, --late-candidates yes lists 13
# candidates (NOLATE=no makes that check fail), and --rollout-tie index,
# 1.5 and bad values.  On the shared default trace, with small
# rollouts; skips without it.
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

# muster-horizon: four choices at x = 50..80, at least one change.
H="--policies muster-rollout,muster-horizon --rollout-nodes 128 --rollouts 2 --rollout-seed 5 --tune 0.8"
# shellcheck disable=SC2086
expect horizon 0 "$M" $EV $H ${NOHORIZON:+--horizon-from 2}
l=$(grep '^    seed 42: ' "$T/out")
ch=${l#*: }; ch=${ch%%/*}; chg=${l#*/}; chg=${chg%%,*}
if [ "$ch" = 4 ] && [ "$chg" -ge 1 ]; then ok; else bad "horizon: '$l' (want 4 choices, a change)"; fi
# How decisive the choices were (round 15): choices where all ten tied,
# and at the last one how many shared the top and the lead over the next.
fl=${l#*all tied }; fl=${fl%%,*}; br=${l#*decided by the tie }; br=${br%%;*}
top=${l#*top }; top=${top%%,*}; lead=${l#*lead }
if [ "$fl" -ge 0 ] 2>/dev/null && [ "$fl" -le 4 ] && [ "$br" -ge 0 ] 2>/dev/null && [ "$br" -le 4 ] &&
   [ "$top" -ge 1 ] 2>/dev/null && [ "$top" -le 10 ] &&
   [ "$lead" -ge 0 ] 2>/dev/null && { { [ "$top" = 10 ] && [ "$lead" = 0 ]; } || { [ "$top" -lt 10 ] && [ "$lead" -gt 0 ]; }; }
then ok; else bad "horizon-ties: '$l' (want 'all tied F, decided by the tie B; last: top T, lead L')"; fi
has horizon-tie-rule "$T/out" "ties judged by the least fragmentation at the end"
# Round 15: the late candidates (13 in all) and the tie's options.
# shellcheck disable=SC2086
expect late 0 "$M" $EV --tune 0.6 $R --late-candidates ${NOLATE:-yes}
n=$(grep -c '^  [ *] [ 0-9][0-9]  mg ' "$T/out")
f=$(grep -c '^  [ *] [ 0-9][0-9]  mg .*best fit' "$T/out")
if [ "$n" = 13 ] && [ "$f" = 2 ]; then ok; else bad "late: $n candidates, $f by best fit (want 13, 2)"; fi
# shellcheck disable=SC2086
expect tie-index 0 "$M" $EV $H --rollout-tie index
has tie-index-line "$T/out" "ties judged by the lower index"
grep -q 'decided by the tie 0;' "$T/out" && ok || bad "tie-index: a tie decided by something else than the index"
# shellcheck disable=SC2086
expect tie-look 0 "$M" $EV $H --rollout-tie 1.5
has tie-look-line "$T/out" "ties judged by the most allocated at x=150"
# shellcheck disable=SC2086
expect tie-bad 2 "$M" $EV $H --rollout-tie 1.2
# shellcheck disable=SC2086
expect late-bad 2 "$M" $EV $H --late-candidates maybe
# No checkpoint reached: muster-rollout's figures exactly.
# shellcheck disable=SC2086
expect horizon-none 0 "$M" $EV $H --horizon-from 2
has horizon-none-line "$T/out" "seed 42: 0/0"
a=$(awk '$1 == "muster-rollout" && $2 ~ /^[0-9]/ { print $2, $3, $4, $5, $6 }' "$T/out")
b=$(awk '$1 == "muster-horizon" && $2 ~ /^[0-9]/ { print $2, $3, $4, $5, $6 }' "$T/out")
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "horizon-none: rollout '$a' but horizon '$b'"; fi
# shellcheck disable=SC2086
expect horizon-every 2 "$M" $EV --policies muster-horizon --horizon-every 0

# Bad picks.
# shellcheck disable=SC2086
expect pick-range 2 "$M" $EV --policies muster-rollout --rollout-pick 10
# shellcheck disable=SC2086
expect pick-parse 2 "$M" $EV --policies muster-rollout --rollout-pick x
done_
