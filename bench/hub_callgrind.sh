#!/bin/sh
# hub_callgrind.sh - the instructions the hub `muster up` (or, with ROLE,
# another process) spends while `muster dispatch` sends N jobs
# (bench/dispatch.sh's set-up: three workers of NODES nodes), without the
# machine's load: the hub runs under
# callgrind with instrumentation off until just before the dispatcher
# starts, and is stopped with SIGTERM after the last bind, which writes
# OUT (a callgrind file).  Read it with `callgrind_annotate --inclusive=yes
# --tree=calling OUT | grep update_fn` (per call: the numbers of calls
# follow the timing).  It runs a copy of bench/dispatch.sh changed in three
# lines (a longer start-up wait, the instrumentation switched on, the hub
# stopped), made here with sed, so it follows that script.  Takes a minute
# or two for 200 jobs.  Needs valgrind.
# ROLE=w1 (or w2, w3) measures that worker's `muster up` instead, ROLE=s1
# (s2, s3) that worker's `muster scheduler`; the dispatcher itself is
# measured with bench/dispatch.sh's DWRAP.
# Usage: [ROLE=hub|w1|s1] sh bench/hub_callgrind.sh MUSTER OUT [N] [NODES]
set -u
M=$1; O=$2; N=${3:-200}; NODES=${4:-64}
ROLE=${ROLE:-hub}
case "$ROLE" in
hub | w[123]) PAT="*$ROLE.yaml*"; PV="${ROLE}_P" ;;
s[123]) w=w${ROLE#s}; PAT="*scheduler*/$w/kubeconfig*"; PV="${w}_SP" ;;
*) echo "hub_callgrind: ROLE is hub, w1, w2, w3, s1, s2 or s3"; exit 1 ;;
esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
case "$M" in /*) ;; *) M=$(pwd)/$M ;; esac
case "$O" in /*) ;; *) O=$(pwd)/$O ;; esac
# the wrapper: the role's process (the hub's `up`: its cluster file is
# hub.yaml) under callgrind
printf '#!/bin/sh\ncase "$*" in\n%s) exec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="%s" "%s" "$@" ;;\n*) exec "%s" "$@" ;;\nesac\n' \
	"$PAT" "$O" "$M" "$M" >"$T/wrap.sh"
chmod +x "$T/wrap.sh"
# the edits name the script's own variables ($PV: hub_P, w1_P, w1_SP, ...)
sed -e 's/while \[ "\$i" -lt 300 \]; do/while [ "$i" -lt 3000 ]; do/' \
	-e "s/^c0=\\\$(cpu_line)\$/callgrind_control -i on \"\\\$$PV\" >\\/dev\\/null; c0=\\\$(cpu_line)/" \
	-e "s/^kill \"\\\$DP\"; wait \"\\\$DP\" 2>\\/dev\\/null/&; kill -TERM \"\\\$$PV\"; wait \"\\\$$PV\"/" \
	bench/dispatch.sh >"$T/dispatch.sh"
[ "$(grep -c "callgrind_control\|-lt 3000\|kill -TERM \"\\\$$PV\"" "$T/dispatch.sh")" -eq 3 ] ||
	{ echo "hub_callgrind: bench/dispatch.sh changed: the three edits no longer apply"; exit 1; }
sh "$T/dispatch.sh" "$T/wrap.sh" "$N" "$NODES"
