#!/bin/sh
# check-layers.sh - holds the code to the map in docs/architecture.md.
#
# Every file under src/ belongs to the room (folder) it is in; every public
# header include/muster/H.h belongs to the room named in the table below.
# A file may include:
#   - its own room's headers ("ROOM/x.h" or a public header of ROOM);
#   - the public headers (muster/*.h) of the rooms its room may lean on.
# It may never include another room's internal headers ("OTHER/x.h"), a
# room above it or beside it, or a public header that is not on the map.
# Each offence is printed as FILE:LINE: what and why; the script ends with
# "layers: N passed, N failed" (N files checked) and exits 1 on an offence.
#
# Usage: scripts/check-layers.sh [ROOT]   (ROOT defaults to the checkout)
set -u
ROOT=${1:-$(dirname "$0")/..}
cd "$ROOT" || exit 2

find src include/muster -name '*.[ch]' | sort | awk '
BEGIN {
	# Public headers and the room that owns each one.
	split("error util jpath", a); for (i in a) owner[a[i]] = "util"
	split("engine model resource mig", a); for (i in a) owner[a[i]] = "engine"
	split("load specs csv cel dra", a); for (i in a) owner[a[i]] = "load"
	split("sim scenario", a); for (i in a) owner[a[i]] = "sim"
	owner["report"] = "report"
	split("eval eval_philly eval_topo eval_queues eval_slurm eval_fleet eval_pools eval_mig", a); for (i in a) owner[a[i]] = "eval"
	owner["bench"] = "bench"
	owner["agent"] = "agent"
	owner["apiserver"] = "apiserver"
	owner["kube"] = "kube"
	owner["web"] = "web"
	owner["fleet"] = "fleet"
	owner["dispatch"] = "dispatch"
	# The rooms each room may lean on (besides itself), floor by floor.
	may["util"] = ""
	may["engine"] = "util"
	may["load"] = "util engine"
	may["sim"] = "util engine load"
	may["fleet"] = "util engine load"
	may["report"] = "util engine load sim"
	may["eval"] = "util engine load sim report fleet"
	may["bench"] = "util engine load sim report fleet"
	may["agent"] = "util engine load"
	may["apiserver"] = "util engine load"
	may["web"] = "util engine load"
	may["kube"] = "util engine load web"
	may["dispatch"] = "util engine load web kube fleet"
	may["cli"] = "util engine load sim fleet report eval bench agent apiserver web kube dispatch"
	files = 0; bad = 0
}
{
	path = $0; files++
	if (path ~ /^include\/muster\//) {
		h = path; sub(/^include\/muster\//, "", h); sub(/\.h$/, "", h)
		if (!(h in owner)) {
			printf "%s:1: public header %s.h is on no room of the map (add it to scripts/check-layers.sh and docs/architecture.md)\n", path, h
			bad++; failed[path] = 1; next
		}
		room = owner[h]
	} else {
		room = path; sub(/^src\//, "", room); sub(/\/.*/, "", room)
		if (!(room in may)) {
			printf "%s:1: room src/%s is not on the map (add it to scripts/check-layers.sh and docs/architecture.md)\n", path, room
			bad++; failed[path] = 1; next
		}
	}
	n = split(may[room], ok, " "); delete allowed
	for (i = 1; i <= n; i++) allowed[ok[i]] = 1
	allowed[room] = 1
	line = 0
	while ((getline l < path) > 0) {
		line++
		if (l !~ /^[ \t]*#[ \t]*include[ \t]*"/) continue
		inc = l; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
		if (inc !~ /\//) continue            # a file beside this one
		top = inc; sub(/\/.*/, "", top)
		if (top == "muster") {
			h = inc; sub(/^muster\//, "", h); sub(/\.h$/, "", h)
			if (!(h in owner)) {
				printf "%s:%d: includes %s, a public header on no room of the map\n", path, line, inc
				bad++; failed[path] = 1; continue
			}
			to = owner[h]
			if (!(to in allowed)) {
				printf "%s:%d: includes %s (room %s), but room %s may lean only on: %s\n", path, line, inc, to, room, (may[room] == "" ? "nothing" : may[room])
				bad++; failed[path] = 1
			}
		} else if (top != room) {
			printf "%s:%d: includes %s, an internal header of room %s; room %s may use only its public header (muster/*.h)\n", path, line, inc, top, room
			bad++; failed[path] = 1
		}
	}
	close(path)
}
END {
	nf = 0; for (f in failed) nf++
	printf "layers: %d passed, %d failed\n", files - nf, nf
	exit bad > 0
}'
