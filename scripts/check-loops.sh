#!/bin/sh
# check-loops.sh - finds files of one room that call each other in a loop.
#
# Reads the symbols of every object file of a build (nm): file A calls file
# B when A uses a symbol B defines.  Within a room, two files that reach
# each other through such calls form a loop; a lower file should carry what
# both share (docs/architecture.md).  Each loop is printed with the calls
# that close it.  Rooms listed in ALLOW below may keep the loop they have
# today, for the reason given there, but no new file may join it.
#
# Usage: scripts/check-loops.sh BUILD_DIR   (e.g. build/asan)
# Ends with "loops: N passed, N failed" (rooms checked) and exits 1 on a
# loop that is not allowed.
set -u
B=${1:?usage: $0 BUILD_DIR}
[ -d "$B/src" ] || { echo "check-loops: $B/src: no objects (build first)"; echo "loops: 0 passed, 1 failed"; exit 1; }

# The engine's core is one mutually recursive algorithm: a cycle places
# jobs (cycle.c), placement may preempt or consolidate (preempt.c), which
# places again; reservations (backfill.c), nodes and classes (cluster.c),
# queues (queue.c), the score heaps (nodeindex.c) and topology (topo.c,
# topoplace.c) each call back into the cycle's primitives.  Pod affinity
# and spread (affinity.c) joined it as one more step of choosing a node: the
# cycle's node choice and its binds call it, and it filters and scores with
# the cycle's fit, reservation and interning primitives.  These files may
# stay in that loop; any other engine file that joins it fails.
ALLOW="engine:affinity engine:align engine:backfill engine:cluster engine:cycle engine:ends engine:engine engine:nodeindex engine:order engine:preempt engine:queue engine:score engine:score_frag engine:strmap engine:topo engine:topoplace"

for o in $(find "$B/src" -name '*.o' | sort); do
	f=${o#"$B"/src/}; f=${f%.o}          # room/file
	nm "$o" 2>/dev/null | awk -v f="$f" '
		NF == 3 && $2 ~ /^[TDBR]$/ { print "D", f, $3 }
		NF == 2 && $1 == "U" { print "U", f, $2 }'
done | awk -v allow="$ALLOW" '
BEGIN { n = split(allow, a, " "); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
$1 == "D" { def[$3] = $2; next }
$1 == "U" { use[++nu] = $2 SUBSEP $3; next }
END {
	# Direct calls between two files of one room.
	for (i = 1; i <= nu; i++) {
		split(use[i], p, SUBSEP); from = p[1]; sym = p[2]
		if (!(sym in def)) continue
		to = def[sym]
		if (to == from) continue
		rf = from; sub(/\/.*/, "", rf); rt = to; sub(/\/.*/, "", rt)
		if (rf != rt) continue
		if (!((from, to) in edge)) { edge[from, to] = sym; files[from] = 1; files[to] = 1 }
	}
	# Reachability by repeated relaxation (a room has tens of files).
	for (k in files) for (i in files) if ((i, k) in edge || (i, k) in reach) {
		for (j in files) if ((k, j) in edge || (k, j) in reach) reach[i, j] = 1
	}
	for (k in files) for (i in files) if ((i, k) in reach) {
		for (j in files) if ((k, j) in reach) reach[i, j] = 1
	}
	for (i in files) { r = i; sub(/\/.*/, "", r); rooms[r] = 1 }
	bad = 0
	for (i in files) {
		if (!((i, i) in reach)) continue
		r = i; sub(/\/.*/, "", r)
		key = i; sub(/\//, ":", key)
		if (key in ok) continue
		printf "%s.c: calls into a loop of room %s:", i, r
		for (j in files) if ((i, j) in edge && (j, i) in reach)
			printf " %s (%s) and back", j ".c", edge[i, j]
		printf "\n"
		badroom[r] = 1; bad++
	}
	nr = 0; nb = 0
	for (r in rooms) nr++
	for (r in badroom) nb++
	printf "loops: %d passed, %d failed\n", nr - nb, nb
	exit bad > 0
}'
