#!/bin/sh
# heap-account.sh - where the scheduler daemon's heap goes once a backlog
# is bound: the heap it holds then, summed by the function that allocated
# it, for docs/evaluation.md's table (issue 22).
#
#   sh scripts/heap-account.sh MUSTER [NODES PODS GANGS [TIMEOUT]]
#
# Runs build/rel/bench/bench_kube --backlog (a `muster up` server with
# NODES simulated nodes, PODS single pods and GANGS gangs of 16; default
# 1000 5000 50) with `MUSTER scheduler` as its own process under heaptrack
# (heaptrack's preload library). Once every pod is bound the bench stops
# the scheduler; the wrapper below turns that SIGTERM into a SIGKILL, so
# no teardown frees anything and heaptrack's "leaked" bytes are exactly
# the heap the daemon held after binding.  Then it prints, in MB, the
# heap by the innermost muster function on the allocating stack (library
# frames - jansson, libc, curl - are charged to their muster caller; a
# generic helper such as mu__grow is shown as CALLER/mu__grow), the
# biggest 25 first, and the whole.  Needs heaptrack and heaptrack_print;
# the bench's end-to-end line (pods bound) comes first (its RSS line would
# be the wrapper's, so it is left out: bench_kube --scheduler gives the RSS).
# The profiler slows the daemon about 3x: give TIMEOUT (s, default 900).
# COST=peak (in the environment) sums the heap at the moment of the
# daemon's peak instead (heaptrack's peak cost: each site's bytes live
# then), which is during the bind rush.
set -eu
MUSTER=$(readlink -f "${1:?usage: heap-account.sh MUSTER [NODES PODS GANGS [TIMEOUT]]}")
NODES=${2:-1000}
PODS=${3:-5000}
GANGS=${4:-50}
TIMEOUT=${5:-900}
COST=${COST:-leaked}
case $COST in leaked|peak) ;; *) echo "heap-account.sh: COST is leaked or peak" >&2; exit 2;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH:-$ROOT/build/rel/bench/bench_kube}
command -v heaptrack >/dev/null || { echo "heap-account.sh: heaptrack is not installed" >&2; exit 2; }
[ -x "$BENCH" ] || { echo "heap-account.sh: no $BENCH (make build/rel/bench/bench_kube)" >&2; exit 2; }
T=$(mktemp -d /tmp/heap-account.XXXXXX)
trap 'rm -rf "$T"' EXIT
cat >"$T/wrap.sh" <<EOF
#!/bin/sh
# heaptrack runs the daemon; the bench's SIGTERM becomes a SIGKILL of it
heaptrack -o "$T/ht" "$MUSTER" "\$@" >"$T/heaptrack.log" 2>&1 &
H=\$!
# (heaptrack's script runs the daemon as its child, by its file name)
trap 'kill -KILL \$(pgrep -P \$H -x "$(basename "$MUSTER" | cut -c1-15)") 2>/dev/null; wait \$H' TERM
wait \$H
EOF
chmod +x "$T/wrap.sh"
"$BENCH" --backlog --nodes "$NODES" --pods "$PODS" --gangs "$GANGS" --timeout "$TIMEOUT" \
	--scheduler "$T/wrap.sh" | grep '"kube_end_to_end"' || true
sleep 2
F=$(ls "$T"/ht*.zst "$T"/ht*.gz 2>/dev/null | head -1)
[ -n "$F" ] || { echo "heap-account.sh: heaptrack wrote nothing" >&2; cat "$T/heaptrack.log" >&2; exit 1; }
heaptrack_print -f "$F" -F "$T/stacks" --flamegraph-cost-type "$COST" >/dev/null
# A stack line is "outer;...;inner BYTES"; charge it to the innermost frame
# that is muster's own (not a library's, not an allocator's).
awk '
{
	n = split($0, a, " "); cost = a[n]; line = substr($0, 1, length($0) - length(cost) - 1)
	k = split(line, f, ";"); site = "(no muster frame)"
	for (i = k; i >= 1; i--) {
		g = f[i]; sub(/\(.*/, "", g); sub(/ .*/, "", g)
		if (g ~ /^(json|jsonp|hashtable|utf8|lex|parse_|stream_|strbuffer|decode|dump|do_dump|curl|Curl|ossl|OPENSSL|CRYPTO|SSL|BIO|EVP|nghttp|gnutls|__|_IO|_dl|malloc|calloc|realloc|strdup|strndup|asprintf|vasprintf|open_memstream|pthread|start_thread|clone|operator|heaptrack|\?\?|<unresolved)/)
			continue
		if (g == "" || g ~ /^0x/) continue
		if (site == "(no muster frame)" && g ~ /^(mu__grow|mu_arena_alloc|set_str|dup0|mu__kmap_put|mu__strmap_put)$/) {
			site = g; continue  # a generic helper: name its caller too
		}
		site = (site == "(no muster frame)") ? g : g "/" site; break
	}
	sum[site] += cost; all += cost
}
END {
	for (s in sum) printf "%10.1f  %s\n", sum[s] / 1e6, s | "sort -rn | head -25"
	close("sort -rn | head -25")
	printf "%10.1f  all (MB of heap %s: %d nodes, %d pods, %d gangs)\n", all / 1e6, "'"$([ "$COST" = peak ] && echo "at its peak" || echo "held after binding")"'", '"$NODES"', '"$PODS"', '"$GANGS"'
}' "$T/stacks"
