#!/bin/sh
# eval_openb_fidelity.sh - the FGD paper's six policies (random, dotprod,
# clustering, packing, bestfit, fgd) against the paper's own results in
# ../shared/data/openb/fgd_analysis_allo_discrete.csv: allocation at
# x = 130 on the five shared openb variants, and on synthetic ones that
# scripts/openb-variants.py builds from default (their names are the
# paper's, so a variant whose figures are in the paper's file is compared;
# the others are run to the end and checked for a sane result: every policy
# places pods, fgd is within a point of the best baseline).
#
# muster runs beside the six on the shared variants, and its margin over
# our fgd at x = 130 must not fall below the floor of `margin` (the
# issue-17 measurement less 0.1, so a regression of a tenth of a point
# fails).  `golden` pins every policy's own figure at seed 42 (within
# 0.05 of the one recorded, so any change of a policy or of the harness
# shows), and `bound` checks that no policy passes the proven upper bound
# of scripts/openb-bound.py (docs/evaluation.md, "How much room is above
# FGD"), and that script's own figure and its errors.
#
# make test: seed 42 only, on the five shared variants and the synthetic
# gpushare100; a single seed of the paper's spreads up to about 1 point
# around its mean, so the tolerance is 2.0.  make fidelity (or
# OPENB_SEEDS=42-51 OPENB_ALL=1) runs the paper's ten seeds on every shared
# variant and every synthetic one with the issue's tolerance, 1.0.
# OPENB_TOL overrides the tolerance.  Skips, saying so, without
# ../shared/data (or without python3 for the bound and the synthetic
# variants).
# Usage: sh tests/e2e/eval_openb_fidelity.sh PATH_TO_MUSTER.
E2E_NAME=eval_openb_fidelity.sh; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
D=../shared/data/openb
SEEDS=${OPENB_SEEDS:-42}
ALL=${OPENB_ALL:-0}
case "$SEEDS" in
*-*) TOL=${OPENB_TOL:-1.0} ;;
*) TOL=${OPENB_TOL:-2.0} ;;
esac
BASE="random dotprod clustering packing bestfit fgd"

if [ ! -r "$D/fgd_analysis_allo_discrete.csv" ] || [ ! -r "$D/openb_pod_list_default.csv" ]; then
	echo "skipped: ../shared/data not found (the fidelity test needs the openb trace and the paper's results)"
	done_
fi

# run NAME PODS [EXTRA]: the six policies (and EXTRA, e.g. ",muster") on
# PODS; the table in $T/NAME.txt.
run() {
	expect "$1" 0 "$M" eval openb --nodes "$D/openb_node_list_gpu_node.csv" \
		--pods "$2" --policies "random,dotprod,clustering,packing,bestfit,fgd${3:-}" \
		--seeds "$SEEDS" --paper "$D/fgd_analysis_allo_discrete.csv"
	cp "$T/out" "$T/$1.txt"
}

# margin NAME: muster's margin over our fgd at x = 130 at least its floor
# for NAME and the seeds run (measured for issue 17, less 0.1), with the
# baselines taking ties in kube-scheduler v1.20's list order; muster as of
# round 11 (remainder fit, per-node reserve, large shares by CPU when
# multi-GPU-heavy).  Seed 42:
# default +0.53, cpu050 +0.50, gpushare40 +0.41, multigpu30 +0.62,
# gpuspec10 +1.32; seeds 42-51:
# default +0.47, cpu050 +0.72, gpushare40 +0.45, multigpu30 +0.50,
# gpuspec10 +1.06.  Round 16 (shares weighed by demand when pods of 2+
# GPUs carry 15% of it: multigpu30 only) moves multigpu30's muster at
# seed 42 from 96.93 to 96.99 (golden below); the floors stay.  Round 18
# (small shares spread to CPU-rich nodes, spread_cpu, on for all five)
# moves muster at seed 42: default 95.92 to 95.99, cpu050 95.94 to 96.09,
# gpushare40 94.45 to 94.78, gpuspec10 95.90 to 96.00, multigpu30 96.99
# to 97.00 (golden below); the floors stay (they are minimums).
margin() {
	case "$SEEDS/$1" in
	42/default) min=0.43 ;; 42/cpu050) min=0.40 ;; 42/gpushare40) min=0.31 ;;
	42/multigpu30) min=0.52 ;; 42/gpuspec10) min=1.22 ;;
	42-51/default) min=0.37 ;; 42-51/cpu050) min=0.62 ;; 42-51/gpushare40) min=0.35 ;;
	42-51/multigpu30) min=0.40 ;; 42-51/gpuspec10) min=0.96 ;;
	*) echo "  $1: no margin floor for seeds $SEEDS"; return ;;
	esac
	m=$(awk '/muster - fgd at x=130:/ { print $6 }' "$T/$1.txt")
	if awk -v m="${m:-x}" -v f="$min" 'BEGIN { exit !(m + 0 == m && m >= f) }'; then
		ok
	else
		bad "$1: muster - fgd at x = 130 is '$m', below its floor $min"
		sed 's/^/  /' "$T/$1.txt"
	fi
}

