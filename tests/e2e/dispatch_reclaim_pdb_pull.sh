#!/bin/sh
# dispatch_reclaim_pdb_pull.sh - dispatch_reclaim_pdb.sh with big in pull
# mode: its agent reports each copy's disruption allowance (round 14).
# Usage: sh tests/e2e/dispatch_reclaim_pdb_pull.sh PATH_TO_MUSTER.  Ends
# with "e2e dispatch-reclaim-pdb-pull: N passed, N failed".
exec sh "$(dirname "$0")/dispatch_reclaim_pdb.sh" "$1" pull
