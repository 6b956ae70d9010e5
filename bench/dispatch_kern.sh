#!/bin/sh
# dispatch_kern.sh - the kernel's part of bench/dispatch.sh, per kind of
# process and per job: runs `sh bench/dispatch.sh MUSTER N NODES`
# (BENCH_PIDS=1) and, once it prints its processes' pids, one `perf stat`
# each on the dispatcher (d), the hub `muster up` (h), the three workers'
# `muster up`s together (w) and their three schedulers (s), counting every
# system call by name (the syscalls:sys_enter_* tracepoints), page faults,
# context switches, CPU migrations and task-clock, until the bench prints
# its rate (so the window is the dispatcher's start to SETTLE s after the
# last bind, as the bench's second CPU line).  Counts, not times: they
# hold under other load on the machine, which the clock does not.
# Writes OUT/{d,h,w,s}.stat (perf stat -x, output) and OUT/bench.out, then
# prints per process the counts per job (the TOP system calls, then the
# totals).  Needs perf and tracefs (run as root).
# Usage: sh bench/dispatch_kern.sh MUSTER OUT [N] [NODES] [TOP]  (round 22)
set -u
M=$1; O=$2; N=${3:-1000}; NODES=${4:-64}; TOP=${5:-12}
mkdir -p "$O"
rm -f "$O/stop" "$O/hwm.log" "$O/ticks.log"
# the system calls counted by name: the ones these processes make (the
# first runs with every syscalls:sys_enter_* tracepoint, which takes an
# open file per event and thread, more than the limit on the workers);
# raw_syscalls:sys_enter counts all of them, so "other" is the rest
SC="poll ppoll select pselect6 epoll_wait epoll_pwait epoll_ctl read write readv writev pread64 pwrite64
recvfrom recvmsg sendto sendmsg accept accept4 connect socket shutdown setsockopt getsockopt getsockname
getpeername fcntl ioctl close openat newfstatat statx lseek unlink fsync fdatasync ftruncate
futex sched_yield clock_nanosleep nanosleep mmap munmap mremap madvise mprotect brk clone clone3 exit
set_robust_list rseq rt_sigprocmask rt_sigaction getpid gettid tgkill getrandom eventfd2 prctl"
EV=raw_syscalls:sys_enter
for c in $SC; do EV="$EV,syscalls:sys_enter_$c"; done
# the bench, started, and its processes' pids: BP, d, h, w, s
# shellcheck source=bench/dispatch_pids.sh
. bench/dispatch_pids.sh
# one perf stat on a process group; tried again (up to 5 times) when it
# stops at once because a thread ended while it was being attached (ESRCH)
stat_one() {
	k=0
	while [ "$k" -lt 5 ]; do
		perf stat -x, -o "$O/$1.stat" -e task-clock,page-faults,major-faults,context-switches,cpu-migrations \
			-e "$EV" -p "$2" >"$O/$1.err" 2>&1 &
		echo $! >"$O/$1.pid"
		wait $!
		grep -q raw_syscalls "$O/$1.stat" 2>/dev/null && return 0
		[ -e "$O/stop" ] && return 0
		k=$((k + 1))
	done
}
P=""
for x in "d $d" "h $h" "w $w" "s $s"; do
	# shellcheck disable=SC2086
	stat_one $x &
	P="$P $!"
done
# peak resident sets (VmHWM, MB, one figure per process), read every
# 0.1 s while they run; the peak only grows, so the last reading counts
hwm() { printf '%s ' "$1"; for q in $(echo "$2" | tr , ' '); do
	sed -n 's/^VmHWM:[ \t]*\([0-9]*\).*/\1/p' "/proc/$q/status" 2>/dev/null; done |
	awk '{ m = m (m == "" ? "" : "+") sprintf("%.0f", $1 / 1024) } END { print m }'; }
# user and system CPU (clock ticks, /proc/PID/stat) of a process group
# whose processes all still run (none ended, none a zombie); the figures
# are the first reading and the largest (a process being killed at the
# end can read lower)
ticks() { n=0; for q in $(echo "$2" | tr , ' '); do [ -r "/proc/$q/stat" ] && n=$((n + 1)); done
	[ "$n" -eq "$(echo "$2" | tr , ' ' | wc -w)" ] || return 0
	for q in $(echo "$2" | tr , ' '); do cat "/proc/$q/stat" 2>/dev/null; done |
	awk -v p="$1" '{ sub(/.*\) /, ""); if ($1 == "Z") z = 1; u += $12; s += $13 } END { if (!z && NR) print p, u, s }'; }
while ! grep -q "dispatched and bound" "$O/bench.out"; do
	kill -0 "$BP" 2>/dev/null || break
	for x in "d $d" "h $h" "w $w" "s $s"; do
		# shellcheck disable=SC2086
		hwm $x
	done | awk 'NF == 2' >>"$O/hwm.log"
	for x in "d $d" "h $h" "w $w" "s $s"; do
		# shellcheck disable=SC2086
		ticks $x
	done >>"$O/ticks.log"
	sleep 0.1
done
touch "$O/stop"
# shellcheck disable=SC2046
kill -INT $(cat "$O"/?.pid) 2>/dev/null
# shellcheck disable=SC2086
wait $P
wait "$BP"
cat "$O/bench.out"
for p in d h w s; do [ -s "$O/$p.stat" ] || { echo "dispatch_kern: perf stat failed:"; cat "$O/$p.err"; exit 1; }; done
for p in d h w s; do
	awk -F, -v n="$N" -v p="$p" -v top="$TOP" '
	$3 ~ /^syscalls:sys_enter_/ { sub(/^syscalls:sys_enter_/, "", $3); named += $1; if ($1 + 0 > 0) print $1 / n, $3; next }
	$3 == "raw_syscalls:sys_enter" { raw = $1 }
	$3 != "" && $1 ~ /^[0-9.]+$/ { tot = tot sprintf(" %s=%.1f", $3, $1 / n) }
	END { if (raw - named > 0) print (raw - named) / n, "other"; print "TOTAL" tot }' "$O/$p.stat" | sort -k1,1gr | awk -v p="$p" -v top="$TOP" '
	/^TOTAL/ { t = $0; next }
	NR <= top + 1 { s = s sprintf(" %s=%.1f", $2, $1) }
	END { sub(/^TOTAL/, "", t); printf "dispatch_kern: %s per job:%s\ndispatch_kern: %s syscalls per job:%s\n", p, t, p, s }'
	awk -v p="$p" -v n="$N" -v t="$(getconf CLK_TCK)" '$1 == p { if (!k++) { u0 = $2; s0 = $3 } if ($2 > u) u = $2; if ($3 > s) s = $3 }
		END { printf "dispatch_kern: %s CPU ms per job (/proc stat, the window the process lived through): user %.2f system %.2f\n",
			p, (u - u0) * 1000 / t / n, (s - s0) * 1000 / t / n }' "$O/ticks.log"
	echo "dispatch_kern: $p peak RSS MB: $(awk -v p="$p" '$1 == p { v = $2 } END { print v }' "$O/hwm.log")"
done