# golden NAME: at seed 42 every policy's allocation at x = 130 within 0.05
# of the figure recorded (release build; the ASan build gives the same
# figures).  A deliberate change of a policy or of the harness updates
# them, and docs/evaluation.md's table with them.
golden() {
	[ "$SEEDS" = 42 ] || return 0
	case "$1" in
	default) want="88.05 91.18 92.56 92.51 93.06 95.39 95.99" ;;
	cpu050) want="91.32 93.49 94.20 94.19 93.73 95.44 96.09" ;;
	gpushare40) want="85.29 89.70 90.70 90.73 91.86 94.04 94.78" ;;
	multigpu30) want="89.05 92.99 94.35 94.30 94.56 96.31 97.00" ;;
	gpuspec10) want="87.40 90.65 92.80 92.99 93.25 94.58 96.00" ;;
	*) return 0 ;;
	esac
	set -- "$1" $want
	v=$1; shift
	for p in $BASE muster; do
		e=$(end "$v" "$p")
		if awk -v e="${e:-x}" -v w="$1" 'BEGIN { exit !(e + 0 == e && e - w <= 0.05 && w - e <= 0.05) }'; then
			ok
		else
			bad "$v $p: '$e' at x = 130, recorded $1 (seed 42)"
		fi
		shift
	done
}

# bound NAME: scripts/openb-bound.py's proven bound for NAME at seed 42
# is the figure recorded (within 0.01), and no policy ends above it.
bound() {
	[ "$SEEDS" = 42 ] || return 0
	case "$1" in
	default) rec=98.90 ;; cpu050) rec=98.82 ;;
	gpushare40) rec=98.69 ;; multigpu30) rec=99.13 ;;
	gpuspec10) rec=99.00 ;; *) return 0 ;;
	esac
	expect "bound-$1" 0 python3 scripts/openb-bound.py "$D/openb_node_list_gpu_node.csv" \
		"$D/openb_pod_list_$1.csv" --seed 42
	b=$(sed -n 's/^seed 42: bound \([0-9.]*\)%.*/\1/p' "$T/out")
	if awk -v b="${b:-x}" -v w="$rec" 'BEGIN { exit !(b + 0 == b && b - w <= 0.01 && w - b <= 0.01) }'; then
		ok
	else
		bad "$1: bound '$b', recorded $rec"; sed 's/^/  /' "$T/out" "$T/err"
	fi
	for p in $BASE muster; do
		e=$(end "$1" "$p")
		if awk -v e="${e:-x}" -v b="${b:-0}" 'BEGIN { exit !(e + 0 == e && e <= b) }'; then
			ok
		else
			bad "$1 $p: '$e' at x = 130, above the bound $b"
		fi
	done
}

# end NAME POLICY: our allocation at x = 130 ("@end"); gap NAME POLICY:
# ours minus the paper's there, empty when the paper has no figure.
# Only the table's rows: a name, then figures.
end() { awk -v p="$2" '$1 == p && $2 ~ /^[0-9.]+$/ { print $5 }' "$T/$1.txt"; }
gap() { awk -v p="$2" '$1 == p && $2 ~ /^[0-9.]+$/ && $7 != "-" { print $7 }' "$T/$1.txt"; }

