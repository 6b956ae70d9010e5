#!/bin/sh
# hub_callgrind.sh - the instructions the hub `muster up` spends while
# `muster dispatch` sends N jobs (bench/dispatch.sh's set-up: three workers
# of NODES nodes), without the machine's load: the hub runs under
# callgrind with instrumentation off until just before the dispatcher
# starts, and is stopped with SIGTERM after the last bind, which writes
# OUT (a callgrind file).  Read it with `callgrind_annotate --inclusive=yes
# --tree=calling OUT | grep update_fn` (per call: the numbers of calls
# follow the timing).  It runs a copy of bench/dispatch.sh changed in three
# lines (a longer start-up wait, the instrumentation switched on, the hub
# stopped), made here with sed, so it follows that script.  Takes a minute
# or two for 200 jobs.  Needs valgrind.
# Usage: sh bench/hub_callgrind.sh MUSTER OUT [N] [NODES]
set -u
M=$1; O=$2; N=${3:-200}; NODES=${4:-64}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
case "$M" in /*) ;; *) M=$(pwd)/$M ;; esac
case "$O" in /*) ;; *) O=$(pwd)/$O ;; esac
# the wrapper: the hub's `up` (its cluster file is hub.yaml) under callgrind
printf '#!/bin/sh\ncase "$*" in\n*hub.yaml*) exec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="%s" "%s" "$@" ;;\n*) exec "%s" "$@" ;;\nesac\n' \
	"$O" "$M" "$M" >"$T/wrap.sh"
chmod +x "$T/wrap.sh"
# the edits name the script's own variables: not expanded here
# shellcheck disable=SC2016
sed -e 's/while \[ "\$i" -lt 300 \]; do/while [ "$i" -lt 3000 ]; do/' \
	-e 's/^c0=\$(cpu_line)$/callgrind_control -i on "$hub_P" >\/dev\/null; c0=$(cpu_line)/' \
	-e 's/^kill "\$DP"; wait "\$DP" 2>\/dev\/null$/kill "$DP"; wait "$DP" 2>\/dev\/null; kill -TERM "$hub_P"; wait "$hub_P"/' \
	bench/dispatch.sh >"$T/dispatch.sh"
# shellcheck disable=SC2016
[ "$(grep -c 'callgrind_control\|-lt 3000\|kill -TERM "\$hub_P"' "$T/dispatch.sh")" -eq 3 ] ||
	{ echo "hub_callgrind: bench/dispatch.sh changed: the three edits no longer apply"; exit 1; }
sh "$T/dispatch.sh" "$T/wrap.sh" "$N" "$NODES"
