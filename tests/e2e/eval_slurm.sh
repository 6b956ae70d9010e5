#!/bin/sh
# eval_slurm.sh - black-box tests of `muster eval slurm`: usage errors,
# muster's side alone on a 20-job trace written here, and, when Slurm's
# programs are installed (scripts/install-deps.sh installs slurm-wlm), the
# same 20 jobs through a real Slurm on loopback: the report, and that no
# Slurm process and no temporary directory is left behind, also after a
# SIGINT in the middle of a run.  Without Slurm that part prints
# "skipped" and counts nothing.
# Usage: sh tests/e2e/eval_slurm.sh PATH_TO_MUSTER.  Ends with
# "N passed, N failed".
E2E_NAME=eval_slurm.sh; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"

expect help 0 "$M" eval slurm --help
has help "$T/out" "--bf PARAMS"
expect eval-list 0 "$M" eval --help
has eval-list "$T/out" "slurm"
expect unknown-option 2 "$M" eval slurm --frob 1
has unknown-option "$T/err" "unknown option"
expect bad-compress 2 "$M" eval slurm --compress 0.5
expect bad-bf 2 "$M" eval slurm --bf "bf_interval=1 SlurmUser=x"
expect missing-trace 2 "$M" eval slurm --muster-only --trace "$T/none.csv"
has missing-trace "$T/err" "none.csv"

# 20 jobs in an hour: 1- and 2-GPU jobs and two 16-GPU gangs.
{
	echo "timestamp,duration,num_gpus,gpu_time,cluster"
	for m in 00 04 08 12 16 20 24 28 32 36 40 44 48 52 56 58; do
		echo "2017-10-01 00:$m:00,1800,1,1800,a"
	done
	echo "2017-10-01 00:10:30,1800,2,3600,b"
	echo "2017-10-01 00:30:30,1800,2,3600,b"
	echo "2017-10-01 00:15:00,1200,16,19200,c"
	echo "2017-10-01 00:35:00,1200,16,19200,c"
} >"$T/tiny.csv"

expect muster-only 0 "$M" eval slurm --muster-only --trace "$T/tiny.csv" --hours 1
has muster-only "$T/out" "20 jobs"
has muster-only "$T/out" "muster default"
has muster-only "$T/out" "muster, nothing evicted or moved"

slurm_missing=""
for p in slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
	command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || slurm_missing="$slurm_missing $p"
done

# leftovers DIR: processes whose environment names a slurm.conf under DIR.
leftovers() {
	for e in /proc/[0-9]*/environ; do
		{ tr '\0' '\n' <"$e"; } 2>/dev/null | grep -q "^SLURM_CONF=$1/" && echo "$e"
	done
}

if [ -n "$slurm_missing" ]; then
	echo "skipped: Slurm is not installed here (missing:$slurm_missing);" \
		"scripts/install-deps.sh installs slurm-wlm"
	expect no-slurm 3 "$M" eval slurm --trace "$T/tiny.csv" --hours 1
	has no-slurm "$T/err" "Slurm is not installed"
else
	mkdir -p "$T/tmp"
	# The smoke run: one bf variant, 10 trace minutes per real second.
	expect smoke 01 env TMPDIR="$T/tmp" "$M" eval slurm --trace "$T/tiny.csv" --hours 1 \
		--compress 600 --bf bf_interval=1,bf_resolution=1,bf_window=60 --timeout 3m \
		--report "$T/smoke.html"
	has smoke "$T/out" "Slurm: slurm-wlm"
	has smoke "$T/out" "bf_resolution=1"
	has smoke "$T/out" "(best Slurm)"
	has smoke "$T/out" "goal"
	has smoke-html "$T/smoke.html" "<svg"
	has smoke-html "$T/smoke.html" "SchedulerType=sched/backfill"
	hasnt smoke-failed "$T/err" "muster eval slurm:"
	[ -z "$(ls "$T/tmp")" ] && ok || bad "smoke: $(ls "$T/tmp") left in TMPDIR"
	[ -z "$(leftovers "$T/tmp")" ] && ok || bad "smoke: Slurm processes left: $(leftovers "$T/tmp")"

	# An interrupt in the middle of a run: it stops, and cleans up.
	env TMPDIR="$T/tmp" "$M" eval slurm --trace "$T/tiny.csv" --hours 1 --compress 60 \
		--bf bf_interval=1 >"$T/int.out" 2>"$T/int.err" &
	pid=$!
	i=0
	while [ $i -lt 150 ] && [ -z "$(ls "$T"/tmp/*/slurm.conf 2>/dev/null)" ]; do
		sleep 0.2; i=$((i + 1))
	done
	sleep 5 # the daemons are up and jobs are being submitted
	kill -INT $pid
	wait $pid
	rc=$?
	[ $rc -ne 0 ] && ok || bad "interrupt: exit 0"
	has interrupt "$T/int.err" "interrupted"
	[ -z "$(ls "$T/tmp")" ] && ok || bad "interrupt: $(ls "$T/tmp") left in TMPDIR"
	[ -z "$(leftovers "$T/tmp")" ] && ok || bad "interrupt: Slurm processes left: $(leftovers "$T/tmp")"
fi
done_