# near NAME: every baseline within TOL of the paper at x = 130.
near() {
	for p in $BASE; do
		g=$(gap "$1" "$p")
		if [ -z "$g" ]; then
			bad "$1 $p: no paper figure in the table"; sed 's/^/  /' "$T/$1.txt"; continue
		fi
		if awk -v g="$g" -v t="$TOL" 'BEGIN { exit !(g <= t && g >= -t) }'; then
			ok
		else
			bad "$1 $p: $g points from the paper at x = 130 (tolerance $TOL)"
		fi
	done
}

# sane NAME: no paper figure needed: every baseline allocates more than half
# of the GPUs and fgd is within 1.0 of the best baseline (the paper finds it
# the best on every variant it published; on gpuspec100, where every GPU pod
# is tied to a model, all six end within 2.5 points of each other).
sane() {
	best=0
	for p in $BASE; do
		e=$(end "$1" "$p")
		if awk -v e="${e:-0}" 'BEGIN { exit !(e > 50 && e <= 100) }'; then ok; else bad "$1 $p: allocation '$e' at x = 130"; fi
		best=$(awk -v a="$best" -v b="${e:-0}" 'BEGIN { print (b > a ? b : a) }')
	done
	f=$(end "$1" fgd)
	if awk -v f="${f:-0}" -v b="$best" 'BEGIN { exit !(f >= b - 1.0) }'; then ok; else bad "$1: fgd $f, best baseline $best"; fi
	if [ -n "$(gap "$1" fgd)" ]; then near "$1"; fi
}

if [ "$ALL" = 1 ]; then
	SHARED="default cpu050 gpushare40 multigpu30 gpuspec10"
	SYNTH="gpushare20 gpushare40 gpushare60 gpushare80 gpushare100 multigpu20 multigpu30 multigpu40 multigpu50 multigpu100 gpuspec10 gpuspec20 gpuspec25 gpuspec33 gpuspec100 cpu050 cpu100 cpu200 cpu250"
else
	SHARED="default cpu050 gpushare40 multigpu30 gpuspec10"
	SYNTH="gpushare100"
fi
for v in $SHARED; do
	if [ ! -r "$D/openb_pod_list_$v.csv" ]; then
		bad "$v: $D/openb_pod_list_$v.csv is missing beside the others"; continue
	fi
	run "$v" "$D/openb_pod_list_$v.csv" ",muster"
	near "$v"
	margin "$v"
	golden "$v"
done

if ! command -v python3 >/dev/null 2>&1; then
	echo "skipped: python3 not found (the bound and the synthetic variants)"
	done_
fi
for v in $SHARED; do
	[ -r "$T/$v.txt" ] && bound "$v"
done
# the bound's bad input: a missing column and a bad number, each named
printf 'sn,cpu_milli,memory_mib,gpu\nn0,1000,1024,1\n' >"$T/bad-nodes.csv"
expect bound-no-column 2 python3 scripts/openb-bound.py "$T/bad-nodes.csv" "$D/openb_pod_list_default.csv"
has bound-no-column "$T/err" 'no column "model"'
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,half\n' >"$T/bad-pods.csv"
expect bound-bad-number 2 python3 scripts/openb-bound.py "$D/openb_node_list_gpu_node.csv" "$T/bad-pods.csv"
has bound-bad-number "$T/err" 'column "gpu_milli": expected an integer'
expect bound-bad-seeds 2 python3 scripts/openb-bound.py "$D/openb_node_list_gpu_node.csv" "$D/openb_pod_list_default.csv" --seeds 9-3
has bound-bad-seeds "$T/err" '--seeds'
mkdir -p "$T/synth"
only=$(echo $SYNTH | tr ' ' ',')
expect synth-build 0 python3 scripts/openb-variants.py "$D/openb_pod_list_default.csv" "$T/synth" --only "$only"
expect synth-unknown 2 python3 scripts/openb-variants.py "$D/openb_pod_list_default.csv" "$T/synth" --only frob
has synth-unknown "$T/err" "unknown variant"
for v in $SYNTH; do
	run "synth-$v" "$T/synth/openb_pod_list_$v.csv"
	sane "synth-$v"
done
done_
