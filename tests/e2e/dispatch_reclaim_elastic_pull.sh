#!/bin/sh
# dispatch_reclaim_elastic_pull.sh - dispatch_reclaim_elastic.sh with big in
# pull mode: the hub records the shrink of el's copy and big's agent makes
# it (round 22; until round 21 the hub took whole jobs there).
# Usage: sh tests/e2e/dispatch_reclaim_elastic_pull.sh PATH_TO_MUSTER.  Ends
# with "e2e dispatch-reclaim-elastic-pull: N passed, N failed".
exec sh "$(dirname "$0")/dispatch_reclaim_elastic.sh" "$1" pull
