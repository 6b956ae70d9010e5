#!/bin/sh
# perf_shares.sh - a perf.data file (bench/dispatch_perf.sh's h.data: the
# hub `muster up`; w.data: the workers') read two ways by real CPU: the
# TOP symbols by self cost (perf report --no-children), and the share of
# the samples whose stack holds each of a fixed list of the servers' entry
# points and costs (a request handler, the store's commit, SQLite, TLS, the
# page faults), so that callgrind's instruction counts, which count
# libmicrohttpd's pool memset by the instruction and misrank, can be
# checked against the clock.  Shares are within the process: other load on
# the machine moves the absolute times, not these.  Needs perf (the data
# recorded with a call graph: dispatch_perf.sh records --call-graph dwarf).
# Third (round 22), the kernel's share split by how the kernel was entered:
# the system call (the outermost __x64_sys_* or __do_sys_* frame), a page
# fault (asm_exc_page_fault), or else the innermost kernel symbol
# (interrupts, the scheduler; on this VM mostly pvm_irq_enable, samples
# taken with interrupts off).
# Usage: sh bench/perf_shares.sh DATA [TOP]   (round 21)
set -u
D=$1; TOP=${2:-15}
echo "perf_shares: $D: top $TOP self-cost symbols (share of the process's samples)"
perf report -i "$D" --no-children --sort dso,symbol --stdio -g none 2>/dev/null |
	grep -E '^ +[0-9.]+%' | head -n "$TOP" | awk '{ printf "  %7s  %s %s\n", $1, $4, $2 }'
echo "perf_shares: $D: share of samples whose stack holds each"
# perf script prints one block per sample (frames "ip symbol"), blocks
# apart by a blank line; a frame counts a sample once
perf script -i "$D" -F ip,sym 2>/dev/null | awk '
BEGIN { n = split("mu__do_patch mu__do_create mu__do_binding mu__do_update mu__jobctl_sync mu__sim_tick " \
	"mu__evcorr_correlate mu__mf_record mu__store_commit mu__store_wait_rt sqlite3_step sqlite3WalCheckpoint " \
	"gnutls_handshake gnutls_record_send2 asm_exc_page_fault __x64_sys_futex", k, " ") }
function flush() { if (!inb) return; s++; for (f in seen) c[f]++; delete seen; inb = 0 }
/^[ \t]*$/ { flush(); next }
{ inb = 1; seen[$2] = 1 }
END { flush(); for (i = 1; i <= n; i++) printf "  %6.1f%%  %s\n", 100 * c[k[i]] / (s ? s : 1), k[i]; printf "  (%d samples)\n", s }'
echo "perf_shares: $D: the kernel's share by entry (share of the process's samples)"
perf script -i "$D" -F ip,sym 2>/dev/null | awk -v top="$TOP" '
function flush() { if (!inb) return; s++
	k = sc != "" ? "syscall " sc : pf ? "page fault" : kin != "" ? "other: " kin : ""
	if (k != "") { c[k]++; kt++ }
	inb = 0; sc = ""; pf = 0; kin = "" }
/^[ \t]*$/ { flush(); next }
{ inb = 1
  if ($1 ~ /^ffff/ && kin == "") kin = $2
  if (sc == "" && ($2 ~ /^__x64_sys_/ || $2 ~ /^__do_sys_/)) { sc = $2; sub(/^__(x64|do)_sys_/, "", sc) }
  if ($2 == "asm_exc_page_fault") pf = 1 }
END { flush(); printf "  %6.1f%%  the kernel in all (%d samples)\n", 100 * kt / (s ? s : 1), s
	for (k in c) printf "  %6.1f%%  %s\n", 100 * c[k] / s, k | "sort -rn | head -n " top }'
